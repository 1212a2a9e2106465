// table.exec.state.ttl: SQL operators driven by hand on a hand-driven processing-time clock. Expected
// changelogs worked out from Flink's rules (GroupAggFunction, ProcTimeDeduplicateKeepFirstRowFunction,
// StreamingJoinOperator, ChangelogNormalize and Top-N with a StateTtlConfig of OnCreateAndWrite /
// NeverReturnExpired): an expired key is gone as if never seen, and nothing is emitted when it expires.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/time/processing_time_service.h"
#include "state_test_util.h"
#include "table/runtime/changelog_normalize.h"
#include "table/runtime/deduplicate_operator.h"
#include "table/runtime/group_aggregate.h"
#include "table/runtime/rank_operator.h"
#include "table/runtime/state_retention.h"
#include "table/runtime/streaming_join.h"

namespace sluice::table {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::CollectingOutput;
using testing::del;
using testing::ins;
using testing::makeBatch;
using testing::ua;
using testing::ub;
using types::LogicalType;
using types::RowType;

constexpr int64_t kTtl = 100;

RowType kv() { return RowType{{"k", "v"}, {LogicalType::string(), LogicalType::bigint()}}; }

runtime::state::StateBackendOptions backend(bool rocksdb) {
  runtime::state::StateBackendOptions o;
  o.type = rocksdb ? runtime::state::StateBackendType::kRocksDB : runtime::state::StateBackendType::kHashMap;
  return o;
}

/// An operator opened on its own state context (heap or RocksDB) and a clock the test sets.
struct Harness {
  explicit Harness(bool rocksdb, const runtime::checkpoint::OperatorSubtaskState* from = nullptr)
      : timers([this] { return now; }),
        state(std::make_unique<runtime::state::StreamOperatorStateContext>(
            "op", testing::subtaskRange(1, 0), testing::kMaxParallelism, from, backend(rocksdb))) {}
  void open(runtime::StreamOperator& op) {
    runtime::OperatorContext ctx;
    ctx.task_name = "test";
    ctx.operator_name = "test";
    ctx.uid = "op";
    ctx.max_parallelism = testing::kMaxParallelism;
    ctx.metrics = &metrics;
    ctx.state = state.get();
    ctx.processing_time_service = &timers;
    op.open(ctx, &out);
  }
  /// Moves the clock to `t` and runs the timers due.
  void advance(int64_t t) {
    now = t;
    timers.fireDue();
  }
  int64_t now = 0;
  runtime::ProcessingTimeService timers;
  runtime::OperatorMetrics metrics;
  CollectingOutput out;
  std::unique_ptr<runtime::state::StreamOperatorStateContext> state;
};

AggregateCall countStar() {
  AggregateCall c;
  c.kind = AggKind::kCountStar;
  c.arg_index = -1;
  return c;
}

class StateRetentionTest : public ::testing::TestWithParam<bool> {};

TEST_P(StateRetentionTest, GroupAggregateKeyExpiresWhenItsTimerFires) {
  Harness h(GetParam());
  GroupAggregateOperator op(kv(), {0}, {countStar()}, true, {}, kTtl);
  h.open(op);
  h.now = 1000;
  op.processBatch(makeBatch(kv(), {ins({"a", int64_t{1}})}));
  h.now = 1050;  // a's state now lives until 1150 (every write extends it)
  op.processBatch(makeBatch(kv(), {ins({"a", int64_t{2}})}));
  EXPECT_THAT(h.out.take(), ElementsAre("+I[a, 1]", "-U[a, 1]", "+U[a, 2]"));
  h.advance(1100);  // the timer set by the first row: too early, re-armed at 1150
  EXPECT_EQ(op.numKeys(), 1u);
  h.advance(1149);
  EXPECT_EQ(op.numKeys(), 1u);
  h.advance(1150);
  EXPECT_EQ(op.numKeys(), 0u);
  EXPECT_THAT(h.out.take(), IsEmpty());  // expiry emits nothing
  // A retraction for a key without state is dropped; the next row is the key's first again.
  op.processBatch(makeBatch(kv(), {del({"a", int64_t{2}}), ins({"a", int64_t{3}})}));
  EXPECT_THAT(h.out.take(), ElementsAre("+I[a, 1]"));
}

TEST_P(StateRetentionTest, ExpiredStateIsNeverReadEvenBeforeItsTimerRuns) {
  Harness h(GetParam());
  GroupAggregateOperator op(kv(), {0}, {countStar()}, true, {}, kTtl);
  h.open(op);
  op.processBatch(makeBatch(kv(), {ins({"a", int64_t{1}}), ins({"b", int64_t{1}})}));
  h.now = 99;  // one ms before the deadline: still there
  op.processBatch(makeBatch(kv(), {ins({"b", int64_t{2}})}));
  h.now = 100;  // a's deadline (0 + 100) has come; no timer has run
  op.processBatch(makeBatch(kv(), {ins({"a", int64_t{2}}), ins({"b", int64_t{3}})}));
  EXPECT_THAT(h.out.take(), ElementsAre("+I[a, 1]", "+I[b, 1]", "-U[b, 1]", "+U[b, 2]", "+I[a, 1]", "-U[b, 2]",
                                        "+U[b, 3]"));
}

TEST_P(StateRetentionTest, RestoredDeadlinesAndTimersExpireTheKeys) {
  auto snapshot = [&] {
    Harness h(GetParam());
    GroupAggregateOperator op(kv(), {0}, {countStar()}, true, {}, kTtl);
    h.open(op);
    h.now = 1000;
    op.processBatch(makeBatch(kv(), {ins({"a", int64_t{1}}), ins({"b", int64_t{1}})}));
    h.now = 1050;
    op.processBatch(makeBatch(kv(), {ins({"b", int64_t{2}})}));
    return testing::takeSnapshot(op, *h.state);
  }();
  for (bool rocksdb : {false, true}) {
    SCOPED_TRACE(rocksdb ? "restored on RocksDB" : "restored on the heap");
    Harness h(rocksdb, &snapshot);
    GroupAggregateOperator op(kv(), {0}, {countStar()}, true, {}, kTtl);
    h.now = 1100;
    h.open(op);       // re-arms the restored timers (1100: a's, due now)
    h.timers.fireDue();
    EXPECT_EQ(op.numKeys(), 1u);  // a expired at 1100, b lives until 1150
    op.processBatch(makeBatch(kv(), {ins({"a", int64_t{3}}), ins({"b", int64_t{3}})}));
    EXPECT_THAT(h.out.take(), ElementsAre("+I[a, 1]", "-U[b, 2]", "+U[b, 3]"));
  }
}

TEST_P(StateRetentionTest, DeduplicateKeepFirstEmitsAKeyAgainAfterItExpired) {
  Harness h(GetParam());
  RankSpec spec;
  spec.partition_keys = {0};
  spec.rank_end = 1;
  spec.output_rank_number = false;
  spec.state_ttl_ms = kTtl;
  DeduplicateOperator op(kv(), spec);
  h.open(op);
  op.processBatch(makeBatch(kv(), {ins({"a", int64_t{1}})}));
  h.now = 60;  // a duplicate does not write the state, so it does not extend the key's life
  op.processBatch(makeBatch(kv(), {ins({"a", int64_t{2}})}));
  h.advance(100);
  op.processBatch(makeBatch(kv(), {ins({"a", int64_t{3}})}));
  EXPECT_THAT(h.out.take(), ElementsAre("+I[a, 1]", "+I[a, 3]"));
}

TEST_P(StateRetentionTest, ChangelogNormalizeForgetsAnIdleKey) {
  Harness h(GetParam());
  ChangelogNormalizeOperator op(kv(), {0}, kTtl);
  h.open(op);
  op.processBatch(makeBatch(kv(), {ins({"a", int64_t{1}}), ins({"b", int64_t{1}})}));
  h.now = 80;  // the same row again is still a write: b lives until 180
  op.processBatch(makeBatch(kv(), {ua({"b", int64_t{1}})}));
  h.advance(100);
  EXPECT_EQ(op.numKeys(), 1u);
  // a is gone: its -D is dropped and its next row is an insert; b is still there.
  op.processBatch(makeBatch(kv(), {del({"a", int64_t{1}}), ins({"a", int64_t{2}}), ua({"b", int64_t{2}})}));
  EXPECT_THAT(h.out.take(), ElementsAre("+I[a, 1]", "+I[b, 1]", "+I[a, 2]", "-U[b, 1]", "+U[b, 2]"));
}

TEST_P(StateRetentionTest, TopNPartitionStartsAfreshAfterItExpired) {
  Harness h(GetParam());
  RankSpec spec;
  spec.strategy = RankStrategy::kAppendFast;
  spec.partition_keys = {0};
  spec.order = {SortField{1, false, false}};  // v DESC
  spec.rank_end = 1;
  spec.output_rank_number = false;
  spec.state_ttl_ms = kTtl;
  RankOperator op(kv(), spec);
  h.open(op);
  op.processBatch(makeBatch(kv(), {ins({"a", int64_t{5}})}));
  h.advance(100);
  // Without the expiry 3 would not enter a's top 1 (5 is larger).
  op.processBatch(makeBatch(kv(), {ins({"a", int64_t{3}})}));
  EXPECT_THAT(h.out.take(), ElementsAre("+I[a, 5]", "+I[a, 3]"));
}

TEST_P(StateRetentionTest, JoinSideExpiresOnItsOwn) {
  Harness h(GetParam());
  JoinSpec spec;
  spec.type = FlinkJoinType::kInner;
  spec.left_keys = {0};
  spec.right_keys = {0};
  spec.state_ttl_ms = kTtl;
  StreamingJoinOperator op(kv(), kv(), spec);
  h.open(op);
  op.processBatch(makeBatch(kv(), {ins({"a", int64_t{1}})}));   // left a at 0: lives until 100
  h.now = 50;
  op.processBatch2(makeBatch(kv(), {ins({"a", int64_t{10}})}));  // right a at 50: until 150; matches
  h.now = 90;
  // Matching does not write the left row (inner join: no association count): left a still ends at 100.
  op.processBatch2(makeBatch(kv(), {ins({"a", int64_t{20}})}));
  h.advance(100);
  EXPECT_EQ(op.numKeys(true), 0u);
  EXPECT_GT(op.numKeys(false), 0u);
  op.processBatch(makeBatch(kv(), {ins({"a", int64_t{2}})}));  // finds both right rows of a
  h.advance(190);                                               // right a (last row at 90) expires
  op.processBatch(makeBatch(kv(), {ins({"a", int64_t{3}})}));  // finds no right row
  EXPECT_THAT(h.out.take(), ElementsAre("+I[a, 1, a, 10]", "+I[a, 1, a, 20]", "+I[a, 2, a, 10]", "+I[a, 2, a, 20]"));
}

INSTANTIATE_TEST_SUITE_P(Backends, StateRetentionTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "RocksDB" : "Heap");
                         });

TEST(StateTtlOptionTest, ParsesFlinksDurationAndRefusesNegatives) {
  Configuration config;
  EXPECT_EQ(stateTtlOf(config), 0);
  config.set("table.exec.state.ttl", "1 h");
  EXPECT_EQ(stateTtlOf(config), 3'600'000);
  config.set("table.exec.state.ttl", "36000 ms");
  EXPECT_EQ(stateTtlOf(config), 36'000);
}

}  // namespace
}  // namespace sluice::table
