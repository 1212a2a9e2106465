#include "table/api/job_runner.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "cluster/job_listener.h"
#include "cluster/mini_cluster.h"
#include "common/error.h"
#include "graph/job_graph.h"

namespace sluice::table {

namespace {

std::vector<VertexProgress> toProgress(const std::vector<cluster::VertexProgress>& vertices) {
  std::vector<VertexProgress> out;
  for (const auto& v : vertices) {
    VertexProgress p{v.name, v.parallelism, v.records_in, v.records_out, v.busy_time_ms_per_second,
                     v.back_pressured_time_ms_per_second, v.idle_time_ms_per_second};
    for (const auto& op : v.operators) {
      p.sorting_subtasks += op.sorting_subtasks;
      p.records_sorted += op.records_sorted;
      p.backlog_subtasks = std::max(p.backlog_subtasks, op.backlog_subtasks);
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

void JobCancellation::reset() {
  std::lock_guard<std::mutex> lock(mu_);
  requested_ = false;
}

void JobCancellation::cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  requested_ = true;
  if (handle_ != nullptr) handle_->cancel();
}

bool JobCancellation::requested() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requested_;
}

std::string JobCancellation::savepoint(const std::string& target_dir, std::chrono::milliseconds timeout) {
  // Held while the savepoint runs, so the job's handle stays valid (runJob detaches it under the lock).
  std::lock_guard<std::mutex> lock(mu_);
  if (handle_ == nullptr) throw UserError("No job is running: there is nothing to take a savepoint of");
  return handle_->triggerSavepoint(target_dir, timeout);
}

void JobCancellation::attach(cluster::JobHandle* handle) {
  std::lock_guard<std::mutex> lock(mu_);
  handle_ = handle;
  if (handle_ != nullptr && requested_) handle_->cancel();
}

JobSummary runJob(const graph::JobGraph& job, const Configuration& config, const JobRunOptions& options) {
  cluster::MiniCluster cluster(config);
  cluster::SubmitOptions submit;
  if (options.progress) {
    submit.on_progress = [cb = options.progress](const cluster::JobProgress& p) { cb(toProgress(p.vertices)); };
    submit.progress_interval = std::chrono::milliseconds(options.progress_interval_ms);
  }
  // Shared: a job listener (the REST API) may hold it while it takes a savepoint.
  std::shared_ptr<cluster::JobHandle> handle = cluster.start(job, config, submit);
  if (options.status && !handle->checkpointDirectory().empty()) {
    options.status(fmt::format("Job '{}' ({}) writes its checkpoints to {}", job.name, handle->jobId(),
                               handle->checkpointDirectory()));
  }
  struct Detach {
    JobCancellation* c;
    ~Detach() {
      if (c != nullptr) c->attach(nullptr);
    }
  } detach{options.cancellation.get()};
  if (options.cancellation) options.cancellation->attach(handle.get());
  for (const auto& l : options.listeners) l->onJobSubmitted(job, config, handle);
  cluster::JobExecutionResult result;
  try {
    result = handle->wait();
  } catch (...) {
    for (const auto& l : options.listeners) l->onJobExecuted(handle->jobId(), nullptr, std::current_exception());
    throw;
  }
  for (const auto& l : options.listeners) l->onJobExecuted(handle->jobId(), &result, nullptr);

  // Sources are vertex heads marked is_source; sinks are operators with no output at all.
  std::map<int, const cluster::OperatorProgress*> by_node;
  for (const auto& v : result.vertices)
    for (const auto& op : v.operators) by_node[op.node_id] = &op;
  JobSummary summary;
  summary.name = job.name;
  summary.wall_seconds = result.wall_seconds;
  summary.execution = std::make_shared<const cluster::JobExecutionResult>(result);
  for (const auto& v : result.vertices) summary.late_rows_dropped += v.late_records_dropped;
  for (const auto& v : job.vertices) {
    for (size_t i = 0; i < v.operators.size(); ++i) {
      const auto& op = v.operators[i];
      auto it = by_node.find(op.node_id);
      if (it == by_node.end()) continue;
      if (i == 0 && v.is_source) summary.rows_read += it->second->records_out;
      if (op.chained_outputs.empty() && op.network_outputs.empty()) summary.rows_written += it->second->records_in;
    }
  }
  return summary;
}

}  // namespace sluice::table
