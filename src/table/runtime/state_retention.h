#pragma once
/// Idle state retention of the SQL operators whose state is per key: `table.exec.state.ttl` (Flink's
/// ExecutionConfigOptions.IDLE_STATE_RETENTION, default 0 ms = kept for good). Flink gives each state a
/// StateTtlConfig built by StateConfigUtil.createTtlConfig: processing time, updated on create and write
/// (OnCreateAndWrite: reads do not extend it), never returning an expired value (NeverReturnExpired).
/// Here the unit is the key, not the state entry: an operator keeps one deadline per key (a ValueState,
/// "<name>-deadline") that each write moves to now + ttl, and one processing-time timer per key in the
/// keyed state layer ("<name>-timers"), re-armed lazily at the latest deadline when it fires early. A key
/// whose deadline passed is dropped by the operator's `expire` callback, either when its timer fires or,
/// if a row comes first, before that row reads the state, so an expired value is never seen. Nothing is
/// emitted when state expires (Flink's behaviour: a later row of the key starts afresh, e.g. a group
/// aggregate emits +I again and drops retractions it has no state for).
///
/// Difference from Flink: a regular join keeps one deadline per join key and side, so a side's rows of a
/// key expire together once the side had no new row of that key for the ttl (Flink expires each row on
/// its own). Deadlines and timers are keyed state: checkpointed, restored (timers re-armed in open()) and
/// redistributed with the key group like the operator's other state.
/// Threading: the task thread only.

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "common/config.h"

namespace sluice::runtime {
struct OperatorContext;
template <typename T>
struct TypeSerializer;
namespace state {
class KeyedStateBackend;
class InternalTimerService;
template <typename V, typename Ser>
class ValueState;
}  // namespace state
}  // namespace sluice::runtime

namespace sluice::table {

/// `table.exec.state.ttl` (Duration, ms; default 0 ms: never expire).
extern const ConfigOption<int64_t> kStateTtl;

/// The ttl to plan with: kStateTtl of `config`; UserError when negative.
int64_t stateTtlOf(const Configuration& config);

/// One per-key retention (see the file comment). Build it with the ttl (> 0), call open() from the
/// operator's open(), then per row, with the backend's current key set: expireIfDue() before reading the
/// key's state, touch() after writing it, forget() when the operator dropped the key's state itself.
class StateRetention {
 public:
  /// `ttl_ms` > 0; `name` distinguishes two retentions of one operator (a join's sides), e.g. "left".
  StateRetention(int64_t ttl_ms, std::string name);
  ~StateRetention();
  StateRetention(const StateRetention&) = delete;
  StateRetention& operator=(const StateRetention&) = delete;

  /// Registers the deadline state and the timer service in `backend` and re-arms restored timers with
  /// ctx.processing_time_service (no timers fire when it is null, as in hand-driven tests without a clock:
  /// expireIfDue still hides expired state). `expire` clears the operator's state of the backend's current
  /// key; it is called on the task thread, from a timer or from expireIfDue.
  void open(const runtime::OperatorContext& ctx, runtime::state::KeyedStateBackend& backend,
            std::function<void()> expire);

  /// The operator's processing time now (ms): its ProcessingTimeService's clock, else the system clock.
  int64_t now() const;
  /// Drops the current key's state (calls `expire`) when its deadline is at or before `now`. True then.
  bool expireIfDue(int64_t now);
  /// The current key's state was created or written at `now`: it lives until now + ttl.
  void touch(int64_t now);
  /// The operator cleared the current key's state: its deadline goes (the pending timer then finds none).
  void forget();
  int64_t ttlMs() const { return ttl_ms_; }

 private:
  void schedule(int64_t time);
  void onTimer(int64_t time);

  int64_t ttl_ms_;
  std::string name_;
  const runtime::OperatorContext* ctx_ = nullptr;
  runtime::state::KeyedStateBackend* backend_ = nullptr;
  runtime::state::InternalTimerService* timers_ = nullptr;
  runtime::state::ValueState<int64_t, runtime::TypeSerializer<int64_t>>* deadline_ = nullptr;
  std::function<void()> expire_;
  std::set<int64_t> scheduled_;  ///< times handed to the ProcessingTimeService (not state: re-armed on open)
};

}  // namespace sluice::table
