#include "runtime/task/operator_chain.h"

#include <fmt/format.h>

#include <filesystem>
#include <optional>

#include "common/config.h"
#include "common/error.h"
#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/state/key_group.h"
#include "runtime/state/state_backend_options.h"
#include "runtime/state/stream_operator_state_context.h"

namespace sluice::runtime {

namespace {

// Direct call into the next chained operator (Flink's ChainingOutput). `self` is null inside a fan-out,
// which counts its operator's output once itself.
class ChainingOutput final : public Output {
 public:
  ChainingOutput(StreamOperator* next, OperatorMetrics* self, OperatorMetrics* next_metrics)
      : next_(next), self_(self), next_metrics_(next_metrics) {}
  void collect(types::RowBatch&& batch) override {
    const int64_t n = static_cast<int64_t>(batch.numRows());
    if (n == 0) return;
    checkFailure(n);
    if (self_) addCount(self_->num_records_out, n);
    addCount(next_metrics_->num_records_in, n);
    next_->processBatch(std::move(batch));
  }
  void collectObjects(ObjectBatchPtr&& batch) override {
    if (batch->tag() != accepted_tag_) return;
    const int64_t n = static_cast<int64_t>(batch->size());
    if (n == 0) return;
    checkFailure(n);
    if (self_) addCount(self_->num_records_out, n);
    addCount(next_metrics_->num_records_in, n);
    next_->processObjects(std::move(batch));
  }
  StreamOperator* next() const { return next_; }
  /// Throws InjectedFailure instead of delivering the batch that takes the next operator past `after`.
  void setFailure(std::string name, int64_t after, const bool* armed) {
    fail_name_ = std::move(name);
    fail_after_ = after;
    fail_armed_ = armed;
  }
  void emitWatermark(Watermark mark) override { next_->processWatermark(mark); }
  void emitWatermarkStatus(WatermarkStatus status) override { next_->processWatermarkStatus(status); }
  void emitRecordAttributes(RecordAttributes attributes) override { next_->processRecordAttributes(attributes); }
  /// Only object batches with this tag reach the next operator (side outputs).
  void setAcceptedTag(int tag) { accepted_tag_ = tag; }

 private:
  StreamOperator* next_;
  OperatorMetrics* self_;
  OperatorMetrics* next_metrics_;
  int accepted_tag_ = 0;
  std::string fail_name_;
  int64_t fail_after_ = -1;
  const bool* fail_armed_ = nullptr;

  void checkFailure(int64_t n) {
    if (fail_after_ < 0 || !*fail_armed_) return;
    const int64_t seen = next_metrics_->num_records_in.load(std::memory_order_relaxed);
    if (seen + n > fail_after_) {
      throw InjectedFailure(
          fmt::format("Injected failure in '{}' after {} records (sluice.test.fail-after-records)", fail_name_, seen));
    }
  }
};

// The tail of a chain towards one network edge (Flink's RecordWriterOutput).
class RecordWriterOutput final : public Output {
 public:
  RecordWriterOutput(RecordWriter* writer, OperatorMetrics* self) : writer_(writer), self_(self) {}
  void collect(types::RowBatch&& batch) override {
    if (batch.empty()) return;
    if (self_) addCount(self_->num_records_out, static_cast<int64_t>(batch.numRows()));
    writer_->emit(std::move(batch));
  }
  void collectObjects(ObjectBatchPtr&& batch) override {
    if (batch->tag() != accepted_tag_ || batch->empty()) return;
    if (self_) addCount(self_->num_records_out, static_cast<int64_t>(batch->size()));
    writer_->emitObjects(std::move(batch));
  }
  // As Flink's RecordWriterOutput: no watermark leaves while the announced status is IDLE, and only status
  // changes go out.
  void emitWatermark(Watermark mark) override {
    if (announced_ == WatermarkStatus::kIdle) return;
    writer_->broadcastWatermark(mark);
  }
  void emitWatermarkStatus(WatermarkStatus status) override {
    if (status == announced_) return;
    announced_ = status;
    writer_->broadcastWatermarkStatus(status);
  }
  // Only changes go out: the consumer's RecordAttributesCombiner would drop a repeat anyway.
  void emitRecordAttributes(RecordAttributes attributes) override {
    if (announced_attributes_ == attributes) return;
    announced_attributes_ = attributes;
    writer_->broadcastRecordAttributes(attributes);
  }
  void setAcceptedTag(int tag) { accepted_tag_ = tag; }

 private:
  RecordWriter* writer_;
  OperatorMetrics* self_;
  int accepted_tag_ = 0;
  WatermarkStatus announced_ = WatermarkStatus::kActive;
  std::optional<RecordAttributes> announced_attributes_;
};

// Fan-out to several outputs (Flink's CopyingBroadcastingOutputCollector): all but the last get a copy.
class BroadcastingOutput final : public Output {
 public:
  BroadcastingOutput(std::vector<Output*> outputs, OperatorMetrics* self) : outputs_(std::move(outputs)), self_(self) {}
  void collect(types::RowBatch&& batch) override {
    if (batch.empty()) return;
    addCount(self_->num_records_out, static_cast<int64_t>(batch.numRows()));
    for (size_t i = 0; i + 1 < outputs_.size(); ++i) outputs_[i]->collect(types::RowBatch(batch));
    outputs_.back()->collect(std::move(batch));
  }
  void collectObjects(ObjectBatchPtr&& batch) override {
    if (batch->empty()) return;
    // Only the outputs that read this tag get the batch; all but the last of them get a copy.
    size_t last = outputs_.size();
    for (size_t i = 0; i < outputs_.size(); ++i) {
      if (tags_[i] == batch->tag()) last = i;
    }
    if (last == outputs_.size()) return;
    addCount(self_->num_records_out, static_cast<int64_t>(batch->size()));
    for (size_t i = 0; i < last; ++i) {
      if (tags_[i] == batch->tag()) outputs_[i]->collectObjects(batch->clone());
    }
    outputs_[last]->collectObjects(std::move(batch));
  }
  void emitWatermark(Watermark mark) override {
    for (Output* o : outputs_) o->emitWatermark(mark);
  }
  void emitWatermarkStatus(WatermarkStatus status) override {
    for (Output* o : outputs_) o->emitWatermarkStatus(status);
  }
  void emitRecordAttributes(RecordAttributes attributes) override {
    for (Output* o : outputs_) o->emitRecordAttributes(attributes);
  }
  /// tags[i]: the object tag output i reads.
  void setTags(std::vector<int> tags) { tags_ = std::move(tags); }

 private:
  std::vector<Output*> outputs_;
  OperatorMetrics* self_;
  std::vector<int> tags_;
};

// The output of an operator with no downstream (a sink): counts and drops.
class DiscardingOutput final : public Output {
 public:
  explicit DiscardingOutput(OperatorMetrics* self) : self_(self) {}
  void collect(types::RowBatch&& batch) override { addCount(self_->num_records_out, static_cast<int64_t>(batch.numRows())); }
  void collectObjects(ObjectBatchPtr&& batch) override {
    if (batch->tag() == 0) addCount(self_->num_records_out, static_cast<int64_t>(batch->size()));
  }
  void emitWatermark(Watermark) override {}

 private:
  OperatorMetrics* self_;
};

int inputTagOf(const graph::OperatorFactory* factory, int source_node_id) {
  const auto* f = dynamic_cast<const StreamOperatorFactory*>(factory);
  return f == nullptr ? 0 : f->inputTag(source_node_id);
}

}  // namespace

// Wraps a source head's output to remember the highest watermark the source emitted, so the task's final
// watermark is not sent twice, and the status it announced, so the final watermark follows an ACTIVE.
class OperatorChain::WatermarkTrackingOutput final : public Output {
 public:
  explicit WatermarkTrackingOutput(Output* inner) : inner_(inner) {}
  void collect(types::RowBatch&& batch) override { inner_->collect(std::move(batch)); }
  void collectObjects(ObjectBatchPtr&& batch) override { inner_->collectObjects(std::move(batch)); }
  void emitWatermark(Watermark mark) override {
    if (mark.timestamp > max_) max_ = mark.timestamp;
    inner_->emitWatermark(mark);
  }
  void emitWatermarkStatus(WatermarkStatus status) override {
    status_ = status;
    inner_->emitWatermarkStatus(status);
  }
  void emitRecordAttributes(RecordAttributes attributes) override { inner_->emitRecordAttributes(attributes); }
  int64_t maxWatermark() const { return max_; }
  WatermarkStatus status() const { return status_; }

 private:
  Output* inner_;
  int64_t max_ = Watermark::kMinTimestamp;
  WatermarkStatus status_ = WatermarkStatus::kActive;
};

// Counts the records entering the operator of a FailureInjection and throws once they reach the limit
// (before the batch that would pass it is delivered).
class OperatorChain::FailingOutput final : public Output {
 public:
  FailingOutput(Output* inner, std::string name, int64_t after, const bool* armed)
      : inner_(inner), name_(std::move(name)), after_(after), armed_(armed) {}
  void collect(types::RowBatch&& batch) override {
    check(static_cast<int64_t>(batch.numRows()));
    inner_->collect(std::move(batch));
  }
  void collectObjects(ObjectBatchPtr&& batch) override {
    check(static_cast<int64_t>(batch->size()));
    inner_->collectObjects(std::move(batch));
  }
  void emitWatermark(Watermark mark) override { inner_->emitWatermark(mark); }
  void emitWatermarkStatus(WatermarkStatus status) override { inner_->emitWatermarkStatus(status); }
  void emitRecordAttributes(RecordAttributes attributes) override { inner_->emitRecordAttributes(attributes); }
  int64_t seen() const { return seen_; }

 private:
  void check(int64_t n) {
    if (seen_ + n > after_ && n > 0 && *armed_) {
      throw InjectedFailure(fmt::format("Injected failure in '{}' after {} records (sluice.test.fail-after-records)",
                                        name_, seen_));
    }
    seen_ += n;
  }
  Output* inner_;
  std::string name_;
  int64_t after_;
  const bool* armed_;
  int64_t seen_ = 0;
};

void OperatorChain::countHeadInput(int64_t n) {
  std::atomic<int64_t>& in = metrics_[0].num_records_in;
  if (fail_head_ && n > 0 && failure_armed_ && in.load(std::memory_order_relaxed) + n > fail_after_) {
    throw InjectedFailure(fmt::format("Injected failure in '{}' after {} records (sluice.test.fail-after-records)",
                                      contexts_[0].operator_name, in.load(std::memory_order_relaxed)));
  }
  addCount(in, n);
}

OperatorChain::OperatorChain(const graph::JobVertex& vertex, std::vector<RecordWriter*> writers,
                             const OperatorContext& base, OperatorMetrics* metrics, const graph::JobGraph* job,
                             const checkpoint::TaskStateSnapshot* restore, const FailureInjection* failure)
    : metrics_(metrics) {
  const size_t n = vertex.operators.size();
  SLUICE_CHECK(n > 0, "vertex '{}' has no operators", vertex.name);
  SLUICE_CHECK(writers.size() == vertex.outputs.size(), "vertex '{}': {} writers for {} out edges", vertex.name,
               writers.size(), vertex.outputs.size());
  operators_.reserve(n);
  for (const graph::ChainedOperator& op : vertex.operators) {
    const auto* factory = dynamic_cast<const StreamOperatorFactory*>(op.factory.get());
    SLUICE_CHECK(factory != nullptr, "operator '{}' has no StreamOperatorFactory", op.name);
    operators_.push_back(factory->createOperator());
    SLUICE_CHECK(operators_.back() != nullptr, "factory of operator '{}' returned null", op.name);
  }
  head_ = operators_[0].get();
  if (vertex.is_source) {
    source_head_ = dynamic_cast<SourceOperator*>(head_);
    SLUICE_CHECK(source_head_ != nullptr, "source vertex '{}' does not start with a SourceOperator", vertex.name);
  }

  // Writers by JobGraph edge index.
  auto writerFor = [&](int edge) -> RecordWriter* {
    for (size_t k = 0; k < vertex.outputs.size(); ++k) {
      if (vertex.outputs[k] == edge) return writers[k];
    }
    SLUICE_CHECK(false, "edge {} is not an output of vertex '{}'", edge, vertex.name);
    return nullptr;
  };

  outputs_of_.assign(n, nullptr);
  contexts_.assign(n, base);
  for (size_t i = 0; i < n; ++i) {
    const graph::ChainedOperator& op = vertex.operators[i];
    const size_t fan_out = op.chained_outputs.size() + op.network_outputs.size();
    OperatorMetrics* self = fan_out == 1 ? &metrics_[i] : nullptr;
    std::vector<Output*> outs;
    std::vector<int> tags;
    for (int child : op.chained_outputs) {
      const graph::ChainedOperator& next = vertex.operators[static_cast<size_t>(child)];
      auto out = std::make_unique<ChainingOutput>(operators_[static_cast<size_t>(child)].get(), self,
                                                  &metrics_[static_cast<size_t>(child)]);
      tags.push_back(inputTagOf(next.factory.get(), op.node_id));
      out->setAcceptedTag(tags.back());
      outs.push_back(out.get());
      owned_outputs_.push_back(std::move(out));
    }
    for (int edge : op.network_outputs) {
      auto out = std::make_unique<RecordWriterOutput>(writerFor(edge), self);
      tags.push_back(0);
      if (job != nullptr) {
        const graph::JobEdge& e = job->edges[static_cast<size_t>(edge)];
        const graph::JobVertex& target = job->vertices[static_cast<size_t>(e.target_vertex)];
        for (const graph::ChainedOperator& t : target.operators) {
          if (t.node_id == e.target_node_id) tags.back() = inputTagOf(t.factory.get(), op.node_id);
        }
      }
      out->setAcceptedTag(tags.back());
      outs.push_back(out.get());
      owned_outputs_.push_back(std::move(out));
    }
    if (outs.empty()) {
      owned_outputs_.push_back(std::make_unique<DiscardingOutput>(&metrics_[i]));
      outputs_of_[i] = owned_outputs_.back().get();
    } else if (outs.size() == 1) {
      outputs_of_[i] = outs[0];
    } else {
      auto fan = std::make_unique<BroadcastingOutput>(std::move(outs), &metrics_[i]);
      fan->setTags(std::move(tags));
      outputs_of_[i] = fan.get();
      owned_outputs_.push_back(std::move(fan));
    }
    contexts_[i].operator_name = op.name;
    contexts_[i].metrics = &metrics_[i];
  }
  if (source_head_ != nullptr) {
    auto tracking = std::make_unique<WatermarkTrackingOutput>(outputs_of_[0]);
    source_output_ = tracking.get();
    outputs_of_[0] = tracking.get();
    owned_outputs_.push_back(std::move(tracking));
  }

  // Failure injection: the first operator whose name contains the configured one, in the configured subtask.
  if (failure != nullptr && failure->after_records >= 0 && !failure->operator_name.empty() &&
      failure->subtask == base.subtask_index) {
    failure_armed_ = !failure->after_completed_checkpoint;
    for (size_t i = 0; i < n; ++i) {
      if (vertex.operators[i].name.find(failure->operator_name) == std::string::npos) continue;
      fail_operator_ = static_cast<int>(i);
      fail_after_ = failure->after_records;
      fail_name_ = vertex.operators[i].name;
      if (i == 0 && source_head_ == nullptr) {
        fail_head_ = true;
        fail_after_ = failure->after_records;
      } else if (i == 0) {
        // A source receives nothing: it fails once it has emitted that many records.
        auto failing =
            std::make_unique<FailingOutput>(outputs_of_[0], vertex.operators[0].name, failure->after_records, &failure_armed_);
        outputs_of_[0] = failing.get();
        fail_source_output_ = failing.get();
        owned_outputs_.push_back(std::move(failing));
      } else {
        // The chaining output that feeds this operator (one per parent edge, also inside a fan-out).
        for (auto& owned : owned_outputs_) {
          auto* chaining = dynamic_cast<ChainingOutput*>(owned.get());
          if (chaining != nullptr && chaining->next() == operators_[i].get()) {
            chaining->setFailure(vertex.operators[i].name, failure->after_records, &failure_armed_);
          }
        }
      }
      break;
    }
  }

  // State: every operator gets its backends for the subtask's key groups, restored when the task restores.
  const state::KeyGroupRange range = state::KeyGroupRangeAssignment::computeKeyGroupRangeForOperatorIndex(
      base.max_parallelism, base.parallelism, base.subtask_index);
  states_.reserve(n);
  state::StateBackendOptions backend;
  if (base.config != nullptr) {
    backend = state::StateBackendOptions::fromConfiguration(*base.config, base.subtask_index);
    // Incremental checkpoints upload into the job's checkpoint directory (FsCheckpointStorage's layout).
    const std::string dir = base.config->getOptional(options::kCheckpointsDirectory).value_or("");
    if (!dir.empty() && job != nullptr && !job->job_id.empty()) {
      backend.checkpoint_job_directory =
          (std::filesystem::path(checkpoint::localFileSystemPath(dir)) / job->job_id).string();
    }
  }
  // The working directory names the job, the operator and the subtask.
  const std::string job_tag = job != nullptr ? job->job_id.substr(0, 8) : std::string();
  for (size_t i = 0; i < n; ++i) {
    const std::string& uid = vertex.operators[i].uid.empty() ? vertex.operators[i].name : vertex.operators[i].uid;
    const checkpoint::OperatorSubtaskState* restored = nullptr;
    if (restore != nullptr) {
      auto it = restore->find(uid);
      if (it != restore->end()) restored = &it->second;
    }
    state::StateBackendOptions options = backend;
    options.instance_name =
        job_tag.empty() ? fmt::format("{}-{}", uid, base.subtask_index) : fmt::format("{}-{}-{}", job_tag, uid, base.subtask_index);
    states_.push_back(
        std::make_unique<state::StreamOperatorStateContext>(uid, range, base.max_parallelism, restored, options));
    contexts_[i].uid = uid;
    contexts_[i].state = states_.back().get();
  }
}

bool OperatorChain::injectedFailurePending() const {
  if (fail_operator_ < 0 || failure_armed_) return false;
  const int64_t seen = fail_source_output_ != nullptr
                           ? fail_source_output_->seen()
                           : metrics_[fail_operator_].num_records_in.load(std::memory_order_relaxed);
  return seen > fail_after_;
}

void OperatorChain::throwInjectedFailureIfDue() const {
  if (fail_operator_ < 0 || !failure_armed_) return;
  const int64_t seen = fail_source_output_ != nullptr
                           ? fail_source_output_->seen()
                           : metrics_[fail_operator_].num_records_in.load(std::memory_order_relaxed);
  if (seen > fail_after_) {
    throw InjectedFailure(fmt::format(
        "Injected failure in '{}' after {} records, at the end of its input (sluice.test.fail-after-records)",
        fail_name_, seen));
  }
}

void OperatorChain::prepareSnapshotPreBarrier(int64_t checkpoint_id) {
  for (auto& op : operators_) op->prepareSnapshotPreBarrier(checkpoint_id);
}

checkpoint::TaskStateSnapshot OperatorChain::snapshotState(int64_t checkpoint_id, bool canonical) {
  checkpoint::TaskStateSnapshot out;
  for (auto& [uid, futures] : snapshotStateAsync(checkpoint_id, canonical)) {
    checkpoint::OperatorSubtaskState s = *futures.write();
    if (!s.empty()) out.emplace(uid, std::move(s));
  }
  return out;
}

std::vector<std::pair<std::string, state::OperatorSnapshotFutures>> OperatorChain::snapshotStateAsync(
    int64_t checkpoint_id, bool canonical) {
  std::vector<std::pair<std::string, state::OperatorSnapshotFutures>> out;
  out.reserve(operators_.size());
  for (size_t i = 0; i < operators_.size(); ++i) {
    operators_[i]->snapshotState(checkpoint_id);
    out.emplace_back(contexts_[i].uid, states_[i]->snapshotAsync(checkpoint_id, canonical));
  }
  return out;
}

void OperatorChain::notifyCheckpointComplete(int64_t checkpoint_id) {
  failure_armed_ = true;
  for (auto& op : operators_) op->notifyCheckpointComplete(checkpoint_id);
}

void OperatorChain::notifyCheckpointAborted(int64_t checkpoint_id) {
  for (auto& op : operators_) op->notifyCheckpointAborted(checkpoint_id);
}

void OperatorChain::emitFinalWatermark() {
  SLUICE_CHECK(source_output_ != nullptr, "emitFinalWatermark on a non-source chain");
  if (source_output_->maxWatermark() < Watermark::kMaxTimestamp) {
    if (source_output_->status() == WatermarkStatus::kIdle)
      source_output_->emitWatermarkStatus(WatermarkStatus::kActive);
    source_output_->emitWatermark(Watermark{Watermark::kMaxTimestamp});
  }
}

OperatorChain::~OperatorChain() = default;

void OperatorChain::open() {
  for (size_t k = operators_.size(); k-- > 0;) {
    operators_[k]->open(contexts_[k], outputs_of_[k]);
    ++opened_;
  }
}

void OperatorChain::endInput() {
  for (auto& op : operators_) op->endInput();
}

void OperatorChain::close(bool swallow) {
  if (closed_) return;
  closed_ = true;
  const size_t n = operators_.size();
  // Opened operators are the last `opened_` ones.
  for (size_t k = n - opened_; k < n; ++k) {
    if (swallow) {
      try {
        operators_[k]->close();
      } catch (...) {
      }
    } else {
      operators_[k]->close();
    }
  }
}

}  // namespace sluice::runtime
