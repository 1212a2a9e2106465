#pragma once
/// Restoring a checkpoint at another parallelism (Flink's StateAssignmentOperation with
/// RoundRobinOperatorStateRepartitioner, flink-checkpointing.md §3.2, §4.4). Pure functions over the
/// canonical snapshot; any thread.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runtime/checkpoint/checkpoint_types.h"
#include "runtime/state/key_group.h"

namespace sluice::runtime::state {

/// The operator state of each of `new_parallelism` subtasks from the old subtasks' states (index = old
/// subtask index; nullptr = a subtask without state):
///  - SPLIT_DISTRIBUTE: with the same parallelism each subtask keeps its own list. Otherwise, per state
///    name (in name order; Flink iterates a hash map), the old lists are concatenated in subtask order and
///    cut into contiguous chunks of total/newP elements, total%newP chunks one larger. The chunks go to
///    subtasks start, start+1, ... (mod newP), larger chunks first; the next name starts at the first
///    subtask that got a smaller chunk (start 0 for the first name). A subtask given no element has no
///    entry for the name.
///  - UNION: every new subtask gets all elements, concatenated in old subtask order.
///  - BROADCAST: new subtask i gets the copy of the (i mod k)-th of the k old subtasks holding the state.
/// Throws InputError when a name has different modes in different old subtasks, InternalError when
/// new_parallelism < 1.
std::vector<std::map<std::string, checkpoint::OperatorListState>> redistributeOperatorState(
    const std::vector<const checkpoint::OperatorSubtaskState*>& old_subtasks, int new_parallelism);

/// The keyed blobs of the key groups in `range`, merged over the old subtasks (nullptr entries skipped).
/// Throws InputError when a key group of the range appears in two old subtasks.
std::map<int32_t, std::string> selectKeyGroups(const std::vector<const checkpoint::OperatorSubtaskState*>& old_subtasks,
                                               KeyGroupRange range);

}  // namespace sluice::runtime::state
