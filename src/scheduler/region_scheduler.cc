#include "scheduler/region_scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/error.h"

namespace sluice::scheduler {

int SlotPool::missing(const std::vector<int>& shared_slots) const {
  int n = 0;
  for (int s : shared_slots) n += held_[static_cast<size_t>(s)] ? 0 : 1;
  return n;
}

bool SlotPool::tryAllocate(const std::vector<int>& shared_slots) {
  const int need = missing(shared_slots);
  if (need > free()) return false;
  for (int s : shared_slots) held_[static_cast<size_t>(s)] = 1;
  in_use_ += need;
  peak_ = std::max(peak_, in_use_);
  return true;
}

void SlotPool::acquire(int shared_slot) {
  SLUICE_CHECK(held_[static_cast<size_t>(shared_slot)], "shared slot {} is not allocated", shared_slot);
  ++refs_[static_cast<size_t>(shared_slot)];
}

void SlotPool::release(int shared_slot) {
  int& refs = refs_[static_cast<size_t>(shared_slot)];
  SLUICE_CHECK(refs > 0, "shared slot {} released more often than acquired", shared_slot);
  if (--refs == 0) {
    held_[static_cast<size_t>(shared_slot)] = 0;
    --in_use_;
  }
}

PipelinedRegionScheduler::PipelinedRegionScheduler(const ExecutionGraph& graph, SlotPoolSettings settings)
    : graph_(graph),
      settings_(settings),
      pool_(settings.totalSlots(), graph.sharedSlots().size()),
      state_(graph.regions().size(), RegionState::kCreated),
      requested_at_(graph.regions().size()),
      finished_per_vertex_(graph.job().vertices.size(), 0),
      execution_deployed_(graph.executions().size(), 0),
      execution_done_(graph.executions().size(), 0),
      execution_finished_(graph.executions().size(), 0) {}

bool PipelinedRegionScheduler::inputsProduced(const SchedulingRegion& region) const {
  for (int e : region.blocking_inputs) {
    const graph::JobEdge& edge = graph_.job().edges[static_cast<size_t>(e)];
    const graph::JobVertex& producer = graph_.job().vertices[static_cast<size_t>(edge.source_vertex)];
    if (finished_per_vertex_[static_cast<size_t>(edge.source_vertex)] < producer.parallelism) return false;
  }
  return true;
}

void PipelinedRegionScheduler::requestSlots(int region, Clock::time_point now) {
  state_[static_cast<size_t>(region)] = RegionState::kWaitingForSlots;
  requested_at_[static_cast<size_t>(region)] = now;
}

std::vector<int> PipelinedRegionScheduler::deployWaiting() {
  std::vector<int> deploy;
  // In region order; a region that does not fit does not hold back a later one that does.
  for (const SchedulingRegion& r : graph_.regions()) {
    if (state_[static_cast<size_t>(r.id)] != RegionState::kWaitingForSlots) continue;
    if (!pool_.tryAllocate(r.shared_slots)) continue;
    state_[static_cast<size_t>(r.id)] = RegionState::kDeployed;
    deployed_order_.push_back(r.id);
    for (int ex : r.executions) {
      pool_.acquire(graph_.executions()[static_cast<size_t>(ex)].shared_slot);
      execution_deployed_[static_cast<size_t>(ex)] = 1;
      deploy.push_back(ex);
    }
  }
  std::sort(deploy.begin(), deploy.end());
  return deploy;
}

std::vector<int> PipelinedRegionScheduler::start(Clock::time_point now) {
  for (const SchedulingRegion& r : graph_.regions()) {
    if (r.blocking_inputs.empty()) requestSlots(r.id, now);
  }
  return deployWaiting();
}

std::vector<int> PipelinedRegionScheduler::onExecutionFinished(int execution, Clock::time_point now) {
  SLUICE_CHECK(execution_deployed_[static_cast<size_t>(execution)] && !execution_done_[static_cast<size_t>(execution)],
               "execution {} finished twice or without being deployed", execution);
  execution_done_[static_cast<size_t>(execution)] = 1;
  execution_finished_[static_cast<size_t>(execution)] = 1;
  ++finished_count_;
  const ExecutionVertex& ev = graph_.executions()[static_cast<size_t>(execution)];
  pool_.release(ev.shared_slot);
  const int vertex_finished = ++finished_per_vertex_[static_cast<size_t>(ev.vertex)];
  if (vertex_finished == graph_.job().vertices[static_cast<size_t>(ev.vertex)].parallelism) {
    // The vertex's results are fully produced: consumer regions may have become schedulable.
    for (const SchedulingRegion& r : graph_.regions()) {
      if (state_[static_cast<size_t>(r.id)] == RegionState::kCreated && !r.blocking_inputs.empty() &&
          inputsProduced(r)) {
        requestSlots(r.id, now);
      }
    }
  }
  return deployWaiting();
}

void PipelinedRegionScheduler::onExecutionEnded(int execution) {
  if (execution_done_[static_cast<size_t>(execution)] || !execution_deployed_[static_cast<size_t>(execution)]) return;
  execution_done_[static_cast<size_t>(execution)] = 1;
  pool_.release(graph_.executions()[static_cast<size_t>(execution)].shared_slot);
}

std::vector<int> PipelinedRegionScheduler::restartRegions(const std::vector<int>& regions, Clock::time_point now) {
  for (int id : regions) {
    const SchedulingRegion& r = graph_.regions()[static_cast<size_t>(id)];
    for (int ex : r.executions) {
      const auto e = static_cast<size_t>(ex);
      SLUICE_CHECK(!execution_deployed_[e] || execution_done_[e], "execution {} of region {} still runs", ex, id);
      if (execution_finished_[e]) {
        --finished_count_;
        --finished_per_vertex_[static_cast<size_t>(graph_.executions()[e].vertex)];
      }
      execution_deployed_[e] = execution_done_[e] = execution_finished_[e] = 0;
    }
    state_[static_cast<size_t>(id)] = RegionState::kCreated;
  }
  for (int id : regions) {
    const SchedulingRegion& r = graph_.regions()[static_cast<size_t>(id)];
    if (inputsProduced(r)) requestSlots(id, now);
  }
  return deployWaiting();
}

std::optional<Clock::time_point> PipelinedRegionScheduler::nextTimeout() const {
  std::optional<Clock::time_point> next;
  for (size_t r = 0; r < state_.size(); ++r) {
    if (state_[r] != RegionState::kWaitingForSlots) continue;
    const Clock::time_point t = requested_at_[r] + settings_.slot_request_timeout;
    if (!next || t < *next) next = t;
  }
  return next;
}

void PipelinedRegionScheduler::checkSlotRequestTimeouts(Clock::time_point now) const {
  for (const SchedulingRegion& r : graph_.regions()) {
    if (state_[static_cast<size_t>(r.id)] != RegionState::kWaitingForSlots) continue;
    if (now < requested_at_[static_cast<size_t>(r.id)] + settings_.slot_request_timeout) continue;
    const graph::JobGraph& job = graph_.job();
    std::map<std::string, int> per_group;
    for (int s : r.shared_slots) ++per_group[graph_.sharedSlots()[static_cast<size_t>(s)].slot_sharing_group];
    std::string groups;
    for (const auto& [g, n] : per_group) groups += fmt::format("{}{} x{}", groups.empty() ? "" : ", ", g, n);
    std::string vertices;
    for (int v : r.vertices) {
      vertices += fmt::format("{}'{}'", vertices.empty() ? "" : ", ", job.vertices[static_cast<size_t>(v)].name);
    }
    throw UserError(fmt::format(
        "Could not acquire the minimum required resources: pipelined region {} of job '{}' ({}) needs {} slot(s) "
        "(slot sharing groups: {}), but only {} of the cluster's {} slot(s) were free after waiting {} ms "
        "(slot.request.timeout). The job needs at least {} slot(s) in {} mode; the cluster has {} "
        "(taskmanager.numberOfTaskSlots={} x local.number-taskmanager={}). Raise taskmanager.numberOfTaskSlots "
        "or local.number-taskmanager, or lower the parallelism.",
        r.id, job.name, vertices, r.shared_slots.size(), groups, pool_.free(), pool_.total(),
        settings_.slot_request_timeout.count(), graph_.minimumRequiredSlots(), graph::runtimeModeName(job.runtime_mode),
        pool_.total(), settings_.slots_per_task_manager, settings_.task_managers));
  }
}

}  // namespace sluice::scheduler
