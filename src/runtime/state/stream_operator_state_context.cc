#include "runtime/state/stream_operator_state_context.h"

#include <filesystem>

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
    for (const auto& h : restored->incremental) {
      if (h.key_group_end >= range_.start && h.key_group_start <= range_.end) restored_state_.incremental.push_back(h);
    }
  }
}

StreamOperatorStateContext::~StreamOperatorStateContext() = default;

KeyedStateBackend& StreamOperatorStateContext::keyedStateBackend() {
  if (!keyed_) {
    try {
      keyed_ = std::make_unique<KeyedStateBackend>(range_, max_parallelism_, std::move(restored_state_.keyed), backend_,
                                                   std::move(restored_state_.incremental));
    } catch (const InputError& e) {
      throw InputError(fmt::format("operator '{}': {}", uid_, e.what()));
    }
    restored_state_.keyed.clear();
    restored_state_.incremental.clear();
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

checkpoint::OperatorSubtaskState StreamOperatorStateContext::snapshot(int64_t checkpoint_id, bool canonical) {
  return *snapshotAsync(checkpoint_id, canonical).write();
}

OperatorSnapshotFutures StreamOperatorStateContext::snapshotAsync(int64_t checkpoint_id, bool canonical) {
  const bool incremental = !canonical && backend_.incremental_checkpoints && !backend_.checkpoint_job_directory.empty() &&
                           backend_.type == StateBackendType::kRocksDB;
  if (!keyed_ && !restored_state_.incremental.empty()) keyedStateBackend();
  checkpoint::OperatorSubtaskState done;
  std::unique_ptr<KeyedStateSnapshot> keyed;
  if (!keyed_) {
    done.keyed = restored_state_.keyed;
  } else if (incremental) {
    IncrementalCheckpointTarget target;
    target.shared_directory = (std::filesystem::path(backend_.checkpoint_job_directory) / "shared").string();
    target.task_owned_directory = (std::filesystem::path(backend_.checkpoint_job_directory) / "taskowned").string();
    target.checkpoint_id = checkpoint_id;
    keyed = keyed_->snapshotAsync(&target);
  } else {
    // A checkpoint's heap entries go out in table order (no sort); savepoints and final states sorted.
    keyed = keyed_->snapshotAsync(nullptr, /*sorted=*/canonical);
  }
  done.operator_state = operator_ ? operator_->snapshot() : restored_state_.operator_state;
  return OperatorSnapshotFutures(std::move(done), std::move(keyed));
}

OperatorSnapshotFutures::OperatorSnapshotFutures(checkpoint::OperatorSubtaskState done,
                                                 std::unique_ptr<KeyedStateSnapshot> keyed)
    : done_(std::move(done)), keyed_(std::move(keyed)) {}
OperatorSnapshotFutures::OperatorSnapshotFutures(OperatorSnapshotFutures&&) noexcept = default;
OperatorSnapshotFutures& OperatorSnapshotFutures::operator=(OperatorSnapshotFutures&&) noexcept = default;
OperatorSnapshotFutures::~OperatorSnapshotFutures() = default;

std::optional<checkpoint::OperatorSubtaskState> OperatorSnapshotFutures::write(const std::atomic<bool>* cancelled) {
  if (keyed_) {
    std::optional<KeyedSnapshotResult> result = keyed_->write(cancelled);
    keyed_.reset();  // releases the frozen versions at once
    if (!result) return std::nullopt;
    done_.keyed = std::move(result->keyed);
    if (result->handle) done_.incremental.push_back(std::move(*result->handle));
  }
  return std::move(done_);
}

checkpoint::OperatorSubtaskState StreamOperatorStateContext::snapshot() {
  if (!keyed_ && !restored_state_.incremental.empty()) keyedStateBackend();
  checkpoint::OperatorSubtaskState out;
  out.keyed = keyed_ ? keyed_->snapshot() : restored_state_.keyed;
  out.operator_state = operator_ ? operator_->snapshot() : restored_state_.operator_state;
  return out;
}

}  // namespace sluice::runtime::state
