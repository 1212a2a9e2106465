#include "table/runtime/state_retention.h"

#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "common/error.h"
#include "runtime/operators/stream_operator.h"
#include "runtime/state/internal_timer_service.h"
#include "runtime/state/keyed_state_backend.h"
#include "runtime/time/processing_time_service.h"

namespace sluice::table {

const ConfigOption<int64_t> kStateTtl(ConfigOptionSpec{
    "table.exec.state.ttl", ConfigType::kDuration, "0 ms",
    "How long the state of a key (group aggregation, regular join, deduplication, Top-N, changelog "
    "normalization) is kept after its last write; 0 ms keeps it for good. Processing time; a key's state is "
    "dropped silently when it expires, so results may then differ from the exact ones.",
    {}, int64_t{0}});

int64_t stateTtlOf(const Configuration& config) {
  const int64_t ttl = config.get(kStateTtl);
  if (ttl < 0) throw UserError(fmt::format("'{}' must not be negative, got {} ms", kStateTtl.key(), ttl));
  return ttl;
}

StateRetention::StateRetention(int64_t ttl_ms, std::string name) : ttl_ms_(ttl_ms), name_(std::move(name)) {
  SLUICE_CHECK(ttl_ms_ > 0, "state retention '{}' with ttl {} ms", name_, ttl_ms_);
}

StateRetention::~StateRetention() = default;

void StateRetention::open(const runtime::OperatorContext& ctx, runtime::state::KeyedStateBackend& backend,
                          std::function<void()> expire) {
  ctx_ = &ctx;
  backend_ = &backend;
  expire_ = std::move(expire);
  deadline_ = &backend.getValueState(
      runtime::state::ValueStateDescriptor<int64_t, runtime::TypeSerializer<int64_t>>{name_ + "-deadline"});
  timers_ = &backend.getInternalTimerService(name_ + "-timers");
  scheduled_.clear();
  if (auto next = timers_->nextProcessingTime()) schedule(*next);
}

int64_t StateRetention::now() const {
  if (ctx_ != nullptr && ctx_->processing_time_service != nullptr) {
    return ctx_->processing_time_service->currentProcessingTime();
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool StateRetention::expireIfDue(int64_t now) {
  const int64_t* d = deadline_->value();
  if (d == nullptr || *d > now) return false;
  expire_();
  deadline_->clear();
  return true;
}

void StateRetention::touch(int64_t now) {
  const int64_t deadline = now + ttl_ms_;
  int64_t* d = deadline_->value();
  if (d != nullptr) {
    // The key's timer is pending at or before the old deadline; it re-arms itself at this one.
    *d = deadline;
    return;
  }
  deadline_->update(deadline);
  timers_->registerProcessingTimeTimer("", deadline);
  schedule(deadline);
}

void StateRetention::forget() { deadline_->clear(); }

void StateRetention::schedule(int64_t time) {
  auto* pts = ctx_->processing_time_service;
  if (pts == nullptr || !scheduled_.insert(time).second) return;
  pts->registerTimer(time, [this](int64_t t) { onTimer(t); });
}

void StateRetention::onTimer(int64_t time) {
  scheduled_.erase(time);
  timers_->advanceProcessingTime(time, [this](std::string_view, int32_t, std::string_view, int64_t t) {
    const int64_t* d = deadline_->value();
    if (d == nullptr) return;  // the operator dropped the key's state meanwhile
    if (*d <= t) {
      expire_();
      deadline_->clear();
    } else {
      const int64_t again = *d;
      timers_->registerProcessingTimeTimer("", again);
    }
  });
  if (auto next = timers_->nextProcessingTime()) schedule(*next);
}

}  // namespace sluice::table
