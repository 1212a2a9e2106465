#pragma once
/// OperatorChain: the operators of one JobVertex in one subtask, wired by Outputs (Flink's OperatorChain):
/// a chained edge is a direct call into the next operator (no copy), a fan-out copies the batch for all
/// but the last output, and a network edge ends in a RecordWriterOutput. Counts records in/out per operator.
/// Built, used and destroyed on the task thread.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/job_graph.h"
#include "runtime/checkpoint/checkpoint_types.h"
#include "runtime/network/record_writer.h"
#include "runtime/operators/stream_operator.h"
#include "runtime/operators/two_input_row_operator.h"
#include "runtime/state/stream_operator_state_context.h"

namespace sluice::runtime {

/// Adds `n` to a counter that only the task thread writes (no atomic read-modify-write needed).
inline void addCount(std::atomic<int64_t>& counter, int64_t n) {
  counter.store(counter.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

namespace state {
class StreamOperatorStateContext;
}

/// The failure `sluice.test.fail-operator` / `sluice.test.fail-after-records` inject: the named operator's
/// subtask throws it once it has received that many records (a source: emitted) and, when checkpointing
/// is on, a checkpoint has completed in this attempt (Flink's FailingSource gates its failure the same
/// way), so tests drive recovery deterministically. Not a UserError: a restart strategy restarts the job
/// from its latest checkpoint.
class InjectedFailure : public SluiceError {
 public:
  using SluiceError::SluiceError;
};

/// Where and when a chain throws InjectedFailure (see the config keys in common/config.h).
struct FailureInjection {
  std::string operator_name;  ///< an operator name or a part of it; empty: no failure
  int subtask = 0;
  int64_t after_records = -1;  ///< < 0: no failure
  bool after_completed_checkpoint = false;  ///< also wait for a completed checkpoint of this attempt
};

/// The running operators of one subtask of a vertex.
class OperatorChain {
 public:
  /// Instantiates every operator of `vertex` from its factory (which must be a StreamOperatorFactory;
  /// a source vertex's head must be a SourceOperator). `writers[k]` writes JobGraph edge `vertex.outputs[k]`;
  /// `metrics[i]` belongs to operator i and outlives the chain. `base` carries the subtask facts; the
  /// operator name is filled in per operator. Throws InternalError on a wrong factory type.
  /// `job` (optional) lets network outputs drop object batches of side-output tags their consumer does
  /// not read (StreamOperatorFactory::inputTag); without it every network output takes the main output.
  /// `restore` (optional): the subtask's state by operator uid, restored into each operator's
  /// StreamOperatorStateContext before open. `failure` (optional): see FailureInjection.
  OperatorChain(const graph::JobVertex& vertex, std::vector<RecordWriter*> writers, const OperatorContext& base,
                OperatorMetrics* metrics, const graph::JobGraph* job = nullptr,
                const checkpoint::TaskStateSnapshot* restore = nullptr, const FailureInjection* failure = nullptr);
  ~OperatorChain();
  OperatorChain(const OperatorChain&) = delete;
  OperatorChain& operator=(const OperatorChain&) = delete;

  /// Opens all operators, tail first (Flink's order: downstream is ready before upstream emits).
  void open();
  /// Feeds a batch to the head (counts its records in).
  void processBatch(types::RowBatch&& batch) {
    countHeadInput(static_cast<int64_t>(batch.numRows()));
    head_->processBatch(std::move(batch));
  }
  /// Feeds a batch to the head's second input (two-input SQL heads, e.g. a join).
  void processBatch2(types::RowBatch&& batch) {
    countHeadInput(static_cast<int64_t>(batch.numRows()));
    auto* two_input = dynamic_cast<TwoInputRowOperator*>(head_);
    SLUICE_CHECK(two_input != nullptr, "the head operator has no second input for rows");
    two_input->processBatch2(std::move(batch));
  }
  /// Feeds a batch of DataStream records to the head's first (or only) input.
  void processObjects(ObjectBatchPtr&& batch) {
    countHeadInput(static_cast<int64_t>(batch->size()));
    head_->processObjects(std::move(batch));
  }
  /// Feeds a batch of DataStream records to the head's second input (two-input heads).
  void processObjects2(ObjectBatchPtr&& batch) {
    countHeadInput(static_cast<int64_t>(batch->size()));
    head_->processObjects2(std::move(batch));
  }
  /// At the end of input: the injected failure has seen its records and waits for a completed checkpoint
  /// (the task keeps running mails until it comes, then calls throwInjectedFailureIfDue).
  bool injectedFailurePending() const;
  /// At the end of input: throws the InjectedFailure whose records were seen and whose checkpoint came.
  void throwInjectedFailureIfDue() const;
  /// prepareSnapshotPreBarrier on every operator, head first.
  void prepareSnapshotPreBarrier(int64_t checkpoint_id);
  /// snapshotState on every operator, then the synchronous snapshot of each operator's state backends;
  /// operators without state are left out. `canonical` (savepoints, a finished task's final state):
  /// never a RocksDB incremental snapshot.
  checkpoint::TaskStateSnapshot snapshotState(int64_t checkpoint_id, bool canonical = false);
  /// The synchronous part of snapshotState (Flink's StreamTask.checkpointState up to the
  /// AsyncCheckpointRunnable): snapshotState on every operator, then the synchronous part of each
  /// operator's backends, by operator uid; every operator is listed, and the futures' write() may run on
  /// any thread.
  std::vector<std::pair<std::string, state::OperatorSnapshotFutures>> snapshotStateAsync(int64_t checkpoint_id,
                                                                                          bool canonical = false);
  void notifyCheckpointComplete(int64_t checkpoint_id);
  void notifyCheckpointAborted(int64_t checkpoint_id);
  /// Feeds an advanced task watermark to the head.
  void processWatermark(Watermark mark) { head_->processWatermark(mark); }
  /// Feeds a change of the task's input status (IDLE / ACTIVE) to the head.
  void processWatermarkStatus(WatermarkStatus status) { head_->processWatermarkStatus(status); }
  /// The head's input arrives grouped by key from here until endSortedInput (SortingBacklogDataInput).
  void beginSortedInput() { head_->beginSortedInput(); }
  void endSortedInput() { head_->endSortedInput(); }
  /// Feeds a change of the task's (one-input head) or an input's (two-input head: `input` 1 or 2) backlog
  /// status to the head (processRecordAttributes / processRecordAttributes1/2).
  void processRecordAttributes(RecordAttributes attributes, int input = 0) {
    if (input == 1) head_->processRecordAttributes1(attributes);
    else if (input == 2) head_->processRecordAttributes2(attributes);
    else head_->processRecordAttributes(attributes);
  }
  /// The head as a source, or nullptr when the vertex is not a source.
  SourceOperator* sourceHead() const { return source_head_; }
  /// Source chains: emits Watermark::kMaxTimestamp through the head's output unless the source already
  /// emitted it (Flink's final watermark at the end of a bounded source), after an ACTIVE when the source
  /// had announced IDLE.
  void emitFinalWatermark();
  /// endInput on every operator, head first (Flink's finishOperators order).
  void endInput();
  /// close on every opened operator, head first. With `swallow`, exceptions are dropped (failure path).
  void close(bool swallow);

 private:
  class WatermarkTrackingOutput;
  class FailingOutput;
  void countHeadInput(int64_t n);

  std::vector<std::unique_ptr<StreamOperator>> operators_;
  std::vector<std::unique_ptr<Output>> owned_outputs_;
  std::vector<Output*> outputs_of_;  ///< the Output handed to operator i
  std::vector<OperatorContext> contexts_;
  OperatorMetrics* metrics_;
  StreamOperator* head_ = nullptr;
  SourceOperator* source_head_ = nullptr;
  WatermarkTrackingOutput* source_output_ = nullptr;
  size_t opened_ = 0;  ///< operators opened, counted from the tail
  std::vector<std::unique_ptr<state::StreamOperatorStateContext>> states_;  ///< per operator
  bool fail_head_ = false;
  int64_t fail_after_ = -1;
  int fail_operator_ = -1;  ///< index of the operator of the injected failure
  std::string fail_name_;
  FailingOutput* fail_source_output_ = nullptr;
  /// False while the injected failure waits for a completed checkpoint (FailureInjection).
  bool failure_armed_ = true;
  bool closed_ = false;
};

}  // namespace sluice::runtime
