// Restart strategies driven with hand-picked failure times (no clock is read) and a scripted jitter source.
// Expected backoffs are worked out by hand from Flink's rules in the comments.

#include "scheduler/restart_strategy.h"

#include <cstdint>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/config.h"
#include "common/error.h"

namespace sluice::scheduler {
namespace {

// A jitter source that always picks the low (or high) end of the range and records the ranges asked for.
struct ScriptedJitter {
  bool high = false;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  RestartBackoffTimeStrategy::JitterSource source() {
    return [this](int64_t lo, int64_t hi) {
      ranges.emplace_back(lo, hi);
      return high ? hi : lo;
    };
  }
};

ExponentialDelayRestartBackoffTimeStrategy exponential(double jitter_factor, RestartBackoffTimeStrategy::JitterSource j,
                                                       int32_t attempts = 2147483647) {
  // 1 s initial, 1 min max, x1.5, reset after 1 h: Flink's defaults.
  return ExponentialDelayRestartBackoffTimeStrategy(1000, 60000, 1.5, 3600000, jitter_factor, attempts, std::move(j));
}

TEST(RestartStrategyTest, FixedDelayAllowsAttemptsThenStops) {
  FixedDelayRestartBackoffTimeStrategy s(3, 2000);
  for (int i = 1; i <= 3; ++i) {
    EXPECT_TRUE(s.notifyFailure(i * 10000));
    EXPECT_TRUE(s.canRestart()) << "attempt " << i;
    EXPECT_EQ(s.getBackoffTime(), 2000);
  }
  s.notifyFailure(40000);
  EXPECT_FALSE(s.canRestart());
  EXPECT_EQ(s.toString(), "FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=3, backoffTimeMS=2000)");
}

TEST(RestartStrategyTest, FixedDelayWithZeroAttemptsNeverRestarts) {
  FixedDelayRestartBackoffTimeStrategy s(0, 0);
  s.notifyFailure(0);
  EXPECT_FALSE(s.canRestart());
}

// At most 2 failures within 60 s: a third one restarts only if it comes more than 60 s after the first of
// the three.
TEST(RestartStrategyTest, FailureRateCountsFailuresWithinTheInterval) {
  FailureRateRestartBackoffTimeStrategy s(2, 60000, 500);
  s.notifyFailure(0);
  EXPECT_TRUE(s.canRestart());
  s.notifyFailure(10000);
  EXPECT_TRUE(s.canRestart());
  EXPECT_EQ(s.getBackoffTime(), 500);
  s.notifyFailure(60000);  // 0, 10 s, 60 s: 60 s apart is still within the interval
  EXPECT_FALSE(s.canRestart());

  FailureRateRestartBackoffTimeStrategy t(2, 60000, 500);
  t.notifyFailure(0);
  t.notifyFailure(10000);
  t.notifyFailure(60001);  // 60.001 s after the first: outside
  EXPECT_TRUE(t.canRestart());
  t.notifyFailure(65000);  // 10 s, 60.001 s, 65 s: within 55 s
  EXPECT_FALSE(t.canRestart());
  t.notifyFailure(200000);  // 60.001 s, 65 s, 200 s: 139.999 s apart
  EXPECT_TRUE(t.canRestart());
  EXPECT_EQ(t.toString(),
            "FailureRateRestartBackoffTimeStrategy(failuresIntervalMS=60000, backoffTimeMS=500, "
            "maxFailuresPerInterval=2)");
}

// Without jitter attempt n waits floor(1000 * 1.5^n) ms, capped at 60000:
// 1.5^4 = 5.0625, 1.5^6 = 11.390625, 1.5^10 = 57.6650390625, 1.5^11 = 86.49755859375 (> 60).
TEST(RestartStrategyTest, ExponentialBackoffSequenceCappedAtMax) {
  auto s = exponential(0, {});
  const std::vector<int64_t> expected = {1000,  1500,  2250,  3375,  5062,  7593, 11390,
                                         17085, 25628, 38443, 57665, 60000, 60000};
  int64_t now = 5000;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_TRUE(s.notifyFailure(now)) << "failure " << i;
    EXPECT_TRUE(s.canRestart());
    EXPECT_EQ(s.getBackoffTime(), expected[i]) << "failure " << i;
    now += expected[i] + 1000;  // the restarted job runs 1 s, then fails again
  }
}

TEST(RestartStrategyTest, ExponentialFailuresBeforeTheRestartMergeIntoOneAttempt) {
  auto s = exponential(0, {});
  EXPECT_TRUE(s.notifyFailure(0));  // restart scheduled at 1000
  EXPECT_FALSE(s.notifyFailure(400));
  EXPECT_EQ(s.getBackoffTime(), 600);  // still the restart at 1000
  EXPECT_FALSE(s.notifyFailure(1000));
  EXPECT_EQ(s.getBackoffTime(), 0);
  EXPECT_TRUE(s.notifyFailure(1001));  // the second attempt: 1500 ms
  EXPECT_EQ(s.getBackoffTime(), 1500);
}

// The backoff resets when the job has run a full threshold (1 h) after its scheduled restart.
TEST(RestartStrategyTest, ExponentialResetsAfterThresholdWithoutFailure) {
  auto s = exponential(0, {});
  s.notifyFailure(0);     // 1000, restart at 1000
  s.notifyFailure(2000);  // 1500, restart at 3500
  s.notifyFailure(4000);  // 2250, restart at 6250
  s.notifyFailure(6250 + 3600000 - 1);  // ran 1 ms short of an hour: 3375
  EXPECT_EQ(s.getBackoffTime(), 3375);
  const int64_t restart = 6250 + 3600000 - 1 + 3375;
  s.notifyFailure(restart + 3600000);  // ran exactly an hour: back to 1000
  EXPECT_EQ(s.getBackoffTime(), 1000);
  s.notifyFailure(restart + 3600000 + 2000);
  EXPECT_EQ(s.getBackoffTime(), 1500);
}

TEST(RestartStrategyTest, ExponentialAttemptsBeforeResetBackoff) {
  auto s = exponential(0, {}, 2);
  s.notifyFailure(0);
  EXPECT_TRUE(s.canRestart());
  s.notifyFailure(2000);
  EXPECT_TRUE(s.canRestart());
  s.notifyFailure(5000);  // third attempt without a reset
  EXPECT_FALSE(s.canRestart());
  s.notifyFailure(5000 + 2250 + 3600000);  // after an hour of running the count starts over
  EXPECT_TRUE(s.canRestart());
  EXPECT_EQ(s.getBackoffTime(), 1000);
}

// Jitter 0.1: attempt 0 asks for [-100, 100], attempt 1 for [-150, 150]; the result is clamped to
// [initial, max], so the low end of attempt 0 (900) becomes 1000.
TEST(RestartStrategyTest, ExponentialJitterBoundsAndClamp) {
  ScriptedJitter low;
  auto s = exponential(0.1, low.source());
  s.notifyFailure(0);
  EXPECT_EQ(s.getBackoffTime(), 1000);
  s.notifyFailure(2000);
  EXPECT_EQ(s.getBackoffTime(), 1350);
  ASSERT_EQ(low.ranges.size(), 2u);
  EXPECT_EQ(low.ranges[0], std::make_pair(int64_t{-100}, int64_t{100}));
  EXPECT_EQ(low.ranges[1], std::make_pair(int64_t{-150}, int64_t{150}));

  ScriptedJitter high;
  high.high = true;
  auto t = exponential(0.1, high.source());
  t.notifyFailure(0);
  EXPECT_EQ(t.getBackoffTime(), 1100);
  t.notifyFailure(2000);
  EXPECT_EQ(t.getBackoffTime(), 1650);
}

// Attempt 11's uncapped backoff is 86497 ms, jitter offset (long)(8649.7) = 8649: even the low end 77848 is
// above the 60 s cap.
TEST(RestartStrategyTest, ExponentialJitterAtTheCapStaysAtTheCap) {
  ScriptedJitter low;
  auto s = exponential(0.1, low.source());
  int64_t now = 0;
  for (int i = 0; i < 12; ++i) {
    s.notifyFailure(now);
    now += s.getBackoffTime() + 1;
  }
  EXPECT_EQ(low.ranges.back(), std::make_pair(int64_t{-8649}, int64_t{8649}));
  EXPECT_EQ(s.getBackoffTime(), 60000);
}

TEST(RestartStrategyTest, DefaultIsNoneWithoutCheckpointingAndExponentialWithIt) {
  Configuration c;
  auto none = RestartBackoffTimeStrategy::fromConfiguration(c, false);
  EXPECT_EQ(none->toString(), "NoRestartBackoffTimeStrategy");
  none->notifyFailure(0);
  EXPECT_FALSE(none->canRestart());

  auto exp = RestartBackoffTimeStrategy::fromConfiguration(c, true);
  EXPECT_EQ(exp->toString(),
            "ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS=1000, maxBackoffMS=60000, "
            "backoffMultiplier=1.5, resetBackoffThresholdMS=3600000, jitterFactor=0.1, "
            "attemptsBeforeResetBackoff=2147483647, currentRestartAttempt=0)");
  exp->notifyFailure(0);
  EXPECT_TRUE(exp->canRestart());
  // Default jitter 0.1 around 1000 ms, clamped below at 1000.
  EXPECT_GE(exp->getBackoffTime(), 1000);
  EXPECT_LE(exp->getBackoffTime(), 1100);

  // As Flink: the derived default ignores configured exponential-delay values.
  c.set("restart-strategy.exponential-delay.initial-backoff", "5 s");
  EXPECT_NE(RestartBackoffTimeStrategy::fromConfiguration(c, true)->toString().find("initialBackoffMS=1000,"),
            std::string::npos);
}

TEST(RestartStrategyTest, TypeSelectsStrategyWithItsOptions) {
  Configuration c;
  c.set("restart-strategy.type", "fixed-delay");
  EXPECT_EQ(RestartBackoffTimeStrategy::fromConfiguration(c, true)->toString(),
            "FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=1, backoffTimeMS=1000)");
  c.set("restart-strategy.fixed-delay.attempts", "4");
  c.set("restart-strategy.fixed-delay.delay", "250 ms");
  EXPECT_EQ(RestartBackoffTimeStrategy::fromConfiguration(c, false)->toString(),
            "FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=4, backoffTimeMS=250)");

  c.set("restart-strategy", "FailureRate");  // the 1.x key and Flink's old spelling, any case
  EXPECT_EQ(RestartBackoffTimeStrategy::fromConfiguration(c, false)->toString(),
            "FailureRateRestartBackoffTimeStrategy(failuresIntervalMS=60000, backoffTimeMS=1000, "
            "maxFailuresPerInterval=1)");

  c.set("restart-strategy.type", "off");
  auto off = RestartBackoffTimeStrategy::fromConfiguration(c, true);
  off->notifyFailure(0);
  EXPECT_FALSE(off->canRestart());

  c.set("restart-strategy.type", "exponential-delay");
  c.set("restart-strategy.exponential-delay.initial-backoff", "2 s");
  c.set("restart-strategy.exponential-delay.jitter-factor", "0");
  auto exp = RestartBackoffTimeStrategy::fromConfiguration(c, false);
  exp->notifyFailure(0);
  exp->notifyFailure(2001);
  EXPECT_EQ(exp->getBackoffTime(), 3000);  // 2000 * 1.5
}

TEST(RestartStrategyTest, BadExponentialValuesNameTheKey) {
  auto message = [](const char* key, const char* value) {
    Configuration c;
    c.set("restart-strategy.type", "exponential-delay");
    c.set(key, value);
    try {
      RestartBackoffTimeStrategy::fromConfiguration(c, false);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(message("restart-strategy.exponential-delay.backoff-multiplier", "1"),
            "Invalid value '1' for configuration key 'restart-strategy.exponential-delay.backoff-multiplier': must "
            "be greater than 1");
  EXPECT_EQ(message("restart-strategy.exponential-delay.jitter-factor", "1.5"),
            "Invalid value '1.5' for configuration key 'restart-strategy.exponential-delay.jitter-factor': must be "
            "between 0 and 1");
  EXPECT_EQ(message("restart-strategy.exponential-delay.initial-backoff", "2 min"),
            "Invalid value '2 min' for configuration key 'restart-strategy.exponential-delay.initial-backoff': "
            "cannot be higher than restart-strategy.exponential-delay.max-backoff (60000 ms)");
}

}  // namespace
}  // namespace sluice::scheduler
