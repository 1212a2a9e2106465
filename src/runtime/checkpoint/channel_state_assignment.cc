#include "runtime/checkpoint/channel_state_assignment.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "common/error.h"

namespace sluice::runtime::checkpoint {

namespace {

std::string headUid(const graph::JobVertex& v) {
  const graph::ChainedOperator& head = v.operators[0];
  return head.uid.empty() ? head.name : head.uid;
}

bool hasChannelState(const OperatorState& op) {
  return std::any_of(op.subtasks.begin(), op.subtasks.end(),
                     [](const OperatorSubtaskState& s) { return !s.channel.empty(); });
}

size_t indexOf(const std::vector<int>& edges, int e) {
  return static_cast<size_t>(std::find(edges.begin(), edges.end(), e) - edges.begin());
}

// The checkpointed state of each vertex's head (null: not in the checkpoint).
struct OldStates {
  std::vector<const OperatorState*> state;
  std::optional<int> parallelism(size_t v) const {
    if (state[v] == nullptr) return std::nullopt;
    return state[v]->parallelism;
  }
};

// Every entry must name an edge and a subtask the checkpointed vertex had: one that does not is a corrupt or
// foreign checkpoint.
void checkEntries(const CompletedCheckpoint& checkpoint, const graph::JobGraph& job, const OldStates& old) {
  for (size_t v = 0; v < job.vertices.size(); ++v) {
    if (old.state[v] == nullptr) continue;
    const graph::JobVertex& vertex = job.vertices[v];
    const auto bad = [&](size_t s, const std::string& what) {
      return InputError(fmt::format("checkpoint {}: channel state of operator '{}' subtask {} names {}, which that "
                                    "task did not have",
                                    checkpoint.checkpoint_id, headUid(vertex), s, what));
    };
    for (size_t s = 0; s < old.state[v]->subtasks.size(); ++s) {
      for (const InputChannelStateEntry& in : old.state[v]->subtasks[s].channel.input) {
        const std::string what = fmt::format("input {} from subtask {}", in.input, in.producer_subtask);
        if (in.input < 0 || static_cast<size_t>(in.input) >= vertex.inputs.size()) throw bad(s, what);
        const auto producer = static_cast<size_t>(job.edges[static_cast<size_t>(vertex.inputs[static_cast<size_t>(in.input)])].source_vertex);
        const std::optional<int> p = old.parallelism(producer);
        if (in.producer_subtask < 0 || (p && in.producer_subtask >= *p)) throw bad(s, what);
      }
      for (const OutputChannelStateEntry& o : old.state[v]->subtasks[s].channel.output) {
        const std::string what = fmt::format("output {} to subtask {}", o.output, o.consumer_subtask);
        if (o.output < 0 || static_cast<size_t>(o.output) >= vertex.outputs.size()) throw bad(s, what);
        const auto consumer = static_cast<size_t>(job.edges[static_cast<size_t>(vertex.outputs[static_cast<size_t>(o.output)])].target_vertex);
        const std::optional<int> c = old.parallelism(consumer);
        if (o.consumer_subtask < 0 || (c && o.consumer_subtask >= *c)) throw bad(s, what);
      }
    }
  }
}

// The in-flight bytes of each old channel (producer i, consumer j) of edge `e`: consumer j's recorded input,
// then producer i's recorded output.
std::map<std::pair<int, int>, std::string> oldChannels(const graph::JobGraph& job, const OldStates& old, int e) {
  const graph::JobEdge& edge = job.edges[static_cast<size_t>(e)];
  const auto p = static_cast<size_t>(edge.source_vertex);
  const auto c = static_cast<size_t>(edge.target_vertex);
  std::map<std::pair<int, int>, std::string> out;
  if (old.state[c] != nullptr) {
    const auto input = static_cast<int32_t>(indexOf(job.vertices[c].inputs, e));
    for (size_t j = 0; j < old.state[c]->subtasks.size(); ++j) {
      for (const InputChannelStateEntry& in : old.state[c]->subtasks[j].channel.input) {
        if (in.input == input) out[{in.producer_subtask, static_cast<int>(j)}] += in.bytes;
      }
    }
  }
  if (old.state[p] != nullptr) {
    const auto output = static_cast<int32_t>(indexOf(job.vertices[p].outputs, e));
    for (size_t i = 0; i < old.state[p]->subtasks.size(); ++i) {
      for (const OutputChannelStateEntry& o : old.state[p]->subtasks[i].channel.output) {
        if (o.output == output) out[{static_cast<int>(i), o.consumer_subtask}] += o.bytes;
      }
    }
  }
  return out;
}

}  // namespace

bool supportsUnalignedCheckpoints(const graph::JobGraph& job, int edge) {
  const graph::JobVertex& target = job.vertices[static_cast<size_t>(job.edges[static_cast<size_t>(edge)].target_vertex)];
  return std::none_of(target.inputs.begin(), target.inputs.end(), [&](int e) {
    const graph::ShipStrategy s = job.edges[static_cast<size_t>(e)].partitioner.strategy;
    return graph::isPointwise(s) || s == graph::ShipStrategy::kBroadcast;
  });
}

std::vector<std::vector<ChannelReplay>> assignChannelState(const CompletedCheckpoint& checkpoint,
                                                           const graph::JobGraph& job, bool allow_non_restored_state) {
  std::vector<std::vector<ChannelReplay>> out(job.vertices.size());
  for (size_t v = 0; v < job.vertices.size(); ++v) {
    const graph::JobVertex& vertex = job.vertices[v];
    out[v].assign(static_cast<size_t>(vertex.parallelism), ChannelReplay{});
    for (ChannelReplay& r : out[v]) {
      r.channels.resize(vertex.outputs.size());
      r.rerouted.resize(vertex.outputs.size());
    }
  }
  std::map<std::string, size_t> vertex_of;
  for (size_t v = 0; v < job.vertices.size(); ++v) vertex_of[headUid(job.vertices[v])] = v;
  OldStates old{std::vector<const OperatorState*>(job.vertices.size(), nullptr)};
  bool any = false;
  for (const auto& [uid, op] : checkpoint.operators) {
    auto it = vertex_of.find(uid);
    const bool with_channel_state = hasChannelState(op);
    if (it == vertex_of.end()) {
      if (!with_channel_state || allow_non_restored_state) continue;
      throw UserError(fmt::format("Checkpoint {} holds in-flight data (unaligned checkpoint channel state) of operator "
                                  "'{}', which is not the first operator of any task of this job",
                                  checkpoint.checkpoint_id, uid));
    }
    old.state[it->second] = &op;
    any = any || with_channel_state;
  }
  if (!any) return out;
  checkEntries(checkpoint, job, old);
  for (size_t e = 0; e < job.edges.size(); ++e) {
    std::map<std::pair<int, int>, std::string> channels = oldChannels(job, old, static_cast<int>(e));
    if (channels.empty()) continue;
    const graph::JobEdge& edge = job.edges[e];
    const auto p = static_cast<size_t>(edge.source_vertex);
    const auto c = static_cast<size_t>(edge.target_vertex);
    const graph::JobVertex& producer = job.vertices[p];
    const graph::JobVertex& consumer = job.vertices[c];
    const size_t k = indexOf(producer.outputs, static_cast<int>(e));
    const std::optional<int> p_old = old.parallelism(p);
    const std::optional<int> c_old = old.parallelism(c);
    if (!p_old || !c_old) {
      throw UserError(fmt::format("Cannot restore checkpoint {}: it holds in-flight data (unaligned checkpoint channel "
                                  "state) between '{}' and '{}', and '{}' is not in the checkpoint",
                                  checkpoint.checkpoint_id, producer.name, consumer.name,
                                  p_old ? consumer.name : producer.name));
    }
    if (*p_old == producer.parallelism && *c_old == consumer.parallelism) {
      // Same channels: each goes back where it was in flight.
      for (int i = 0; i < producer.parallelism; ++i) {
        const std::vector<int> consumers =
            graph::connectedConsumers(edge.partitioner.strategy, producer.parallelism, consumer.parallelism, i);
        std::vector<std::string>& replay = out[p][static_cast<size_t>(i)].channels[k];
        replay.assign(consumers.size(), std::string());
        for (size_t idx = 0; idx < consumers.size(); ++idx) {
          auto it = channels.find({i, consumers[idx]});
          if (it == channels.end()) continue;
          replay[idx] = std::move(it->second);
          channels.erase(it);
        }
      }
      if (!channels.empty()) {
        const auto& [i, j] = channels.begin()->first;
        throw InputError(fmt::format("checkpoint {}: in-flight data from '{}' subtask {} to '{}' subtask {}, which "
                                     "the {} edge does not connect",
                                     checkpoint.checkpoint_id, producer.name, i, consumer.name, j,
                                     graph::shipStrategyName(edge.partitioner.strategy)));
      }
      continue;
    }
    const graph::ShipStrategy s = edge.partitioner.strategy;
    if (graph::isPointwise(s) || s == graph::ShipStrategy::kBroadcast) {
      throw UserError(fmt::format(
          "Cannot restore checkpoint {} at another parallelism: it holds in-flight data (unaligned checkpoint "
          "channel state) of the {} edge from '{}' ({} -> {}) to '{}' ({} -> {}), which cannot be redistributed. "
          "Restore at the same parallelism, or from a savepoint or an aligned checkpoint",
          checkpoint.checkpoint_id, graph::shipStrategyName(s), producer.name, *p_old, producer.parallelism,
          consumer.name, *c_old, consumer.parallelism));
    }
    // Rescaled all-to-all edge: old producer i's channels go to new producer i mod P', which routes every
    // record again (std::map order: by old producer, then old consumer).
    for (auto& [channel, bytes] : channels) {
      out[p][static_cast<size_t>(channel.first % producer.parallelism)].rerouted[k] += bytes;
    }
  }
  return out;
}

}  // namespace sluice::runtime::checkpoint
