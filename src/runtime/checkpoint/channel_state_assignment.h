#pragma once
/// Which in-flight records each producer subtask of a restored job replays (unaligned checkpoints,
/// FLIP-76). The channel state of an edge goes to its producer side: for each old channel (producer i ->
/// consumer j) the records consumer j recorded as input, then those producer i recorded as output.
///  - Same parallelism on both ends of the edge: producer i sends them into the same channel before any
///    new record (ChannelReplay::channels), so in-flight data is processed once, in order.
///  - Rescaled (either end's parallelism changed; Flink's StateAssignmentOperation with its
///    InflightDataRescalingDescriptor): the old channels of old producer i go to new producer i mod P'
///    (P' the new producer parallelism), which routes the records again through the edge's partitioner
///    before any new record (ChannelReplay::rerouted). That is Flink's rule per partitioner: HASH records go
///    to the new subtask owning their key group (Flink's RANGE mapping), REBALANCE/SHUFFLE records round
///    robin (ROUND_ROBIN), GLOBAL to subtask 0 (FIRST), CUSTOM where the partitioner puts them. Records of
///    one old channel keep their order.
///  - FORWARD, RESCALE and BROADCAST edges are not rescaled: Flink takes unaligned checkpoints only on
///    all-to-all non-broadcast edges (StreamPartitioner#isSupportsUnalignedCheckpoint) and Sluice aligns
///    barriers on those edges too, so only checkpoints of older Sluice versions hold such data.
/// Pure function; any thread.

#include <vector>

#include "graph/job_graph.h"
#include "runtime/checkpoint/completed_checkpoint.h"

namespace sluice::runtime::checkpoint {

/// Whether barriers on network edge `edge` may be unaligned (Flink's StreamGraphGenerator with
/// StreamPartitioner#isSupportsUnalignedCheckpoint): not when any input edge of its target is FORWARD,
/// RESCALE (pointwise) or BROADCAST; such edges get kForcedAligned barriers.
/// `execution.checkpointing.unaligned.forced` does not change this (it does not in Flink either).
bool supportsUnalignedCheckpoints(const graph::JobGraph& job, int edge);

/// [vertex][subtask] -> what that subtask replays (empty when `checkpoint` holds no channel state).
/// Channel state sits with the head operator of each vertex (uid, or name without one).
/// Throws UserError naming the edge's vertices when in-flight data of a FORWARD, RESCALE or BROADCAST edge
/// would be rescaled or an end of an edge holding in-flight data is not in the checkpoint, and when channel
/// state belongs to no vertex of `job` (unless `allow_non_restored_state`); InputError naming the operator
/// when an entry points at an edge or subtask the checkpointed vertex did not have.
std::vector<std::vector<ChannelReplay>> assignChannelState(const CompletedCheckpoint& checkpoint,
                                                           const graph::JobGraph& job, bool allow_non_restored_state);

}  // namespace sluice::runtime::checkpoint
