#include "graph/plan.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace sluice::graph {

namespace {

const char* sortedInputName(JobVertex::SortedInput s) {
  return s == JobVertex::SortedInput::kBatch ? "batch" : "during-backlog";
}

const char* exchangeName(ExchangeMode m) { return m == ExchangeMode::kPipelined ? "pipelined_bounded" : "blocking"; }

std::string partitionerText(const PartitionerSpec& p) {
  std::string s = shipStrategyName(p.strategy);
  if (p.strategy == ShipStrategy::kHash) {
    s += "[";
    for (size_t i = 0; i < p.key_columns.size(); ++i) s += (i ? ", " : "") + std::to_string(p.key_columns[i]);
    s += "]";
  }
  return s;
}

const char* chainingName(ChainingStrategy c) {
  switch (c) {
    case ChainingStrategy::kAlways: return "ALWAYS";
    case ChainingStrategy::kHead: return "HEAD";
    case ChainingStrategy::kNever: return "NEVER";
    case ChainingStrategy::kHeadWithSources: return "HEAD_WITH_SOURCES";
  }
  return "?";
}

}  // namespace

std::string jobGraphToJson(const JobGraph& graph, int indent) {
  nlohmann::ordered_json root;
  root["jid"] = graph.job_id;
  root["name"] = graph.name;
  root["type"] = runtimeModeName(graph.runtime_mode);
  nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
  for (const JobVertex& v : graph.vertices) {
    nlohmann::ordered_json n;
    n["id"] = v.id;
    n["parallelism"] = v.parallelism;
    n["operator"] = v.name;
    n["operator_strategy"] = "";
    n["description"] = v.description;
    n["slot_sharing_group"] = v.slot_sharing_group;
    n["pipelined_region"] = v.pipelined_region;
    if (v.sorted_input != JobVertex::SortedInput::kNone) n["sorted_input"] = sortedInputName(v.sorted_input);
    nlohmann::ordered_json ops = nlohmann::ordered_json::array();
    for (const ChainedOperator& op : v.operators) ops.push_back(op.name);
    n["operators"] = std::move(ops);
    if (!v.inputs.empty()) {
      nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
      for (size_t i = 0; i < v.inputs.size(); ++i) {
        const JobEdge& e = graph.edges[static_cast<size_t>(v.inputs[i])];
        nlohmann::ordered_json in;
        in["num"] = static_cast<int>(i);
        in["id"] = graph.vertices[static_cast<size_t>(e.source_vertex)].id;
        in["ship_strategy"] = shipStrategyName(e.partitioner.strategy);
        in["exchange"] = exchangeName(e.exchange_mode);
        inputs.push_back(std::move(in));
      }
      n["inputs"] = std::move(inputs);
    }
    n["optimizer_properties"] = nlohmann::ordered_json::object();
    nodes.push_back(std::move(n));
  }
  root["nodes"] = std::move(nodes);
  return root.dump(indent);
}

std::string jobGraphToText(const JobGraph& graph) {
  std::string out = fmt::format("Job '{}' ({}) {}, {} pipelined region(s)\n", graph.name, graph.job_id,
                                runtimeModeName(graph.runtime_mode), graph.regions.size());
  for (size_t i = 0; i < graph.vertices.size(); ++i) {
    const JobVertex& v = graph.vertices[i];
    out += fmt::format("[{}] {}  parallelism={} max-parallelism={} slot-sharing-group={} pipelined-region={}{}\n",
                       i + 1, v.name, v.parallelism, v.max_parallelism, v.slot_sharing_group, v.pipelined_region,
                       v.sorted_input == JobVertex::SortedInput::kNone
                           ? ""
                           : fmt::format(" sorted-input={}", sortedInputName(v.sorted_input)));
    if (v.operators.size() > 1) {
      for (const ChainedOperator& op : v.operators) out += fmt::format("      operator {}: {}\n", op.node_id, op.name);
    }
    for (int ei : v.inputs) {
      const JobEdge& e = graph.edges[static_cast<size_t>(ei)];
      out += fmt::format("      <- [{}] {} {}\n", e.source_vertex + 1, partitionerText(e.partitioner),
                         e.exchange_mode == ExchangeMode::kPipelined ? "pipelined" : "blocking");
    }
  }
  return out;
}

std::string jobGraphToDot(const JobGraph& graph) { return planJsonToDot({jobGraphToJson(graph, -1)}); }

std::string streamGraphToText(const StreamGraph& graph) {
  std::string out = fmt::format("StreamGraph '{}' {}\n", graph.job_name, runtimeModeName(graph.runtime_mode));
  for (const StreamNode& n : graph.nodes) {
    out += fmt::format("  node {} {}  parallelism={} max-parallelism={} chaining={} slot-sharing-group={}\n", n.id,
                       n.operator_name, n.parallelism, n.max_parallelism, chainingName(n.chaining_strategy),
                       n.slot_sharing_group);
  }
  for (const StreamEdge& e : graph.edges) {
    out += fmt::format("  edge {} -> {} {}{}\n", e.source_id, e.target_id, partitionerText(e.partitioner),
                       e.exchange_mode == ExchangeMode::kUndefined ? ""
                       : e.exchange_mode == ExchangeMode::kBatch   ? " BATCH"
                                                                   : " PIPELINED");
  }
  return out;
}

}  // namespace sluice::graph
