#pragma once
/// Pipelined regions and slot sharing groups of a JobGraph (Flink's LogicalPipelinedRegionComputeUtil and
/// StreamingJobGraphGenerator.setSlotSharing after FLINK-14060).

#include <string>
#include <vector>

#include "graph/job_graph.h"

namespace sluice::graph {

/// The logical pipelined regions of `job` (Flink's LogicalPipelinedRegionComputeUtil): walking the
/// vertices in topological order, every vertex starts as its own region and is merged with the region of
/// each producer it consumes through a PIPELINED edge; BATCH (blocking) edges do not merge. Region ids
/// are dense and follow the order of each region's first vertex, so they are deterministic. Pure.
std::vector<LogicalPipelinedRegion> computePipelinedRegions(const JobGraph& job);

/// The name of the default slot sharing group of region `region` when regions do not share one
/// ("default-region-<N>").
std::string regionSlotSharingGroupName(int region);

/// Sets `JobVertex::pipelined_region` from `job.regions` and resolves `JobVertex::slot_sharing_group`
/// (Flink's setSlotSharing, FLINK-14060): a user-named group is kept, spanning regions; "default" stays
/// "default" for the whole job when `all_in_same_group_by_default` (STREAMING), else it becomes the
/// region's own group (`regionSlotSharingGroupName`, BATCH).
void assignSlotSharingGroups(JobGraph& job, bool all_in_same_group_by_default);

}  // namespace sluice::graph
