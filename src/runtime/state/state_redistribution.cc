#include "runtime/state/state_redistribution.h"

#include "common/error.h"
#include "runtime/state/operator_state_backend.h"

namespace sluice::runtime::state {

namespace {

using checkpoint::OperatorListState;
using checkpoint::OperatorStateMode;

struct NamedState {
  OperatorStateMode mode;
  std::vector<std::pair<size_t, const OperatorListState*>> parts;  ///< (old subtask, list) in subtask order
};

std::map<std::string, NamedState> groupByName(const std::vector<const checkpoint::OperatorSubtaskState*>& old) {
  std::map<std::string, NamedState> by_name;
  for (size_t i = 0; i < old.size(); ++i) {
    if (old[i] == nullptr) continue;
    for (const auto& [name, list] : old[i]->operator_state) {
      auto [it, inserted] = by_name.try_emplace(name, NamedState{list.mode, {}});
      if (it->second.mode != list.mode) {
        throw InputError(fmt::format("operator state '{}' is {} in old subtask {} but {} in an earlier one", name,
                                     operatorStateModeName(list.mode), i, operatorStateModeName(it->second.mode)));
      }
      it->second.parts.emplace_back(i, &list);
    }
  }
  return by_name;
}

}  // namespace

std::vector<std::map<std::string, OperatorListState>> redistributeOperatorState(
    const std::vector<const checkpoint::OperatorSubtaskState*>& old_subtasks, int new_parallelism) {
  SLUICE_CHECK(new_parallelism >= 1, "new parallelism {}", new_parallelism);
  const auto new_p = static_cast<size_t>(new_parallelism);
  std::vector<std::map<std::string, OperatorListState>> out(new_p);
  const bool same_parallelism = old_subtasks.size() == new_p;
  size_t start = 0;
  for (const auto& [name, state] : groupByName(old_subtasks)) {
    switch (state.mode) {
      case OperatorStateMode::kSplitDistribute: {
        if (same_parallelism) {
          for (const auto& [i, list] : state.parts) out[i][name] = *list;
          break;
        }
        std::vector<const std::string*> all;
        for (const auto& [i, list] : state.parts) {
          for (const auto& e : list->elements) all.push_back(&e);
        }
        const size_t base = all.size() / new_p;
        size_t remainder = all.size() % new_p;
        size_t next_start = start;
        bool start_set = remainder == 0;
        size_t taken = 0;
        for (size_t k = 0; k < new_p; ++k) {
          const size_t subtask = (k + start) % new_p;
          size_t n = base;
          if (remainder > 0) {
            ++n;
            --remainder;
          } else if (!start_set) {
            // The first subtask of the smaller chunks begins the next name's round (fair load balance).
            next_start = subtask;
            start_set = true;
          }
          if (n == 0) continue;
          OperatorListState& target = out[subtask][name];
          target.mode = OperatorStateMode::kSplitDistribute;
          for (size_t j = 0; j < n; ++j) target.elements.push_back(*all[taken++]);
        }
        start = next_start;
        break;
      }
      case OperatorStateMode::kUnion: {
        OperatorListState merged;
        merged.mode = OperatorStateMode::kUnion;
        for (const auto& [i, list] : state.parts) {
          merged.elements.insert(merged.elements.end(), list->elements.begin(), list->elements.end());
        }
        for (auto& subtask : out) subtask[name] = merged;
        break;
      }
      case OperatorStateMode::kBroadcast: {
        for (size_t k = 0; k < new_p; ++k) out[k][name] = *state.parts[k % state.parts.size()].second;
        break;
      }
    }
  }
  return out;
}

std::map<int32_t, std::string> selectKeyGroups(const std::vector<const checkpoint::OperatorSubtaskState*>& old_subtasks,
                                               KeyGroupRange range) {
  std::map<int32_t, std::string> out;
  std::map<int32_t, size_t> owner;
  for (size_t i = 0; i < old_subtasks.size(); ++i) {
    if (old_subtasks[i] == nullptr) continue;
    for (const auto& [group, blob] : old_subtasks[i]->keyed) {
      if (!range.contains(group)) continue;
      auto [it, inserted] = owner.try_emplace(group, i);
      if (!inserted) {
        throw InputError(fmt::format("key group {} appears in the keyed state of old subtasks {} and {}", group,
                                     it->second, i));
      }
      out.emplace(group, blob);
    }
  }
  return out;
}

}  // namespace sluice::runtime::state
