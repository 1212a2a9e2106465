#include "runtime/state/operator_state_backend.h"

namespace sluice::runtime::state {

const char* operatorStateModeName(checkpoint::OperatorStateMode mode) {
  switch (mode) {
    case checkpoint::OperatorStateMode::kSplitDistribute: return "SPLIT_DISTRIBUTE";
    case checkpoint::OperatorStateMode::kUnion: return "UNION";
    case checkpoint::OperatorStateMode::kBroadcast: return "BROADCAST";
  }
  return "UNKNOWN";
}

OperatorStateBackend::OperatorStateBackend(std::map<std::string, checkpoint::OperatorListState> restored)
    : restored_(std::move(restored)) {}

OperatorStateBackend::~OperatorStateBackend() = default;

OperatorStateBase* OperatorStateBackend::find(const std::string& name, checkpoint::OperatorStateMode mode) const {
  auto it = states_.find(name);
  if (it == states_.end()) return nullptr;
  SLUICE_USER_CHECK(it->second->mode() == mode, "operator state '{}' is already registered as {}, not {}", name,
                    operatorStateModeName(it->second->mode()), operatorStateModeName(mode));
  return it->second.get();
}

void OperatorStateBackend::add(std::unique_ptr<OperatorStateBase> state) {
  SLUICE_USER_CHECK(!state->name().empty(), "an operator state needs a name");
  auto it = restored_.find(state->name());
  if (it != restored_.end()) {
    SLUICE_USER_CHECK(it->second.mode == state->mode(), "operator state '{}' was restored as {} but is registered as {}",
                      state->name(), operatorStateModeName(it->second.mode), operatorStateModeName(state->mode()));
    state->restore(it->second.elements);
    restored_.erase(it);
  }
  std::string name = state->name();
  states_.emplace(std::move(name), std::move(state));
}

std::vector<std::string> OperatorStateBackend::registeredStateNames() const {
  std::vector<std::string> names;
  for (const auto& [name, s] : states_) names.push_back(name);
  return names;
}

std::map<std::string, checkpoint::OperatorListState> OperatorStateBackend::snapshot() const {
  std::map<std::string, checkpoint::OperatorListState> out = restored_;
  for (const auto& [name, s] : states_) out.emplace(name, s->snapshot());
  return out;
}

}  // namespace sluice::runtime::state
