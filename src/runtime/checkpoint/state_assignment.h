#pragma once
/// Which state each subtask of a restored job gets from a completed checkpoint (Flink's
/// StateAssignmentOperation, minimal: one operator per uid, no chained-operator or in-flight channel
/// state). Keyed state follows the key groups (flink-checkpointing.md §3.3, §4.4), operator list state
/// its mode (§3.2, Flink's RoundRobinOperatorStateRepartitioner):
///  - SPLIT_DISTRIBUTE: at an unchanged parallelism each subtask keeps its own elements; otherwise the
///    elements of all old subtasks, per state name, in subtask order, cut into contiguous chunks,
///    total/newP each, the first total%newP subtasks one more;
///  - UNION: every new subtask gets every element (in old subtask order);
///  - BROADCAST: every new subtask gets the first old subtask's copy.
/// Pure functions; any thread.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/checkpoint/completed_checkpoint.h"

namespace sluice::runtime::checkpoint {

/// One operator of the job being started: its new parallelism and max parallelism.
struct OperatorParallelism {
  int32_t parallelism = 1;
  int32_t max_parallelism = 128;
};

/// Operator uid -> state to restore, by new subtask index (size = the new parallelism).
using StateAssignment = std::map<std::string, std::vector<OperatorSubtaskState>>;

/// Assigns the state of `checkpoint` to the subtasks of the operators `operators` (uid -> parallelism).
/// Every operator of `operators` appears in the result; one without state in the checkpoint gets empty
/// states. A split or union state name that an old subtask holds appears in every new subtask (possibly
/// with no elements).
/// Throws, as Flink's StateAssignmentOperation:
///  - UserError naming the uid and both values when an operator's max parallelism differs from the
///    checkpoint's (checkMaxParallelism);
///  - UserError naming the uid when the checkpoint holds state of an operator the job does not have,
///    unless `allow_non_restored_state` (execution.state-recovery.ignore-unclaimed-state) is true
///    (checkStateMappingCompleteness);
///  - ConfigError naming the uid and pipeline.max-parallelism when a new parallelism is outside
///    [1, max parallelism] or the max parallelism outside [1, 32768];
///  - InputError naming the uid when the checkpoint is inconsistent (a key group held by two subtasks, one
///    state name with two modes).
StateAssignment assignStates(const CompletedCheckpoint& checkpoint,
                             const std::map<std::string, OperatorParallelism>& operators,
                             bool allow_non_restored_state);

/// Redistributes the operator list states of one operator's old subtasks over `new_parallelism` (>= 1)
/// subtasks by their modes (see above); result size = new_parallelism. Throws InputError naming `uid`
/// when one state name has two modes.
std::vector<std::map<std::string, OperatorListState>> redistributeOperatorListStates(
    const std::string& uid, const std::vector<OperatorSubtaskState>& old_subtasks, int32_t new_parallelism);

}  // namespace sluice::runtime::checkpoint
