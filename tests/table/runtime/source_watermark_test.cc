// Watermarks generated inside a source per split (watermark push-down): SplitWatermarks' combination rules
// and RowSourceReaderOperator with a scripted reader and the table layer's RowtimeWatermarkGenerator.
// Expected values are worked out by hand in the comments.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <functional>

#include "common/config.h"
#include "common/error.h"
#include "operator_test_util.h"
#include "runtime/operators/row_source_reader_operator.h"
#include "runtime/operators/split_watermarks.h"
#include "runtime/time/input_activity_clock.h"
#include "runtime/time/processing_time_service.h"
#include "table/functions/expression.h"
#include "table/runtime/watermark_assigner.h"

namespace sluice::table {
namespace {

using runtime::SplitWatermarks;
using runtime::Watermark;
using testing::CollectingOutput;
using ::testing::ElementsAre;
using testing::ins;
using ::testing::IsEmpty;
using testing::makeBatch;
using types::LogicalType;
using types::RowType;

TEST(SplitWatermarksTest, MinimumOverSplitsAndUnreadSplitHoldsBack) {
  SplitWatermarks w;
  w.addSplit("p0", 0);
  w.addSplit("p1", 0);
  w.onBatch("p0", 5000, 0);
  // p1 has produced nothing: it holds the minimum at Long.MIN, nothing is emitted.
  EXPECT_EQ(w.nextWatermark(0), std::nullopt);
  w.onBatch("p1", 3000, 0);
  EXPECT_EQ(w.nextWatermark(0), 3000);  // min(5000, 3000)
  w.onBatch("p1", 9000, 0);
  EXPECT_EQ(w.nextWatermark(0), 5000);          // min(5000, 9000)
  EXPECT_EQ(w.nextWatermark(0), std::nullopt);  // unchanged: not emitted twice
}

TEST(SplitWatermarksTest, SplitWatermarkNeverGoesBack) {
  SplitWatermarks w;
  w.onBatch("p0", 7000, 0);
  EXPECT_EQ(w.nextWatermark(0), 7000);
  w.onBatch("p0", 2000, 0);  // an older batch of the same split: the split stays at 7000
  w.onBatch("p0", std::nullopt, 0);
  EXPECT_EQ(w.nextWatermark(0), std::nullopt);
  // A new split starts at Long.MIN but the emitted watermark does not go back either.
  w.onBatch("p1", 1000, 0);
  EXPECT_EQ(w.nextWatermark(0), std::nullopt);
  w.onBatch("p1", 8000, 0);
  EXPECT_EQ(w.nextWatermark(0), std::nullopt);  // min(7000, 8000) = 7000, already emitted
  w.onBatch("p0", 12000, 0);
  EXPECT_EQ(w.nextWatermark(0), 8000);  // min(12000, 8000)
  EXPECT_EQ(w.lastEmitted(), 8000);
}

TEST(SplitWatermarksTest, FinishedSplitReleasesTheWatermark) {
  SplitWatermarks w;
  w.addSplit("p0", 0);
  w.addSplit("p1", 0);
  w.onBatch("p0", 2000, 0);
  w.onBatch("p1", 10000, 0);
  EXPECT_EQ(w.nextWatermark(0), 2000);
  w.releaseSplit("p0");  // p0 finished at 2000: only p1 counts now
  EXPECT_EQ(w.nextWatermark(0), 10000);
  EXPECT_EQ(w.numSplits(), 1u);
  w.releaseSplit("p1");  // nothing left: nothing to emit, the last one stays
  EXPECT_EQ(w.nextWatermark(0), std::nullopt);
  EXPECT_EQ(w.lastEmitted(), 10000);
}

TEST(SplitWatermarksTest, WatermarkAtOrBelowZeroIsNotEmitted) {
  SplitWatermarks w;
  w.onBatch("p0", -500, 0);
  EXPECT_EQ(w.nextWatermark(0), std::nullopt);  // as the WatermarkAssigner, whose watermark starts at 0
  w.onBatch("p0", 1, 0);
  EXPECT_EQ(w.nextWatermark(0), 1);
}

TEST(SplitWatermarksTest, IdleSplitStopsHoldingBack) {
  SplitWatermarks w(/*idle_timeout_ms=*/100);
  w.addSplit("p0", 0);
  w.addSplit("p1", 0);
  w.onBatch("p0", 4000, 50);
  // At 99 ms p1 (added at 0, no record) is not idle yet: min is Long.MIN.
  EXPECT_EQ(w.nextWatermark(99), std::nullopt);
  // At 100 ms p1 is idle (100 - 0 >= 100); p0 had a record at 50 and is active: 4000.
  EXPECT_EQ(w.nextWatermark(100), 4000);
  // p1 produces again with 3000: active again, but the output never goes back.
  w.onBatch("p1", 3000, 120);
  w.onBatch("p0", 6000, 120);
  EXPECT_EQ(w.nextWatermark(120), std::nullopt);  // min(6000, 3000) = 3000 < 4000
  w.onBatch("p1", 5000, 130);
  EXPECT_EQ(w.nextWatermark(130), 5000);  // min(6000, 5000)
  EXPECT_FALSE(w.allIdle(229));           // p0 idle (229 - 120 >= 100), p1 not yet (99)
  // Both idle at 260 (last records at 120 and 130): nothing holds back, so the maximum over the splits,
  // max(6000, 5000), is the watermark (FLINK-38454) and the subtask is idle.
  EXPECT_EQ(w.nextWatermark(260), 6000);
  EXPECT_TRUE(w.allIdle(260));
  EXPECT_EQ(w.nextWatermark(300), std::nullopt);  // nothing new
  // p1 produces again: active, and below the emitted 6000 nothing is emitted.
  w.onBatch("p1", 5500, 310);
  EXPECT_FALSE(w.allIdle(310));
  EXPECT_EQ(w.nextWatermark(310), std::nullopt);
}

TEST(SplitWatermarksTest, NoIdlenessWithoutTimeoutOrSplits) {
  SplitWatermarks none;
  EXPECT_FALSE(none.allIdle(1000000));  // no split: the operator decides (see RowSourceReaderOperator)
  SplitWatermarks w;                    // timeout 0: idleness disabled (Flink's default)
  w.onBatch("p0", 100, 0);
  EXPECT_FALSE(w.allIdle(1000000));
}

// --- the operator -----------------------------------------------------------------------------------------

// Rows: ts TIMESTAMP(3), v INT. Watermark expression: ts - 1000 (a BIGINT/TIMESTAMP ms column here computed
// by the generator from an input reference, so the test needs no SQL).
RowType rowType() { return RowType{{"ts", "v"}, {LogicalType::timestamp(3), LogicalType::integer()}}; }

// One scripted step of the reader: a function of the output.
using Step = std::function<void(runtime::ReaderOutput<types::RowBatch>&)>;

// A source with one split (none with `has_split` false) whose reader runs one step per poll. When the
// steps are done the reader ends (bounded) or has nothing available (unbounded).
struct ScriptedSource final : runtime::Source<types::RowBatch, int> {
  explicit ScriptedSource(std::deque<Step> steps, bool bounded = true, bool has_split = true)
      : steps_(std::move(steps)), bounded_(bounded), has_split_(has_split) {}
  bool isBounded() const override { return bounded_; }
  struct Enumerator final : runtime::SplitEnumerator<int> {
    explicit Enumerator(bool has) : given(!has) {}
    bool given;
    std::optional<int> handleSplitRequest(int) override {
      if (given) return std::nullopt;
      given = true;
      return 0;
    }
  };
  struct Reader final : runtime::SourceReader<types::RowBatch, int> {
    Reader(std::deque<Step> s, bool b) : steps(std::move(s)), bounded(b) {}
    std::deque<Step> steps;
    bool bounded;
    void addSplit(int) override {}
    runtime::InputStatus pollNext(runtime::ReaderOutput<types::RowBatch>& out) override {
      if (steps.empty()) return bounded ? runtime::InputStatus::kEndOfInput : runtime::InputStatus::kNothingAvailable;
      steps.front()(out);
      steps.pop_front();
      return runtime::InputStatus::kMoreAvailable;
    }
  };
  std::unique_ptr<runtime::SplitEnumerator<int>> createEnumerator(int) const override {
    return std::make_unique<Enumerator>(has_split_);
  }
  std::unique_ptr<runtime::SourceReader<types::RowBatch, int>> createReader(
      const runtime::SourceReaderContext&) const override {
    return std::make_unique<Reader>(steps_, bounded_);
  }
  std::deque<Step> steps_;
  bool bounded_;
  bool has_split_;
};

Step batchOf(std::string split, std::vector<int64_t> ts) {
  return [split, ts](runtime::ReaderOutput<types::RowBatch>& out) {
    std::vector<testing::InputRow> rows;
    for (int64_t t : ts) rows.push_back(ins({t, int64_t{1}}));
    out.collectForSplit(split, makeBatch(rowType(), rows));
  };
}
Step create(std::string split) {
  return [split](runtime::ReaderOutput<types::RowBatch>& out) { out.createOutputForSplit(split); };
}
Step release(std::string split) {
  return [split](runtime::ReaderOutput<types::RowBatch>& out) { out.releaseOutputForSplit(split); };
}

// Runs the operator to its end; returns rows and watermarks as emitted.
std::vector<std::string> run(std::deque<Step> steps, bool push_down) {
  std::shared_ptr<const runtime::BatchWatermarkGenerator> gen;
  if (push_down) {
    ExprPtr ts = makeInputRef(0, LogicalType::timestamp(3));
    // Watermark value: the row time itself (a delay is the table layer's expression; the combination is
    // what is under test here).
    gen = std::make_shared<RowtimeWatermarkGenerator>(rowType(), ts, ts);
  }
  runtime::RowSourceReaderOperator<int> op(std::make_shared<ScriptedSource>(std::move(steps)), 0, nullptr, gen);
  runtime::OperatorMetrics metrics;
  CollectingOutput out;
  testing::openOperator(op, out, metrics);
  while (op.emitNext() != runtime::InputStatus::kEndOfInput) {
  }
  op.close();
  std::vector<std::string> ev;
  for (const auto& e : out.events)
    if (e.rfind("WM(", 0) == 0) ev.push_back(e);
  return ev;
}

TEST(RowSourceReaderWatermarkTest, InterleavedPartitionsKeepTheirOwnWatermarks) {
  // Two partitions read side by side: p0 is ahead (10 000, 20 000), p1 behind (5 000, 15 000).
  // Per split: after p0's first batch p1 holds back (Long.MIN); then min(10000, 5000) = 5000;
  // then min(20000, 5000) = 5000 (nothing new); then min(20000, 15000) = 15000; p1 finishes first:
  // p0 alone: 20000. A per-subtask maximum would have emitted 10000 before p1's row at 5000 (late).
  std::deque<Step> steps = {create("p0"),          create("p1"),           batchOf("p0", {10000}),
                            batchOf("p1", {5000}), batchOf("p0", {20000}), batchOf("p1", {15000}),
                            release("p1")};
  EXPECT_THAT(run(steps, true), ElementsAre("WM(5000)", "WM(15000)", "WM(20000)"));
  // Without a generator the source emits no watermarks (the WatermarkAssigner downstream does).
  EXPECT_THAT(run(steps, false), IsEmpty());
}

TEST(RowSourceReaderWatermarkTest, BatchesWithoutSplitCountAsOneSplit) {
  std::deque<Step> steps = {[](runtime::ReaderOutput<types::RowBatch>& out) {
    out.collect(makeBatch(rowType(), {ins({int64_t{3000}, int64_t{1}}), ins({int64_t{2000}, int64_t{1}})}));
  }};
  EXPECT_THAT(run(steps, true), ElementsAre("WM(3000)"));
}

TEST(RowSourceReaderWatermarkTest, NullRowtimeFailsTheJob) {
  std::deque<Step> steps = {[](runtime::ReaderOutput<types::RowBatch>& out) {
    out.collectForSplit("p0", makeBatch(rowType(), {ins({testing::kNull, int64_t{1}})}));
  }};
  EXPECT_THROW(run(steps, true), UserError);
}

// --- idleness of the operator -------------------------------------------------------------------------------

// Records like CollectingOutput, then runs `after_collect` (a test's stand-in for a blocked output: it moves
// the clock while the source waits downstream).
struct HookedOutput final : CollectingOutput {
  void collect(types::RowBatch&& batch) override {
    CollectingOutput::collect(std::move(batch));
    if (after_collect) after_collect();
  }
  std::function<void()> after_collect;
};

// Opens `op` with `table.exec.source.idle-timeout` = `idle_timeout` and a clock read from `*now_ms`.
struct IdleHarness {
  explicit IdleHarness(const std::string& idle_timeout) : timers([this] { return now_ms; }) {
    config.set("table.exec.source.idle-timeout", idle_timeout);
  }
  void open(runtime::StreamOperator& op) { testing::openOperator(op, out, metrics, &config, &timers); }
  int64_t now_ms = 0;
  Configuration config;
  runtime::ProcessingTimeService timers;
  runtime::OperatorMetrics metrics;
  HookedOutput out;
};

std::shared_ptr<const runtime::BatchWatermarkGenerator> rowtimeGenerator() {
  ExprPtr ts = makeInputRef(0, LogicalType::timestamp(3));
  return std::make_shared<RowtimeWatermarkGenerator>(rowType(), ts, ts);
}

TEST(RowSourceReaderIdlenessTest, UnboundedSubtaskWithoutSplitIsIdleAndRunsOn) {
  IdleHarness h("0 ms");  // no timeout needed: a reader without splits is idle (as Flink's)
  runtime::RowSourceReaderOperator<int> op(std::make_shared<ScriptedSource>(std::deque<Step>{}, false, false));
  h.open(op);
  EXPECT_EQ(op.emitNext(), runtime::InputStatus::kNothingAvailable);
  EXPECT_EQ(op.emitNext(), runtime::InputStatus::kNothingAvailable);
  EXPECT_THAT(h.out.take(), ElementsAre("IDLE"));  // announced once
  op.close();
}

TEST(RowSourceReaderIdlenessTest, BoundedSubtaskWithoutSplitEnds) {
  IdleHarness h("0 ms");
  runtime::RowSourceReaderOperator<int> op(std::make_shared<ScriptedSource>(std::deque<Step>{}));
  h.open(op);
  // The scripted enumerator has one split: the reader ends it at once, then no split is left.
  EXPECT_EQ(op.emitNext(), runtime::InputStatus::kMoreAvailable);
  EXPECT_EQ(op.emitNext(), runtime::InputStatus::kEndOfInput);
  EXPECT_THAT(h.out.take(), IsEmpty());
  op.close();
}

TEST(RowSourceReaderIdlenessTest, AllSplitsIdleMarkTheSubtaskIdleUntilRowsCome) {
  IdleHarness h("100 ms");
  // Steps, one per emitNext: split p0 and p1 created; p0 gets rows up to 4000 at t=0; p1 stays empty.
  std::deque<Step> steps = {create("p0"), create("p1"), batchOf("p0", {1000, 4000})};
  runtime::RowSourceReaderOperator<int> op(std::make_shared<ScriptedSource>(std::move(steps), false), 0, nullptr,
                                           rowtimeGenerator());
  h.open(op);
  op.emitNext();  // create p0 at 0
  op.emitNext();  // create p1 at 0
  op.emitNext();  // p0: 1000, 4000 -> p0 at 4000, p1 at Long.MIN holds the minimum
  EXPECT_THAT(h.out.take(), ElementsAre("+I[1000, 1]", "+I[4000, 1]"));
  h.now_ms = 99;
  op.emitNext();
  EXPECT_THAT(h.out.take(), IsEmpty());  // neither split idle yet
  h.now_ms = 100;
  // Both idle (100 - 0 >= 100): the maximum 4000 is flushed, then IDLE.
  op.emitNext();
  EXPECT_THAT(h.out.take(), ElementsAre("WM(4000)", "IDLE"));
  h.now_ms = 500;
  op.emitNext();
  EXPECT_THAT(h.out.take(), IsEmpty());  // still idle, nothing repeated
  op.close();
}

TEST(RowSourceReaderIdlenessTest, RowsAfterIdlenessAnnounceActiveFirst) {
  IdleHarness h("100 ms");
  std::deque<Step> steps = {create("p0"), batchOf("p0", {2000})};
  for (int i = 0; i < 2; ++i) steps.push_back([](runtime::ReaderOutput<types::RowBatch>&) {});  // empty polls
  steps.push_back(batchOf("p0", {9000}));
  runtime::RowSourceReaderOperator<int> op(std::make_shared<ScriptedSource>(std::move(steps), false), 0, nullptr,
                                           rowtimeGenerator());
  h.open(op);
  op.emitNext();
  op.emitNext();
  EXPECT_THAT(h.out.take(), ElementsAre("+I[2000, 1]", "WM(2000)"));
  h.now_ms = 150;
  op.emitNext();  // empty poll: p0 idle since 0
  EXPECT_THAT(h.out.take(), ElementsAre("IDLE"));
  op.emitNext();  // empty poll
  h.now_ms = 160;
  op.emitNext();  // p0: 9000
  EXPECT_THAT(h.out.take(), ElementsAre("ACTIVE", "+I[9000, 1]", "WM(9000)"));
  op.close();
}

TEST(InputActivityClockTest, PausesFreezeTheClockAndCountOnce) {
  runtime::InputActivityClock c;
  EXPECT_EQ(c.relative(10), 10);
  c.pause(10);
  EXPECT_EQ(c.relative(50), 10);  // frozen
  c.pause(20);                    // nested: still the pause from 10
  c.resume(30);
  EXPECT_EQ(c.relative(40), 10);
  c.resume(60);                   // 50 ms paused
  EXPECT_EQ(c.relative(60), 10);
  EXPECT_EQ(c.relative(75), 25);
}

TEST(RowSourceReaderIdlenessTest, TimeBlockedDownstreamDoesNotMakeASplitIdle) {
  // FLINK-35886 / FLIP-471: p0's batch blocks 500 ms downstream (a full output). p1 had rows just before,
  // so it is not idle: the watermark stays at p1's 5000 and p1's next row (6000) is not late. Counting the
  // blocked time would have made p1 idle (500 >= 100) and emitted p0's 8000 first.
  IdleHarness h("100 ms");
  std::deque<Step> steps = {create("p0"), create("p1"), batchOf("p1", {5000}), batchOf("p0", {8000}),
                            batchOf("p1", {6000})};
  for (int i = 0; i < 2; ++i) steps.push_back([](runtime::ReaderOutput<types::RowBatch>&) {});  // empty polls
  runtime::RowSourceReaderOperator<int> op(std::make_shared<ScriptedSource>(std::move(steps), false), 0, nullptr,
                                           rowtimeGenerator());
  h.open(op);
  op.emitNext();
  op.emitNext();
  op.emitNext();  // p1: 5000 (p0 still at Long.MIN)
  EXPECT_THAT(h.out.take(), ElementsAre("+I[5000, 1]"));
  h.out.after_collect = [&h] {
    h.now_ms += 500;
    h.out.after_collect = nullptr;
  };
  op.emitNext();  // p0: 8000, blocked downstream from 0 to 500
  EXPECT_EQ(h.now_ms, 500);
  EXPECT_THAT(h.out.take(), ElementsAre("+I[8000, 1]", "WM(5000)"));
  op.emitNext();  // p1: 6000
  EXPECT_THAT(h.out.take(), ElementsAre("+I[6000, 1]", "WM(6000)"));
  // Idleness still counts the time outside the pause: 99 ms after the last rows neither split is idle,
  // 100 ms after both are (the maximum flushed, then IDLE).
  h.now_ms = 599;
  op.emitNext();
  EXPECT_THAT(h.out.take(), IsEmpty());
  h.now_ms = 600;
  op.emitNext();
  EXPECT_THAT(h.out.take(), ElementsAre("WM(8000)", "IDLE"));
  op.close();
}

}  // namespace
}  // namespace sluice::table
