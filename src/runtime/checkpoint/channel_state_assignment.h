#pragma once
/// Which in-flight records each producer subtask of a restored job replays (unaligned checkpoints,
/// FLIP-76). The channel state of an edge goes to its producer side: for each old channel (producer i ->
/// consumer j) the records consumer j recorded as input, then those producer i recorded as output, sent
/// by producer i into the same channel before any new record, so in-flight data is processed once, in
/// order. Only the same parallelism is supported (Flink rescales channel state with its
/// rescaling descriptors; Sluice refuses instead). Pure function; any thread.

#include <vector>

#include "graph/job_graph.h"
#include "runtime/checkpoint/completed_checkpoint.h"

namespace sluice::runtime::checkpoint {

/// [vertex][subtask] -> what that subtask replays (empty vectors when `checkpoint` holds no channel
/// state). Channel state sits with the head operator of each vertex (uid, or name without one).
/// Throws UserError naming the vertex and both parallelisms when a vertex holding channel state, or a
/// peer of such a vertex, runs at a parallelism other than the checkpoint's, and when channel state belongs
/// to no vertex of `job` (unless `allow_non_restored_state`); InputError naming the operator when an
/// entry points at an edge or subtask the vertex does not have.
std::vector<std::vector<ChannelReplay>> assignChannelState(const CompletedCheckpoint& checkpoint,
                                                           const graph::JobGraph& job, bool allow_non_restored_state);

}  // namespace sluice::runtime::checkpoint
