#include "runtime/checkpoint/state_assignment.h"

#include <utility>

#include "common/error.h"
#include "runtime/checkpoint/checkpoint_metadata.h"
#include "runtime/state/key_group.h"
#include "runtime/state/state_redistribution.h"

namespace sluice::runtime::checkpoint {
namespace {

std::vector<const OperatorSubtaskState*> pointers(const std::vector<OperatorSubtaskState>& subtasks) {
  std::vector<const OperatorSubtaskState*> out;
  out.reserve(subtasks.size());
  for (const OperatorSubtaskState& s : subtasks) out.push_back(&s);
  return out;
}

struct NamedState {
  OperatorStateMode mode;
  std::vector<const std::string*> elements;  // in old subtask order
  bool broadcast_taken = false;
};

}  // namespace

std::vector<std::map<std::string, OperatorListState>> redistributeOperatorListStates(
    const std::string& uid, const std::vector<OperatorSubtaskState>& old_subtasks, int32_t new_parallelism) {
  SLUICE_CHECK(new_parallelism >= 1, "new parallelism {}", new_parallelism);
  std::map<std::string, NamedState> by_name;
  for (const OperatorSubtaskState& subtask : old_subtasks) {
    for (const auto& [name, list] : subtask.operator_state) {
      auto [it, inserted] = by_name.try_emplace(name, NamedState{list.mode, {}, false});
      NamedState& named = it->second;
      if (!inserted && named.mode != list.mode) {
        throw InputError(fmt::format("operator '{}': operator state '{}' has mode {} in one subtask and {} in another",
                                     uid, name, static_cast<int>(named.mode), static_cast<int>(list.mode)));
      }
      if (named.mode == OperatorStateMode::kBroadcast) {
        if (named.broadcast_taken) continue;  // every subtask holds the same copy
        named.broadcast_taken = true;
      }
      for (const std::string& e : list.elements) named.elements.push_back(&e);
    }
  }

  std::vector<std::map<std::string, OperatorListState>> result(static_cast<size_t>(new_parallelism));
  const size_t parts = static_cast<size_t>(new_parallelism);
  // Flink's RoundRobinOperatorStateRepartitioner: at an unchanged parallelism split state stays where it
  // was. A source subtask must get back its own splits: read by another, they would come after that
  // subtask's later data and their rows be late behind its watermark.
  const bool same_parallelism = old_subtasks.size() == parts;
  for (const auto& [name, named] : by_name) {
    if (named.mode == OperatorStateMode::kSplitDistribute && same_parallelism) {
      for (size_t i = 0; i < parts; ++i) {
        OperatorListState& list = result[i][name];
        list.mode = named.mode;
        auto own = old_subtasks[i].operator_state.find(name);
        if (own != old_subtasks[i].operator_state.end()) list.elements = own->second.elements;
      }
    } else if (named.mode == OperatorStateMode::kSplitDistribute) {
      const size_t total = named.elements.size();
      size_t next = 0;
      for (size_t i = 0; i < parts; ++i) {
        const size_t count = total / parts + (i < total % parts ? 1 : 0);
        OperatorListState& list = result[i][name];
        list.mode = named.mode;
        list.elements.reserve(count);
        for (size_t k = 0; k < count; ++k) list.elements.push_back(*named.elements[next++]);
      }
    } else {
      for (size_t i = 0; i < parts; ++i) {
        OperatorListState& list = result[i][name];
        list.mode = named.mode;
        list.elements.reserve(named.elements.size());
        for (const std::string* e : named.elements) list.elements.push_back(*e);
      }
    }
  }
  return result;
}

StateAssignment assignStates(const CompletedCheckpoint& checkpoint,
                             const std::map<std::string, OperatorParallelism>& operators,
                             bool allow_non_restored_state) {
  // Flink's checkStateMappingCompleteness: state nobody claims fails the restore unless allowed.
  if (!allow_non_restored_state) {
    for (const auto& [uid, op] : checkpoint.operators) {
      bool has_state = false;
      for (const OperatorSubtaskState& s : op.subtasks) has_state = has_state || !s.empty();
      if (has_state && operators.find(uid) == operators.end()) {
        throw UserError(fmt::format(
            "cannot map the state of operator '{}' in checkpoint {} to the new job: the job has no operator with "
            "that uid (set 'execution.state-recovery.ignore-unclaimed-state' to true to skip that state)",
            uid, checkpoint.checkpoint_id));
      }
    }
  }

  StateAssignment result;
  for (const auto& [uid, target] : operators) {
    if (target.max_parallelism < 1 || target.max_parallelism > kUpperBoundMaxParallelism) {
      throw ConfigError(fmt::format("operator '{}': max parallelism {} is outside [1, {}] (pipeline.max-parallelism)",
                                    uid, target.max_parallelism, kUpperBoundMaxParallelism));
    }
    if (target.parallelism < 1 || target.parallelism > target.max_parallelism) {
      throw ConfigError(fmt::format(
          "operator '{}': parallelism {} is outside [1, {}], its max parallelism (pipeline.max-parallelism)", uid,
          target.parallelism, target.max_parallelism));
    }
    std::vector<OperatorSubtaskState>& states = result[uid];
    states.resize(static_cast<size_t>(target.parallelism));
    const auto found = checkpoint.operators.find(uid);
    if (found == checkpoint.operators.end()) continue;
    const OperatorState& old = found->second;
    // Flink's checkParallelismPreconditions: key groups are fixed for the life of the state.
    if (old.max_parallelism != target.max_parallelism) {
      throw UserError(fmt::format(
          "operator '{}': the max parallelism {} with which checkpoint {} was taken differs from the job's max "
          "parallelism {}; key groups cannot change (keep pipeline.max-parallelism at {})",
          uid, old.max_parallelism, checkpoint.checkpoint_id, target.max_parallelism, old.max_parallelism));
    }

    const std::vector<const OperatorSubtaskState*> old_subtasks = pointers(old.subtasks);
    for (int32_t i = 0; i < target.parallelism; ++i) {
      const state::KeyGroupRange range = state::KeyGroupRangeAssignment::computeKeyGroupRangeForOperatorIndex(
          target.max_parallelism, target.parallelism, i);
      try {
        states[static_cast<size_t>(i)].keyed = state::selectKeyGroups(old_subtasks, range);
        // RocksDB incremental handles: every old backend whose range overlaps (Flink's
        // StateAssignmentOperation.getKeyedStateHandles with KeyGroupRange intersection); the backend
        // opens it directly when the range is the same, else copies the overlap.
        for (const OperatorSubtaskState* old_subtask : old_subtasks) {
          for (const IncrementalKeyedStateHandle& h : old_subtask->incremental) {
            if (h.key_group_end < range.start || h.key_group_start > range.end) continue;
            states[static_cast<size_t>(i)].incremental.push_back(h);
          }
        }
      } catch (const InputError& e) {
        throw InputError(fmt::format("operator '{}' in checkpoint {}: {}", uid, checkpoint.checkpoint_id, e.what()));
      }
    }
    std::vector<std::map<std::string, OperatorListState>> lists =
        redistributeOperatorListStates(uid, old.subtasks, target.parallelism);
    for (size_t i = 0; i < states.size(); ++i) states[i].operator_state = std::move(lists[i]);
  }
  return result;
}

}  // namespace sluice::runtime::checkpoint
