#include "runtime/checkpoint/channel_state_assignment.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

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

}  // namespace

std::vector<std::vector<ChannelReplay>> assignChannelState(const CompletedCheckpoint& checkpoint,
                                                           const graph::JobGraph& job, bool allow_non_restored_state) {
  std::vector<std::vector<ChannelReplay>> out(job.vertices.size());
  for (size_t v = 0; v < job.vertices.size(); ++v) {
    out[v].assign(static_cast<size_t>(job.vertices[v].parallelism), ChannelReplay{});
  }
  std::map<std::string, size_t> vertex_of;
  for (size_t v = 0; v < job.vertices.size(); ++v) vertex_of[headUid(job.vertices[v])] = v;
  // The vertices whose channel state is restored, and their old states.
  std::vector<const OperatorState*> state(job.vertices.size(), nullptr);
  bool any = false;
  for (const auto& [uid, op] : checkpoint.operators) {
    if (!hasChannelState(op)) continue;
    auto it = vertex_of.find(uid);
    if (it == vertex_of.end()) {
      if (allow_non_restored_state) continue;
      throw UserError(fmt::format("Checkpoint {} holds in-flight data (unaligned checkpoint channel state) of operator "
                                  "'{}', which is not the first operator of any task of this job",
                                  checkpoint.checkpoint_id, uid));
    }
    state[it->second] = &op;
    any = true;
  }
  if (!any) return out;
  // Same parallelism on both ends of every channel with state: the records go back into the same channel.
  const auto check = [&](size_t v, const char* role) {
    const graph::JobVertex& vertex = job.vertices[v];
    auto it = checkpoint.operators.find(headUid(vertex));
    if (it == checkpoint.operators.end() || it->second.parallelism == vertex.parallelism) return;
    throw UserError(fmt::format(
        "Cannot restore checkpoint {} at another parallelism: it holds in-flight data of unaligned checkpoints "
        "{}'{}', whose parallelism changes from {} to {}. Restore at the same parallelism, or from a savepoint or "
        "an aligned checkpoint (execution.checkpointing.unaligned.enabled = false)",
        checkpoint.checkpoint_id, role, vertex.name, it->second.parallelism, vertex.parallelism));
  };
  for (size_t v = 0; v < job.vertices.size(); ++v) {
    if (state[v] == nullptr) continue;
    check(v, "at ");
    for (int e : job.vertices[v].inputs) check(static_cast<size_t>(job.edges[static_cast<size_t>(e)].source_vertex), "next to ");
    for (int e : job.vertices[v].outputs) check(static_cast<size_t>(job.edges[static_cast<size_t>(e)].target_vertex), "next to ");
  }
  for (size_t v = 0; v < job.vertices.size(); ++v) {
    const graph::JobVertex& vertex = job.vertices[v];
    for (int i = 0; i < vertex.parallelism; ++i) {
      ChannelReplay& replay = out[v][static_cast<size_t>(i)];
      replay.resize(vertex.outputs.size());
      for (size_t k = 0; k < vertex.outputs.size(); ++k) {
        const int e = vertex.outputs[k];
        const graph::JobEdge& edge = job.edges[static_cast<size_t>(e)];
        const auto t = static_cast<size_t>(edge.target_vertex);
        const graph::JobVertex& target = job.vertices[t];
        const auto input = static_cast<int32_t>(
            std::find(target.inputs.begin(), target.inputs.end(), e) - target.inputs.begin());
        const std::vector<int> consumers =
            graph::connectedConsumers(edge.partitioner.strategy, vertex.parallelism, target.parallelism, i);
        replay[k].assign(consumers.size(), std::string());
        for (size_t idx = 0; idx < consumers.size(); ++idx) {
          const int j = consumers[idx];
          std::string& bytes = replay[k][idx];
          if (state[t] != nullptr && static_cast<size_t>(j) < state[t]->subtasks.size()) {
            for (const InputChannelStateEntry& in : state[t]->subtasks[static_cast<size_t>(j)].channel.input) {
              if (in.input == input && in.producer_subtask == i) bytes += in.bytes;
            }
          }
          if (state[v] != nullptr && static_cast<size_t>(i) < state[v]->subtasks.size()) {
            for (const OutputChannelStateEntry& o : state[v]->subtasks[static_cast<size_t>(i)].channel.output) {
              if (o.output == static_cast<int32_t>(k) && o.consumer_subtask == j) bytes += o.bytes;
            }
          }
        }
      }
    }
  }
  // Every entry must have found its channel: one that points elsewhere is a corrupt or foreign checkpoint.
  for (size_t v = 0; v < job.vertices.size(); ++v) {
    if (state[v] == nullptr) continue;
    const graph::JobVertex& vertex = job.vertices[v];
    for (size_t s = 0; s < state[v]->subtasks.size(); ++s) {
      for (const InputChannelStateEntry& in : state[v]->subtasks[s].channel.input) {
        if (in.input < 0 || static_cast<size_t>(in.input) >= vertex.inputs.size() || in.producer_subtask < 0 ||
            in.producer_subtask >= job.vertices[static_cast<size_t>(
                                      job.edges[static_cast<size_t>(vertex.inputs[static_cast<size_t>(in.input)])]
                                          .source_vertex)]
                                      .parallelism) {
          throw InputError(fmt::format("checkpoint {}: channel state of operator '{}' subtask {} names input {} from "
                                       "subtask {}, which that task does not have",
                                       checkpoint.checkpoint_id, headUid(vertex), s, in.input, in.producer_subtask));
        }
      }
      for (const OutputChannelStateEntry& o : state[v]->subtasks[s].channel.output) {
        if (o.output < 0 || static_cast<size_t>(o.output) >= vertex.outputs.size()) {
          throw InputError(fmt::format("checkpoint {}: channel state of operator '{}' subtask {} names output {}, "
                                       "which that task does not have",
                                       checkpoint.checkpoint_id, headUid(vertex), s, o.output));
        }
      }
    }
  }
  return out;
}

}  // namespace sluice::runtime::checkpoint
