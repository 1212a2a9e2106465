#pragma once
/// Region-by-region deployment with a fixed number of slots (Flink's PipelinedRegionSchedulingStrategy
/// with slot sharing and a declarative slot pool, reduced to one process). Pure bookkeeping: the caller
/// (the MiniCluster) starts the subtasks it is told to deploy and reports when they finish.

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "scheduler/execution_graph.h"

namespace sluice::scheduler {

using Clock = std::chrono::steady_clock;

/// The slots of the embedded cluster and how long a region may wait for them.
struct SlotPoolSettings {
  int task_managers = 1;                                         ///< local.number-taskmanager
  int slots_per_task_manager = 1;                                ///< taskmanager.numberOfTaskSlots
  std::chrono::milliseconds slot_request_timeout{5 * 60 * 1000};  ///< slot.request.timeout
  int totalSlots() const { return task_managers * slots_per_task_manager; }
};

/// Slots as a counted resource shared by subtasks (Flink's SlotPool + SharedSlot): a shared slot is taken
/// from the pool when the first subtask that runs in it is deployed and returned when the last one ends.
class SlotPool {
 public:
  /// `total` >= 0 slots; `num_shared_slots` the size of ExecutionGraph::sharedSlots().
  SlotPool(int total, size_t num_shared_slots) : total_(total), refs_(num_shared_slots, 0), held_(num_shared_slots, 0) {}
  int total() const { return total_; }
  int free() const { return total_ - in_use_; }
  int inUse() const { return in_use_; }
  int peakInUse() const { return peak_; }
  /// Slots needed to run subtasks in `shared_slots` now: those not held already.
  int missing(const std::vector<int>& shared_slots) const;
  /// Takes the missing slots when enough are free; returns false (and takes nothing) otherwise.
  bool tryAllocate(const std::vector<int>& shared_slots);
  /// A subtask starts running in `shared_slot` (which must be held).
  void acquire(int shared_slot);
  /// A subtask in `shared_slot` ended; the slot returns to the pool when it was the last one.
  void release(int shared_slot);

 private:
  int total_;
  int in_use_ = 0;
  int peak_ = 0;
  std::vector<int> refs_;
  std::vector<char> held_;
};

/// Decides which subtasks to deploy when (Flink's PipelinedRegionSchedulingStrategy): at the start every
/// region without blocking inputs asks for its slots; when a blocking result is fully produced (every
/// producer subtask finished), each consumer region whose blocking inputs are all produced asks for its
/// slots. A region is deployed as a whole once the pool can give it all its slots; it waits otherwise,
/// and fails the job after `slot.request.timeout`. Slots return to the pool as subtasks finish, so in
/// BATCH (one slot sharing group per region) later regions reuse the slots of earlier ones.
///
/// Not thread-safe: the caller serializes all calls.
class PipelinedRegionScheduler {
 public:
  /// `graph` must outlive the scheduler.
  PipelinedRegionScheduler(const ExecutionGraph& graph, SlotPoolSettings settings);

  /// Asks for the slots of every region without blocking inputs; returns the executions (indexes into
  /// ExecutionGraph::executions()) to deploy now, ascending.
  std::vector<int> start(Clock::time_point now);
  /// Execution `execution` finished successfully: returns its slot, marks results produced and returns
  /// the executions to deploy now (possibly none).
  std::vector<int> onExecutionFinished(int execution, Clock::time_point now);
  /// Returns the slot of a deployed execution that ended without finishing (failure, cancellation); no-op
  /// for executions never deployed or already finished.
  void onExecutionEnded(int execution);
  /// Region failover: every execution of `regions` has ended (none runs); they become schedulable again
  /// (finished ones count as not finished, their results as not produced). A region whose blocking inputs
  /// are produced asks for its slots now, the others once their producers finish again. Returns the
  /// executions to deploy now, ascending.
  std::vector<int> restartRegions(const std::vector<int>& regions, Clock::time_point now);
  /// True when every execution finished.
  bool isFinished() const { return finished_count_ == graph_.executions().size(); }
  /// When the oldest waiting slot request times out, if any region waits for slots.
  std::optional<Clock::time_point> nextTimeout() const;
  /// Throws UserError naming required vs available slots and the options to raise when a region has
  /// waited for slots longer than `slot.request.timeout` at `now`.
  void checkSlotRequestTimeouts(Clock::time_point now) const;

  const SlotPool& slotPool() const { return pool_; }
  /// Regions deployed so far, in deployment order.
  const std::vector<int>& deployedRegions() const { return deployed_order_; }

 private:
  enum class RegionState { kCreated, kWaitingForSlots, kDeployed };
  bool inputsProduced(const SchedulingRegion& region) const;
  void requestSlots(int region, Clock::time_point now);
  std::vector<int> deployWaiting();

  const ExecutionGraph& graph_;
  SlotPoolSettings settings_;
  SlotPool pool_;
  std::vector<RegionState> state_;
  std::vector<Clock::time_point> requested_at_;
  std::vector<int> finished_per_vertex_;
  std::vector<char> execution_deployed_;
  std::vector<char> execution_done_;
  std::vector<char> execution_finished_;
  size_t finished_count_ = 0;
  std::vector<int> deployed_order_;
};

}  // namespace sluice::scheduler
