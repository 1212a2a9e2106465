#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/network/network_frame.h"

namespace sluice::runtime::network {
namespace {

std::vector<Frame> allFrames() {
  const InputChannelId id{0x0102030405060708ull, 0xA1A2A3A4A5A6A7A8ull};
  return {PartitionRequest{"result-3/partition-1", 4, id, 2},
          BufferResponse{id, 17, 5, std::string(1000, 'd')},
          EventResponse{id, 18, 4, "event-bytes"},
          AddCredit{id, 3},
          NewBufferSize{id, 512},
          CancelPartitionRequest{id},
          ErrorResponse{id, true, "producer failed"},
          CloseRequest{},
          BacklogAnnouncement{id, 6}};
}

TEST(NetworkFrameTest, EveryFrameRoundTrips) {
  for (const Frame& f : allFrames()) {
    EXPECT_EQ(decodeFrame(encodeFrame(f)), f) << frameTypeName(static_cast<FrameType>(f.index()));
  }
}

TEST(NetworkFrameTest, BacklogAnnouncementNeedsAPositiveBacklog) {
  // Flink's BacklogAnnouncement carries a positive backlog: 0 or less from a peer is a bad frame.
  std::string bytes = encodeFrame(BacklogAnnouncement{{1, 2}, 1});
  ASSERT_EQ(bytes[8], 8);  // the type id
  bytes[bytes.size() - 1] = 0;
  try {
    decodeFrame(bytes);
    FAIL() << "expected a NetworkFrameError";
  } catch (const NetworkFrameError& e) {
    EXPECT_NE(std::string(e.what()).find("BacklogAnnouncement frame: backlog must be positive, got 0"),
              std::string::npos)
        << e.what();
  }
}

TEST(NetworkFrameTest, HeaderLayout) {
  const std::string bytes = encodeFrame(AddCredit{{1, 2}, 7});
  // 9 header bytes + 16 (receiver id) + 4 (credit) = 29 bytes, big endian.
  ASSERT_EQ(bytes.size(), 29u);
  EXPECT_EQ(bytes.substr(0, 4), std::string("\x00\x00\x00\x1d", 4));
  EXPECT_EQ(bytes.substr(4, 4), std::string("\xBA\xDC\x0F\xFE", 4));
  EXPECT_EQ(bytes[8], 3);  // AddCredit
  EXPECT_EQ(bytes.substr(25, 4), std::string("\x00\x00\x00\x07", 4));
}

TEST(NetworkFrameTest, StreamDecoderHandlesFramesSplitAtEveryByte) {
  std::string stream;
  for (const Frame& f : allFrames()) encodeFrame(f, stream);
  FrameDecoder d("taskmanager 2");
  std::vector<Frame> got;
  for (char c : stream) {
    d.feed(std::string_view(&c, 1));
    while (auto f = d.next()) got.push_back(std::move(*f));
  }
  EXPECT_EQ(got, allFrames());
  EXPECT_NO_THROW(d.finish());
}

std::string errorOf(const std::string& bytes) {
  try {
    decodeFrame(bytes);
  } catch (const NetworkFrameError& e) {
    return e.what();
  }
  return "no error";
}

TEST(NetworkFrameTest, GarbageAndTruncationGiveClearErrors) {
  const std::string good = encodeFrame(NewBufferSize{{1, 2}, 512});
  EXPECT_NE(errorOf("GET / HTTP/1.1\r\n\r\n").find("bad magic number"), std::string::npos);
  EXPECT_NE(errorOf(good.substr(0, good.size() - 1)).find("truncated"), std::string::npos);
  EXPECT_NE(errorOf(good + "x").find("trailing"), std::string::npos);
  std::string bad_type = good;
  bad_type[8] = 42;
  EXPECT_NE(errorOf(bad_type).find("unknown frame type 42"), std::string::npos);
  std::string zero_size = good;
  zero_size[28] = 0;
  zero_size[27] = 0;  // buffer size 0
  EXPECT_NE(errorOf(zero_size).find("buffer size must be positive"), std::string::npos) << errorOf(zero_size);
  std::string huge = good;
  huge[0] = '\x7f';  // frame length ~2 GiB: over the limit, rejected before any allocation
  EXPECT_NE(errorOf(huge).find("frame length"), std::string::npos);
  // A string length pointing past the frame.
  std::string err = encodeFrame(ErrorResponse{{1, 2}, false, "abc"});
  err[9 + 16 + 1] = '\x10';
  EXPECT_NE(errorOf(err).find("error message needs"), std::string::npos) << errorOf(err);
}

TEST(NetworkFrameTest, StreamErrorsNameThePeerAndOffsetAndStick) {
  FrameDecoder d("taskmanager 3 (127.0.0.1:6121)");
  d.feed(encodeFrame(CloseRequest{}));
  d.feed("garbage!!");
  ASSERT_TRUE(d.next().has_value());
  try {
    d.next();
    FAIL();
  } catch (const NetworkFrameError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("taskmanager 3 (127.0.0.1:6121)"), std::string::npos) << m;
    EXPECT_NE(m.find("offset 9"), std::string::npos) << m;  // after the 9-byte CloseRequest
  }
  EXPECT_THROW(d.next(), NetworkFrameError);
}

TEST(NetworkFrameTest, PeerClosingMidFrameIsReported) {
  FrameDecoder d("taskmanager 4");
  const std::string f = encodeFrame(BufferResponse{{1, 1}, 0, 0, "abcdef"});
  d.feed(std::string_view(f).substr(0, 20));
  EXPECT_FALSE(d.next().has_value());
  EXPECT_THROW(d.finish(), NetworkFrameError);
}

}  // namespace
}  // namespace sluice::runtime::network
