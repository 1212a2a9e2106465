#pragma once
/// The operator factory of DataStream transformations: creates one operator per subtask from a callable,
/// and carries what the task needs to wire it (source or not, chaining strategy, which side-output tag
/// it reads from each producer, and how many head input edges feed the first input of a two-input
/// operator, and the serializer of each output's record type). Configured by the API while the job is
/// built; const (shared by all subtasks) afterwards.

#include <functional>
#include <map>
#include <memory>

#include "common/error.h"
#include "runtime/operators/stream_operator.h"
#include "runtime/serialization/object_batch_serializer.h"

namespace sluice::runtime {

class ObjectOperatorFactory final : public StreamOperatorFactory {
 public:
  using Create = std::function<std::unique_ptr<StreamOperator>()>;

  /// `create` must be callable from several task threads at once (it copies the user function).
  ObjectOperatorFactory(Create create, bool is_source, graph::ChainingStrategy strategy)
      : create_(std::move(create)), is_source_(is_source), strategy_(strategy) {}

  std::unique_ptr<StreamOperator> createOperator() const override { return create_(); }
  bool isSource() const override { return is_source_; }
  graph::ChainingStrategy chainingStrategy() const override { return strategy_; }
  int inputTag(int source_node_id) const override {
    auto it = input_tags_.find(source_node_id);
    return it == input_tags_.end() ? 0 : it->second;
  }
  int numFirstInputEdges() const override { return first_input_edges_; }
  /// Throws InternalError when the API registered no record type for `tag`.
  std::shared_ptr<const ObjectBatchSerializer> outputSerializer(int tag) const override {
    auto it = output_serializers_.find(tag);
    SLUICE_CHECK(it != output_serializers_.end(), "no record type registered for output tag {}", tag);
    return it->second;
  }

  /// Build time only: the operator reads side output `tag` of producer node `source_node_id`.
  void setInputTag(int source_node_id, int tag) { input_tags_[source_node_id] = tag; }
  /// Build time only: marks a two-input operator whose first `n` head input edges feed input 1.
  void setNumFirstInputEdges(int n) { first_input_edges_ = n; }
  /// Build time only: the records of output `tag` (0: main output) are of the type `serializer` handles.
  void setOutputSerializer(int tag, std::shared_ptr<const ObjectBatchSerializer> serializer) {
    output_serializers_[tag] = std::move(serializer);
  }
  /// Makes a keyed one-input operator's sorter (keyed_input_sorter.h); must be callable from several task
  /// threads at once.
  using SorterFactory =
      std::function<std::unique_ptr<KeyedInputSorter>(const sort::SorterOptions& options, int32_t max_parallelism)>;
  /// Build time only: the operator's input `input` (0: the only or first, 1: the second) is sorted by key
  /// in BATCH mode and during backlog (FLIP-327); a two-input operator needs both.
  void setKeyedInputSorter(SorterFactory factory, int input = 0) {
    SLUICE_CHECK(input == 0 || input == 1, "a sorter for input {}", input);
    sorter_factories_[static_cast<size_t>(input)] = std::move(factory);
  }
  bool sortsKeyedInput() const override {
    return sorter_factories_[0] != nullptr && (first_input_edges_ < 0 || sorter_factories_[1] != nullptr);
  }
  std::unique_ptr<KeyedInputSorter> createKeyedInputSorter(const sort::SorterOptions& options, int32_t max_parallelism,
                                                           int input = 0) const override {
    if (input < 0 || input > 1 || !sorter_factories_[static_cast<size_t>(input)]) return nullptr;
    return sorter_factories_[static_cast<size_t>(input)](options, max_parallelism);
  }

 private:
  Create create_;
  bool is_source_;
  graph::ChainingStrategy strategy_;
  std::map<int, int> input_tags_;
  int first_input_edges_ = -1;
  std::map<int, std::shared_ptr<const ObjectBatchSerializer>> output_serializers_;
  SorterFactory sorter_factories_[2];
};

}  // namespace sluice::runtime
