// WatermarkAssignerOperator: monotonic watermarks from the max watermark-column value (Flink's
// WatermarkAssignerOperator), rows forwarded untouched and in order.

#include "table/runtime/watermark_assigner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/config.h"
#include "common/error.h"
#include "operator_test_util.h"
#include "runtime/time/processing_time_service.h"

namespace sluice::table {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::CollectingOutput;
using testing::ins;
using testing::kNull;
using testing::makeBatch;
using types::LogicalType;
using types::RowType;

// Input: ts TIMESTAMP(3), wm TIMESTAMP(3) (= ts - 2000, computed upstream), v INT.
RowType inputType() {
  return RowType{{"ts", "wm", "v"}, {LogicalType::timestamp(3), LogicalType::timestamp(3), LogicalType::integer()}};
}

class WatermarkAssignerTest : public ::testing::Test {
 protected:
  void start(std::vector<int> output_columns = {}) {
    op_ = std::make_unique<WatermarkAssignerOperator>(0, 1, std::move(output_columns));
    testing::openOperator(*op_, out_, metrics_);
  }
  std::vector<std::string> feed(const std::vector<testing::InputRow>& rows) {
    op_->processBatch(makeBatch(inputType(), rows));
    return out_.take();
  }

  runtime::OperatorMetrics metrics_;
  CollectingOutput out_;
  std::unique_ptr<WatermarkAssignerOperator> op_;
};

TEST_F(WatermarkAssignerTest, EmitsMaxCandidateAfterBatchAndNeverGoesBack) {
  start();
  // wm = ts - 2000: -1000, 3000, 1000 -> max 3000, emitted after the rows, which keep their order.
  EXPECT_THAT(feed({ins({1000, -1000, 1}), ins({5000, 3000, 2}), ins({3000, 1000, 3})}),
              ElementsAre("+I[1000, -1000, 1]", "+I[5000, 3000, 2]", "+I[3000, 1000, 3]", "WM(3000)"));
  // 2000 < 3000 and NULL: no new watermark.
  EXPECT_THAT(feed({ins({4000, 2000, 4}), ins({6000, kNull, 5})}),
              ElementsAre("+I[4000, 2000, 4]", "+I[6000, null, 5]"));
  EXPECT_THAT(feed({ins({6000, 4000, 6})}), ElementsAre("+I[6000, 4000, 6]", "WM(4000)"));
  EXPECT_EQ(op_->currentWatermark(), 4000);
}

TEST_F(WatermarkAssignerTest, WatermarksNotAboveZeroAreNeverEmitted) {
  start();
  // Flink starts the candidate at 0: -5000 and 0 never exceed it.
  EXPECT_THAT(feed({ins({-3000, -5000, 1}), ins({2000, 0, 2})}),
              ElementsAre("+I[-3000, -5000, 1]", "+I[2000, 0, 2]"));
  EXPECT_EQ(op_->lastEmittedWatermark(), 0);
}

TEST_F(WatermarkAssignerTest, UpstreamWatermarksSwallowedExceptMaxOnce) {
  start();
  feed({ins({3000, 1000, 1})});
  op_->processWatermark(runtime::Watermark{50000});
  EXPECT_THAT(out_.take(), IsEmpty());
  op_->processWatermark(runtime::Watermark{runtime::Watermark::kMaxTimestamp});
  op_->endInput();
  op_->processWatermark(runtime::Watermark{runtime::Watermark::kMaxTimestamp});
  EXPECT_THAT(out_.take(), ElementsAre("WM(9223372036854775807)"));
}

TEST_F(WatermarkAssignerTest, EndInputEmitsMaxWhenNotYetForwarded) {
  start();
  op_->endInput();
  EXPECT_THAT(out_.take(), ElementsAre("WM(9223372036854775807)"));
}

TEST_F(WatermarkAssignerTest, ProjectsOutputColumns) {
  start({0, 2});
  EXPECT_THAT(feed({ins({5000, 3000, 7}), ins({6000, 4000, 8})}),
              ElementsAre("+I[5000, 7]", "+I[6000, 8]", "WM(4000)"));
  ASSERT_EQ(out_.batches.size(), 1u);
  EXPECT_EQ(out_.batches[0].numColumns(), 2u);
}

TEST_F(WatermarkAssignerTest, NullRowTimeFails) {
  start();
  EXPECT_THROW(feed({ins({kNull, 1000, 1})}), UserError);
  EXPECT_THROW(WatermarkAssignerOperator(-1, 1), UserError);
  EXPECT_NE(makeWatermarkAssignerFactory(0, 1, {0, 2})->createOperator(), nullptr);
}

// --- idleness (`table.exec.source.idle-timeout`) ------------------------------------------------------------

TEST(IdlenessTimerTest, CheckIntervalFollowsFlinksRule) {
  // min/max of (200 ms auto-watermark interval, timeout): the smaller when 5x apart, else a fifth of it.
  EXPECT_EQ(runtime::IdlenessTimer::checkIntervalMs(5000), 200);  // 1000 < 5000
  EXPECT_EQ(runtime::IdlenessTimer::checkIntervalMs(1000), 40);   // 1000 !< 1000: 200 / 5
  EXPECT_EQ(runtime::IdlenessTimer::checkIntervalMs(100), 20);    // 500 !< 200: 100 / 5
  EXPECT_EQ(runtime::IdlenessTimer::checkIntervalMs(3), 3);       // 15 < 200
  EXPECT_EQ(runtime::IdlenessTimer::checkIntervalMs(1), 1);
}

class WatermarkAssignerIdlenessFixture : public ::testing::Test {
 protected:
  void start(const std::string& timeout) {
    config_.set("table.exec.source.idle-timeout", timeout);
    op_ = std::make_unique<WatermarkAssignerOperator>(0, 1);
    testing::openOperator(*op_, out_, metrics_, &config_, &timers_);
  }
  // Moves the clock to `t` ms and runs the timers that are due, as the task loop does.
  std::vector<std::string> at(int64_t t) {
    now_ = t;
    timers_.fireDue();
    return out_.take();
  }
  std::vector<std::string> feed(const std::vector<testing::InputRow>& rows) {
    op_->processBatch(makeBatch(inputType(), rows));
    return out_.take();
  }

  int64_t now_ = 0;
  Configuration config_;
  runtime::ProcessingTimeService timers_{[this] { return now_; }};
  runtime::OperatorMetrics metrics_;
  CollectingOutput out_;
  std::unique_ptr<WatermarkAssignerOperator> op_;
};

TEST_F(WatermarkAssignerIdlenessFixture, DisabledByDefault) {
  start("0 ms");
  EXPECT_TRUE(timers_.empty());  // no idleness timer at all
  EXPECT_THAT(at(1000000), IsEmpty());
}

TEST_F(WatermarkAssignerIdlenessFixture, IdleAfterTimeoutWithoutRowsActiveBeforeTheNextRows) {
  start("100 ms");  // checks every 20 ms (see CheckIntervalFollowsFlinksRule)
  now_ = 10;
  EXPECT_THAT(feed({ins({3000, 1000, 1})}), ElementsAre("+I[3000, 1000, 1]", "WM(1000)"));
  // The check at 20 sees the row: activity at 20. The next check, due at 40, runs with the clock at 100
  // and sets the one after to 120.
  EXPECT_THAT(at(20), IsEmpty());
  EXPECT_THAT(at(100), IsEmpty());            // 20 + 100 > 100
  EXPECT_THAT(at(120), ElementsAre("IDLE"));  // 20 + 100 <= 120
  EXPECT_THAT(at(130), IsEmpty());            // announced once
  // Rows again: ACTIVE comes before them and before the watermark they move.
  EXPECT_THAT(feed({ins({9000, 7000, 2})}), ElementsAre("ACTIVE", "+I[9000, 7000, 2]", "WM(7000)"));
  EXPECT_THAT(at(140), IsEmpty());  // the check at 140 sees the row: activity at 140; next check at 160
  EXPECT_THAT(at(239), IsEmpty());  // the check at 160 runs late, at 239: 240 > 239; the next one at 259
  EXPECT_THAT(at(258), IsEmpty());
  EXPECT_THAT(at(259), ElementsAre("IDLE"));  // 140 + 100 <= 259
  op_->processWatermark(runtime::Watermark{runtime::Watermark::kMaxTimestamp});
  EXPECT_THAT(out_.take(), ElementsAre("ACTIVE", "WM(9223372036854775807)"));
  op_->close();
}

TEST_F(WatermarkAssignerIdlenessFixture, UpstreamStatusIsForwarded) {
  start("0 ms");
  op_->processWatermarkStatus(runtime::WatermarkStatus::kIdle);
  op_->processWatermarkStatus(runtime::WatermarkStatus::kActive);
  EXPECT_THAT(out_.take(), ElementsAre("IDLE", "ACTIVE"));
}

}  // namespace
}  // namespace sluice::table
