#pragma once
/// Printable forms of the job graphs: Flink's `/jobs/:id/plan` JSON and a text form for `sluice explain`.

#include <string>

#include "graph/job_graph.h"

namespace sluice::graph {

/// The JobGraph as Flink's REST plan JSON (JsonPlanGenerator):
/// {"jid","name","type":"STREAMING","nodes":[{"id","parallelism","operator","operator_strategy",
///  "description","inputs":[{"num","id","ship_strategy","exchange":"pipelined_bounded"}],
///  "optimizer_properties":{}}]}. "operator" holds the chained vertex name, "description" the chained
/// operator descriptions; "inputs" is omitted for source vertices. `indent` < 0 prints one line.
std::string jobGraphToJson(const JobGraph& graph, int indent = 2);

/// One line per vertex ("[1] Source: a -> Calc  parallelism=4 max-parallelism=128"), its chained
/// operators, then its input edges ("<- [1] HASH[0, 2] pipelined").
std::string jobGraphToText(const JobGraph& graph);

/// The JobGraph as Graphviz DOT: one box per vertex (chained name, parallelism), one arrow per edge
/// labelled with its ship strategy.
std::string jobGraphToDot(const JobGraph& graph);

/// One line per StreamNode with parallelism and chaining strategy, and one per edge with partitioner.
std::string streamGraphToText(const StreamGraph& graph);

}  // namespace sluice::graph
