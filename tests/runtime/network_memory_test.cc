#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "common/error.h"
#include "runtime/network/buffer_pool.h"

namespace sluice::runtime::network {
namespace {

TEST(BufferTest, CapacityLimitAndAppend) {
  NetworkBufferPool global(1, 1024);
  std::vector<MemorySegment*> segs = global.requestExclusiveSegments(1, "test");
  {
    Buffer b(segs[0], &global);
    EXPECT_EQ(b.capacity(), 1024);
    b.setCapacityLimit(256);
    const std::string bytes(300, 'x');
    // Only 256 of 300 bytes fit the limit.
    EXPECT_EQ(b.append(reinterpret_cast<const uint8_t*>(bytes.data()), 300), 256);
    EXPECT_TRUE(b.isFull());
    EXPECT_THROW(b.setCapacityLimit(100), InternalError);  // below the bytes written
    b.setCapacityLimit(4096);                              // clamped to the segment
    EXPECT_EQ(b.capacity(), 1024);
    EXPECT_EQ(global.availableSegments(), 0);
  }
  // The destructor gave the segment back.
  EXPECT_EQ(global.availableSegments(), 1);
}

TEST(NetworkBufferPoolTest, InsufficientBuffersNameTheOptionToRaise) {
  NetworkBufferPool global(4, 1024);
  auto pool = global.createBufferPool(3, 8, "gate 1");
  try {
    global.requestExclusiveSegments(2, "channel 7");  // 3 reserved + 2 > 4
    FAIL();
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("Insufficient number of network buffers for channel 7"), std::string::npos) << m;
    EXPECT_NE(m.find("taskmanager.memory.network.fraction"), std::string::npos) << m;
  }
  EXPECT_THROW(global.createBufferPool(2, 2, "gate 2"), ConfigError);
  EXPECT_EQ(global.requestExclusiveSegments(1, "channel 8").size(), 1u);
}

TEST(LocalBufferPoolTest, MinimumIsGuaranteedAndMaximumBounds) {
  NetworkBufferPool global(6, 1024);
  auto a = global.createBufferPool(2, 4, "a");
  auto b = global.createBufferPool(2, 2, "b");
  // 6 segments, 2 + 2 reserved: a may take its 2 plus the 2 unreserved ones, up to its max 4.
  std::vector<Buffer> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(a->requestBuffer());
    ASSERT_TRUE(held.back().valid()) << i;
  }
  EXPECT_FALSE(a->requestBuffer().valid());  // max reached
  // b still gets its reserved two.
  Buffer b1 = b->requestBuffer();
  Buffer b2 = b->requestBuffer();
  EXPECT_TRUE(b1.valid() && b2.valid());
  EXPECT_FALSE(b->requestBuffer().valid());
  EXPECT_EQ(a->buffersInUse(), 4);
  held.clear();
  EXPECT_EQ(a->buffersInUse(), 0);
  // a keeps its minimum of 2 and returns the 2 excess segments: 6 - 2 (b) - 2 (a) = 2 free.
  EXPECT_EQ(global.availableSegments(), 2);
}

struct RecordingListener : BufferListener {
  std::vector<Buffer> got;
  bool want_more = false;
  bool notifyBufferAvailable(Buffer buffer) override {
    got.push_back(std::move(buffer));
    return want_more;
  }
};

TEST(LocalBufferPoolTest, ListenerIsHandedTheNextRecycledBuffer) {
  NetworkBufferPool global(1, 512);
  auto pool = global.createBufferPool(1, 1, "gate");
  Buffer first = pool->requestBuffer();
  ASSERT_TRUE(first.valid());
  RecordingListener listener;
  EXPECT_FALSE(pool->requestBufferOrListen(&listener).valid());
  EXPECT_TRUE(listener.got.empty());
  first.recycle();
  ASSERT_EQ(listener.got.size(), 1u);
  EXPECT_TRUE(listener.got[0].valid());
  EXPECT_EQ(pool->buffersInUse(), 1);
  listener.got.clear();  // not registered any more (want_more = false): back to the pool
  EXPECT_EQ(pool->buffersInUse(), 0);
  EXPECT_TRUE(pool->requestBuffer().valid());
}

TEST(LocalBufferPoolTest, GlobalRecycleWakesAPoolWaitingForMemory) {
  NetworkBufferPool global(2, 512);
  std::vector<MemorySegment*> exclusive = global.requestExclusiveSegments(1, "channel");
  auto pool = global.createBufferPool(0, 2, "gate");  // nothing reserved: floats on what is free
  Buffer one = pool->requestBuffer();
  ASSERT_TRUE(one.valid());
  RecordingListener listener;
  EXPECT_FALSE(pool->requestBufferOrListen(&listener).valid());
  global.recycleExclusiveSegments(exclusive);  // frees a segment in the global pool
  ASSERT_EQ(listener.got.size(), 1u);
  EXPECT_TRUE(listener.got[0].valid());
}

TEST(LocalBufferPoolTest, BlockingRequestWakesOnRecycleWithoutPolling) {
  NetworkBufferPool global(1, 512);
  auto pool = global.createBufferPool(1, 1, "gate");
  Buffer held = pool->requestBuffer();
  std::thread t([&] { held.recycle(); });
  Buffer got = pool->requestBufferBlocking();  // returns once the other thread recycles
  t.join();
  EXPECT_TRUE(got.valid());
}

TEST(LocalBufferPoolTest, DestroyWakesBlockedRequesterWithAnError) {
  NetworkBufferPool global(1, 512);
  auto pool = global.createBufferPool(1, 1, "gate");
  Buffer held = pool->requestBuffer();
  std::thread t([&] { pool->destroy(); });
  EXPECT_THROW(pool->requestBufferBlocking(), InternalError);
  t.join();
}

}  // namespace
}  // namespace sluice::runtime::network

namespace sluice::runtime::network {
namespace {

TEST(LocalBufferPoolTest, MaxBuffersPerChannelCapsOneSubpartitionNotThePool) {
  NetworkBufferPool global(16, 256);
  auto pool = global.createBufferPool(4, 16, "partition");
  pool->setMaxBuffersPerChannel(3, 2);
  std::vector<Buffer> sp0;
  sp0.push_back(pool->requestBuffer(0));
  sp0.push_back(pool->requestBuffer(0));
  ASSERT_TRUE(sp0[0].valid() && sp0[1].valid());
  EXPECT_EQ(pool->subpartitionBuffers(0), 2);
  // Subpartition 0 is at its cap of 2 although the pool has 14 more.
  EXPECT_FALSE(pool->requestBuffer(0).valid());
  Buffer sp1 = pool->requestBuffer(1);
  EXPECT_TRUE(sp1.valid());
  EXPECT_EQ(pool->buffersInUse(), 3);
  // Recycling a buffer of subpartition 1 does not help subpartition 0; recycling one of 0 does.
  sp1.recycle();
  EXPECT_EQ(pool->subpartitionBuffers(1), 0);
  EXPECT_FALSE(pool->requestBuffer(0).valid());
  sp0.pop_back();
  EXPECT_EQ(pool->subpartitionBuffers(0), 1);
  Buffer again = pool->requestBuffer(0);
  EXPECT_TRUE(again.valid());
  EXPECT_EQ(pool->subpartitionBuffers(0), 2);
  EXPECT_THROW(pool->requestBuffer(3), InternalError);
}

TEST(LocalBufferPoolTest, WriterWaitsForItsSubpartitionUntilTheConsumerDrains) {
  NetworkBufferPool global(16, 256);
  auto pool = global.createBufferPool(3, 16, "partition");
  pool->setMaxBuffersPerChannel(2, 1);
  Buffer held = pool->requestBuffer(0);
  ASSERT_TRUE(held.valid());
  std::promise<void> got;
  std::future<void> done = got.get_future();
  std::thread writer([&] {
    Buffer b = pool->requestBufferBlocking(0);  // subpartition 0 is at its cap of 1: waits
    EXPECT_TRUE(b.valid());
    got.set_value();
  });
  // The other subpartition is still writable meanwhile.
  Buffer other = pool->requestBuffer(1);
  EXPECT_TRUE(other.valid());
  held.recycle();  // the consumer read subpartition 0's buffer
  EXPECT_EQ(done.wait_for(std::chrono::seconds(30)), std::future_status::ready);  // failure guard only
  writer.join();
}

}  // namespace
}  // namespace sluice::runtime::network
