#pragma once
/// Printable forms of the job graphs: Flink's `/jobs/:id/plan` JSON and a text form for `sluice explain`.

#include <string>
#include <vector>

#include "graph/job_graph.h"

namespace sluice::graph {

/// The JobGraph as Flink's REST plan JSON (JsonPlanGenerator):
/// {"jid","name","type":"STREAMING"|"BATCH","nodes":[{"id","parallelism","operator","operator_strategy",
///  "description","slot_sharing_group","pipelined_region","operators",
///  "inputs":[{"num","id","ship_strategy","exchange":"pipelined_bounded"|"blocking"}],
///  "optimizer_properties":{}}]}. "operator" holds the chained vertex name, "description" the chained
/// operator descriptions, "operators" the chained operator names (head first; Sluice's addition, as are
/// "slot_sharing_group" and "pipelined_region"); "inputs" is omitted for source vertices. `indent` < 0
/// prints one line.
std::string jobGraphToJson(const JobGraph& graph, int indent = 2);

/// One line per vertex ("[1] Source: a -> Calc  parallelism=4 max-parallelism=128"), its chained
/// operators, then its input edges ("<- [1] HASH[0, 2] pipelined").
std::string jobGraphToText(const JobGraph& graph);

/// The JobGraph as Graphviz DOT: planJsonToDot of its JSON plan.
std::string jobGraphToDot(const JobGraph& graph);

/// Graphviz DOT of one or more JSON plans (as printed by jobGraphToJson): one digraph; each vertex a box
/// listing its chained operators with its parallelism; each pipelined region a cluster with a coloured
/// border, holding one filled cluster per slot sharing group (one colour per group name, so a group that
/// spans regions has the same colour everywhere); arrows labelled with ship strategy and exchange
/// (blocking ones dashed). With several plans each job is an outer cluster. Throws InternalError on JSON
/// that is not a plan.
std::string planJsonToDot(const std::vector<std::string>& plans);

/// Splits text holding several JSON documents one after another (as `sluice explain --format=json`
/// prints them) into one string per document. Throws UserError on malformed JSON.
std::vector<std::string> splitJsonDocuments(const std::string& text);

/// One line per StreamNode with parallelism and chaining strategy, and one per edge with partitioner.
std::string streamGraphToText(const StreamGraph& graph);

}  // namespace sluice::graph
