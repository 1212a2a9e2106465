#pragma once
/// Turns plans of RelNodes into Transformations (Flink's ExecNode.translateToPlan), the only way
/// SQL reaches the runtime: everything goes through src/graph.
///
/// Parallelism follows Flink's exec nodes: a scan runs at `scan.parallelism` when set, together with
/// the Calcs and WatermarkAssigner pushed into it (RelNode::in_source_block), and the first node after
/// it reads through a REBALANCE exchange so downstream keeps `parallelism.default` (FLIP-367); a
/// changelog source with `scan.parallelism` gets nothing pushed in and is always followed by a HASH
/// exchange on its primary key; a ChangelogNormalize reads through a HASH on the key; a sink whose
/// `sink.parallelism` differs from its updating input's reads through a HASH on its primary key (throws
/// UserError, Flink's message, without one); other Calcs inherit their input's parallelism; aggregations run at the default parallelism
/// behind a HASH exchange on the group keys (a GLOBAL exchange and parallelism 1 without keys);
/// sinks run at `sink.parallelism` or their input's parallelism.

#include <memory>
#include <vector>

#include "graph/transformation.h"
#include "table/planner/rel_node.h"

namespace sluice {
class Configuration;
}
namespace sluice::runtime {
class StreamOperatorFactory;
}

namespace sluice::table {

/// Translates the sink roots of one job. `collect_factory` instantiates the sink of a bare SELECT
/// (RelNode kSink without a connector sink); it may be null when there is none.
/// Throws UserError when an operator rejects its arguments.
std::vector<graph::TransformationPtr> translateToTransformations(
    const std::vector<RelNodePtr>& roots, const Configuration& config,
    std::shared_ptr<const runtime::StreamOperatorFactory> collect_factory);

}  // namespace sluice::table
