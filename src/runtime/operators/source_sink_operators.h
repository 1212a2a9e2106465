#pragma once
/// FLIP-27 sources and Sink-V2 sinks for DataStream records, and the operators that run them:
/// a Source creates one SplitEnumerator per execution (shared by the subtasks, as Flink's enumerator
/// runs once on the JobManager) and one SourceReader per subtask; a reader asks the enumerator for a split
/// whenever it has finished the ones it has (Flink's handleSplitRequest / pull-based assignment).
/// A Sink creates one SinkWriter per subtask. Threading: readers and writers are used by one task
/// thread; the enumerator is called under a lock from any reader's thread.
///
/// Checkpoints (FLIP-27's SourceOperator, flink-checkpointing.md §1.5). A reader's splits with their
/// current positions (SourceReader::snapshotState) are the operator ListState "SourceReaderState"
/// (SPLIT_DISTRIBUTE, each element the split's SimpleVersionedSerializer form), so on rescale they are
/// redistributed and a restored subtask adds them to its reader before its first poll. Sluice has no
/// coordinator checkpoint: the enumerator of a restored execution is created afresh and must be
/// deterministic (the same splits, with the same ids, for the same parallelism). So that it does not
/// hand out a split that some subtask already owned, every subtask also keeps the UNION list state
/// "SourceReaderClaimedSplits" of the ids of every split it was assigned before the checkpoint (in
/// progress or finished), and the UNION list "SourceEnumeratorParallelism" with the parallelism the
/// enumerator was created for (Source::restoreEnumerator recreates it with that layout). On restore
/// every subtask sees the whole claimed set and excludes it from the enumerator before its first
/// request (EnumeratorCoordinator::excludeSplits, idempotent); subtask 0 carries the restored set
/// forward into the next checkpoint, the others only what they claim after the restore. Splits assigned
/// to a subtask after its own snapshot are in nobody's state and are handed out again: correct, since
/// their records were not read before that checkpoint's cut. A finished bounded subtask therefore stays
/// finished after a restore: its splits are claimed and none of them comes back through the split state.

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <set>
#include <string_view>

#include "common/config.h"
#include "runtime/operators/execution_scope.h"
#include "runtime/operators/object_operators.h"
#include "runtime/operators/source_backlog_status.h"
#include "runtime/operators/source_coordinator_context.h"
#include "runtime/serialization/record_format.h"
#include "runtime/serialization/type_serializer.h"
#include "runtime/state/operator_state_backend.h"
#include "runtime/state/stream_operator_state_context.h"

namespace sluice::runtime {

/// Where a SourceReader emits records (Flink's ReaderOutput).
template <typename T>
class ReaderOutput {
 public:
  virtual ~ReaderOutput() = default;
  /// A record without a timestamp (a WatermarkStrategy's assigner may give it one).
  virtual void collect(T value) = 0;
  /// A record with its event timestamp (ms).
  virtual void collect(T value, int64_t timestamp) = 0;
  /// Per-split output (Flink's ReaderOutput.createOutputForSplit / SourceOutput.collect /
  /// releaseOutputForSplit): a reader that reads several splits side by side announces a split before
  /// its first record, emits each record for its split, and releases the split when it is finished, so
  /// the operator can keep a watermark per split. Outputs that do not track splits forward to collect().
  virtual void createOutputForSplit(const std::string& split_id) { (void)split_id; }
  virtual void collectForSplit(const std::string& split_id, T value) {
    (void)split_id;
    collect(std::move(value));
  }
  virtual void releaseOutputForSplit(const std::string& split_id) { (void)split_id; }
};

/// Facts a reader or writer gets about its subtask.
struct SourceReaderContext {
  int subtask_index = 0;
  int parallelism = 1;
  const Configuration* config = nullptr;
};
using SinkWriterContext = SourceReaderContext;

/// The versioned byte form of a split (Flink's SimpleVersionedSerializer, as returned by
/// Source.getSplitSerializer). Stateless; any thread.
template <typename SplitT>
class SimpleVersionedSerializer {
 public:
  virtual ~SimpleVersionedSerializer() = default;
  /// The version written with every serialized split.
  virtual int32_t getVersion() const = 0;
  virtual std::string serialize(const SplitT& split) const = 0;
  /// Reads bytes written by serialize() under `version`. Throws InputError on malformed bytes or an
  /// unknown version.
  virtual SplitT deserialize(int32_t version, std::string_view bytes) const = 0;
};

/// The default split serializer: TypeSerializer<SplitT> (version 1).
template <typename SplitT>
class TypeSplitSerializer final : public SimpleVersionedSerializer<SplitT> {
 public:
  int32_t getVersion() const override { return 1; }
  std::string serialize(const SplitT& split) const override {
    std::string out;
    DataOutputView w(out);
    TypeSerializer<SplitT>::serialize(split, w);
    return out;
  }
  SplitT deserialize(int32_t version, std::string_view bytes) const override {
    if (version != 1) throw InputError(fmt::format("split serializer version {} is not known (expected 1)", version));
    DataInputView in(bytes);
    SplitT split = TypeSerializer<SplitT>::deserialize(in);
    if (!in.atEnd()) throw InputError(fmt::format("{} trailing bytes after a split", bytes.size() - in.position()));
    return split;
  }
};

/// Hands out splits to readers (Flink's SplitEnumerator). Called under a lock: need not be thread-safe.
template <typename SplitT>
class SplitEnumerator {
 public:
  virtual ~SplitEnumerator() = default;
  /// Called once before the first request with the execution's context (Flink's SplitEnumerator.start;
  /// Flink passes the context at creation). The context outlives the enumerator; an enumerator that
  /// reports backlog (FLIP-309) keeps it. Default: nothing.
  virtual void start(SplitEnumeratorContext& context) { (void)context; }
  /// Reader `subtask` asks for work: the next split, or nullopt when there is none left (Flink's
  /// handleSplitRequest followed by signalNoMoreSplits).
  virtual std::optional<SplitT> handleSplitRequest(int subtask) = 0;
};

/// Reads the records of the splits assigned to one subtask (Flink's SourceReader).
template <typename T, typename SplitT>
class SourceReader {
 public:
  virtual ~SourceReader() = default;
  virtual void start() {}
  /// A new split to read (or a restored one, with its position).
  virtual void addSplit(SplitT split) = 0;
  /// Several splits, in order (Flink's addSplits; restored splits arrive this way before the first poll).
  virtual void addSplits(std::vector<SplitT> splits) {
    for (SplitT& s : splits) addSplit(std::move(s));
  }
  /// The splits not finished yet, each with the position of the next record to emit, so a reader given
  /// them back continues exactly after the last record emitted before this call (Flink's
  /// SourceReader.snapshotState). Called on the task thread between two polls. Default: UserError
  /// (the source does not support checkpoints yet).
  virtual std::vector<SplitT> snapshotState(int64_t checkpoint_id) {
    (void)checkpoint_id;
    throw UserError("this source does not support checkpoints yet");
  }
  /// Checkpoint `checkpoint_id` completed (Flink's notifyCheckpointComplete; e.g. commit offsets).
  virtual void notifyCheckpointComplete(int64_t checkpoint_id) { (void)checkpoint_id; }
  /// The enumerator's backlog status changed, or the reader opened while the enumerator had one (Flink's
  /// IsProcessingBacklogEvent, FLIP-309). On the task thread between two polls. Default: nothing.
  virtual void setIsProcessingBacklog(bool backlog) { (void)backlog; }
  /// Emits some records (at most about one batch; must not block for long). Returns kMoreAvailable when
  /// more records follow, kNothingAvailable when none are ready now (unbounded input), kEndOfInput when
  /// every assigned split is finished (the operator then asks for another split).
  virtual InputStatus pollNext(ReaderOutput<T>& output) = 0;
  virtual void close() {}
};

/// A FLIP-27 source of records of type T with splits of type SplitT (Flink's Source).
template <typename T, typename SplitT>
class Source {
 public:
  using OutputType = T;
  using SplitType = SplitT;
  virtual ~Source() = default;
  /// True for bounded sources (the job ends when every reader ends).
  virtual bool isBounded() const { return true; }
  /// The enumerator of one execution, for `parallelism` readers.
  virtual std::unique_ptr<SplitEnumerator<SplitT>> createEnumerator(int parallelism) const = 0;
  /// The reader of one subtask.
  virtual std::unique_ptr<SourceReader<T, SplitT>> createReader(const SourceReaderContext& ctx) const = 0;
  /// The enumerator of an execution restored from a checkpoint whose enumerator was created for
  /// `checkpointed_parallelism` readers, now serving `parallelism` readers (Flink's restoreEnumerator;
  /// here the checkpointed enumerator state is only that parallelism, see the file comment). It must hand
  /// out the same splits, with the same ids, as createEnumerator(checkpointed_parallelism) did; the
  /// caller skips the claimed ones. Default: createEnumerator(checkpointed_parallelism), right for
  /// enumerators that give a split to whichever reader asks; enumerators that assign by subtask index
  /// override it.
  virtual std::unique_ptr<SplitEnumerator<SplitT>> restoreEnumerator(int parallelism,
                                                                      int checkpointed_parallelism) const {
    (void)parallelism;
    return createEnumerator(checkpointed_parallelism);
  }
  /// The byte form of the splits in checkpoints (Flink's getSplitSerializer): TypeSplitSerializer when
  /// TypeSerializer<SplitT> exists, else nullptr (a checkpoint of the source then fails with UserError).
  virtual std::shared_ptr<const SimpleVersionedSerializer<SplitT>> getSplitSerializer() const {
    if constexpr (hasTypeSerializer<SplitT>()) {
      return std::make_shared<TypeSplitSerializer<SplitT>>();
    } else {
      return nullptr;
    }
  }
  /// The stable id of a split, independent of its position (Flink's SourceSplit.splitId). Default: the
  /// split's own splitId() member; UserError when it has none.
  virtual std::string splitId(const SplitT& split) const {
    if constexpr (requires { split.splitId(); }) {
      return split.splitId();
    } else {
      (void)split;
      throw UserError("this source's splits have no id; the source does not support checkpoints yet");
    }
  }
};

/// Writes the records of one subtask (Flink's SinkWriter).
template <typename T>
class SinkWriter {
 public:
  virtual ~SinkWriter() = default;
  /// One record and its timestamp (nullopt when it has none).
  virtual void write(const T& value, std::optional<int64_t> timestamp) = 0;
  /// Called at the end of input with `end_of_input` true (Flink's flush(endOfInput)).
  virtual void flush(bool end_of_input) { (void)end_of_input; }
  virtual void close() {}
};

/// A sink (Flink's Sink V2): creates a writer per subtask.
template <typename T>
class Sink {
 public:
  using InputType = T;
  virtual ~Sink() = default;
  virtual std::unique_ptr<SinkWriter<T>> createWriter(const SinkWriterContext& ctx) const = 0;
};

/// The enumerator of one execution behind a lock, with the ids of the splits it must not hand out
/// again (claimed before the checkpoint the execution restored), and its SourceCoordinatorContext.
/// Thread-safe.
template <typename SplitT>
class EnumeratorCoordinator {
 public:
  /// `split_id`: a split's stable id (Source::splitId); needed only once excludeSplits was called.
  /// `context`: the enumerator's context (null: one for an unnamed source of parallelism 1 that reports
  /// to nobody); the enumerator is started with it here.
  explicit EnumeratorCoordinator(std::unique_ptr<SplitEnumerator<SplitT>> e,
                                 std::function<std::string(const SplitT&)> split_id = nullptr,
                                 std::shared_ptr<SourceCoordinatorContext> context = nullptr)
      : enumerator_(std::move(e)),
        split_id_(std::move(split_id)),
        context_(context ? std::move(context) : std::make_shared<SourceCoordinatorContext>("", 1, nullptr)) {
    enumerator_->start(*context_);
  }
  /// The enumerator's context (backlog status for the readers).
  SourceCoordinatorContext& context() { return *context_; }
  /// The next split for reader `subtask` that is not excluded, or nullopt.
  std::optional<SplitT> request(int subtask) {
    std::lock_guard<std::mutex> lock(mu_);
    while (auto split = enumerator_->handleSplitRequest(subtask)) {
      if (excluded_.empty() || excluded_.count(split_id_(*split)) == 0) return split;
    }
    return std::nullopt;
  }
  /// Never hand out the splits with these ids (idempotent; every restored subtask calls it with the
  /// same claimed set before its first request).
  void excludeSplits(const std::vector<std::string>& ids) {
    std::lock_guard<std::mutex> lock(mu_);
    SLUICE_CHECK(ids.empty() || split_id_ != nullptr, "excluding splits needs the source's split ids");
    excluded_.insert(ids.begin(), ids.end());
  }

 private:
  std::mutex mu_;
  std::unique_ptr<SplitEnumerator<SplitT>> enumerator_;
  std::function<std::string(const SplitT&)> split_id_;
  std::shared_ptr<SourceCoordinatorContext> context_;
  std::set<std::string> excluded_;
};

/// The checkpointed side of a source subtask, shared by SourceReaderOperator and
/// RowSourceReaderOperator (see the file comment for the rule): joins or creates the enumerator in the
/// execution scope (restored with the checkpointed layout), reads the restored splits, records the
/// splits this subtask is assigned, and writes the three operator states on snapshot. Used by the task
/// thread only.
template <typename T, typename SplitT>
class SourceReaderSplitState {
 public:
  /// The states' names (Flink's SourceOperator uses "SourceReaderState" for the splits).
  static constexpr const char* kSplitsStateName = "SourceReaderState";
  static constexpr const char* kClaimedStateName = "SourceReaderClaimedSplits";
  static constexpr const char* kLayoutStateName = "SourceEnumeratorParallelism";

  /// Opens against `ctx`'s state (a private empty StreamOperatorStateContext over key groups
  /// [0, max_parallelism - 1] when ctx.state is null; ctx.state then points to it). Returns the restored
  /// splits of this subtask with their positions. Throws InputError naming the operator when a restored
  /// split does not decode, UserError when the source has no split serializer and state was restored.
  std::vector<SplitT> open(OperatorContext& ctx, const Source<T, SplitT>* source, ExecutionScope& scope,
                           int source_id) {
    source_ = source;
    if (ctx.state == nullptr) {
      own_state_ = std::make_unique<state::StreamOperatorStateContext>(
          ctx.uid, state::KeyGroupRange::of(0, ctx.max_parallelism - 1), ctx.max_parallelism, nullptr);
      ctx.state = own_state_.get();
    }
    operator_name_ = ctx.operator_name;
    auto& backend = ctx.state->operatorStateBackend();
    splits_ = &backend.getListState(SplitsDescriptor{kSplitsStateName});
    claimed_state_ = &backend.getUnionListState(ClaimedDescriptor{kClaimedStateName});
    layout_state_ = &backend.getUnionListState(LayoutDescriptor{kLayoutStateName});
    const bool restored = ctx.state->isRestored() && !layout_state_->get().empty();
    layout_parallelism_ = restored ? layout_state_->get().front() : ctx.parallelism;
    std::vector<std::string> restored_claimed = claimed_state_->get();
    if (ctx.subtask_index == 0) claimed_.insert(restored_claimed.begin(), restored_claimed.end());

    const int parallelism = ctx.parallelism;
    const int layout = layout_parallelism_;
    coordinator_ = scope.template shared<EnumeratorCoordinator<SplitT>>(
        source_id, [source, parallelism, layout, restored, uid = ctx.uid, listener = ctx.backlog_listener] {
          auto e = restored ? source->restoreEnumerator(parallelism, layout) : source->createEnumerator(parallelism);
          return std::make_shared<EnumeratorCoordinator<SplitT>>(
              std::move(e), [source](const SplitT& s) { return source->splitId(s); },
              std::make_shared<SourceCoordinatorContext>(uid, parallelism, listener));
        });
    coordinator_->excludeSplits(restored_claimed);
    // FLIP-309: the enumerator's backlog status, now and on every change, for the task thread to pick up.
    subtask_ = ctx.subtask_index;
    backlog_inbox_ = std::make_shared<std::atomic<int>>(kNoBacklogStatus);
    coordinator_->context().registerReader(subtask_, [inbox = backlog_inbox_](bool backlog) {
      inbox->store(backlog ? 1 : 0, std::memory_order_release);
    });

    std::vector<SplitT> out;
    if (splits_->get().empty()) return out;
    auto serializer = source->getSplitSerializer();
    SLUICE_USER_CHECK(serializer != nullptr, "'{}': the source has no split serializer; it cannot restore splits",
                      operator_name_);
    for (size_t i = 0; i < splits_->get().size(); ++i) {
      const auto& [version, bytes] = splits_->get()[i];
      try {
        out.push_back(serializer->deserialize(version, bytes));
      } catch (const InputError& e) {
        throw InputError(fmt::format("'{}': restored split {} of state '{}': {}", operator_name_, i, kSplitsStateName,
                                     e.what()));
      }
    }
    return out;
  }

  /// The enumerator's backlog status when it changed since the last call (or since open), else nullopt.
  std::optional<bool> backlogChange() {
    const int now = backlog_inbox_ ? backlog_inbox_->load(std::memory_order_acquire) : kNoBacklogStatus;
    if (now == seen_backlog_) return std::nullopt;
    seen_backlog_ = now;
    return now == 1;
  }
  /// The reader closed: it hears no more of the enumerator.
  void close() {
    if (coordinator_ && backlog_inbox_) coordinator_->context().unregisterReader(subtask_);
    backlog_inbox_.reset();
  }

  /// The next split from the enumerator for `subtask`, recorded as claimed.
  std::optional<SplitT> request(int subtask) {
    auto split = coordinator_->request(subtask);
    // Ids are taken at the next snapshot: sources that are never checkpointed need none.
    if (split) assigned_.push_back(*split);
    return split;
  }

  /// Writes the reader's splits and positions, the claimed ids and the layout into the operator states.
  /// Throws UserError naming the operator when the source does not support checkpoints.
  void snapshot(int64_t checkpoint_id, SourceReader<T, SplitT>& reader) {
    auto serializer = source_->getSplitSerializer();
    SLUICE_USER_CHECK(serializer != nullptr, "'{}': the source has no split serializer; it cannot be checkpointed",
                      operator_name_);
    std::vector<SplitT> splits;
    try {
      for (const SplitT& s : assigned_) claimed_.insert(source_->splitId(s));
      assigned_.clear();
      splits = reader.snapshotState(checkpoint_id);
    } catch (const UserError& e) {
      throw UserError(fmt::format("'{}': {}", operator_name_, e.what()));
    }
    splits_->clear();
    for (const SplitT& s : splits) splits_->add({serializer->getVersion(), serializer->serialize(s)});
    claimed_state_->update(std::vector<std::string>(claimed_.begin(), claimed_.end()));
    layout_state_->update({layout_parallelism_});
  }

 private:
  using SplitsDescriptor = state::ListStateDescriptor<std::pair<int32_t, std::string>>;
  using ClaimedDescriptor = state::ListStateDescriptor<std::string>;
  using LayoutDescriptor = state::ListStateDescriptor<int32_t>;

  const Source<T, SplitT>* source_ = nullptr;
  std::string operator_name_;
  std::unique_ptr<state::StreamOperatorStateContext> own_state_;
  state::PartitionableListState<std::pair<int32_t, std::string>>* splits_ = nullptr;
  state::PartitionableListState<std::string>* claimed_state_ = nullptr;
  state::PartitionableListState<int32_t>* layout_state_ = nullptr;
  std::shared_ptr<EnumeratorCoordinator<SplitT>> coordinator_;
  std::set<std::string> claimed_;   ///< ids of the splits claimed up to the last snapshot
  std::vector<SplitT> assigned_;    ///< splits assigned since the last snapshot
  int32_t layout_parallelism_ = 1;
  static constexpr int kNoBacklogStatus = -1;
  int subtask_ = 0;
  std::shared_ptr<std::atomic<int>> backlog_inbox_;  ///< -1: none reported; 0 / 1; written by the context
  int seen_backlog_ = kNoBacklogStatus;
};

/// Runs a Source's reader in a source task (Flink's SourceOperator), applying a WatermarkStrategy.
/// Records are cut into batches of `sluice.batch.size`. Idleness (WatermarkStatus, not in BATCH mode): the
/// subtask announces IDLE after the strategy's withIdleness timeout without records (checked on every
/// poll), or at once when an unbounded source has no split for it (Flink: a reader without splits is
/// idle; it waits for splits instead of ending); ACTIVE again before its next records or final watermark.
template <typename T, typename SplitT>
class SourceReaderOperator final : public SourceOperator {
 public:
  SourceReaderOperator(std::shared_ptr<const Source<T, SplitT>> source, WatermarkStrategy<T> strategy, int source_id,
                       bool batch_mode, std::shared_ptr<ExecutionScopeSlot> slot)
      : source_(std::move(source)),
        generator_(strategy),
        idleness_(batch_mode ? 0 : strategy.idle_timeout_ms),
        source_id_(source_id),
        batch_mode_(batch_mode),
        scope_slot_(std::move(slot)) {}

  /// Joins the enumerator, creates the reader and gives it the restored splits (see the file comment).
  void open(const OperatorContext& ctx, Output* output) override {
    SourceOperator::open(ctx, output);
    auto scope = scope_slot_ ? scope_slot_->current() : std::make_shared<ExecutionScope>();
    std::vector<SplitT> restored = split_state_.open(ctx_, source_.get(), *scope, source_id_);
    if (ctx.config != nullptr) batch_size_ = static_cast<size_t>(std::max(1, ctx.config->get(options::kBatchSize)));
    reader_ = source_->createReader(SourceReaderContext{ctx.subtask_index, ctx.parallelism, ctx.config});
    reader_->start();
    if (!restored.empty()) {
      reader_->addSplits(std::move(restored));
      has_split_ = true;
    }
    if (idleness_.enabled()) {
      SLUICE_CHECK(ctx.processing_time_service != nullptr, "'{}': withIdleness needs processing-time timers",
                   ctx.operator_name);
      idleness_.start(ctx.processing_time_service->currentProcessingTime());
    }
    if (ctx.config != nullptr && !batch_mode_) backlog_status_ = SourceBacklogStatus::forOperator(ctx);
  }

  /// The enumerator's backlog status as this subtask last heard it (FLIP-309; false before any report).
  bool isProcessingBacklog() const { return backlog_; }

  InputStatus emitNext() override {
    pickUpBacklogStatus();
    if (!has_split_) {
      auto split = split_state_.request(ctx_.subtask_index);
      if (!split) {
        if (source_->isBounded() || batch_mode_) return InputStatus::kEndOfInput;
        status_.markIdle(output_);
        return InputStatus::kNothingAvailable;
      }
      reader_->addSplit(std::move(*split));
      has_split_ = true;
    }
    // Again after the split request: a status set while handing out the split comes before its records.
    pickUpBacklogStatus();
    InputStatus status = InputStatus::kMoreAvailable;
    while (output_batch_.batch->size() < batch_size_) {
      status = reader_->pollNext(output_batch_);
      if (status != InputStatus::kMoreAvailable) break;
    }
    if (status == InputStatus::kEndOfInput) has_split_ = false;
    if (!output_batch_.batch->empty()) {
      auto batch = std::move(output_batch_.batch);
      output_batch_.batch = makeObjectBatch<T>();
      idleness_.activity();
      status_.markActive(output_);
      generator_.onBatch(*batch);
      const std::optional<int64_t> wm = batch_mode_ ? std::nullopt : generator_.nextWatermark();
      if (wm) {
        // Records before the first watermark are backlog when that watermark lags (FLIP-328).
        if (auto a = backlog_status_.beforeFirstRecords(*wm, ctx_.processing_time_service)) {
          output_->emitRecordAttributes(*a);
        }
      }
      output_->collectObjects(std::move(batch));
      if (wm) {
        output_->emitWatermark(Watermark{*wm});
        if (auto a = backlog_status_.onWatermark(*wm, ctx_.processing_time_service)) output_->emitRecordAttributes(*a);
      }
    }
    if (idleness_.enabled() && idleness_.checkIfIdle(ctx_.processing_time_service->currentProcessingTime())) {
      status_.markIdle(output_);
    }
    return status == InputStatus::kNothingAvailable ? InputStatus::kNothingAvailable : InputStatus::kMoreAvailable;
  }

  /// Writes the reader's splits with their positions (every emitted record is downstream already).
  void snapshotState(int64_t checkpoint_id) override { split_state_.snapshot(checkpoint_id, *reader_); }
  void notifyCheckpointComplete(int64_t checkpoint_id) override { reader_->notifyCheckpointComplete(checkpoint_id); }

  /// Hands a backlog status the enumerator reported since the last call to the reader (FLIP-309).
  void pickUpBacklogStatus() {
    if (auto backlog = split_state_.backlogChange()) {
      backlog_ = *backlog;
      reader_->setIsProcessingBacklog(backlog_);
      if (auto attributes = backlog_status_.setProcessingBacklog(backlog_)) output_->emitRecordAttributes(*attributes);
    }
  }
  /// A finished source processes no backlog: RecordAttributes(not backlog) when it last announced backlog.
  void endInput() override {
    if (auto attributes = backlog_status_.endOfInput()) output_->emitRecordAttributes(*attributes);
  }

  void close() override {
    split_state_.close();
    if (reader_) reader_->close();
  }

 private:
  struct BatchOutput final : ReaderOutput<T> {
    std::unique_ptr<TypedObjectBatch<T>> batch = makeObjectBatch<T>();
    void collect(T value) override { batch->add(std::move(value)); }
    void collect(T value, int64_t timestamp) override { batch->add(std::move(value), timestamp); }
  };

  std::shared_ptr<const Source<T, SplitT>> source_;
  WatermarkGeneratorState<T> generator_;
  IdlenessTimer idleness_;
  WatermarkStatusOutput status_;
  int source_id_;
  /// What goes downstream as RecordAttributes: the enumerator's status (FLIP-309) OR the watermark lag (FLIP-328).
  SourceBacklogStatus backlog_status_;
  bool batch_mode_;
  std::shared_ptr<ExecutionScopeSlot> scope_slot_;
  SourceReaderSplitState<T, SplitT> split_state_;
  std::unique_ptr<SourceReader<T, SplitT>> reader_;
  BatchOutput output_batch_;
  size_t batch_size_ = 1024;
  bool has_split_ = false;
  bool backlog_ = false;
};

/// Runs a Sink's writer (Flink's SinkWriterOperator).
template <typename T>
class SinkWriterOperator final : public ObjectOperator {
 public:
  explicit SinkWriterOperator(std::shared_ptr<const Sink<T>> sink) : sink_(std::move(sink)) {}
  void open(const OperatorContext& ctx, Output* output) override {
    ObjectOperator::open(ctx, output);
    writer_ = sink_->createWriter(SinkWriterContext{ctx.subtask_index, ctx.parallelism, ctx.config});
  }
  void processObjects(ObjectBatchPtr&& batch) override {
    const auto& in = batch->as<T>();
    for (size_t i = 0; i < in.size(); ++i) {
      const int64_t ts = in.timestamp(i);
      writer_->write(in.value(i), ts == kNoTimestamp ? std::nullopt : std::optional<int64_t>(ts));
    }
    addCount(in.size());
  }
  void endInput() override { writer_->flush(true); }
  void close() override {
    if (writer_) writer_->close();
    ObjectOperator::close();
  }

 private:
  void addCount(size_t n) {
    auto& c = ctx_.metrics->num_records_out;
    c.store(c.load(std::memory_order_relaxed) + static_cast<int64_t>(n), std::memory_order_relaxed);
  }
  std::shared_ptr<const Sink<T>> sink_;
  std::unique_ptr<SinkWriter<T>> writer_;
};

/// Serialises writes of all print sinks of the process.
std::mutex& printMutex();

/// print(): Flink's PrintSink format: "identifier:N> record" where N = subtask + 1 is shown only when the
/// sink's parallelism is > 1 ("identifier> " / "N> " / nothing otherwise). To stdout or stderr.
template <typename T>
class PrintSink final : public Sink<T> {
 public:
  explicit PrintSink(std::string identifier = "", bool to_stderr = false)
      : identifier_(std::move(identifier)), to_stderr_(to_stderr) {}

  class Writer final : public SinkWriter<T> {
   public:
    Writer(std::string prefix, std::FILE* out) : prefix_(std::move(prefix)), out_(out) {}
    void write(const T& value, std::optional<int64_t>) override {
      buffer_ += prefix_;
      formatRecord(value, buffer_);
      buffer_.push_back('\n');
      if (buffer_.size() >= 16384) flush(false);
    }
    void flush(bool) override {
      if (buffer_.empty()) return;
      std::lock_guard<std::mutex> lock(printMutex());
      std::fwrite(buffer_.data(), 1, buffer_.size(), out_);
      std::fflush(out_);
      buffer_.clear();
    }
    void close() override { flush(true); }

   private:
    std::string prefix_;
    std::FILE* out_;
    std::string buffer_;
  };

  std::unique_ptr<SinkWriter<T>> createWriter(const SinkWriterContext& ctx) const override {
    std::string prefix = identifier_;
    if (ctx.parallelism > 1) {
      if (!prefix.empty()) prefix += ":";
      prefix += std::to_string(ctx.subtask_index + 1);
    }
    if (!prefix.empty()) prefix += "> ";
    return std::make_unique<Writer>(std::move(prefix), to_stderr_ ? stderr : stdout);
  }

 private:
  std::string identifier_;
  bool to_stderr_;
};

/// Records gathered by a collect sink from all its subtasks (thread-safe).
template <typename T>
class CollectedValues {
 public:
  void add(const TypedObjectBatch<T>& batch, int subtask) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < batch.size(); ++i) {
      values_.push_back(batch.value(i));
      timestamps_.push_back(batch.timestamp(i));
      subtasks_.push_back(subtask);
    }
  }
  /// Everything collected so far, in arrival order (per subtask in order; subtasks interleaved).
  std::vector<T> values() const {
    std::lock_guard<std::mutex> lock(mu_);
    return values_;
  }
  /// Timestamps of values() (kNoTimestamp when none).
  std::vector<int64_t> timestamps() const {
    std::lock_guard<std::mutex> lock(mu_);
    return timestamps_;
  }
  /// The sink subtask that received each of values().
  std::vector<int> subtasks() const {
    std::lock_guard<std::mutex> lock(mu_);
    return subtasks_;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    values_.clear();
    timestamps_.clear();
    subtasks_.clear();
  }

 private:
  mutable std::mutex mu_;
  std::vector<T> values_;
  std::vector<int64_t> timestamps_;
  std::vector<int> subtasks_;
};

/// Appends every record to a CollectedValues (tests, examples).
template <typename T>
class CollectSinkOperator final : public ObjectOperator {
 public:
  explicit CollectSinkOperator(std::shared_ptr<CollectedValues<T>> target) : target_(std::move(target)) {}
  void processObjects(ObjectBatchPtr&& batch) override { target_->add(batch->as<T>(), ctx_.subtask_index); }

 private:
  std::shared_ptr<CollectedValues<T>> target_;
};

}  // namespace sluice::runtime
