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

constexpr auto kIdle = WatermarkStatus::kIdle;
constexpr auto kActive = WatermarkStatus::kActive;

ValveOutput nothing() { return {}; }
ValveOutput mark(int64_t ts) { return {ts, std::nullopt}; }
ValveOutput status(WatermarkStatus s) { return {std::nullopt, s}; }
ValveOutput both(int64_t ts, WatermarkStatus s) { return {ts, s}; }

TEST(StatusWatermarkValveTest, EndedChannelsCountAsInfinity) {
  StatusWatermarkValve v(2);
  EXPECT_EQ(v.inputWatermark(0, 100), std::nullopt);  // (100, -inf)
  EXPECT_EQ(v.endOfInput(1), mark(100));              // (100, +inf): 100
  EXPECT_EQ(v.inputWatermark(0, 150), 150);           // (150, +inf)
  EXPECT_EQ(v.endOfInput(0), mark(Watermark::kMaxTimestamp));
  EXPECT_EQ(v.endOfInput(0), nothing());
}

TEST(StatusWatermarkValveTest, SingleChannelForwardsEveryAdvance) {
  StatusWatermarkValve v(1);
  EXPECT_EQ(v.inputWatermark(0, 1), 1);
  EXPECT_EQ(v.inputWatermark(0, 1), std::nullopt);
  EXPECT_EQ(v.inputWatermark(0, 2), 2);
  EXPECT_EQ(v.inputWatermark(0, Watermark::kMaxTimestamp), Watermark::kMaxTimestamp);
  EXPECT_EQ(v.endOfInput(0), nothing());  // already at +inf
}

// The scenarios below follow Flink's StatusWatermarkValveTest; every output is worked out by hand in the
// comments as (channel watermarks / statuses) -> output.

TEST(StatusWatermarkValveTest, SingleChannelStatusChangesAreForwardedOnce) {
  StatusWatermarkValve v(1);
  EXPECT_EQ(v.inputWatermarkStatus(0, kActive), nothing());  // already active
  EXPECT_EQ(v.inputWatermark(0, 0), 0);
  EXPECT_EQ(v.inputWatermarkStatus(0, kIdle), status(kIdle));  // the only channel held 0 = max: nothing to flush
  EXPECT_EQ(v.currentStatus(), kIdle);
  EXPECT_EQ(v.inputWatermarkStatus(0, kIdle), nothing());
  EXPECT_EQ(v.inputWatermark(0, 5), std::nullopt);  // a watermark on an idle channel is ignored
  EXPECT_EQ(v.inputWatermarkStatus(0, kActive), status(kActive));
  EXPECT_EQ(v.inputWatermark(0, 7), 7);
}

TEST(StatusWatermarkValveTest, IdleChannelsAreLeftOutOfTheMinimum) {
  StatusWatermarkValve v(3);
  EXPECT_EQ(v.inputWatermark(0, 10), std::nullopt);  // (10, -inf, -inf)
  EXPECT_EQ(v.inputWatermark(1, 5), std::nullopt);   // (10, 5, -inf)
  // Channel 2 never sent anything and goes idle: min over (10, 5) = 5.
  EXPECT_EQ(v.inputWatermarkStatus(2, kIdle), mark(5));
  EXPECT_EQ(v.inputWatermark(1, 15), 10);  // (10, 15, idle): 10
  // Channel 0 (holding the minimum 10) goes idle: the rest, channel 1, gives 15.
  EXPECT_EQ(v.inputWatermarkStatus(0, kIdle), mark(15));
  EXPECT_EQ(v.inputWatermark(1, 20), 20);  // only channel 1 counts
  EXPECT_EQ(v.currentStatus(), kActive);
}

TEST(StatusWatermarkValveTest, ReactivatedChannelNeverMovesTheWatermarkBack) {
  StatusWatermarkValve v(2);
  EXPECT_EQ(v.inputWatermark(0, 10), std::nullopt);  // (10, -inf)
  EXPECT_EQ(v.inputWatermarkStatus(1, kIdle), mark(10));
  EXPECT_EQ(v.inputWatermark(0, 25), 25);  // (25, idle)
  // Channel 1 comes back at -inf: it is active but not aligned, the output stays at 25.
  EXPECT_EQ(v.inputWatermarkStatus(1, kActive), nothing());
  EXPECT_EQ(v.inputWatermark(1, 12), std::nullopt);  // 12 < 25: still not aligned
  EXPECT_EQ(v.inputWatermark(0, 40), 40);            // min over aligned {channel 0} = 40
  EXPECT_EQ(v.inputWatermark(1, 30), std::nullopt);  // 30 < 40: not aligned yet
  EXPECT_EQ(v.inputWatermark(1, 45), std::nullopt);  // aligned now: min(40, 45) = 40, no advance
  EXPECT_EQ(v.inputWatermark(0, 50), 45);            // min(50, 45): channel 1 holds it back again
  EXPECT_EQ(v.currentWatermark(), 45);
}

TEST(StatusWatermarkValveTest, AllIdleFlushesTheMaximumThenGoesIdle) {
  StatusWatermarkValve v(3);
  EXPECT_EQ(v.inputWatermark(0, 10), std::nullopt);
  EXPECT_EQ(v.inputWatermark(1, 7), std::nullopt);
  EXPECT_EQ(v.inputWatermark(2, 3), 3);                    // (10, 7, 3): 3
  EXPECT_EQ(v.inputWatermarkStatus(0, kIdle), nothing());  // (idle 10, 7, 3): still 3, 10 was not the min
  EXPECT_EQ(v.inputWatermarkStatus(2, kIdle), mark(7));    // (idle 10, 7, idle 3): 7
  // The last active channel goes idle holding the output 7: the maximum over all (10) is flushed, then IDLE.
  EXPECT_EQ(v.inputWatermarkStatus(1, kIdle), both(10, kIdle));
  EXPECT_EQ(v.currentStatus(), kIdle);
  // Channel 2 comes back: the task is ACTIVE again, but channel 2's 3 < 10 keeps it unaligned.
  EXPECT_EQ(v.inputWatermarkStatus(2, kActive), status(kActive));
  EXPECT_EQ(v.inputWatermark(2, 8), std::nullopt);
  EXPECT_EQ(v.inputWatermark(2, 12), 12);  // caught up: aligned, the only one, 12
  EXPECT_EQ(v.currentWatermark(), 12);
}

TEST(StatusWatermarkValveTest, AllIdleWithoutFlushWhenTheLastChannelWasAhead) {
  StatusWatermarkValve v(2);
  EXPECT_EQ(v.inputWatermark(0, 4), std::nullopt);
  EXPECT_EQ(v.inputWatermark(1, 9), 4);                  // (4, 9): 4
  EXPECT_EQ(v.inputWatermarkStatus(0, kIdle), mark(9));  // (idle 4, 9): 9
  // Channel 1 holds the output 9 and is the maximum: the flush finds nothing higher.
  EXPECT_EQ(v.inputWatermarkStatus(1, kIdle), status(kIdle));
  EXPECT_EQ(v.currentWatermark(), 9);
}

TEST(StatusWatermarkValveTest, EndOfInputWakesAnIdleTask) {
  StatusWatermarkValve v(2);
  EXPECT_EQ(v.inputWatermark(0, 6), std::nullopt);
  EXPECT_EQ(v.inputWatermarkStatus(1, kIdle), mark(6));
  EXPECT_EQ(v.inputWatermarkStatus(0, kIdle), status(kIdle));
  // Channel 1 ends: an active channel at +inf. The task becomes ACTIVE before its watermark moves on:
  // the aligned channels are {1}, so +inf.
  EXPECT_EQ(v.endOfInput(1), both(Watermark::kMaxTimestamp, kActive));
  EXPECT_EQ(v.inputWatermarkStatus(1, kIdle), nothing());  // an ended channel has no status any more
  EXPECT_EQ(v.endOfInput(0), nothing());
}

TEST(StatusWatermarkValveTest, EndedChannelDoesNotWaitForAnIdleOne) {
  StatusWatermarkValve v(3);
  EXPECT_EQ(v.inputWatermarkStatus(2, kIdle), nothing());  // (-inf, -inf, idle)
  EXPECT_EQ(v.inputWatermark(0, 20), std::nullopt);        // (20, -inf, idle)
  EXPECT_EQ(v.endOfInput(1), mark(20));                    // (20, +inf, idle): 20
  EXPECT_EQ(v.inputWatermark(0, 30), 30);
}

}  // namespace
}  // namespace sluice::runtime
