#pragma once
/// Operator (non-keyed) state of one operator subtask (Flink's DefaultOperatorStateBackend,
/// flink-checkpointing.md §3.2): named lists of elements, redistributed on restore by their mode —
/// getListState (SPLIT_DISTRIBUTE) or getUnionListState (UNION). Elements are C++ objects; the serializer
/// runs only in snapshot() and when a restored state is registered. Restored states the operator never
/// registers are written back unchanged. Threading: the task thread only.

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/checkpoint/checkpoint_types.h"
#include "runtime/state/state_descriptor.h"

namespace sluice::runtime::state {

/// A registered operator list state, whatever its element type.
class OperatorStateBase {
 public:
  OperatorStateBase(std::string name, checkpoint::OperatorStateMode mode) : name_(std::move(name)), mode_(mode) {}
  virtual ~OperatorStateBase() = default;
  const std::string& name() const { return name_; }
  checkpoint::OperatorStateMode mode() const { return mode_; }
  /// The elements in serialized form.
  virtual checkpoint::OperatorListState snapshot() const = 0;
  /// Appends restored elements. Throws InputError naming the state and element index.
  virtual void restore(const std::vector<std::string>& elements) = 0;

 private:
  std::string name_;
  checkpoint::OperatorStateMode mode_;
};

/// The list of one operator state name in this subtask (Flink's PartitionableListState).
template <typename V, typename Ser = TypeSerializer<V>>
class PartitionableListState : public OperatorStateBase {
 public:
  using OperatorStateBase::OperatorStateBase;
  /// The elements (restored ones first); mutable in place.
  std::vector<V>& get() { return elements_; }
  void add(V v) { elements_.push_back(std::move(v)); }
  void update(std::vector<V> values) { elements_ = std::move(values); }
  void clear() { elements_.clear(); }

  checkpoint::OperatorListState snapshot() const override {
    checkpoint::OperatorListState out;
    out.mode = mode();
    out.elements.reserve(elements_.size());
    for (const V& v : elements_) {
      std::string bytes;
      DataOutputView w(bytes);
      Ser::serialize(v, w);
      out.elements.push_back(std::move(bytes));
    }
    return out;
  }
  void restore(const std::vector<std::string>& elements) override {
    for (size_t i = 0; i < elements.size(); ++i) {
      try {
        DataInputView in(elements[i]);
        V v = Ser::deserialize(in);
        if (!in.atEnd()) throw InputError(fmt::format("{} trailing bytes", elements[i].size() - in.position()));
        elements_.push_back(std::move(v));
      } catch (const InputError& e) {
        throw InputError(fmt::format("restored operator state '{}', element {}: {}", name(), i, e.what()));
      }
    }
  }

 private:
  std::vector<V> elements_;
};

/// The operator list states of one operator subtask.
class OperatorStateBackend {
 public:
  /// A backend restored from this subtask's (already redistributed) named lists.
  explicit OperatorStateBackend(std::map<std::string, checkpoint::OperatorListState> restored = {});
  ~OperatorStateBackend();
  OperatorStateBackend(const OperatorStateBackend&) = delete;
  OperatorStateBackend& operator=(const OperatorStateBackend&) = delete;

  /// The SPLIT_DISTRIBUTE list `desc.name` (Flink's getListState): on rescale its elements are cut into
  /// contiguous chunks over the new subtasks. Same object for the same name. UserError when the name is
  /// used with another mode or element type; InputError when restored elements do not decode.
  template <typename V, typename Ser>
  PartitionableListState<V, Ser>& getListState(const ListStateDescriptor<V, Ser>& desc) {
    return get<V, Ser>(desc.name, checkpoint::OperatorStateMode::kSplitDistribute);
  }
  /// The UNION list `desc.name` (Flink's getUnionListState): on restore every subtask gets every element.
  template <typename V, typename Ser>
  PartitionableListState<V, Ser>& getUnionListState(const ListStateDescriptor<V, Ser>& desc) {
    return get<V, Ser>(desc.name, checkpoint::OperatorStateMode::kUnion);
  }

  /// Names of the registered states, sorted.
  std::vector<std::string> registeredStateNames() const;
  /// Every list by name, registered ones serialized now, unregistered restored ones as they came.
  std::map<std::string, checkpoint::OperatorListState> snapshot() const;

 private:
  template <typename V, typename Ser>
  PartitionableListState<V, Ser>& get(const std::string& name, checkpoint::OperatorStateMode mode) {
    if (OperatorStateBase* existing = find(name, mode)) {
      auto* typed = dynamic_cast<PartitionableListState<V, Ser>*>(existing);
      SLUICE_USER_CHECK(typed != nullptr, "operator state '{}' is already registered with another element type",
                        name);
      return *typed;
    }
    auto owned = std::make_unique<PartitionableListState<V, Ser>>(name, mode);
    auto& ref = *owned;
    add(std::move(owned));
    return ref;
  }
  /// The registered state (UserError when its mode differs), nullptr when none.
  OperatorStateBase* find(const std::string& name, checkpoint::OperatorStateMode mode) const;
  /// Registers a state and restores its elements (UserError when restored with another mode).
  void add(std::unique_ptr<OperatorStateBase> state);

  std::map<std::string, std::unique_ptr<OperatorStateBase>> states_;
  std::map<std::string, checkpoint::OperatorListState> restored_;  ///< not registered yet
};

/// "SPLIT_DISTRIBUTE", "UNION", "BROADCAST" for messages.
const char* operatorStateModeName(checkpoint::OperatorStateMode mode);

}  // namespace sluice::runtime::state
