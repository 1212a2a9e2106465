#pragma once
/// Operator interfaces (Flink's StreamOperator / OneInputStreamOperator / TwoInputStreamOperator /
/// SourceOperator), batch at a time. SQL operators take RowBatches (processBatch); DataStream operators take
/// ObjectBatches of C++ records (processObjects, and processObjects2 for the second input of a two-input
/// operator). An operator overrides the calls of the data it handles; the others throw InternalError.
/// Threading: every method is called only from the owning task's thread, so operators need no locks.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/error.h"
#include "graph/transformation.h"
#include "runtime/stream_element.h"

namespace sluice {
class Configuration;
}

namespace sluice::runtime {

class ObjectBatchSerializer;
namespace sort {
class ExternalSorter;
struct SortBound;
struct SorterOptions;
}
namespace state {
class StreamOperatorStateContext;
}
namespace checkpoint {
class BacklogStatusListener;
}

/// Where an operator sends its output: the next chained operator, or the task's record writer.
class Output {
 public:
  virtual ~Output() = default;
  /// Hands a batch downstream. Empty batches may be dropped by the callee.
  virtual void collect(types::RowBatch&& batch) = 0;
  /// Hands a batch of DataStream records downstream (its tag selects main or side output). Empty batches
  /// may be dropped. Default: InternalError (an output that carries only SQL rows).
  virtual void collectObjects(ObjectBatchPtr&& batch) {
    (void)batch;
    SLUICE_CHECK(false, "this output does not carry DataStream records");
  }
  virtual void emitWatermark(Watermark mark) = 0;
  /// Announces that the stream went IDLE or ACTIVE again (Flink's Output.emitWatermarkStatus). Outputs
  /// that lead somewhere forward it; the default drops it (outputs without a downstream, test collectors).
  virtual void emitWatermarkStatus(WatermarkStatus status) { (void)status; }
  /// Announces the backlog status of the records that follow (Flink's Output.emitRecordAttributes,
  /// FLIP-327). Outputs that lead somewhere forward it; the default drops it.
  virtual void emitRecordAttributes(RecordAttributes attributes) { (void)attributes; }
};

class ProcessingTimeService;

/// Counters an operator updates (read by progress reporting from other threads).
struct OperatorMetrics {
  std::atomic<int64_t> num_records_in{0};
  std::atomic<int64_t> num_records_out{0};
  /// Times a connector lost its external system (e.g. every Kafka broker) and reported it on stderr.
  std::atomic<int64_t> num_connection_outages{0};
  /// Flink's numLateRecordsDropped: rows a window operator dropped because every window they fall in was
  /// already past the watermark (plus allowed lateness) and no late-data side output takes them.
  std::atomic<int64_t> num_late_records_dropped{0};
  /// Sorted input (SortingBacklogDataInput): 1 while the input is being sorted or flushed, the records
  /// sorted and the bytes spilled to io.tmp.dirs, both over the job's life.
  std::atomic<int64_t> sorting_input{0};
  std::atomic<int64_t> num_records_sorted{0};
  std::atomic<int64_t> num_bytes_spilled{0};
  /// 1 while the records this operator emits are backlog (the last RecordAttributes a source or watermark
  /// assigner emitted said isBacklog: FLIP-309 enumerator status or FLIP-328 watermark lag), else 0.
  std::atomic<int64_t> backlog{0};
};

/// Facts about the running subtask, fixed for its lifetime.
struct OperatorContext {
  int subtask_index = 0;         ///< 0-based
  int parallelism = 1;
  int max_parallelism = 128;
  std::string task_name;         ///< e.g. "Source: flights -> Calc (2/4)"
  std::string operator_name;
  const Configuration* config = nullptr;  ///< job configuration, read-only
  OperatorMetrics* metrics = nullptr;     ///< never null once open() is called
  /// The task's processing-time timers; never null once open() is called by a StreamTask.
  ProcessingTimeService* processing_time_service = nullptr;
  /// The operator's stable identity in checkpoints and savepoints (Flink's OperatorID): the user's uid
  /// when set, else derived from the operator's place in the plan, so the same program restores.
  std::string uid;
  /// This operator's keyed and operator state backends, already restored when the task restores from a
  /// checkpoint (Flink's StreamOperatorStateContext). Set by a StreamTask before open(); every byte an
  /// operator needs after a failure lives there (null only in unit tests that drive an operator by hand).
  state::StreamOperatorStateContext* state = nullptr;
  /// The task takes periodic checkpoints (execution.checkpointing.interval), and after endInput it waits
  /// for one more to complete before it finishes (FLIP-147's final checkpoint): a two-phase-commit sink
  /// then commits its last data in notifyCheckpointComplete instead of at endInput. False without an
  /// interval, also when the job takes savepoints: a sink then commits at endInput (and on the
  /// notification of a stop-with-savepoint, the only savepoint that notifies).
  bool checkpointing = false;
  /// Where a source's enumerator reports backlog (FLIP-309): the checkpoint coordinator; null when the job
  /// takes no checkpoints or savepoints (BATCH). Thread-safe.
  checkpoint::BacklogStatusListener* backlog_listener = nullptr;
};

/// An operator with one logical input (a union of channels counts as one input).
class StreamOperator {
 public:
  virtual ~StreamOperator() = default;
  /// Called once before any element. `output` outlives the operator.
  virtual void open(const OperatorContext& ctx, Output* output) {
    ctx_ = ctx;
    output_ = output;
  }
  /// Processes a batch of rows (with their RowKinds) in order.
  virtual void processBatch(types::RowBatch&& batch) = 0;
  /// Processes a batch of DataStream records (the first input of a two-input operator). Default:
  /// InternalError.
  virtual void processObjects(ObjectBatchPtr&& batch) {
    (void)batch;
    SLUICE_CHECK(false, "operator '{}' does not take DataStream records", ctx_.operator_name);
  }
  /// Processes a batch of the second input of a two-input operator (Flink's processElement2). Default:
  /// InternalError.
  virtual void processObjects2(ObjectBatchPtr&& batch) {
    (void)batch;
    SLUICE_CHECK(false, "operator '{}' has no second input", ctx_.operator_name);
  }
  /// Event time advanced. Default: forward. Operators with timers fire them first.
  virtual void processWatermark(Watermark mark) { output_->emitWatermark(mark); }
  /// The input went IDLE or ACTIVE (its watermark no longer / again holds back event time; only the
  /// change is delivered). Default: forward (Flink's AbstractStreamOperator.processWatermarkStatus).
  /// Operators that generate their own watermarks may handle it themselves.
  virtual void processWatermarkStatus(WatermarkStatus status) { output_->emitWatermarkStatus(status); }
  /// The backlog status of the (only) input changed: the task's RecordAttributesCombiner delivers only
  /// changes. Default: forward (Flink's AbstractStreamOperator.processRecordAttributes). A keyed operator
  /// that sorts during backlog (FLIP-327) overrides it; it must still forward the attributes.
  virtual void processRecordAttributes(RecordAttributes attributes) { output_->emitRecordAttributes(attributes); }
  /// The backlog status of the first / second input of a two-input operator changed. Default (Flink's
  /// AbstractStreamOperator.processRecordAttributes1/2): keeps each input's last attributes (both start
  /// not-backlog) and emits their OR (backlog if either input is): the first time and on every change
  /// (repeats would be dropped downstream anyway).
  virtual void processRecordAttributes1(RecordAttributes attributes) { combineInputAttributes(0, attributes); }
  virtual void processRecordAttributes2(RecordAttributes attributes) { combineInputAttributes(1, attributes); }
  /// All input has been consumed (bounded input; Flink's BoundedOneInput.endInput). Flush buffered state.
  virtual void endInput() {}
  /// Releases resources; called after endInput on success, or alone on failure/cancel.
  virtual void close() {}

  // Checkpointing (Flink's AbstractStreamOperator / CheckpointListener). A checkpoint runs on the task
  // thread between two batches: prepareSnapshotPreBarrier on every operator (head first), the barrier
  // goes downstream, then snapshotState on every operator, then the task snapshots the backends of
  // `ctx_.state`. Notifications are best effort (a later checkpoint's completion implies the earlier).

  /// Emits what must precede the barrier (buffered bundles, pending output). May emit records.
  virtual void prepareSnapshotPreBarrier(int64_t checkpoint_id) { (void)checkpoint_id; }
  /// Writes what the operator keeps outside its state backends into them. Must not emit records.
  virtual void snapshotState(int64_t checkpoint_id) { (void)checkpoint_id; }
  /// Checkpoint `checkpoint_id` completed on every task (commit side effects up to it).
  virtual void notifyCheckpointComplete(int64_t checkpoint_id) { (void)checkpoint_id; }
  /// Checkpoint `checkpoint_id` was aborted (discard what was prepared for it).
  virtual void notifyCheckpointAborted(int64_t checkpoint_id) { (void)checkpoint_id; }

  // Sorted input (FLIP-327 backlog sorting, BATCH mode; see SortingBacklogDataInput): between the two
  // calls the operator gets its input grouped by key, one key's records in arrival order, and no
  // watermark, timer or checkpoint. It may keep the current key's state in memory and write it to the
  // backend once when the key changes (the point with RocksDB), and must have written everything by
  // endSortedInput.
  virtual void beginSortedInput() {}
  virtual void endSortedInput() {}

 protected:
  OperatorContext ctx_;
  Output* output_ = nullptr;

 private:
  void combineInputAttributes(int input, RecordAttributes attributes) {
    input_backlog_[input] = attributes.is_backlog;
    const bool backlog = input_backlog_[0] || input_backlog_[1];
    if (emitted_ && backlog == emitted_backlog_) return;
    emitted_ = true;
    emitted_backlog_ = backlog;
    output_->emitRecordAttributes(RecordAttributes{backlog});
  }
  bool input_backlog_[2] = {false, false};
  bool emitted_ = false;
  bool emitted_backlog_ = false;
};

/// Result of SourceOperator::emitNext.
enum class InputStatus { kMoreAvailable, kNothingAvailable, kEndOfInput };

/// A source: the head of a source task, driven by the task loop (FLIP-27's SourceOperator role).
class SourceOperator : public StreamOperator {
 public:
  void processBatch(types::RowBatch&&) override {}
  /// Emits at most one batch (and watermarks) to the output. Must not block for long: return
  /// kNothingAvailable when no data is ready (e.g. rate limiting) so the task can run mails.
  /// Throws UserError on bad input (with file:line).
  virtual InputStatus emitNext() = 0;
};

/// The records of one input of a keyed operator sorted by key before the operator sees them (Flink's
/// sorted inputs: SortingDataInput / MultiInputSortingDataInput in BATCH mode, SortingBacklogDataInput
/// during backlog, FLIP-327): the task adds the records that arrive and, later, hands them to the operator
/// grouped by (key group, key), one key's records in arrival order; records of one kind only (SQL rows or
/// DataStream records). The two inputs of a two-input operator have a sorter each, with equal key bytes
/// for equal keys, so the task merges them by key (peek, next with a bound).
/// Implementations: keyed_input_sorter.h. Threading: the task thread only.
class KeyedInputSorter {
 public:
  virtual ~KeyedInputSorter() = default;
  /// Adds the rows of a batch (SQL operators). Default: InternalError.
  virtual void addRows(const types::RowBatch& batch) {
    (void)batch;
    SLUICE_CHECK(false, "this sorter takes DataStream records");
  }
  /// Adds the records of a batch (DataStream operators). Default: InternalError.
  virtual void addObjects(const ObjectBatch& batch) {
    (void)batch;
    SLUICE_CHECK(false, "this sorter takes SQL rows");
  }
  /// No more records for this phase (ExternalSorter::finish).
  virtual void finish() = 0;
  /// The next up to `max_records` sorted records as one batch into `out` (a RowBatch or an
  /// ObjectBatchPtr, as added), with `bound` only those it admits; false when none were taken.
  virtual bool next(size_t max_records, StreamElement& out, const sort::SortBound* bound = nullptr) = 0;
  /// The sort key and timestamp (ms; kNoTimestamp for SQL rows) of the record next() returns next, without
  /// taking it (the key valid until next() or reset()); false when none is left. After finish() only.
  virtual bool peek(std::string_view& key, int64_t& timestamp) = 0;
  /// Drops what is left and the spill files; the sorter takes records of a new phase.
  virtual void reset() = 0;
  /// The sorter underneath (records, bytes spilled).
  virtual const sort::ExternalSorter& sorter() const = 0;
};

/// Creates the operator instance of one subtask. Shared by all subtasks; must be thread-safe (const).
class StreamOperatorFactory : public graph::OperatorFactory {
 public:
  virtual std::unique_ptr<StreamOperator> createOperator() const = 0;
  /// DataStream side outputs: the output tag this operator reads from the producer with StreamNode id
  /// `source_node_id` (0: its main output). Batches with another tag are dropped before they reach it.
  virtual int inputTag(int source_node_id) const {
    (void)source_node_id;
    return 0;
  }
  /// Two-input operators: how many of the head's input edges (JobVertex::inputs order) feed the first
  /// input; the rest feed the second (processObjects2). -1: a one-input operator.
  virtual int numFirstInputEdges() const { return -1; }
  /// The serializer of the object batches this operator emits with output tag `tag` (0: main output), used
  /// when they cross the network; nullptr for operators that emit SQL rows (RowBatch has its own form).
  virtual std::shared_ptr<const ObjectBatchSerializer> outputSerializer(int tag) const {
    (void)tag;
    return nullptr;
  }
  /// A keyed operator: the sorter its input `input` (0: the only or the first, 1: the second of a
  /// two-input operator) goes through in BATCH mode and during backlog (keyed_input_sorter.h), with
  /// `max_parallelism` key groups. nullptr (the default): never sorted; a two-input operator is sorted
  /// only when both of its inputs have a sorter.
  virtual std::unique_ptr<KeyedInputSorter> createKeyedInputSorter(const sort::SorterOptions& options,
                                                                   int32_t max_parallelism, int input = 0) const {
    (void)options;
    (void)max_parallelism;
    (void)input;
    return nullptr;
  }
};

/// A factory from a lambda, for operators that need no extra description.
template <typename Fn>
class LambdaOperatorFactory : public StreamOperatorFactory {
 public:
  LambdaOperatorFactory(Fn fn, bool is_source) : fn_(std::move(fn)), is_source_(is_source) {}
  std::unique_ptr<StreamOperator> createOperator() const override { return fn_(); }
  bool isSource() const override { return is_source_; }
  graph::ChainingStrategy chainingStrategy() const override {
    return is_source_ ? graph::ChainingStrategy::kHead : graph::ChainingStrategy::kAlways;
  }

 private:
  Fn fn_;
  bool is_source_;
};

/// makeOperatorFactory([captures]{ return std::make_unique<MyOp>(...); })
template <typename Fn>
std::shared_ptr<const StreamOperatorFactory> makeOperatorFactory(Fn fn, bool is_source = false) {
  return std::make_shared<LambdaOperatorFactory<Fn>>(std::move(fn), is_source);
}

}  // namespace sluice::runtime
