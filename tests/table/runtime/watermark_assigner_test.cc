// WatermarkAssignerOperator: monotonic watermarks from the max watermark-column value (Flink's
// WatermarkAssignerOperator), rows forwarded untouched and in order.

#include "table/runtime/watermark_assigner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.h"
#include "operator_test_util.h"

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

}  // namespace
}  // namespace sluice::table
