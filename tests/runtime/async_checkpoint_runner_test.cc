// The asynchronous part of a task's checkpoints (AsyncCheckpointRunner) held deterministically by its
// write hook while the "task" (the test thread) goes on changing the state: what is acknowledged is the
// state of the snapshot's barrier, and an aborted checkpoint's write-out is dropped or stopped, reported
// to nobody, and its RocksDB files are removed. Both backends. Expected values come from the writes the
// test made, counted by hand.

#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "common/hash.h"
#include "runtime/state/keyed_state_backend.h"
#include "runtime/state/stream_operator_state_context.h"
#include "runtime/task/async_checkpoint_runner.h"

namespace sluice::runtime {
namespace {

using state::KeyGroupRange;
using state::StateBackendOptions;
using state::StateBackendType;
using state::StreamOperatorStateContext;
using state::ValueStateDescriptor;

constexpr int32_t kMaxP = 128;
const KeyGroupRange kAll = KeyGroupRange::of(0, kMaxP - 1);

struct RecordingResponder final : checkpoint::CheckpointResponder {
  std::mutex mu;
  std::map<int64_t, checkpoint::TaskStateSnapshot> acknowledged;
  std::set<int64_t> declined;
  void acknowledgeCheckpoint(int, int, int64_t id, checkpoint::TaskStateSnapshot state,
                             const checkpoint::CheckpointMetrics&) override {
    std::lock_guard<std::mutex> lock(mu);
    acknowledged.emplace(id, std::move(state));
  }
  void declineCheckpoint(int, int, int64_t id, const std::string&) override {
    std::lock_guard<std::mutex> lock(mu);
    declined.insert(id);
  }
  void reportFinalState(int, int, checkpoint::TaskStateSnapshot, const checkpoint::CheckpointMetrics&) override {}
};

/// Holds the write-out of checkpoint `held` in the hook until release(); entered() waits for it to be there.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  int64_t held = -1;
  bool inside = false;
  bool released = false;
  void hook(int64_t id) {
    std::unique_lock<std::mutex> lock(mu);
    if (id != held) return;
    inside = true;
    cv.notify_all();
    cv.wait(lock, [&] { return released; });
  }
  void entered() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return inside; });
  }
  void release() {
    std::lock_guard<std::mutex> lock(mu);
    released = true;
    cv.notify_all();
  }
};

struct ResetHook {
  ~ResetHook() { AsyncCheckpointRunner::setWriteHookForTesting(nullptr); }
};

class AsyncCheckpointRunnerTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           fmt::format("sluice-async-runner-{}-{}", GetParam(), ::getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    if (GetParam() == "rocksdb") options_.type = StateBackendType::kRocksDB;
    options_.local_directory = dir_.string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  /// Entries under the local directory: the backend's working directory plus any snapshot copies.
  size_t localEntries() const {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir_)) ++n;
    return n;
  }
  static void put(StreamOperatorStateContext& ctx, const std::string& key, int64_t v) {
    auto& b = ctx.keyedStateBackend();
    b.setCurrentKey(key, assignToKeyGroup(hashBytes(key), kMaxP));
    b.getValueState(ValueStateDescriptor<int64_t>{"count"}).update(v);
  }
  /// The value of every key in `keys` restored from `s` (-1: absent).
  std::map<std::string, int64_t> restore(const checkpoint::OperatorSubtaskState& s,
                                         const std::vector<std::string>& keys) {
    StreamOperatorStateContext ctx("op", kAll, kMaxP, &s, options_);
    std::map<std::string, int64_t> out;
    auto& b = ctx.keyedStateBackend();
    auto& v = b.getValueState(ValueStateDescriptor<int64_t>{"count"});
    for (const auto& k : keys) {
      b.setCurrentKey(k, assignToKeyGroup(hashBytes(k), kMaxP));
      out[k] = v.value() == nullptr ? -1 : *v.value();
    }
    return out;
  }
  AsyncCheckpointRunner::Futures futuresOf(StreamOperatorStateContext& ctx, int64_t id) {
    AsyncCheckpointRunner::Futures f;
    f.emplace_back("op", ctx.snapshotAsync(id, false));
    return f;
  }

  std::filesystem::path dir_;
  StateBackendOptions options_;
};

INSTANTIATE_TEST_SUITE_P(Backends, AsyncCheckpointRunnerTest, ::testing::Values("hashmap", "rocksdb"),
                         [](const auto& info) { return info.param; });

// Checkpoint 1 is held in its asynchronous part while the task writes on; the acknowledgement holds the
// values of its barrier (a = 1, b = 2, no c), not the later ones.
TEST_P(AsyncCheckpointRunnerTest, AHeldWriteOutAcknowledgesTheStateOfItsBarrier) {
  RecordingResponder responder;
  Gate gate;
  gate.held = 1;
  ResetHook reset;
  AsyncCheckpointRunner::setWriteHookForTesting([&](int, int, int64_t id) { gate.hook(id); });
  StreamOperatorStateContext ctx("op", kAll, kMaxP, nullptr, options_);
  put(ctx, "a", 1);
  put(ctx, "b", 2);
  AsyncCheckpointRunner runner(&responder, 0, 0);
  runner.submit(1, futuresOf(ctx, 1), {});
  gate.entered();
  put(ctx, "a", 10);  // the task processes records while the write-out is pending
  put(ctx, "c", 3);
  gate.release();
  runner.drain();
  ASSERT_EQ(responder.acknowledged.count(1), 1u);
  EXPECT_TRUE(responder.declined.empty());
  const std::map<std::string, int64_t> expected{{"a", 1}, {"b", 2}, {"c", -1}};
  EXPECT_EQ(restore(responder.acknowledged[1].at("op"), {"a", "b", "c"}), expected);
}

// Checkpoint 1 is aborted while its write-out is held, checkpoint 2 while it is still queued: neither is
// acknowledged nor declined, checkpoint 3 after them is, and no snapshot copy is left on disk.
TEST_P(AsyncCheckpointRunnerTest, AnAbortedCheckpointsWriteOutIsDroppedAndCleanedUp) {
  RecordingResponder responder;
  Gate gate;
  gate.held = 1;
  ResetHook reset;
  AsyncCheckpointRunner::setWriteHookForTesting([&](int, int, int64_t id) { gate.hook(id); });
  StreamOperatorStateContext ctx("op", kAll, kMaxP, nullptr, options_);
  for (int i = 0; i < 500; ++i) put(ctx, "k" + std::to_string(i), i);
  const size_t working = localEntries();
  AsyncCheckpointRunner runner(&responder, 0, 0);
  runner.submit(1, futuresOf(ctx, 1), {});
  gate.entered();
  put(ctx, "k0", 100);
  runner.submit(2, futuresOf(ctx, 2), {});
  if (GetParam() == "rocksdb") EXPECT_EQ(localEntries(), working + 2);  // two native checkpoints pending
  runner.abort(2);
  runner.abort(1);
  gate.release();
  put(ctx, "k1", 101);
  runner.submit(3, futuresOf(ctx, 3), {});
  runner.drain();
  EXPECT_EQ(responder.acknowledged.count(1), 0u);
  EXPECT_EQ(responder.acknowledged.count(2), 0u);
  EXPECT_TRUE(responder.declined.empty());
  ASSERT_EQ(responder.acknowledged.count(3), 1u);
  const std::map<std::string, int64_t> expected{{"k0", 100}, {"k1", 101}, {"k2", 2}};
  EXPECT_EQ(restore(responder.acknowledged[3].at("op"), {"k0", "k1", "k2"}), expected);
  EXPECT_EQ(localEntries(), working);
}

}  // namespace
}  // namespace sluice::runtime
