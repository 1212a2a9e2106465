#include "runtime/state/stream_operator_state_context.h"

#include "common/error.h"
#include "runtime/state/keyed_state_backend.h"
#include "runtime/state/operator_state_backend.h"

namespace sluice::runtime::state {

StreamOperatorStateContext::StreamOperatorStateContext(std::string uid, KeyGroupRange range,
                                                       int32_t max_parallelism,
                                                       const checkpoint::OperatorSubtaskState* restored,
                                                       StateBackendOptions backend)
    : uid_(std::move(uid)),
      range_(range),
      max_parallelism_(max_parallelism),
      restored_(restored != nullptr),
      backend_(std::move(backend)) {
  if (backend_.instance_name == StateBackendOptions().instance_name) {
    backend_.instance_name = fmt::format("{}-kg{}-{}", uid_, range_.start, range_.end);
  }
  if (restored != nullptr) {
    for (const auto& [group, blob] : restored->keyed) {
      if (range_.contains(group)) restored_state_.keyed.emplace(group, blob);
    }
    restored_state_.operator_state = restored->operator_state;
  }
}

StreamOperatorStateContext::~StreamOperatorStateContext() = default;

KeyedStateBackend& StreamOperatorStateContext::keyedStateBackend() {
  if (!keyed_) {
    try {
      keyed_ = std::make_unique<KeyedStateBackend>(range_, max_parallelism_, std::move(restored_state_.keyed), backend_);
    } catch (const InputError& e) {
      throw InputError(fmt::format("operator '{}': {}", uid_, e.what()));
    }
    restored_state_.keyed.clear();
  }
  return *keyed_;
}

OperatorStateBackend& StreamOperatorStateContext::operatorStateBackend() {
  if (!operator_) {
    operator_ = std::make_unique<OperatorStateBackend>(std::move(restored_state_.operator_state));
    restored_state_.operator_state.clear();
  }
  return *operator_;
}

checkpoint::OperatorSubtaskState StreamOperatorStateContext::snapshot() const {
  checkpoint::OperatorSubtaskState out;
  out.keyed = keyed_ ? keyed_->snapshot() : restored_state_.keyed;
  out.operator_state = operator_ ? operator_->snapshot() : restored_state_.operator_state;
  return out;
}

}  // namespace sluice::runtime::state
