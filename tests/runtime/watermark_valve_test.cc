#include "runtime/task/watermark_valve.h"

#include <gtest/gtest.h>

#include "runtime/stream_element.h"

namespace sluice::runtime {
namespace {

TEST(StatusWatermarkValveTest, EmitsTheMinimumOverChannelsOnlyWhenItAdvances) {
  StatusWatermarkValve v(3);
  EXPECT_EQ(v.inputWatermark(0, 10), std::nullopt);  // channels (10, -inf, -inf): min -inf
  EXPECT_EQ(v.inputWatermark(1, 5), std::nullopt);   // (10, 5, -inf)
  EXPECT_EQ(v.inputWatermark(2, 7), 5);              // (10, 5, 7): min 5
  EXPECT_EQ(v.inputWatermark(2, 20), std::nullopt);  // (10, 5, 20): still 5
  EXPECT_EQ(v.inputWatermark(1, 12), 10);            // (10, 12, 20): min 10
  EXPECT_EQ(v.inputWatermark(0, 9), std::nullopt);   // going back on a channel is ignored
  EXPECT_EQ(v.inputWatermark(0, 15), 12);            // (15, 12, 20): 12
  EXPECT_EQ(v.currentWatermark(), 12);
}

TEST(StatusWatermarkValveTest, EndedChannelsCountAsInfinity) {
  StatusWatermarkValve v(2);
  EXPECT_EQ(v.inputWatermark(0, 100), std::nullopt);  // (100, -inf)
  EXPECT_EQ(v.endOfInput(1), 100);                    // (100, +inf): 100
  EXPECT_EQ(v.inputWatermark(0, 150), 150);           // (150, +inf)
  EXPECT_EQ(v.endOfInput(0), Watermark::kMaxTimestamp);
  EXPECT_EQ(v.endOfInput(0), std::nullopt);
}

TEST(StatusWatermarkValveTest, SingleChannelForwardsEveryAdvance) {
  StatusWatermarkValve v(1);
  EXPECT_EQ(v.inputWatermark(0, 1), 1);
  EXPECT_EQ(v.inputWatermark(0, 1), std::nullopt);
  EXPECT_EQ(v.inputWatermark(0, 2), 2);
  EXPECT_EQ(v.inputWatermark(0, Watermark::kMaxTimestamp), Watermark::kMaxTimestamp);
  EXPECT_EQ(v.endOfInput(0), std::nullopt);  // already at +inf
}

}  // namespace
}  // namespace sluice::runtime
