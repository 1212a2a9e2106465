#include "scheduler/execution_graph.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "common/error.h"
#include "graph/pipelined_region.h"

namespace sluice::scheduler {

namespace {

// Strongly connected components of a small directed graph (Tarjan); returns the component of each node.
std::vector<int> stronglyConnectedComponents(const std::vector<std::set<int>>& successors) {
  const int n = static_cast<int>(successors.size());
  std::vector<int> index(static_cast<size_t>(n), -1), low(static_cast<size_t>(n), 0), component(static_cast<size_t>(n), -1);
  std::vector<char> on_stack(static_cast<size_t>(n), 0);
  std::vector<int> stack;
  int next_index = 0, next_component = 0;
  std::function<void(int)> visit = [&](int v) {
    index[static_cast<size_t>(v)] = low[static_cast<size_t>(v)] = next_index++;
    stack.push_back(v);
    on_stack[static_cast<size_t>(v)] = 1;
    for (int w : successors[static_cast<size_t>(v)]) {
      if (index[static_cast<size_t>(w)] < 0) {
        visit(w);
        low[static_cast<size_t>(v)] = std::min(low[static_cast<size_t>(v)], low[static_cast<size_t>(w)]);
      } else if (on_stack[static_cast<size_t>(w)]) {
        low[static_cast<size_t>(v)] = std::min(low[static_cast<size_t>(v)], index[static_cast<size_t>(w)]);
      }
    }
    if (low[static_cast<size_t>(v)] == index[static_cast<size_t>(v)]) {
      int w;
      do {
        w = stack.back();
        stack.pop_back();
        on_stack[static_cast<size_t>(w)] = 0;
        component[static_cast<size_t>(w)] = next_component;
      } while (w != v);
      ++next_component;
    }
  };
  for (int v = 0; v < n; ++v) {
    if (index[static_cast<size_t>(v)] < 0) visit(v);
  }
  return component;
}

}  // namespace

ExecutionGraph::ExecutionGraph(const graph::JobGraph& job) : job_(&job) {
  // A JobGraph built by hand may lack its regions; they follow from its edges.
  const std::vector<graph::LogicalPipelinedRegion> logical =
      job.regions.empty() ? graph::computePipelinedRegions(job) : job.regions;
  const size_t num_logical = logical.size();
  std::vector<int> logical_of_vertex(job.vertices.size(), -1);
  for (const graph::LogicalPipelinedRegion& r : logical) {
    for (int v : r.vertices) logical_of_vertex[static_cast<size_t>(v)] = r.id;
  }

  // Cross-region dependencies; regions on a cycle of them are merged so that none waits for itself
  // (Flink's SchedulingPipelinedRegionComputeUtil, FLINK-17330).
  std::vector<std::set<int>> successors(num_logical);
  for (const graph::JobEdge& e : job.edges) {
    const int from = logical_of_vertex[static_cast<size_t>(e.source_vertex)];
    const int to = logical_of_vertex[static_cast<size_t>(e.target_vertex)];
    if (from != to) successors[static_cast<size_t>(from)].insert(to);
  }
  const std::vector<int> component = stronglyConnectedComponents(successors);
  // Number the merged regions by their smallest logical region id.
  std::map<int, int> region_of_component;
  for (size_t r = 0; r < num_logical; ++r) {
    auto it = region_of_component.find(component[r]);
    if (it == region_of_component.end()) {
      const int id = static_cast<int>(regions_.size());
      region_of_component.emplace(component[r], id);
      regions_.push_back(SchedulingRegion{id, {}, {}, {}, {}, {}});
    }
    regions_[static_cast<size_t>(region_of_component[component[r]])].logical_regions.push_back(static_cast<int>(r));
  }
  std::vector<int> region_of_vertex(job.vertices.size(), 0);
  for (size_t v = 0; v < job.vertices.size(); ++v) {
    const int lr = logical_of_vertex[v];
    SLUICE_CHECK(lr >= 0 && static_cast<size_t>(lr) < num_logical, "vertex '{}' has no pipelined region",
                 job.vertices[v].name);
    region_of_vertex[v] = region_of_component[component[static_cast<size_t>(lr)]];
    regions_[static_cast<size_t>(region_of_vertex[v])].vertices.push_back(static_cast<int>(v));
  }

  std::map<std::pair<std::string, int>, int> slot_index;
  for (size_t v = 0; v < job.vertices.size(); ++v) {
    const graph::JobVertex& vertex = job.vertices[v];
    first_execution_.push_back(static_cast<int>(executions_.size()));
    SchedulingRegion& region = regions_[static_cast<size_t>(region_of_vertex[v])];
    for (int s = 0; s < vertex.parallelism; ++s) {
      auto [it, inserted] =
          slot_index.emplace(std::make_pair(vertex.slot_sharing_group, s), static_cast<int>(shared_slots_.size()));
      if (inserted) shared_slots_.push_back(SharedSlotKey{vertex.slot_sharing_group, s});
      region.executions.push_back(static_cast<int>(executions_.size()));
      region.shared_slots.push_back(it->second);
      executions_.push_back(ExecutionVertex{static_cast<int>(v), s, region.id, it->second});
    }
  }
  for (SchedulingRegion& region : regions_) {
    std::sort(region.shared_slots.begin(), region.shared_slots.end());
    region.shared_slots.erase(std::unique(region.shared_slots.begin(), region.shared_slots.end()),
                              region.shared_slots.end());
  }
  for (size_t e = 0; e < job.edges.size(); ++e) {
    const graph::JobEdge& edge = job.edges[e];
    const int from = region_of_vertex[static_cast<size_t>(edge.source_vertex)];
    const int to = region_of_vertex[static_cast<size_t>(edge.target_vertex)];
    if (from != to) regions_[static_cast<size_t>(to)].blocking_inputs.push_back(static_cast<int>(e));
  }
}

int ExecutionGraph::minimumRequiredSlots() const {
  if (job_->runtime_mode == graph::RuntimeMode::kStreaming) return static_cast<int>(shared_slots_.size());
  size_t most = 0;
  for (const SchedulingRegion& r : regions_) most = std::max(most, r.shared_slots.size());
  return static_cast<int>(most);
}

}  // namespace sluice::scheduler
