#include "graph/job_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <queue>

#include "common/config.h"
#include "common/error.h"
#include "common/hash.h"
#include "graph/pipelined_region.h"

namespace sluice::graph {

bool isPointwise(ShipStrategy s) { return s == ShipStrategy::kForward || s == ShipStrategy::kRescale; }

std::vector<int> connectedConsumers(ShipStrategy s, int producer_parallelism, int consumer_parallelism,
                                    int producer) {
  std::vector<int> out;
  if (!isPointwise(s)) {
    out.reserve(static_cast<size_t>(consumer_parallelism));
    for (int j = 0; j < consumer_parallelism; ++j) out.push_back(j);
    return out;
  }
  const int64_t p = producer_parallelism, c = consumer_parallelism;
  if (p >= c) {
    out.push_back(static_cast<int>(producer * c / p));
  } else {
    for (int j = 0; j < consumer_parallelism; ++j) {
      if (j * p / c == producer) out.push_back(j);
    }
  }
  return out;
}

std::vector<int> connectedProducers(ShipStrategy s, int producer_parallelism, int consumer_parallelism,
                                    int consumer) {
  std::vector<int> out;
  if (!isPointwise(s)) {
    out.reserve(static_cast<size_t>(producer_parallelism));
    for (int i = 0; i < producer_parallelism; ++i) out.push_back(i);
    return out;
  }
  const int64_t p = producer_parallelism, c = consumer_parallelism;
  if (p >= c) {
    for (int i = 0; i < producer_parallelism; ++i) {
      if (i * c / p == consumer) out.push_back(i);
    }
  } else {
    out.push_back(static_cast<int>(consumer * p / c));
  }
  return out;
}

bool StreamingJobGraphGenerator::isChainable(const StreamGraph& graph, const StreamEdge& edge) {
  const StreamNode& down = graph.node(edge.target_id);
  return down.in_edges.size() == 1 && isChainableInput(graph, edge);
}

bool StreamingJobGraphGenerator::isChainableInput(const StreamGraph& graph, const StreamEdge& edge) {
  const StreamNode& up = graph.node(edge.source_id);
  const StreamNode& down = graph.node(edge.target_id);
  if (!graph.chaining_enabled || up.slot_sharing_group != down.slot_sharing_group ||
      !areOperatorsChainable(graph, up, down) || !arePartitionerAndExchangeModeChainable(edge)) {
    return false;
  }
  // A union must go through the network stack: no other input edge may feed the same input index.
  for (int e : down.in_edges) {
    const StreamEdge& other = graph.edges[static_cast<size_t>(e)];
    const bool same = other.source_id == edge.source_id && other.target_id == edge.target_id &&
                      other.type_number == edge.type_number;
    if (!same && other.type_number == edge.type_number) return false;
  }
  return true;
}

bool StreamingJobGraphGenerator::areOperatorsChainable(const StreamGraph& graph, const StreamNode& up,
                                                      const StreamNode& down) {
  if (up.factory == nullptr || down.factory == nullptr) return false;
  if (up.chaining_strategy == ChainingStrategy::kNever) return false;
  bool chainable = true;
  switch (down.chaining_strategy) {
    case ChainingStrategy::kNever:
    case ChainingStrategy::kHead:
      return false;
    case ChainingStrategy::kAlways:
      break;
    case ChainingStrategy::kHeadWithSources:
      // Only a source may chain into a HEAD_WITH_SOURCES operator.
      chainable = up.is_source;
      break;
  }
  chainable = chainable && up.parallelism == down.parallelism;
  if (!graph.chain_operators_with_different_max_parallelism) {
    chainable = chainable && up.max_parallelism == down.max_parallelism;
  }
  return chainable;
}

bool StreamingJobGraphGenerator::arePartitionerAndExchangeModeChainable(const StreamEdge& edge) {
  return edge.partitioner.strategy == ShipStrategy::kForward && edge.exchange_mode != ExchangeMode::kBatch;
}

ExchangeMode StreamingJobGraphGenerator::resultExchangeMode(const StreamGraph& graph, const StreamEdge& edge) {
  if (edge.exchange_mode != ExchangeMode::kUndefined) return edge.exchange_mode;
  return graph.runtime_mode == RuntimeMode::kBatch ? ExchangeMode::kBatch : ExchangeMode::kPipelined;
}

namespace {

std::string hex32(uint64_t h) { return fmt::format("{:016x}{:016x}", h, mix64(h ^ 0x5bd1e9955bd1e995ull)); }

// Nodes in a topological order; among ready nodes the smallest id first (deterministic).
std::vector<int> topologicalNodeOrder(const StreamGraph& g) {
  std::vector<int> indegree(g.nodes.size(), 0);
  for (size_t i = 0; i < g.nodes.size(); ++i) indegree[i] = static_cast<int>(g.nodes[i].in_edges.size());
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;  // node indexes (sorted by id)
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (indegree[i] == 0) ready.push(static_cast<int>(i));
  }
  std::vector<int> order;
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int e : g.nodes[static_cast<size_t>(i)].out_edges) {
      const int t = g.indexOf(g.edges[static_cast<size_t>(e)].target_id);
      if (--indegree[static_cast<size_t>(t)] == 0) ready.push(t);
    }
  }
  SLUICE_CHECK(order.size() == g.nodes.size(), "the stream graph has a cycle");
  return order;
}

}  // namespace

JobGraph StreamingJobGraphGenerator::createJobGraph(const StreamGraph& g) {
  const size_t n = g.nodes.size();
  std::vector<char> chainable(g.edges.size(), 0);
  for (size_t e = 0; e < g.edges.size(); ++e) chainable[e] = isChainable(g, g.edges[e]) ? 1 : 0;

  const std::vector<int> order = topologicalNodeOrder(g);

  // Deterministic node hashes (Flink's StreamGraphHasherV2 idea): the uid when set, else the position in
  // the traversal, the input hashes and the number of chained outputs.
  std::vector<uint64_t> node_hash(n, 0);
  // The operator's identity in checkpoints: as the node hash, but without the chaining, so a restore at
  // another parallelism (which may chain differently) finds the same operators.
  std::vector<uint64_t> state_hash(n, 0);
  for (size_t pos = 0; pos < order.size(); ++pos) {
    const StreamNode& node = g.nodes[static_cast<size_t>(order[pos])];
    uint64_t h;
    if (!node.uid.empty()) {
      h = hashBytes(node.uid);
      state_hash[static_cast<size_t>(order[pos])] = h;
    } else {
      // The operator's name too: state never maps onto an operator of another kind in a changed query.
      uint64_t sh = hashCombine(mix64(pos + 1), hashBytes(node.operator_name));
      for (int e : node.in_edges) sh = hashCombine(sh, state_hash[static_cast<size_t>(g.indexOf(g.edges[static_cast<size_t>(e)].source_id))]);
      state_hash[static_cast<size_t>(order[pos])] = sh;
      h = mix64(pos + 1);
      for (int e : node.in_edges) h = hashCombine(h, node_hash[static_cast<size_t>(g.indexOf(g.edges[static_cast<size_t>(e)].source_id))]);
      int chained = 0;
      for (int e : node.out_edges) chained += chainable[static_cast<size_t>(e)];
      h = hashCombine(h, static_cast<uint64_t>(chained));
    }
    node_hash[static_cast<size_t>(order[pos])] = h;
  }

  // A node heads a chain when no chainable edge enters it. Vertices follow the topological order of heads.
  JobGraph job;
  job.name = g.job_name;
  job.runtime_mode = g.runtime_mode;
  std::vector<int> vertex_of_node(n, -1);
  std::vector<int> op_index_of_node(n, -1);

  // Names and descriptions of the chain below a node (Flink's createChainedName).
  std::function<std::string(int)> chained_name = [&](int idx) {
    const StreamNode& node = g.nodes[static_cast<size_t>(idx)];
    std::vector<std::string> outs;
    for (int e : node.out_edges) {
      if (chainable[static_cast<size_t>(e)]) outs.push_back(chained_name(g.indexOf(g.edges[static_cast<size_t>(e)].target_id)));
    }
    if (outs.empty()) return node.operator_name;
    if (outs.size() == 1) return node.operator_name + " -> " + outs[0];
    std::string s = node.operator_name + " -> (";
    for (size_t i = 0; i < outs.size(); ++i) s += (i ? ", " : "") + outs[i];
    return s + ")";
  };
  std::function<std::string(int)> chained_description = [&](int idx) {
    const StreamNode& node = g.nodes[static_cast<size_t>(idx)];
    std::vector<std::string> outs;
    for (int e : node.out_edges) {
      if (chainable[static_cast<size_t>(e)]) outs.push_back(chained_description(g.indexOf(g.edges[static_cast<size_t>(e)].target_id)));
    }
    std::string s = node.description;
    for (size_t i = 0; i < outs.size(); ++i) s += (i + 1 == outs.size() ? "\n+- " : "\n:- ") + outs[i];
    return s;
  };

  for (int idx : order) {
    const StreamNode& head = g.nodes[static_cast<size_t>(idx)];
    bool is_head = true;
    for (int e : head.in_edges) is_head = is_head && !chainable[static_cast<size_t>(e)];
    if (!is_head) continue;
    JobVertex v;
    v.id = hex32(node_hash[static_cast<size_t>(idx)]);
    v.name = chained_name(idx);
    v.description = chained_description(idx);
    v.parallelism = head.parallelism;
    v.max_parallelism = head.max_parallelism;
    v.slot_sharing_group = head.slot_sharing_group;
    v.is_source = head.is_source;
    if (!head.is_source && head.factory != nullptr && head.factory->sortsKeyedInput()) {
      if (g.runtime_mode == RuntimeMode::kBatch) v.sorted_input = JobVertex::SortedInput::kBatch;
      else if (g.backlog_sorting) v.sorted_input = JobVertex::SortedInput::kDuringBacklog;
    }
    const int vertex_index = static_cast<int>(job.vertices.size());
    // Pre-order walk over chained edges: parents before children.
    std::function<int(int)> add = [&](int node_idx) {
      const StreamNode& node = g.nodes[static_cast<size_t>(node_idx)];
      const int my = static_cast<int>(v.operators.size());
      ChainedOperator op;
      op.node_id = node.id;
      op.uid = node.uid.empty() ? fmt::format("{:016x}", state_hash[static_cast<size_t>(node_idx)]) : node.uid;
      op.name = node.operator_name;
      op.description = node.description;
      op.factory = node.factory;
      op.output_type = node.output_type;
      v.operators.push_back(std::move(op));
      vertex_of_node[static_cast<size_t>(node_idx)] = vertex_index;
      op_index_of_node[static_cast<size_t>(node_idx)] = my;
      for (int e : node.out_edges) {
        if (!chainable[static_cast<size_t>(e)]) continue;
        const int child = add(g.indexOf(g.edges[static_cast<size_t>(e)].target_id));
        v.operators[static_cast<size_t>(my)].chained_outputs.push_back(child);
      }
      return my;
    };
    add(idx);
    job.vertices.push_back(std::move(v));
  }

  // Non-chained edges, in the order of the producing nodes' out edges; vertex inputs follow the order of
  // the head's in edges.
  std::vector<int> job_edge_of_stream_edge(g.edges.size(), -1);
  for (int idx : order) {
    const StreamNode& node = g.nodes[static_cast<size_t>(idx)];
    for (int e : node.out_edges) {
      if (chainable[static_cast<size_t>(e)]) continue;
      const StreamEdge& se = g.edges[static_cast<size_t>(e)];
      const int target_idx = g.indexOf(se.target_id);
      JobEdge je;
      je.source_vertex = vertex_of_node[static_cast<size_t>(idx)];
      je.target_vertex = vertex_of_node[static_cast<size_t>(target_idx)];
      je.source_operator = op_index_of_node[static_cast<size_t>(idx)];
      je.source_node_id = se.source_id;
      je.target_node_id = se.target_id;
      je.partitioner = se.partitioner;
      je.exchange_mode = resultExchangeMode(g, se);
      SLUICE_CHECK(op_index_of_node[static_cast<size_t>(target_idx)] == 0,
                   "non-chained edge into the middle of a chain (node {})", se.target_id);
      const int ji = static_cast<int>(job.edges.size());
      job.edges.push_back(std::move(je));
      job_edge_of_stream_edge[static_cast<size_t>(e)] = ji;
      JobVertex& sv = job.vertices[static_cast<size_t>(job.edges.back().source_vertex)];
      sv.outputs.push_back(ji);
      sv.operators[static_cast<size_t>(job.edges.back().source_operator)].network_outputs.push_back(ji);
    }
  }
  for (JobVertex& v : job.vertices) {
    const StreamNode& head = g.node(v.operators[0].node_id);
    for (int e : head.in_edges) v.inputs.push_back(job_edge_of_stream_edge[static_cast<size_t>(e)]);
  }

  job.regions = computePipelinedRegions(job);
  assignSlotSharingGroups(job, g.all_vertices_in_same_slot_sharing_group_by_default);

  uint64_t jh = hashBytes(job.name);
  for (const JobVertex& v : job.vertices) jh = hashCombine(jh, hashBytes(v.id));
  job.job_id = hex32(jh);
  return job;
}

JobGraph buildJobGraph(const std::vector<TransformationPtr>& transformations, const Configuration& config,
                       const std::string& job_name) {
  StreamGraph sg = StreamGraphGenerator(config).generate(transformations, job_name);
  return StreamingJobGraphGenerator::createJobGraph(sg);
}

}  // namespace sluice::graph
