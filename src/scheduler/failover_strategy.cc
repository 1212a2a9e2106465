#include "scheduler/failover_strategy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <deque>

#include "common/error.h"

namespace sluice::scheduler {

FailoverStrategy parseFailoverStrategy(const std::string& value) {
  std::string v = value;
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "region") return FailoverStrategy::kRegion;
  if (v == "full") return FailoverStrategy::kFull;
  throw ConfigError(fmt::format(
      "Invalid value '{}' for configuration key 'jobmanager.execution.failover-strategy': expected region or full",
      value));
}

std::vector<int> regionsToRestart(const ExecutionGraph& graph, int failed_region, FailoverStrategy strategy,
                                  const std::function<bool(int edge)>& result_available) {
  const std::vector<SchedulingRegion>& regions = graph.regions();
  std::vector<int> out;
  if (strategy == FailoverStrategy::kFull) {
    for (const SchedulingRegion& r : regions) out.push_back(r.id);
    return out;
  }
  const graph::JobGraph& job = graph.job();
  auto regionOf = [&](int vertex) { return graph.executions()[static_cast<size_t>(graph.executionIndex(vertex, 0))].region; };
  std::vector<char> visited(regions.size(), 0);
  std::deque<int> queue{failed_region};
  visited[static_cast<size_t>(failed_region)] = 1;
  auto visit = [&](int region) {
    if (visited[static_cast<size_t>(region)]) return;
    visited[static_cast<size_t>(region)] = 1;
    queue.push_back(region);
  };
  while (!queue.empty()) {
    const SchedulingRegion& r = regions[static_cast<size_t>(queue.front())];
    queue.pop_front();
    // Inputs that cannot be read again: their producer runs again.
    for (int e : r.blocking_inputs) {
      if (!result_available(e)) visit(regionOf(job.edges[static_cast<size_t>(e)].source_vertex));
    }
    // Results this region produces again: every consumer in another region reads them again.
    for (int v : r.vertices) {
      for (int e : job.vertices[static_cast<size_t>(v)].outputs) {
        const int consumer = regionOf(job.edges[static_cast<size_t>(e)].target_vertex);
        if (consumer != r.id) visit(consumer);
      }
    }
  }
  for (size_t i = 0; i < regions.size(); ++i) {
    if (visited[i]) out.push_back(static_cast<int>(i));
  }
  return out;
}

}  // namespace sluice::scheduler
