#include <gtest/gtest.h>

#include <vector>

#include "common/error.h"
#include "runtime/network/buffer_debloater.h"

namespace sluice::runtime::network {
namespace {

// ---- ThroughputCalculator (mirrors Flink's ThroughputCalculatorTest) ----

TEST(ThroughputCalculatorTest, BytesOverMeasuredTime) {
  ManualRelativeClock clock;
  ThroughputCalculator calc(clock);
  calc.incomingDataSize(666);
  clock.advance(100);
  // 666 B / 100 ms * 1000 = 6660 B/s
  EXPECT_EQ(calc.calculateThroughput(), 6660);
  // No time passed since the last calculation: the previous value.
  EXPECT_EQ(calc.calculateThroughput(), 6660);
  clock.advance(1);
  // 0 B / 1 ms = 0 B/s
  EXPECT_EQ(calc.calculateThroughput(), 0);
}

TEST(ThroughputCalculatorTest, IgnoresIdleTime) {
  ManualRelativeClock clock;
  ThroughputCalculator calc(clock);
  calc.incomingDataSize(7);
  clock.advance(1);
  calc.pauseMeasurement();
  clock.advance(9);  // idle: not counted
  calc.incomingDataSize(3);  // resumes
  clock.advance(1);
  // (7 + 3) B / (1 + 1) ms * 1000 = 5000 B/s
  EXPECT_EQ(calc.calculateThroughput(), 5000);
}

TEST(ThroughputCalculatorTest, CalculationDuringIdleTimeCountsOnlyTimeBeforePause) {
  ManualRelativeClock clock;
  ThroughputCalculator calc(clock);
  calc.incomingDataSize(10);
  clock.advance(1);
  calc.pauseMeasurement();
  clock.advance(5);
  // 10 B / 1 ms * 1000 = 10000 B/s; the 5 ms after the pause do not count.
  EXPECT_EQ(calc.calculateThroughput(), 10000);
  clock.advance(3);
  // Still paused, nothing measured: the previous value.
  EXPECT_EQ(calc.calculateThroughput(), 10000);
  calc.resumeMeasurement();
  clock.advance(4);
  // 0 B / 4 ms = 0
  EXPECT_EQ(calc.calculateThroughput(), 0);
}

TEST(ThroughputCalculatorTest, RejectsNegativeArguments) {
  ManualRelativeClock clock;
  ThroughputCalculator calc(clock);
  EXPECT_THROW(calc.calculateThroughput(-1, 5), InternalError);
  EXPECT_THROW(calc.calculateThroughput(1, -5), InternalError);
}

// ---- BufferDebloater (mirrors Flink's BufferDebloaterTest) ----

BufferDebloatConfiguration config(int32_t min, int32_t max, int32_t start, int32_t samples, int32_t stable = 0) {
  BufferDebloatConfiguration c;
  c.enabled = true;
  c.target_ms = 1000;
  c.min_buffer_size = min;
  c.max_buffer_size = max;
  c.starting_buffer_size = start;
  c.samples = samples;
  c.threshold_percentages = 25;
  c.stable_periods = stable;
  return c;
}

TEST(BufferDebloaterTest, ZeroBuffersInUseCountsAsOne) {
  BufferDebloater d(config(50, 2400, 2400, 1));
  // samples 1: alpha = 2 / (1 + 1) = 1, so the EMA is the instant value.
  // desired = 1200 B/s * 1000 ms / 1000 = 1200 B over max(1, 0) = 1 buffer; min(1200, 2 * 2400) = 1200.
  // |1200 - 2400| = 1200 >= (int)(2400 * 0.25) = 600: announced.
  EXPECT_EQ(d.recalculateBufferSize(1200, 0), 1200);
  EXPECT_EQ(d.lastBufferSize(), 1200);
  // 1200 B * 1 buffer * 1000 / 1200 B/s = 1000 ms
  EXPECT_EQ(d.lastEstimatedTimeToConsumeBuffersMs(), 1000);
}

TEST(BufferDebloaterTest, ClampsToMaxAndAlwaysAnnouncesBounds) {
  BufferDebloater d(config(50, 2400, 1200, 1));
  // desired 10000 B / 1 buffer, capped at 2 * 1200 = 2400 = max: a bound, announced.
  EXPECT_EQ(d.recalculateBufferSize(10000, 1), 2400);
  // min(10000, 2 * 2400 = 4800) = 4800, clamped to 2400 = the announced size: skipped.
  EXPECT_EQ(d.recalculateBufferSize(10000, 1), std::nullopt);
}

TEST(BufferDebloaterTest, ClampsToMinAndAnnouncesTheBoundBelowTheThreshold) {
  BufferDebloater d(config(50, 2400, 60, 1));
  // desired 10 B / 1 buffer -> 10, clamped to 50. |50 - 60| = 10 < (int)(60 * 0.25) = 15, but 50 is the
  // min bound: announced anyway.
  EXPECT_EQ(d.recalculateBufferSize(10, 1), 50);
  EXPECT_EQ(d.recalculateBufferSize(10, 1), std::nullopt);  // equal to the announced size
}

TEST(BufferDebloaterTest, GrowthIsCappedAtDouble) {
  BufferDebloater d(config(256, 32768, 1000, 1));
  // desired 100000 B / 1 buffer; min(100000, 2 * 1000) = 2000; |2000 - 1000| >= 250: announced.
  EXPECT_EQ(d.recalculateBufferSize(100000, 1), 2000);
  // min(100000, 4000) = 4000
  EXPECT_EQ(d.recalculateBufferSize(100000, 1), 4000);
}

TEST(BufferDebloaterTest, ChangesBelowTheThresholdAreSkipped) {
  BufferDebloater d(config(256, 32768, 1000, 1));
  // 800 B / 1 buffer = 800; |800 - 1000| = 200 < (int)(1000 * 0.25) = 250: skipped.
  EXPECT_EQ(d.recalculateBufferSize(800, 1), std::nullopt);
  EXPECT_EQ(d.lastBufferSize(), 1000);
  // 740: |740 - 1000| = 260 >= 250: announced.
  EXPECT_EQ(d.recalculateBufferSize(740, 1), 740);
  // Threshold now relative to 740: (int)(740 * 0.25) = 185; 900 - 740 = 160 < 185: skipped.
  EXPECT_EQ(d.recalculateBufferSize(900, 1), std::nullopt);
}

TEST(BufferDebloaterTest, MovingAverageOverTwentySamples) {
  BufferDebloater d(config(256, 32768, 1024, 20));
  // alpha = 2 / 21 = 0.0952381. desired = 10240 B/s * 1 s = 10240 B over 4 buffers = 2560 per buffer.
  // 1: instant = min(2560, 2 * 1024 = 2048) = 2048; last = 1024 + (2048 - 1024) * 2/21 = 1121.524 -> 1122;
  //    |1122 - 1024| = 98 < 256: skipped.
  EXPECT_EQ(d.recalculateBufferSize(10240, 4), std::nullopt);
  // estimated time: 1122 * 4 * 1000 / 10240 = 438.28 -> 438 ms
  EXPECT_EQ(d.lastEstimatedTimeToConsumeBuffersMs(), 438);
  // 2: instant = min(2560, floor(2 * 1121.524) = 2243) = 2243; last = 1121.524 + (2243 - 1121.524) * 2/21
  //    = 1228.331 -> 1228; |1228 - 1024| = 204 < 256: skipped.
  EXPECT_EQ(d.recalculateBufferSize(10240, 4), std::nullopt);
  // 3: instant = min(2560, floor(2456.66) = 2456) = 2456; last = 1228.331 + (2456 - 1228.331) * 2/21
  //    = 1345.252 -> 1345; |1345 - 1024| = 321 >= 256: announced.
  EXPECT_EQ(d.recalculateBufferSize(10240, 4), 1345);
}

// A load that is steady over 3.2 s but whose measured throughput alternates every 8 periods (1.6 s)
// between 28672 B/s and 4096 B/s (mean 16384 B/s = 4096 B per buffer over 4 buffers). The EMA swings by
// more than 25 % around 4096, so Flink's rule keeps announcing sizes up and down (FLINK-24230).
std::vector<int64_t> squareWave(int half_period, int cycles) {
  std::vector<int64_t> out;
  for (int c = 0; c < cycles; ++c) {
    for (int i = 0; i < half_period; ++i) out.push_back(28672);
    for (int i = 0; i < half_period; ++i) out.push_back(4096);
  }
  return out;
}

struct Announcements {
  int count = 0;
  int direction_changes = 0;
};

Announcements announcementsAfterWarmUp(BufferDebloater& d, const std::vector<int64_t>& throughputs, size_t warm_up) {
  Announcements a;
  int last = d.lastBufferSize();
  int last_direction = 0;
  for (size_t i = 0; i < throughputs.size(); ++i) {
    std::optional<int32_t> s = d.recalculateBufferSize(throughputs[i], 4);
    if (!s || i < warm_up) {
      if (s) last = *s;
      continue;
    }
    ++a.count;
    const int direction = *s > last ? 1 : -1;
    if (last_direction != 0 && direction != last_direction) ++a.direction_changes;
    last_direction = direction;
    last = *s;
  }
  return a;
}

TEST(BufferDebloaterTest, FlinkRuleOscillatesUnderSteadySquareWaveLoad) {
  BufferDebloater flink(config(256, 32768, 1024, 20, /*stable=*/0));
  Announcements a = announcementsAfterWarmUp(flink, squareWave(8, 20), 96);
  // 20 cycles of 16 periods; after 6 cycles of warm-up, 14 cycles remain. Each half cycle moves the EMA
  // about 1 - (1 - 2/21)^8 = 55 % of the way between the levels, far beyond the 25 % threshold, so every
  // half cycle (28 of them) announces at least once, and most announcements reverse the previous one.
  EXPECT_GE(a.count, 28);
  EXPECT_GE(a.direction_changes, 20);
}

TEST(BufferDebloaterTest, StableWindowKeepsOneSizeUnderTheSameLoad) {
  BufferDebloater sluice(config(256, 32768, 1024, 20, /*stable=*/10));
  Announcements a = announcementsAfterWarmUp(sluice, squareWave(8, 20), 96);
  // The mean over 10 periods of the EMA ripples by well under 25 % around ~4096: nothing after warm-up.
  EXPECT_EQ(a.count, 0);
  // And the size reached is near the mean demand of 4096 B per buffer (within the 25 % band).
  EXPECT_GE(sluice.lastBufferSize(), 3072);
  EXPECT_LE(sluice.lastBufferSize(), 5120);
}

TEST(BufferDebloaterTest, StableWindowStillFollowsALastingChange) {
  BufferDebloater d(config(256, 32768, 1024, 20, /*stable=*/10));
  // Nothing before the window has 10 sizes.
  for (int i = 0; i < 9; ++i) EXPECT_EQ(d.recalculateBufferSize(16384, 4), std::nullopt);
  for (int i = 0; i < 200; ++i) d.recalculateBufferSize(16384, 4);
  const int32_t before = d.lastBufferSize();
  // Steady 16384 B/s over 4 buffers: 4096 B each; the announced size is within 25 % of it.
  EXPECT_GE(before, 3072);
  EXPECT_LE(before, 5120);
  // The load drops to a quarter (1024 B per buffer): the size follows down within 60 periods.
  for (int i = 0; i < 60; ++i) d.recalculateBufferSize(4096, 4);
  EXPECT_LE(d.lastBufferSize(), 1536);
}

TEST(BufferDebloaterTest, StartingSizeIsTheFirstAnnouncedSize) {
  BufferDebloater d(config(256, 32768, 1024, 20));
  EXPECT_EQ(d.lastBufferSize(), 1024);
}

}  // namespace
}  // namespace sluice::runtime::network
