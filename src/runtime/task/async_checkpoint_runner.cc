#include "runtime/task/async_checkpoint_runner.h"

#include <chrono>
#include <exception>

#include "common/error.h"

namespace sluice::runtime {

namespace {
AsyncCheckpointRunner::WriteHook& writeHook() {
  static AsyncCheckpointRunner::WriteHook hook;
  return hook;
}
}  // namespace

void AsyncCheckpointRunner::setWriteHookForTesting(WriteHook hook) { writeHook() = std::move(hook); }

AsyncCheckpointRunner::AsyncCheckpointRunner(checkpoint::CheckpointResponder* responder, int vertex, int subtask)
    : responder_(responder), vertex_(vertex), subtask_(subtask) {
  SLUICE_CHECK(responder_ != nullptr, "an async checkpoint runner needs a responder");
}

AsyncCheckpointRunner::~AsyncCheckpointRunner() {
  cancel();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void AsyncCheckpointRunner::submit(int64_t id, Futures futures, checkpoint::CheckpointMetrics metrics,
                                   std::optional<HeadChannelState> channel) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(Job{id, std::move(futures), metrics, std::move(channel)});
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  }
  cv_.notify_all();
}

void AsyncCheckpointRunner::drain() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
}

void AsyncCheckpointRunner::cancel() {
  std::deque<Job> dropped;
  {
    std::unique_lock<std::mutex> lock(mu_);
    dropped.swap(queue_);
    cancelled_.store(true, std::memory_order_relaxed);
    cv_.wait(lock, [&] { return !busy_; });
    cancelled_.store(false, std::memory_order_relaxed);
  }
  dropped.clear();  // outside the lock: releases the frozen versions
}

void AsyncCheckpointRunner::abort(int64_t id) {
  std::deque<Job> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = queue_.begin(); it != queue_.end();) {
      if (it->id == id) {
        dropped.push_back(std::move(*it));
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
    if (busy_ && running_id_ == id) cancelled_.store(true, std::memory_order_relaxed);
  }
  dropped.clear();  // outside the lock: releases the frozen versions
}

void AsyncCheckpointRunner::run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_
    Job job = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    running_id_ = job.id;
    cancelled_.store(false, std::memory_order_relaxed);
    lock.unlock();
    execute(job);
    job.futures.clear();  // release the frozen state before another task-thread write needs to copy
    lock.lock();
    busy_ = false;
    cv_.notify_all();
  }
}

void AsyncCheckpointRunner::execute(Job& job) {
  const auto start = std::chrono::steady_clock::now();
  checkpoint::TaskStateSnapshot state;
  std::string failure;
  try {
    if (writeHook()) writeHook()(vertex_, subtask_, job.id);
    if (cancelled_.load(std::memory_order_relaxed)) return;
    for (auto& [uid, futures] : job.futures) {
      std::optional<checkpoint::OperatorSubtaskState> s = futures.write(&cancelled_);
      // Aborted, or the task is going away (its failover or cancellation ends the checkpoint).
      if (!s) return;
      if (!s->empty()) state.emplace(uid, std::move(*s));
    }
  } catch (const std::exception& e) {
    failure = fmt::format("asynchronous part failed: {}", e.what());
  } catch (...) {
    failure = "asynchronous part failed with an unknown exception";
  }
  job.futures.clear();
  if (job.channel) state[job.channel->uid].channel = std::move(job.channel->state);
  if (!failure.empty()) {
    responder_->declineCheckpoint(vertex_, subtask_, job.id, failure);
    return;
  }
  job.metrics.async_duration_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  responder_->acknowledgeCheckpoint(vertex_, subtask_, job.id, std::move(state), job.metrics);
}

}  // namespace sluice::runtime
