#include "runtime/checkpoint/checkpoint_metadata.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "common/error.h"
#include "checkpoint_fixtures.h"

namespace sluice::runtime::checkpoint {
namespace {

using ::testing::HasSubstr;
using testing::expectSameCheckpoint;
using testing::twoOperatorCheckpoint;

std::string le(uint64_t v, int bytes) {
  std::string s;
  for (int i = 0; i < bytes; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}

/// A `_metadata` frame around `payload`, built here from the documented layout with zlib's crc32.
std::string frame(const std::string& payload, uint32_t version = 3) {
  const uint32_t crc = static_cast<uint32_t>(
      crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(payload.data()), static_cast<uInt>(payload.size())));
  return std::string("\x49\x60\x67\x2d", 4) + le(version, 4) + le(payload.size(), 8) + payload + le(crc, 4);
}

std::string decodeError(const std::string& bytes) {
  try {
    deserializeCheckpointMetadata(bytes, "/chk/job/chk-1/_metadata");
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError";
  return "";
}

// Payload of checkpoint 9 of job "j", kind checkpoint, trigger 5 ms, completion 6 ms, no operators.
const std::string kEmptyPayload = le(9, 8) + "\x01j" + std::string(1, '\0') + le(5, 8) + le(6, 8) + std::string(1, '\0');

TEST(CheckpointMetadataTest, EncodesTheDocumentedLayout) {
  CompletedCheckpoint c;
  c.checkpoint_id = 9;
  c.job_id = "j";
  c.trigger_timestamp_ms = 5;
  c.completion_timestamp_ms = 6;
  EXPECT_EQ(serializeCheckpointMetadata(c), frame(kEmptyPayload));

  // One operator "o", maxP 4, parallelism 1: key group 3 -> "v"; split state "s" = ["e"].
  OperatorState op;
  op.parallelism = 1;
  op.max_parallelism = 4;
  op.subtasks.resize(1);
  op.subtasks[0].keyed[3] = "v";
  op.subtasks[0].operator_state["s"] = testing::listState(OperatorStateMode::kSplitDistribute, {"e"});
  c.operators["o"] = op;
  const std::string payload = le(9, 8) + "\x01j" + std::string(1, '\0') + le(5, 8) + le(6, 8) +
                              "\x01"            // one operator
                              "\x01o"           // uid
                              "\x04\x01"        // max parallelism 4, parallelism 1
                              "\x01\x03\x01v"   // one keyed entry: group 3, blob "v"
                              "\x01\x01s" +     // one named state "s"
                              std::string(1, '\0') + "\x01\x01" "e";  // mode split, one element "e"
  const std::string no_handles(1, '\0');   // version >= 2: no RocksDB incremental handles
  const std::string no_channels(2, '\0');  // version 3: no input, no output channel state
  EXPECT_EQ(serializeCheckpointMetadata(c), frame(payload + no_handles + no_channels));
  expectSameCheckpoint(deserializeCheckpointMetadata(frame(payload + no_handles + no_channels), "x"), c);
  // Version 1 files (no handle section) and version 2 files (no channel state) still decode.
  expectSameCheckpoint(deserializeCheckpointMetadata(frame(payload, 1), "x"), c);
  expectSameCheckpoint(deserializeCheckpointMetadata(frame(payload + no_handles, 2), "x"), c);
  EXPECT_THAT(decodeError(frame(payload, 4)), HasSubstr("unsupported format version 4 at byte 4"));

  // One handle: backend "b", checkpoint 9, groups [1, 2], state "s" kind 2, one shared file "1.sst" at
  // "/s" (size 5, crc 300 = varint ac 02), no private file, checkpointed size 5.
  op.subtasks[0].incremental.push_back(IncrementalKeyedStateHandle{
      "b", 9, 1, 2, {{"s", 2}}, {{"1.sst", "/s", 5, 300}}, {}, 5});
  c.operators["o"] = op;
  const std::string handle = std::string("\x01") + "\x01" "b" + le(9, 8) + "\x01\x02" + "\x01\x01s\x02" +
                             "\x01\x05" "1.sst" "\x02/s" "\x05\xac\x02" + std::string(1, '\0') + "\x05";
  EXPECT_EQ(serializeCheckpointMetadata(c), frame(payload + handle + no_channels));
  expectSameCheckpoint(deserializeCheckpointMetadata(frame(payload + handle + no_channels), "x"), c);

  // Channel state (version 3): input 1 from subtask 0 holds "ab"; output 0 to subtask 2 holds "c".
  c.operators["o"].subtasks[0].channel.input.push_back(InputChannelStateEntry{1, 0, "ab"});
  c.operators["o"].subtasks[0].channel.output.push_back(OutputChannelStateEntry{0, 2, "c"});
  const std::string channels = std::string("\x01\x01") + std::string(1, '\0') + "\x02" "ab"  // input 1, subtask 0, "ab"
                               "\x01" + std::string(1, '\0') + "\x02\x01" "c";                // output 0, subtask 2, "c"
  EXPECT_EQ(serializeCheckpointMetadata(c), frame(payload + handle + channels));
  expectSameCheckpoint(deserializeCheckpointMetadata(frame(payload + handle + channels), "x"), c);
}

TEST(CheckpointMetadataTest, IncrementalHandlesRoundTripAndBadOnesAreRejected) {
  const CompletedCheckpoint c = testing::incrementalCheckpoint(4);
  expectSameCheckpoint(deserializeCheckpointMetadata(serializeCheckpointMetadata(c), "x"), c);
  const auto with = [&](auto change) {
    CompletedCheckpoint bad = testing::incrementalCheckpoint(4);
    change(bad.operators["agg"].subtasks[1].incremental[0]);
    // The encoder checks only the range; the decoder everything else.
    return decodeError(serializeCheckpointMetadata(bad));
  };
  EXPECT_THAT(with([](IncrementalKeyedStateHandle& h) { h.shared_files[0].path = "relative/x.sst"; }),
              HasSubstr("shared file path 'relative/x.sst' is not absolute"));
  EXPECT_THAT(with([](IncrementalKeyedStateHandle& h) { h.private_files[0].local_name = "../CURRENT"; }),
              HasSubstr("private file name '../CURRENT' is not a plain file name"));
  EXPECT_THAT(with([](IncrementalKeyedStateHandle& h) { h.private_files[0].local_name = ".."; }),
              HasSubstr("is not a plain file name"));
}

TEST(CheckpointMetadataTest, RoundTripsChannelState) {
  const CompletedCheckpoint c = testing::unalignedCheckpoint(4);
  expectSameCheckpoint(c, deserializeCheckpointMetadata(serializeCheckpointMetadata(c), "x"));
  EXPECT_EQ(c.stateSize(), twoOperatorCheckpoint(4).stateSize() + 5 + 2 + 3);
}

TEST(CheckpointMetadataTest, ChannelStateErrorsNameTheOffset) {
  // One operator "o", maxP 4, parallelism 1, no keyed or operator state, no incremental
  // handle; then the channel state.
  const std::string head = kEmptyPayload.substr(0, kEmptyPayload.size() - 1) + "\x01\x01o\x04\x01" +
                           std::string(3, '\0');
  // The channel state starts at byte 16 + 27 + 1 + 2 + 2 + 2 + 1 = 51. A producer subtask of 40000 (0xc0
  // 0xb8 0x02) starts at 53.
  EXPECT_THAT(decodeError(frame(head + "\x01" + std::string(1, '\0') + "\xc0\xb8\x02" + "\x01x" +
                                std::string(1, '\0'))),
              HasSubstr("channel state producer subtask 40000 is outside [0, 32767] at byte 53"));
  // The same input channel twice.
  const std::string entry = std::string(1, '\0') + std::string(1, '\0') + "\x01x";
  EXPECT_THAT(decodeError(frame(head + "\x02" + entry + entry + std::string(1, '\0'))),
              HasSubstr("input channel state of input 0 with producer subtask 0 appears twice"));
  // Bytes longer than the payload.
  EXPECT_THAT(decodeError(frame(head + std::string(1, '\0') + "\x01" + std::string(1, '\0') + "\x01\x7f" "ab")),
              HasSubstr("corrupt payload"));
  // 2^35 output entries: bounded by the bytes left.
  EXPECT_THAT(decodeError(frame(head + std::string(1, '\0') + "\x80\x80\x80\x80\x80\x01")), HasSubstr("exceeds the"));
}

TEST(CheckpointMetadataTest, RoundTripsTheTwoOperatorCheckpoint) {
  const CompletedCheckpoint c = twoOperatorCheckpoint(12);
  const CompletedCheckpoint back = deserializeCheckpointMetadata(serializeCheckpointMetadata(c), "x");
  expectSameCheckpoint(c, back);
  EXPECT_TRUE(back.external_pointer.empty());
}

TEST(CheckpointMetadataTest, FrameErrorsNameTheSourceAndTheOffset) {
  const std::string good = frame(kEmptyPayload);
  std::string long_length = good;
  long_length.replace(8, 8, le(uint64_t{1} << 40, 8));
  EXPECT_THAT(decodeError(long_length), HasSubstr("payload length 1099511627776 at byte 8 exceeds the file"));
  EXPECT_THAT(decodeError(long_length), HasSubstr("/chk/job/chk-1/_metadata"));
  EXPECT_THAT(decodeError(good + "zz"), HasSubstr("2 unexpected bytes after the checksum at byte 48"));
}

TEST(CheckpointMetadataTest, PayloadErrorsBehindAValidChecksum) {
  // Operator count 2^35 (varint 80 80 80 80 80 01): bounded by the bytes left, no allocation.
  std::string huge_count = kEmptyPayload;
  huge_count.back() = '\x80';
  huge_count += "\x80\x80\x80\x80\x01";
  EXPECT_THAT(decodeError(frame(huge_count)), HasSubstr("exceeds the"));

  // Kind 7.
  std::string bad_kind = kEmptyPayload;
  bad_kind[10] = 7;
  EXPECT_THAT(decodeError(frame(bad_kind)), HasSubstr("checkpoint kind 7 (0 to 3)"));

  // An operator with max parallelism 32768 and parallelism 30000 but no subtask bytes: 0x80 0x80 0x02 is
  // 32768, 0xb0 0xea 0x01 is 30000.
  std::string no_subtasks = kEmptyPayload;
  no_subtasks.back() = '\x01';
  no_subtasks += std::string("\x01o") + "\x80\x80\x02" + "\xb0\xea\x01";
  EXPECT_THAT(decodeError(frame(no_subtasks)), HasSubstr("operator 'o' ends after 0 of its 30000 subtasks"));

  // Max parallelism 40000 is above 2^15 (0xc0 0xb8 0x02 is 40000). It starts at byte 16 + 27 + 1 + 2 = 46.
  std::string big_maxp = kEmptyPayload;
  big_maxp.back() = '\x01';
  big_maxp += std::string("\x01o") + "\xc0\xb8\x02" + "\x01";
  EXPECT_THAT(decodeError(frame(big_maxp)), HasSubstr("max parallelism 40000 is outside [1, 32768] at byte 46"));

  // Key group 4 of max parallelism 4.
  std::string bad_group = kEmptyPayload;
  bad_group.back() = '\x01';
  bad_group += std::string("\x01o") + "\x04\x01" + "\x01\x04\x01v" + std::string(1, '\0');
  EXPECT_THAT(decodeError(frame(bad_group)), HasSubstr("key group 4 is outside [0, 3]"));

  EXPECT_THAT(decodeError(frame(kEmptyPayload + "?")), HasSubstr("trailing bytes after the last operator"));
  EXPECT_THAT(decodeError(frame(kEmptyPayload.substr(0, 12))), HasSubstr("corrupt payload"));
}

// The fuzz target's seeds (fuzz/corpus/checkpoint_metadata): its first byte picks raw bytes (0) or a
// payload the target frames with a valid checksum (1). SLUICE_UPDATE_FUZZ_CORPUS=1 rewrites them;
// otherwise the committed seeds must still decode to the fixture, so a format change cannot go unnoticed.
TEST(CheckpointMetadataTest, FuzzSeedsDecode) {
  const std::string file = serializeCheckpointMetadata(twoOperatorCheckpoint(3));
  const std::string payload = file.substr(kCheckpointMetadataHeaderBytes,
                                          file.size() - kCheckpointMetadataHeaderBytes - kCheckpointMetadataTrailerBytes);
  const std::filesystem::path dir = std::filesystem::path(SLUICE_SOURCE_DIR) / "fuzz/corpus/checkpoint_metadata";
  const std::string incremental = serializeCheckpointMetadata(testing::incrementalCheckpoint(5));
  const std::string unaligned = serializeCheckpointMetadata(testing::unalignedCheckpoint(3));
  const auto payloadOf = [](const std::string& f) {
    return f.substr(kCheckpointMetadataHeaderBytes,
                    f.size() - kCheckpointMetadataHeaderBytes - kCheckpointMetadataTrailerBytes);
  };
  const std::map<std::string, std::string> seeds = {
      {"file_two_operators", std::string(1, '\0') + file},
      {"payload_two_operators", "\x01" + payload},
      {"file_incremental", std::string(1, '\0') + incremental},
      {"payload_incremental", "\x01" + payloadOf(incremental)},
      {"file_channel_state", std::string(1, '\0') + unaligned},
      {"payload_channel_state", "\x01" + payloadOf(unaligned)}};
  const char* update = std::getenv("SLUICE_UPDATE_FUZZ_CORPUS");
  for (const auto& [name, bytes] : seeds) {
    if (update != nullptr && std::string(update) == "1") {
      std::filesystem::create_directories(dir);
      std::ofstream(dir / name, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    std::ifstream in(dir / name, std::ios::binary);
    ASSERT_TRUE(in.good()) << (dir / name) << " is missing: run with SLUICE_UPDATE_FUZZ_CORPUS=1";
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), bytes) << name;
  }
}

}  // namespace
}  // namespace sluice::runtime::checkpoint
