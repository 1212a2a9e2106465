// Watermarks generated inside a source per split (watermark push-down): SplitWatermarks' combination rules
// and RowSourceReaderOperator with a scripted reader and the table layer's RowtimeWatermarkGenerator.
// Expected values are worked out by hand in the comments.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <functional>

#include "common/error.h"
#include "operator_test_util.h"
#include "runtime/operators/row_source_reader_operator.h"
#include "runtime/operators/split_watermarks.h"
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
  // Both idle at 260 (last records at 120 and 130): nothing holds back, nothing to emit.
  EXPECT_EQ(w.nextWatermark(260), std::nullopt);
}

// --- the operator -----------------------------------------------------------------------------------------

// Rows: ts TIMESTAMP(3), v INT. Watermark expression: ts - 1000 (a BIGINT/TIMESTAMP ms column here computed
// by the generator from an input reference, so the test needs no SQL).
RowType rowType() { return RowType{{"ts", "v"}, {LogicalType::timestamp(3), LogicalType::integer()}}; }

// One scripted step of the reader: a function of the output.
using Step = std::function<void(runtime::ReaderOutput<types::RowBatch>&)>;

struct ScriptedSource final : runtime::Source<types::RowBatch, int> {
  explicit ScriptedSource(std::deque<Step> steps) : steps_(std::move(steps)) {}
  struct Enumerator final : runtime::SplitEnumerator<int> {
    bool given = false;
    std::optional<int> handleSplitRequest(int) override {
      if (given) return std::nullopt;
      given = true;
      return 0;
    }
  };
  struct Reader final : runtime::SourceReader<types::RowBatch, int> {
    explicit Reader(std::deque<Step> s) : steps(std::move(s)) {}
    std::deque<Step> steps;
    void addSplit(int) override {}
    runtime::InputStatus pollNext(runtime::ReaderOutput<types::RowBatch>& out) override {
      if (steps.empty()) return runtime::InputStatus::kEndOfInput;
      steps.front()(out);
      steps.pop_front();
      return runtime::InputStatus::kMoreAvailable;
    }
  };
  std::unique_ptr<runtime::SplitEnumerator<int>> createEnumerator(int) const override {
    return std::make_unique<Enumerator>();
  }
  std::unique_ptr<runtime::SourceReader<types::RowBatch, int>> createReader(
      const runtime::SourceReaderContext&) const override {
    return std::make_unique<Reader>(steps_);
  }
  std::deque<Step> steps_;
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

}  // namespace
}  // namespace sluice::table
