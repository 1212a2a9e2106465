#pragma once
/// Restart strategies: whether and when a failed job restarts (Flink's RestartBackoffTimeStrategy and its
/// four implementations in `flink-runtime/.../executiongraph/failover`, as of Flink 1.19+).
///
/// Time is passed in, never read: `notifyFailure(now_ms)` takes the failure's time on any millisecond clock
/// (Flink's `Clock.absoluteTimeMillis`), so tests are exact. Not thread-safe; the caller (the scheduler's
/// failure handling) serializes calls.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sluice {
class Configuration;
}

namespace sluice::scheduler {

/// Decides, after each failure, whether the job may restart and how long to wait first.
class RestartBackoffTimeStrategy {
 public:
  /// A uniform random integer in [lo, hi], both inclusive (the exponential-delay jitter source).
  using JitterSource = std::function<int64_t(int64_t lo, int64_t hi)>;

  virtual ~RestartBackoffTimeStrategy() = default;

  /// Records a failure at `now_ms`. Returns whether it counts as a new restart attempt (false when it is
  /// merged into an attempt already scheduled, FLINK-33737).
  virtual bool notifyFailure(int64_t now_ms) = 0;
  /// Whether the job may restart after the failures notified so far.
  virtual bool canRestart() const = 0;
  /// How long to wait before restarting, in ms, seen from the latest notified failure.
  virtual int64_t getBackoffTime() const = 0;
  /// A one-line description for logs, as Flink's toString
  /// ("FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=1, backoffTimeMS=1000)").
  virtual std::string toString() const = 0;

  /// The strategy `restart-strategy.type` names, with its options (Flink's
  /// RestartBackoffTimeStrategyFactoryLoader). Unset type: `none` without checkpointing, and when
  /// `checkpointing_enabled` `exponential-delay` with the options' defaults, ignoring configured
  /// `restart-strategy.exponential-delay.*` values as Flink does (FLINK-33738). `jitter` defaults to a seeded Mersenne
  /// Twister. Throws ConfigError naming the key for values the options cannot check alone (a multiplier not
  /// above 1, a jitter factor outside [0, 1], an initial backoff above the maximum).
  static std::unique_ptr<RestartBackoffTimeStrategy> fromConfiguration(const Configuration& config,
                                                                       bool checkpointing_enabled,
                                                                       JitterSource jitter = {});
};

/// Never restarts (`none`, `off`, `disable`).
class NoRestartBackoffTimeStrategy final : public RestartBackoffTimeStrategy {
 public:
  bool notifyFailure(int64_t) override { return true; }
  bool canRestart() const override { return false; }
  int64_t getBackoffTime() const override { return 0; }
  std::string toString() const override { return "NoRestartBackoffTimeStrategy"; }
};

/// `fixed-delay`: up to `max_attempts` restarts, each after `backoff_ms`. Attempt k (1-based) may restart
/// while k <= max_attempts.
class FixedDelayRestartBackoffTimeStrategy final : public RestartBackoffTimeStrategy {
 public:
  /// `max_attempts` >= 0, `backoff_ms` >= 0 (InternalError otherwise; the options check both when set).
  FixedDelayRestartBackoffTimeStrategy(int32_t max_attempts, int64_t backoff_ms);
  bool notifyFailure(int64_t now_ms) override;
  bool canRestart() const override { return attempt_ <= max_attempts_; }
  int64_t getBackoffTime() const override { return backoff_ms_; }
  std::string toString() const override;

 private:
  int32_t max_attempts_;
  int64_t backoff_ms_;
  int64_t attempt_ = 0;
};

/// `failure-rate`: restarts (after `backoff_ms`) unless more than `max_failures_per_interval` failures fall
/// within one interval: with the newest `max_failures_per_interval + 1` failures kept, the job may restart
/// while fewer are kept or the newest is more than `interval_ms` after the oldest (Flink compares the
/// oldest with the clock when asked; here "now" is the latest failure).
class FailureRateRestartBackoffTimeStrategy final : public RestartBackoffTimeStrategy {
 public:
  /// `max_failures_per_interval` >= 1, `interval_ms` >= 1, `backoff_ms` >= 0.
  FailureRateRestartBackoffTimeStrategy(int32_t max_failures_per_interval, int64_t interval_ms, int64_t backoff_ms);
  bool notifyFailure(int64_t now_ms) override;
  bool canRestart() const override;
  int64_t getBackoffTime() const override { return backoff_ms_; }
  std::string toString() const override;

 private:
  int32_t max_failures_;
  int64_t interval_ms_;
  int64_t backoff_ms_;
  std::vector<int64_t> failures_;  // the newest failure times, oldest first, at most max_failures_ + 1
};

/// `exponential-delay` (FLIP-364, Flink 1.19+): attempt n (0-based since the last reset) waits
/// `initial * multiplier^n` ms (truncated), plus a jitter drawn uniformly from [-j, j] with
/// j = (long)(that backoff * jitter_factor), the sum clamped to [initial, max]. Rules:
///  - a failure at or before the scheduled restart time merges into that attempt (FLINK-33737):
///    `notifyFailure` returns false and nothing changes;
///  - a failure at least `reset_threshold_ms` after the scheduled restart (the job ran that long) starts
///    over at attempt 0;
///  - the job may restart while the attempts since the last reset are at most
///    `attempts_before_reset` (FLINK-32895; default unlimited).
class ExponentialDelayRestartBackoffTimeStrategy final : public RestartBackoffTimeStrategy {
 public:
  /// initial >= 1, max >= initial, multiplier > 1, reset threshold >= 1, jitter factor in [0, 1],
  /// attempts_before_reset >= 1 (InternalError otherwise; fromConfiguration reports ConfigError first).
  ExponentialDelayRestartBackoffTimeStrategy(int64_t initial_backoff_ms, int64_t max_backoff_ms,
                                             double backoff_multiplier, int64_t reset_threshold_ms,
                                             double jitter_factor, int32_t attempts_before_reset,
                                             JitterSource jitter);
  bool notifyFailure(int64_t now_ms) override;
  bool canRestart() const override { return attempt_ <= attempts_before_reset_; }
  int64_t getBackoffTime() const override;
  std::string toString() const override;

 private:
  int64_t backoffForAttempt();

  int64_t initial_ms_;
  int64_t max_ms_;
  double multiplier_;
  int64_t reset_threshold_ms_;
  double jitter_factor_;
  int32_t attempts_before_reset_;
  JitterSource jitter_;
  int64_t attempt_ = 0;                       // counted attempts since the last reset
  std::optional<int64_t> next_restart_ms_;    // when the scheduled restart happens
  int64_t last_failure_ms_ = 0;               // the latest notified failure, counted or merged
};

}  // namespace sluice::scheduler
