#include "runtime/operators/source_coordinator_context.h"

#include "runtime/checkpoint/checkpoint_responder.h"

namespace sluice::runtime {

SourceCoordinatorContext::SourceCoordinatorContext(std::string source_uid, int parallelism,
                                                   checkpoint::BacklogStatusListener* listener)
    : source_uid_(std::move(source_uid)), parallelism_(parallelism), listener_(listener) {}

void SourceCoordinatorContext::setIsProcessingBacklog(bool backlog) {
  std::lock_guard<std::mutex> lock(mu_);
  if (backlog_ == backlog) return;
  backlog_ = backlog;
  // The coordinator first: once a reader acts on the status (e.g. sorts), no checkpoint may surprise it.
  if (listener_ != nullptr) listener_->setIsProcessingBacklog(source_uid_, backlog);
  for (auto& [subtask, deliver] : readers_) deliver(backlog);
}

std::optional<bool> SourceCoordinatorContext::isProcessingBacklog() const {
  std::lock_guard<std::mutex> lock(mu_);
  return backlog_;
}

void SourceCoordinatorContext::registerReader(int subtask, std::function<void(bool)> deliver) {
  std::lock_guard<std::mutex> lock(mu_);
  if (backlog_) deliver(*backlog_);
  readers_[subtask] = std::move(deliver);
}

void SourceCoordinatorContext::unregisterReader(int subtask) {
  std::lock_guard<std::mutex> lock(mu_);
  readers_.erase(subtask);
}

}  // namespace sluice::runtime
