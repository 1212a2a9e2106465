#pragma once
/// FLIP-27 sources and Sink-V2 sinks for DataStream records, and the operators that run them:
/// a Source creates one SplitEnumerator per execution (shared by the subtasks, as Flink's enumerator
/// runs once on the JobManager) and one SourceReader per subtask; a reader asks the enumerator for a split
/// whenever it has finished the ones it has (Flink's handleSplitRequest / pull-based assignment).
/// A Sink creates one SinkWriter per subtask. Threading: readers and writers are used by one task
/// thread; the enumerator is called under a lock from any reader's thread.

#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/config.h"
#include "runtime/operators/object_operators.h"
#include "runtime/serialization/record_format.h"

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

/// Hands out splits to readers (Flink's SplitEnumerator). Called under a lock: need not be thread-safe.
template <typename SplitT>
class SplitEnumerator {
 public:
  virtual ~SplitEnumerator() = default;
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
  /// A new split to read.
  virtual void addSplit(SplitT split) = 0;
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

/// The enumerator of one execution behind a lock.
template <typename SplitT>
class EnumeratorCoordinator {
 public:
  explicit EnumeratorCoordinator(std::unique_ptr<SplitEnumerator<SplitT>> e) : enumerator_(std::move(e)) {}
  std::optional<SplitT> request(int subtask) {
    std::lock_guard<std::mutex> lock(mu_);
    return enumerator_->handleSplitRequest(subtask);
  }

 private:
  std::mutex mu_;
  std::unique_ptr<SplitEnumerator<SplitT>> enumerator_;
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

  void open(const OperatorContext& ctx, Output* output) override {
    SourceOperator::open(ctx, output);
    auto scope = scope_slot_ ? scope_slot_->current() : std::make_shared<ExecutionScope>();
    const int parallelism = ctx.parallelism;
    const Source<T, SplitT>* source = source_.get();
    coordinator_ = scope->template shared<EnumeratorCoordinator<SplitT>>(source_id_, [source, parallelism] {
      return std::make_shared<EnumeratorCoordinator<SplitT>>(source->createEnumerator(parallelism));
    });
    if (ctx.config != nullptr) batch_size_ = static_cast<size_t>(std::max(1, ctx.config->get(options::kBatchSize)));
    reader_ = source_->createReader(SourceReaderContext{ctx.subtask_index, ctx.parallelism, ctx.config});
    reader_->start();
    if (idleness_.enabled()) {
      SLUICE_CHECK(ctx.processing_time_service != nullptr, "'{}': withIdleness needs processing-time timers",
                   ctx.operator_name);
      idleness_.start(ctx.processing_time_service->currentProcessingTime());
    }
  }

  InputStatus emitNext() override {
    if (!has_split_) {
      auto split = coordinator_->request(ctx_.subtask_index);
      if (!split) {
        if (source_->isBounded() || batch_mode_) return InputStatus::kEndOfInput;
        status_.markIdle(output_);
        return InputStatus::kNothingAvailable;
      }
      reader_->addSplit(std::move(*split));
      has_split_ = true;
    }
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
      output_->collectObjects(std::move(batch));
      if (auto wm = generator_.nextWatermark(); wm && !batch_mode_) output_->emitWatermark(Watermark{*wm});
    }
    if (idleness_.enabled() && idleness_.checkIfIdle(ctx_.processing_time_service->currentProcessingTime())) {
      status_.markIdle(output_);
    }
    return status == InputStatus::kNothingAvailable ? InputStatus::kNothingAvailable : InputStatus::kMoreAvailable;
  }

  void close() override {
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
  bool batch_mode_;
  std::shared_ptr<ExecutionScopeSlot> scope_slot_;
  std::shared_ptr<EnumeratorCoordinator<SplitT>> coordinator_;
  std::unique_ptr<SourceReader<T, SplitT>> reader_;
  BatchOutput output_batch_;
  size_t batch_size_ = 1024;
  bool has_split_ = false;
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
