#include "runtime/checkpoint/checkpoint_coordinator.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "graph/job_graph.h"

namespace sluice::runtime::checkpoint {

struct CheckpointCoordinator::Pending {
  CheckpointBarrier barrier;
  std::string target_dir;
  Clock::time_point start;
  std::vector<std::optional<TaskStateSnapshot>> acks;  ///< by task index
  int remaining = 0;
  int64_t max_alignment_ns = 0;
  int64_t max_start_delay_ns = 0;
  std::vector<CheckpointMetrics> metrics;  ///< by task index
  int64_t max_sync_ms = 0;
  int64_t max_async_ms = 0;
};

namespace {

int64_t wallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

CheckpointCoordinator::CheckpointCoordinator(const graph::JobGraph& job, std::string job_id,
                                             CheckpointCoordinatorConfiguration config, Hooks hooks)
    : job_(job), job_id_(std::move(job_id)), config_(config), hooks_(std::move(hooks)) {
  for (const graph::JobVertex& v : job_.vertices) {
    task_offset_.push_back(num_tasks_);
    num_tasks_ += v.parallelism;
  }
  final_states_.resize(static_cast<size_t>(num_tasks_));
  input_ended_.assign(static_cast<size_t>(num_tasks_), 0);
  for (size_t v = 0; v < job_.vertices.size(); ++v) {
    for (const graph::ChainedOperator& op : job_.vertices[v].operators) {
      vertex_of_uid_[op.uid.empty() ? op.name : op.uid] = static_cast<int>(v);
    }
  }
  scheduleFromLocked(now(), config_.interval_ms);
}

CheckpointCoordinator::~CheckpointCoordinator() { stop(); }

void CheckpointCoordinator::start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (running_) return;
  running_ = true;
  scheduleFromLocked(now(), currentIntervalLocked());
  thread_ = std::thread([this] { run(); });
}

void CheckpointCoordinator::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!running_) return;
    running_ = false;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void CheckpointCoordinator::suspend() {
  std::unique_lock<std::mutex> lock(mu_);
  suspended_ = true;
  cv_.notify_all();  // a backlog report waiting for a dispatch (the cluster may stop that dispatch)
  // A checkpoint being finalized may notify the tasks (sinks commit): once suspend returns, the latest
  // completed checkpoint includes every one whose completion any task heard of.
  cv_.wait(lock, [&] { return !finalizing_; });
}

void CheckpointCoordinator::restartAttempt() {
  std::vector<int> all(job_.vertices.size());
  for (size_t v = 0; v < all.size(); ++v) all[v] = static_cast<int>(v);
  restartTasks(all);
}

void CheckpointCoordinator::restartTasks(const std::vector<int>& vertices) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<int64_t> ids;
    for (const auto& [id, p] : pending_) ids.push_back(id);
    // A task failure aborts the checkpoints it had not acknowledged; not a checkpoint failure (§1.4).
    for (int64_t id : ids) abortLocked(id, "the job is failing over", false);
    completed_ready_.clear();
    for (int v : vertices) {
      for (int s = 0; s < job_.vertices[static_cast<size_t>(v)].parallelism; ++s) {
        final_states_[taskIndex(v, s)].reset();
        input_ended_[taskIndex(v, s)] = 0;
      }
    }
    suspended_ = false;
    requested_ = false;  // the restarted tasks ask again when they finish
    scheduleFromLocked(now(), currentIntervalLocked());
    poked_ = true;  // the run loop may be waiting without a deadline while suspended
  }
  cv_.notify_all();
}

void CheckpointCoordinator::setNextCheckpointId(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  next_id_ = std::max(next_id_, id);
}

std::shared_ptr<const CompletedCheckpoint> CheckpointCoordinator::latestCompletedCheckpoint() const {
  std::lock_guard<std::mutex> lock(mu_);
  return latest_;
}

CheckpointStats CheckpointCoordinator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  CheckpointStats s = stats_;
  s.number_of_in_progress_checkpoints = static_cast<int64_t>(pending_.size());
  return s;
}

std::optional<int64_t> CheckpointCoordinator::startLocked(CheckpointKind kind, const std::string& target_dir,
                                                          Clock::time_point now,
                                                          std::vector<std::pair<int, int>>& to_trigger,
                                                          CheckpointBarrier& barrier) {
  if (suspended_ || !running_ || backlogBlocksLocked()) return std::nullopt;
  auto p = std::make_unique<Pending>();
  p->acks.resize(static_cast<size_t>(num_tasks_));
  p->start = now;
  p->target_dir = target_dir;
  to_trigger.clear();
  for (size_t v = 0; v < job_.vertices.size(); ++v) {
    const graph::JobVertex& vertex = job_.vertices[v];
    // FLIP-147: trigger the running tasks none of whose predecessors still runs.
    bool inputs_finished = true;
    for (int e : vertex.inputs) {
      const int source = job_.edges[static_cast<size_t>(e)].source_vertex;
      for (int s = 0; s < job_.vertices[static_cast<size_t>(source)].parallelism && inputs_finished; ++s) {
        inputs_finished = final_states_[taskIndex(source, s)].has_value();
      }
    }
    for (int s = 0; s < vertex.parallelism; ++s) {
      const size_t idx = taskIndex(static_cast<int>(v), s);
      if (final_states_[idx]) {
        p->acks[idx] = *final_states_[idx];
        continue;
      }
      ++p->remaining;
      if (inputs_finished) to_trigger.emplace_back(static_cast<int>(v), s);
    }
  }
  if (p->remaining == 0) {
    requested_ = false;  // every task finished: nothing to checkpoint
    return std::nullopt;
  }
  const int64_t id = next_id_++;
  if (kind == CheckpointKind::kCheckpoint) requested_ = false;  // a savepoint notifies no task: not the one asked for
  barrier = CheckpointBarrier{id, wallClockMs(), kind,
                              isSavepoint(kind) ? AlignmentType::kAligned : config_.alignment};
  // Savepoints stay aligned (Flink's CheckpointOptions.forConfig): only checkpoints go unaligned.
  if (config_.unaligned && kind == CheckpointKind::kCheckpoint) {
    if (config_.aligned_checkpoint_timeout_ms > 0) barrier.aligned_timeout_ms = config_.aligned_checkpoint_timeout_ms;
    else barrier.alignment = AlignmentType::kUnaligned;
  }
  p->barrier = barrier;
  pending_.emplace(id, std::move(p));
  return id;
}

std::optional<int64_t> CheckpointCoordinator::triggerCheckpoint(CheckpointKind kind, const std::string& target_dir) {
  std::vector<std::pair<int, int>> tasks;
  CheckpointBarrier barrier;
  std::optional<int64_t> id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const bool forced = isSavepoint(kind);
    if (!forced && static_cast<int32_t>(pending_.size()) >= config_.max_concurrent) return std::nullopt;
    id = startLocked(kind, target_dir, now(), tasks, barrier);
    if (id) ++dispatching_;
  }
  if (id) {
    for (const auto& [v, s] : tasks) hooks_.trigger_task(v, s, barrier);
    {
      std::lock_guard<std::mutex> lock(mu_);
      --dispatching_;
      poked_ = true;  // the run loop recomputes its deadlines (this checkpoint's expiry)
    }
    cv_.notify_all();
  }
  return id;
}

std::string CheckpointCoordinator::awaitCheckpoint(int64_t id, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, timeout, [&] { return outcomes_.count(id) > 0 || !running_; })) {
    throw UserError(fmt::format("Checkpoint {} did not complete within {} ms", id, timeout.count()));
  }
  // Stopped (the job ended): a pending checkpoint will never complete.
  if (outcomes_.count(id) == 0) throw UserError(fmt::format("Checkpoint {} did not complete: the job ended", id));
  const std::string& outcome = outcomes_[id];
  if (outcome.rfind("ok:", 0) == 0) return outcome.substr(3);
  throw UserError(fmt::format("Checkpoint {} failed: {}", id, outcome.substr(7)));
}

void CheckpointCoordinator::ackLocked(Pending& p, int vertex, int subtask, TaskStateSnapshot state) {
  const size_t idx = taskIndex(vertex, subtask);
  if (p.acks[idx]) return;  // duplicate (an ack and the final state)
  p.acks[idx] = std::move(state);
  if (--p.remaining == 0) {
    completed_ready_.push_back(p.barrier.id);
    cv_.notify_all();
  }
}

void CheckpointCoordinator::acknowledgeCheckpoint(int vertex, int subtask, int64_t id, TaskStateSnapshot state,
                                                  const CheckpointMetrics& metrics) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pending_.find(id);
  if (it == pending_.end()) return;  // expired, aborted or from an earlier attempt: discarded
  Pending& p = *it->second;
  if (p.acks[taskIndex(vertex, subtask)]) return;  // acknowledged by its final state already
  noteMetricsLocked(p, vertex, subtask, metrics);
  ackLocked(p, vertex, subtask, std::move(state));
}

void CheckpointCoordinator::noteMetricsLocked(Pending& p, int vertex, int subtask, const CheckpointMetrics& metrics) {
  p.max_alignment_ns = std::max(p.max_alignment_ns, metrics.alignment_duration_ns);
  p.max_start_delay_ns = std::max(p.max_start_delay_ns, metrics.checkpoint_start_delay_ns);
  if (p.metrics.empty()) p.metrics.resize(static_cast<size_t>(num_tasks_));
  p.metrics[taskIndex(vertex, subtask)] = metrics;
  p.max_sync_ms = std::max(p.max_sync_ms, metrics.sync_duration_ms);
  p.max_async_ms = std::max(p.max_async_ms, metrics.async_duration_ms);
}

void CheckpointCoordinator::declineCheckpoint(int vertex, int subtask, int64_t id, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (pending_.count(id) == 0) return;
  // A checkpoint subsumed by a newer one is not a failure (Flink's CHECKPOINT_DECLINED_SUBSUMED is not counted).
  // Nor is one a task declined while it sorted its backlog (FLIP-327): no checkpoint is due then.
  const bool subsumed = pending_.rbegin()->first > id || reason == kDeclinedDuringBacklog;
  abortLocked(id,
              fmt::format("declined by {} ({}/{}): {}", job_.vertices[static_cast<size_t>(vertex)].name, subtask + 1,
                          job_.vertices[static_cast<size_t>(vertex)].parallelism, reason),
              !subsumed);
  cv_.notify_all();
}

void CheckpointCoordinator::reportFinalState(int vertex, int subtask, TaskStateSnapshot state,
                                             const CheckpointMetrics& metrics) {
  std::vector<std::tuple<int, int, CheckpointBarrier>> to_trigger;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const size_t idx = taskIndex(vertex, subtask);
    for (auto& [id, p] : pending_) {
      // The final state stands for this subtask's snapshot of the pending checkpoints: so do its figures.
      if (!p->acks[idx]) noteMetricsLocked(*p, vertex, subtask, metrics);
      ackLocked(*p, vertex, subtask, state);
    }
    final_states_[idx] = std::move(state);
    endInputLocked(vertex, subtask);
    // A pending checkpoint started while this task ran; its consumers that now have no running producer
    // will never see its barrier from it: trigger them (FLIP-147), or the checkpoint would wait for them
    // until it expires.
    for (const int e : job_.vertices[static_cast<size_t>(vertex)].outputs) {
      const int consumer = job_.edges[static_cast<size_t>(e)].target_vertex;
      if (!inputsFinishedLocked(consumer)) continue;
      for (auto& [id, p] : pending_) {
        for (int s = 0; s < job_.vertices[static_cast<size_t>(consumer)].parallelism; ++s) {
          const size_t t = taskIndex(consumer, s);
          if (!p->acks[t] && !final_states_[t]) to_trigger.emplace_back(consumer, s, p->barrier);
        }
      }
    }
    cv_.notify_all();
  }
  for (const auto& [v, s, barrier] : to_trigger) hooks_.trigger_task(v, s, barrier);
}

bool CheckpointCoordinator::inputsFinishedLocked(int vertex) const {
  for (int e : job_.vertices[static_cast<size_t>(vertex)].inputs) {
    const int source = job_.edges[static_cast<size_t>(e)].source_vertex;
    for (int s = 0; s < job_.vertices[static_cast<size_t>(source)].parallelism; ++s) {
      if (!final_states_[taskIndex(source, s)]) return false;
    }
  }
  return true;
}

void CheckpointCoordinator::reportEndOfInput(int vertex, int subtask) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    endInputLocked(vertex, subtask);
  }
  cv_.notify_all();
}

void CheckpointCoordinator::endInputLocked(int vertex, int subtask) {
  input_ended_[taskIndex(vertex, subtask)] = 1;
  // A finished source processes no backlog: its last report no longer holds checkpoints back (its
  // tasks wait for a final checkpoint, which may start now).
  const graph::JobVertex& v = job_.vertices[static_cast<size_t>(vertex)];
  for (int s = 0; s < v.parallelism; ++s) {
    if (!input_ended_[taskIndex(vertex, s)]) return;
  }
  if (backlog_sources_.empty()) return;
  for (const graph::ChainedOperator& op : v.operators) {
    const std::string uid = op.uid.empty() ? op.name : op.uid;
    size_t erased = backlog_sources_.erase(uid);
    // The per-subtask reports of the operator ("<uid>#<subtask>", FLIP-328) go too.
    for (auto it = backlog_sources_.lower_bound(uid + "#"); it != backlog_sources_.end() && it->rfind(uid + "#", 0) == 0;) {
      it = backlog_sources_.erase(it);
      ++erased;
    }
    if (erased > 0 && backlog_sources_.empty() && config_.interval_during_backlog_ms) {
      next_trigger_ = now();
      poked_ = true;
    }
  }
}

void CheckpointCoordinator::requestCheckpoint() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // The periodic trigger comes forward (a bounded job need not wait a whole interval for its final
    // checkpoint, FLINK-28386); min-pause and max-concurrent-checkpoints still apply. The request stays
    // queued until a checkpoint starts: behind a pending one it starts once that completed or was aborted
    // (Flink's CheckpointRequestDecider keeps it queued), never an interval later.
    next_trigger_ = std::min(next_trigger_, now());
    requested_ = true;
    poked_ = true;
  }
  cv_.notify_all();
}

void CheckpointCoordinator::abortLocked(int64_t id, const std::string& reason, bool count) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return;
  const bool savepoint = isSavepoint(it->second->barrier.kind);
  pending_.erase(it);
  completed_ready_.erase(std::remove(completed_ready_.begin(), completed_ready_.end(), id), completed_ready_.end());
  outcomes_[id] = "failed:" + reason;
  to_notify_aborted_.push_back(id);
  if (count && !savepoint) {
    ++stats_.number_of_failed_checkpoints;
    // §1.4: each failed id counts once, and only when newer than the last success.
    if (id > last_success_id_) ++consecutive_failures_;
  }
}

CompletedCheckpoint CheckpointCoordinator::assemble(const Pending& p) const {
  CompletedCheckpoint c;
  c.checkpoint_id = p.barrier.id;
  c.job_id = job_id_;
  c.kind = p.barrier.kind;
  c.trigger_timestamp_ms = p.barrier.timestamp_ms;
  c.completion_timestamp_ms = wallClockMs();
  for (size_t v = 0; v < job_.vertices.size(); ++v) {
    const graph::JobVertex& vertex = job_.vertices[v];
    for (const graph::ChainedOperator& op : vertex.operators) {
      const std::string& uid = op.uid.empty() ? op.name : op.uid;
      OperatorState state;
      state.parallelism = vertex.parallelism;
      state.max_parallelism = vertex.max_parallelism;
      state.subtasks.resize(static_cast<size_t>(vertex.parallelism));
      bool any = false;
      for (int s = 0; s < vertex.parallelism; ++s) {
        const auto& ack = p.acks[taskIndex(static_cast<int>(v), s)];
        if (!ack) continue;
        auto it = ack->find(uid);
        if (it == ack->end()) continue;
        state.subtasks[static_cast<size_t>(s)] = it->second;
        any = true;
      }
      if (any) c.operators.emplace(uid, std::move(state));
    }
  }
  return c;
}

int64_t CheckpointCoordinator::currentIntervalLocked() const {
  if (backlog_sources_.empty() || !config_.interval_during_backlog_ms) return config_.interval_ms;
  return *config_.interval_during_backlog_ms;
}

bool CheckpointCoordinator::backlogBlocksLocked() const {
  return !backlog_sources_.empty() && config_.interval_during_backlog_ms == 0;
}

void CheckpointCoordinator::scheduleFromLocked(Clock::time_point from, int64_t interval_ms) {
  last_scheduled_ = from;
  next_trigger_ = from + std::chrono::milliseconds(std::max<int64_t>(interval_ms, 0));
}

void CheckpointCoordinator::setIsProcessingBacklog(const std::string& source_uid, bool backlog) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    // A checkpoint started before this report reaches its tasks before anyone hears of the backlog.
    // Not while suspended: the job is failing over and the dispatch may wait for this task's end.
    cv_.wait(lock, [&] { return dispatching_ == 0 || suspended_ || !running_; });
    const bool was = !backlog_sources_.empty();
    if (backlog) backlog_sources_.insert(source_uid);
    else backlog_sources_.erase(source_uid);
    const bool is = !backlog_sources_.empty();
    if (was == is || !config_.interval_during_backlog_ms) return;
    if (is) {
      // The backlog interval counts from the last periodic trigger (0: nothing is armed).
      scheduleFromLocked(last_scheduled_, *config_.interval_during_backlog_ms);
    } else {
      // FLIP-309: the first checkpoint after backlog is triggered at once.
      next_trigger_ = now();
    }
    poked_ = true;
  }
  cv_.notify_all();
}

bool CheckpointCoordinator::isProcessingBacklog() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !backlog_sources_.empty();
}

void CheckpointCoordinator::awaitClockTick() {
  std::unique_lock<std::mutex> lock(mu_);
  const uint64_t target = ++ticks_requested_;
  poked_ = true;
  cv_.notify_all();
  cv_.wait(lock, [&] { return ticks_done_ >= target || !running_; });
}

void CheckpointCoordinator::run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (running_) {
    poked_ = false;
    const uint64_t ticks_seen = ticks_requested_;
    const Clock::time_point now = this->now();
    const int64_t interval = currentIntervalLocked();
    // Finalize fully acknowledged checkpoints (storage I/O without the lock).
    while (!completed_ready_.empty() && running_ && !suspended_) {
      const int64_t id = completed_ready_.front();
      completed_ready_.erase(completed_ready_.begin());
      auto it = pending_.find(id);
      if (it == pending_.end()) continue;
      std::unique_ptr<Pending> p = std::move(it->second);
      pending_.erase(it);
      CompletedCheckpoint completed = assemble(*p);
      finalizing_ = true;
      lock.unlock();
      std::string path;
      std::string error;
      try {
        path = hooks_.store ? hooks_.store(completed, p->target_dir) : std::string();
      } catch (const std::exception& e) {
        error = e.what();
      }
      lock.lock();
      if (!error.empty()) {
        // Flink's IO_EXCEPTION: counted.
        pending_.emplace(id, std::move(p));
        abortLocked(id, "storing the checkpoint failed: " + error, true);
        finalizing_ = false;
        cv_.notify_all();
        continue;
      }
      completed.external_pointer = path;
      const bool savepoint = isSavepoint(completed.kind);
      const bool stop = isStopSavepoint(completed.kind);
      outcomes_[id] = "ok:" + path;
      if (!savepoint) {
        const Clock::time_point done = this->now();
        last_completion_ = done;
        last_success_id_ = std::max(last_success_id_, id);
        consecutive_failures_ = 0;
        ++stats_.number_of_completed_checkpoints;
        stats_.last_checkpoint_id = id;
        stats_.last_checkpoint_duration_ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(done - p->start).count();
        stats_.last_checkpoint_size = completed.checkpointedSize();
        stats_.last_checkpoint_full_size = completed.stateSize();
        stats_.last_checkpoint_external_path = path;
        stats_.last_checkpoint_max_alignment_ns = p->max_alignment_ns;
        stats_.last_checkpoint_max_start_delay_ns = p->max_start_delay_ns;
        stats_.last_checkpoint_unaligned = false;
        stats_.last_checkpoint_persisted_in_flight_bytes = 0;
        stats_.last_checkpoint_subtasks.assign(job_.vertices.size(), {});
        for (size_t v = 0; v < job_.vertices.size(); ++v) {
          for (int s = 0; s < job_.vertices[v].parallelism; ++s) {
            const size_t idx = taskIndex(static_cast<int>(v), s);
            const CheckpointMetrics m = idx < p->metrics.size() ? p->metrics[idx] : CheckpointMetrics{};
            stats_.last_checkpoint_unaligned = stats_.last_checkpoint_unaligned || m.unaligned;
            stats_.last_checkpoint_persisted_in_flight_bytes += m.persisted_in_flight_bytes;
            stats_.last_checkpoint_subtasks[v].push_back(m);
          }
        }
        stats_.last_checkpoint_max_sync_duration_ms = p->max_sync_ms;
        stats_.last_checkpoint_max_async_duration_ms = p->max_async_ms;
        latest_ = std::make_shared<const CompletedCheckpoint>(std::move(completed));
        // Older pending checkpoints are subsumed (not failures).
        std::vector<int64_t> older;
        for (const auto& [pid, pp] : pending_) {
          if (pid < id && pp->barrier.kind == CheckpointKind::kCheckpoint) older.push_back(pid);
        }
        for (int64_t pid : older) abortLocked(pid, "subsumed by a newer completed checkpoint", false);
        lock.unlock();
        if (hooks_.notify_complete) hooks_.notify_complete(id);
        lock.lock();
      } else if (stop) {
        // Stop-with-savepoint: the tasks wait for this notification to end (and sinks commit on it, as
        // Flink commits the synchronous savepoint).
        lock.unlock();
        if (hooks_.notify_complete) hooks_.notify_complete(id);
        lock.lock();
      }
      finalizing_ = false;
      cv_.notify_all();
    }
    // Expire checkpoints past the timeout.
    std::optional<Clock::time_point> next_expiry;
    {
      std::vector<int64_t> expired;
      for (const auto& [id, p] : pending_) {
        const auto deadline = p->start + std::chrono::milliseconds(config_.timeout_ms);
        if (deadline <= now) expired.push_back(id);
        else if (!next_expiry || deadline < *next_expiry) next_expiry = deadline;
      }
      for (int64_t id : expired) abortLocked(id, "Checkpoint expired before completing.", true);
    }
    if (!to_notify_aborted_.empty()) {
      std::vector<int64_t> ids;
      ids.swap(to_notify_aborted_);
      lock.unlock();
      if (hooks_.notify_aborted) {
        for (int64_t id : ids) hooks_.notify_aborted(id);
      }
      lock.lock();
      cv_.notify_all();
    }
    if (consecutive_failures_ > config_.tolerable_failures) {
      consecutive_failures_ = 0;
      suspended_ = true;
      lock.unlock();
      if (hooks_.fail_job) hooks_.fail_job("Exceeded checkpoint tolerable failure threshold.");
      lock.lock();
      continue;
    }
    // Periodic trigger (CheckpointRequestDecider: concurrency limit and min pause).
    // interval <= 0 also while backlog forbids checkpoints (FLIP-309): nothing is armed then, so nothing
    // scheduled earlier can fire inside the backlog (FLINK-39108).
    if (interval > 0 && !suspended_ && now >= next_trigger_) {
      const auto pause_end = last_completion_ ? *last_completion_ + std::chrono::milliseconds(config_.min_pause_ms)
                                              : now;
      if (static_cast<int32_t>(pending_.size()) >= config_.max_concurrent) {
        // The due trigger stays queued (Flink's CheckpointRequestDecider): it starts as soon as a pending
        // checkpoint completes, is declined or expires (min-pause permitting), not a whole interval later.
      } else if (now < pause_end) {
        next_trigger_ = pause_end;
      } else {
        std::vector<std::pair<int, int>> tasks;
        CheckpointBarrier barrier;
        const std::optional<int64_t> id = startLocked(CheckpointKind::kCheckpoint, "", now, tasks, barrier);
        scheduleFromLocked(now, interval);
        if (id) {
          const auto deadline = now + std::chrono::milliseconds(config_.timeout_ms);
          if (!next_expiry || deadline < *next_expiry) next_expiry = deadline;
          ++dispatching_;
          lock.unlock();
          for (const auto& [v, s] : tasks) hooks_.trigger_task(v, s, barrier);
          lock.lock();
          --dispatching_;
          cv_.notify_all();
          continue;
        }
      }
    }
    auto wake = next_expiry;
    // A trigger queued behind pending checkpoints has no deadline: their completion or abort wakes the loop.
    const bool queued = (requested_ || now >= next_trigger_) && static_cast<int32_t>(pending_.size()) >= config_.max_concurrent;
    if (interval > 0 && !suspended_ && !queued && (!wake || next_trigger_ < *wake)) wake = next_trigger_;
    // While suspended, completed checkpoints wait (not finalized): they must not keep the loop spinning.
    auto ready = [&] {
      return !running_ || poked_ || (!completed_ready_.empty() && !suspended_) || !to_notify_aborted_.empty();
    };
    if (ready()) continue;
    ticks_done_ = ticks_seen;
    cv_.notify_all();
    if (hooks_.clock) {
      cv_.wait(lock, ready);  // the test's clock: deadlines are acted on at awaitClockTick
    } else if (wake) {
      cv_.wait_until(lock, *wake, ready);
    } else {
      cv_.wait(lock, ready);
    }
  }
}

}  // namespace sluice::runtime::checkpoint
