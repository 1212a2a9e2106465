#include "graph/pipelined_region.h"

#include <fmt/format.h>

#include <numeric>

#include "common/error.h"

namespace sluice::graph {

namespace {

int findRoot(std::vector<int>& parent, int x) {
  while (parent[static_cast<size_t>(x)] != x) {
    parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(parent[static_cast<size_t>(x)])];
    x = parent[static_cast<size_t>(x)];
  }
  return x;
}

}  // namespace

std::vector<LogicalPipelinedRegion> computePipelinedRegions(const JobGraph& job) {
  const size_t n = job.vertices.size();
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  // Vertices are topologically sorted, so every producer is visited before its consumers.
  for (size_t v = 0; v < n; ++v) {
    for (int ei : job.vertices[v].inputs) {
      const JobEdge& e = job.edges[static_cast<size_t>(ei)];
      if (e.exchange_mode != ExchangeMode::kPipelined) continue;
      const int a = findRoot(parent, static_cast<int>(v));
      const int b = findRoot(parent, e.source_vertex);
      if (a == b) continue;
      // The smaller index stays root so the root is the region's first vertex.
      if (a < b) parent[static_cast<size_t>(b)] = a;
      else parent[static_cast<size_t>(a)] = b;
    }
  }
  std::vector<LogicalPipelinedRegion> regions;
  std::vector<int> region_of_root(n, -1);
  for (size_t v = 0; v < n; ++v) {
    const int root = findRoot(parent, static_cast<int>(v));
    int& r = region_of_root[static_cast<size_t>(root)];
    if (r < 0) {
      r = static_cast<int>(regions.size());
      regions.push_back(LogicalPipelinedRegion{r, {}});
    }
    regions[static_cast<size_t>(r)].vertices.push_back(static_cast<int>(v));
  }
  return regions;
}

std::string regionSlotSharingGroupName(int region) { return fmt::format("default-region-{}", region); }

void assignSlotSharingGroups(JobGraph& job, bool all_in_same_group_by_default) {
  for (const LogicalPipelinedRegion& r : job.regions) {
    for (int v : r.vertices) {
      JobVertex& vertex = job.vertices[static_cast<size_t>(v)];
      vertex.pipelined_region = r.id;
      SLUICE_CHECK(!vertex.slot_sharing_group.empty(), "vertex '{}' has no slot sharing group", vertex.name);
      if (vertex.slot_sharing_group == "default" && !all_in_same_group_by_default) {
        vertex.slot_sharing_group = regionSlotSharingGroupName(r.id);
      }
    }
  }
}

}  // namespace sluice::graph
