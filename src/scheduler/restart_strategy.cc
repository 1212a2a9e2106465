#include "scheduler/restart_strategy.h"

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "common/config.h"
#include "common/error.h"

namespace sluice::scheduler {

FixedDelayRestartBackoffTimeStrategy::FixedDelayRestartBackoffTimeStrategy(int32_t max_attempts, int64_t backoff_ms)
    : max_attempts_(max_attempts), backoff_ms_(backoff_ms) {
  SLUICE_CHECK(max_attempts >= 0, "maximum number of restart attempts {} below 0", max_attempts);
  SLUICE_CHECK(backoff_ms >= 0, "backoff {} ms below 0", backoff_ms);
}

bool FixedDelayRestartBackoffTimeStrategy::notifyFailure(int64_t) {
  ++attempt_;
  return true;
}

std::string FixedDelayRestartBackoffTimeStrategy::toString() const {
  return fmt::format("FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts={}, backoffTimeMS={})",
                     max_attempts_, backoff_ms_);
}

FailureRateRestartBackoffTimeStrategy::FailureRateRestartBackoffTimeStrategy(int32_t max_failures_per_interval,
                                                                             int64_t interval_ms, int64_t backoff_ms)
    : max_failures_(max_failures_per_interval), interval_ms_(interval_ms), backoff_ms_(backoff_ms) {
  SLUICE_CHECK(max_failures_per_interval > 0, "max failures per interval {} not above 0", max_failures_per_interval);
  SLUICE_CHECK(interval_ms > 0, "failure rate interval {} ms not above 0", interval_ms);
  SLUICE_CHECK(backoff_ms >= 0, "backoff {} ms below 0", backoff_ms);
}

bool FailureRateRestartBackoffTimeStrategy::notifyFailure(int64_t now_ms) {
  if (failures_.size() > static_cast<size_t>(max_failures_)) failures_.erase(failures_.begin());
  failures_.push_back(now_ms);
  return true;
}

bool FailureRateRestartBackoffTimeStrategy::canRestart() const {
  if (failures_.size() <= static_cast<size_t>(max_failures_)) return true;
  return failures_.back() - failures_.front() > interval_ms_;
}

std::string FailureRateRestartBackoffTimeStrategy::toString() const {
  return fmt::format(
      "FailureRateRestartBackoffTimeStrategy(failuresIntervalMS={}, backoffTimeMS={}, maxFailuresPerInterval={})",
      interval_ms_, backoff_ms_, max_failures_);
}

ExponentialDelayRestartBackoffTimeStrategy::ExponentialDelayRestartBackoffTimeStrategy(
    int64_t initial_backoff_ms, int64_t max_backoff_ms, double backoff_multiplier, int64_t reset_threshold_ms,
    double jitter_factor, int32_t attempts_before_reset, JitterSource jitter)
    : initial_ms_(initial_backoff_ms),
      max_ms_(max_backoff_ms),
      multiplier_(backoff_multiplier),
      reset_threshold_ms_(reset_threshold_ms),
      jitter_factor_(jitter_factor),
      attempts_before_reset_(attempts_before_reset),
      jitter_(std::move(jitter)) {
  SLUICE_CHECK(initial_ms_ >= 1, "initial backoff {} ms below 1", initial_ms_);
  SLUICE_CHECK(max_ms_ >= initial_ms_, "maximum backoff {} ms below the initial {} ms", max_ms_, initial_ms_);
  SLUICE_CHECK(multiplier_ > 1, "backoff multiplier {} not above 1", multiplier_);
  SLUICE_CHECK(reset_threshold_ms_ >= 1, "reset threshold {} ms below 1", reset_threshold_ms_);
  SLUICE_CHECK(jitter_factor_ >= 0 && jitter_factor_ <= 1, "jitter factor {} outside [0, 1]", jitter_factor_);
  SLUICE_CHECK(attempts_before_reset_ >= 1, "attempts before reset {} below 1", attempts_before_reset_);
  SLUICE_CHECK(jitter_factor_ == 0 || jitter_, "a jitter factor {} needs a jitter source", jitter_factor_);
}

bool ExponentialDelayRestartBackoffTimeStrategy::notifyFailure(int64_t now_ms) {
  last_failure_ms_ = now_ms;
  // Failures of tasks that are about to be restarted anyway belong to the attempt already scheduled.
  if (next_restart_ms_ && now_ms <= *next_restart_ms_) return false;
  if (!next_restart_ms_ || now_ms - *next_restart_ms_ >= reset_threshold_ms_) attempt_ = 0;
  next_restart_ms_ = now_ms + backoffForAttempt();
  ++attempt_;
  return true;
}

int64_t ExponentialDelayRestartBackoffTimeStrategy::backoffForAttempt() {
  // Past 2^53 ms the backoff is far above any maximum; capping here keeps the jitter arithmetic exact.
  const double uncapped = std::min(static_cast<double>(initial_ms_) * std::pow(multiplier_, static_cast<double>(attempt_)),
                                   9007199254740992.0);
  const auto backoff = static_cast<int64_t>(uncapped);
  int64_t jitter = 0;
  if (jitter_factor_ != 0) {
    const auto offset = static_cast<int64_t>(static_cast<double>(backoff) * jitter_factor_);
    jitter = jitter_(-offset, offset);
  }
  return std::max(initial_ms_, std::min(backoff + jitter, max_ms_));
}

int64_t ExponentialDelayRestartBackoffTimeStrategy::getBackoffTime() const {
  SLUICE_CHECK(next_restart_ms_.has_value(), "getBackoffTime before any notifyFailure");
  return std::max<int64_t>(0, *next_restart_ms_ - last_failure_ms_);
}

std::string ExponentialDelayRestartBackoffTimeStrategy::toString() const {
  return fmt::format(
      "ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS={}, maxBackoffMS={}, backoffMultiplier={}, "
      "resetBackoffThresholdMS={}, jitterFactor={}, attemptsBeforeResetBackoff={}, currentRestartAttempt={})",
      initial_ms_, max_ms_, multiplier_, reset_threshold_ms_, jitter_factor_, attempts_before_reset_, attempt_);
}

namespace {

[[noreturn]] void badValue(const Configuration& config, const std::string& key, const std::string& why) {
  throw ConfigError(
      fmt::format("Invalid value '{}' for configuration key '{}': {}", config.getString(key), key, why));
}

RestartBackoffTimeStrategy::JitterSource defaultJitter() {
  auto engine = std::make_shared<std::mt19937_64>(std::random_device{}());
  return [engine](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(*engine); };
}

std::unique_ptr<RestartBackoffTimeStrategy> exponentialDelay(const Configuration& c,
                                                             RestartBackoffTimeStrategy::JitterSource jitter) {
  namespace o = options;
  const int64_t initial = c.get(o::kRestartStrategyExponentialDelayInitialBackoff);
  const int64_t max = c.get(o::kRestartStrategyExponentialDelayMaxBackoff);
  const double multiplier = c.get(o::kRestartStrategyExponentialDelayBackoffMultiplier);
  const double jitter_factor = c.get(o::kRestartStrategyExponentialDelayJitterFactor);
  if (!(multiplier > 1)) badValue(c, o::kRestartStrategyExponentialDelayBackoffMultiplier.key(), "must be greater than 1");
  if (!(jitter_factor >= 0 && jitter_factor <= 1))
    badValue(c, o::kRestartStrategyExponentialDelayJitterFactor.key(), "must be between 0 and 1");
  if (initial > max) {
    badValue(c, o::kRestartStrategyExponentialDelayInitialBackoff.key(),
             fmt::format("cannot be higher than {} ({} ms)", o::kRestartStrategyExponentialDelayMaxBackoff.key(), max));
  }
  return std::make_unique<ExponentialDelayRestartBackoffTimeStrategy>(
      initial, max, multiplier, c.get(o::kRestartStrategyExponentialDelayResetBackoffThreshold), jitter_factor,
      c.get(o::kRestartStrategyExponentialDelayAttempts), jitter ? std::move(jitter) : defaultJitter());
}

}  // namespace

std::unique_ptr<RestartBackoffTimeStrategy> RestartBackoffTimeStrategy::fromConfiguration(const Configuration& config,
                                                                                        bool checkpointing_enabled,
                                                                                        JitterSource jitter) {
  namespace o = options;
  const std::optional<std::string> type = config.getOptional(o::kRestartStrategy);
  if (!type) {
    if (!checkpointing_enabled) return std::make_unique<NoRestartBackoffTimeStrategy>();
    // As Flink's getDefaultRestartStrategyFactory: the defaults of the exponential-delay options, not their
    // configured values (those apply once restart-strategy.type names the strategy).
    return exponentialDelay(Configuration{}, std::move(jitter));
  }
  if (*type == "none" || *type == "off" || *type == "disable") return std::make_unique<NoRestartBackoffTimeStrategy>();
  if (*type == "fixed-delay" || *type == "fixeddelay") {
    return std::make_unique<FixedDelayRestartBackoffTimeStrategy>(config.get(o::kRestartStrategyFixedDelayAttempts),
                                                                  config.get(o::kRestartStrategyFixedDelayDelay));
  }
  if (*type == "failure-rate" || *type == "failurerate") {
    return std::make_unique<FailureRateRestartBackoffTimeStrategy>(
        config.get(o::kRestartStrategyFailureRateMaxFailuresPerInterval),
        config.get(o::kRestartStrategyFailureRateFailureRateInterval), config.get(o::kRestartStrategyFailureRateDelay));
  }
  SLUICE_CHECK(*type == "exponential-delay" || *type == "exponentialdelay", "unhandled restart strategy {}", *type);
  return exponentialDelay(config, std::move(jitter));
}

}  // namespace sluice::scheduler
