#pragma once
/// ExecutionGraph: the subtasks of a JobGraph, the shared slots they run in and the regions they are
/// deployed in (Flink's ExecutionGraph / SchedulingTopology, reduced to what the embedded cluster needs).
/// Built once on the client thread, read-only afterwards.

#include <string>
#include <vector>

#include "graph/job_graph.h"

namespace sluice::scheduler {

/// One subtask of a JobVertex (Flink's ExecutionVertex).
struct ExecutionVertex {
  int vertex = 0;       ///< index into JobGraph::vertices
  int subtask = 0;      ///< 0-based
  int region = 0;       ///< index into ExecutionGraph::regions()
  int shared_slot = 0;  ///< index into ExecutionGraph::sharedSlots()
};

/// The slot that subtask `subtask` of every vertex of one slot sharing group runs in (Flink's
/// ExecutionSlotSharingGroup): a group whose largest parallelism is P uses P slots.
struct SharedSlotKey {
  std::string slot_sharing_group;
  int subtask = 0;
};

/// A set of subtasks deployed together (Flink's SchedulingPipelinedRegion): one logical pipelined region,
/// or several merged because they depend on each other through blocking edges in a cycle (FLINK-17330).
struct SchedulingRegion {
  int id = 0;
  std::vector<int> logical_regions;  ///< JobGraph::regions ids, ascending
  std::vector<int> vertices;         ///< JobGraph vertex indexes, ascending
  std::vector<int> executions;       ///< ExecutionGraph execution indexes, ascending
  std::vector<int> shared_slots;     ///< distinct shared slots its executions need, ascending
  /// JobGraph edges this region consumes from other regions (blocking): the region may be deployed only
  /// when every producer subtask of each of them has finished.
  std::vector<int> blocking_inputs;
};

/// The subtasks of a JobGraph with their slots and scheduling regions.
class ExecutionGraph {
 public:
  /// `job` must outlive this object; its slot sharing groups must be resolved (as
  /// StreamingJobGraphGenerator does). Its regions are used when set, else computed from its edges.
  explicit ExecutionGraph(const graph::JobGraph& job);

  const graph::JobGraph& job() const { return *job_; }
  /// Vertex-major: all subtasks of vertex 0, then vertex 1, ...
  const std::vector<ExecutionVertex>& executions() const { return executions_; }
  /// Index of subtask `subtask` of vertex `vertex` in executions().
  int executionIndex(int vertex, int subtask) const {
    return first_execution_[static_cast<size_t>(vertex)] + subtask;
  }
  const std::vector<SharedSlotKey>& sharedSlots() const { return shared_slots_; }
  /// Ordered by their smallest logical region id (deterministic).
  const std::vector<SchedulingRegion>& regions() const { return regions_; }

  /// Slots the job needs at least. STREAMING: all regions run at once, so the distinct shared slots of
  /// the whole job (summed over slot sharing groups, the largest parallelism in each). BATCH: regions can
  /// run one after another, so the most any single region needs.
  int minimumRequiredSlots() const;

 private:
  const graph::JobGraph* job_;
  std::vector<ExecutionVertex> executions_;
  std::vector<int> first_execution_;
  std::vector<SharedSlotKey> shared_slots_;
  std::vector<SchedulingRegion> regions_;
};

}  // namespace sluice::scheduler
