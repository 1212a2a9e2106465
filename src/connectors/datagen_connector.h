#pragma once
/// The `datagen` connector (Flink's DataGenTableSourceFactory, RandomGeneratorVisitor,
/// SequenceGeneratorVisitor, DataGeneratorSource).
///  - `rows-per-second` (default 10000) is the rate of the whole source; subtask i gets
///    rate / parallelism (+1 for the first rate % parallelism subtasks). Throttling never blocks:
///    the reader returns kNothingAvailable (after at most a 1 ms pause) until rows are due.
///  - `number-of-rows`: total rows, split like the rate (subtask i gets n / p, +1 for i < n % p).
///    Unset: unbounded unless a field is a sequence.
///  - `fields.#.kind` = random (default) | sequence. A sequence needs `start` and `end` (inclusive);
///    subtask i emits start + i, start + i + p, ... (Flink's SequenceGenerator), so the union over the
///    subtasks is exactly start..end. The source ends when any sequence is exhausted.
///  - random: INT/BIGINT in [min, max] (defaults: the type's range), DOUBLE in [min, max), DECIMAL in
///    [min, max] clipped to the type's range, BOOLEAN, STRING/VARCHAR of `length` (default 100 for
///    STRING, n for VARCHAR(n)/CHAR(n)) lowercase hex characters (`var-len` picks a length 1..length),
///    TIMESTAMP and TIMESTAMP_LTZ = now minus a random duration up to `max-past` (default 0), DATE =
///    today and TIME = the time of day (ms), both on the machine's clock in its own zone (TZ, else
///    /etc/localtime) as Flink's LocalDate.now()/LocalTime.now(). `null-rate` in [0, 1]. A sequence of
///    DATE, TIME or a timestamp is a UserError, as in Flink, and so is an option a column's generator does
///    not read (`min` on a DATE, `max-past` on a STRING; Flink's validateUnconsumedKeys).
/// Random values use a fixed seed per subtask and field, so runs are repeatable (the time types follow
/// the clock). Threading: used by the task thread only.

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "runtime/operators/row_source_reader_operator.h"
#include "runtime/operators/stream_operator.h"
#include "runtime/serialization/type_traits.h"
#include "table/catalog/table_factory.h"

namespace sluice::connectors {

/// How one column is generated.
struct DataGenFieldSpec {
  enum class Kind { kRandom, kSequence };
  Kind kind = Kind::kRandom;
  types::LogicalType type;
  // random, integral / DECIMAL as unscaled at the column scale
  int64_t min_long = 0;
  int64_t max_long = 0;
  double min_double = 0;
  double max_double = 0;
  int64_t max_past_ms = 0;
  int32_t length = 100;
  bool var_len = false;
  double null_rate = 0;
  // sequence (values in the column's own unit; DECIMAL sequences count whole numbers)
  int64_t start = 0;
  int64_t end = 0;
};

/// The whole table's generation plan, shared read-only by the subtasks.
struct DataGenSpec {
  std::string table_name;
  types::RowType row_type;               ///< the table's physical row type
  std::vector<DataGenFieldSpec> fields;  ///< one per physical field
  int64_t rows_per_second = 10000;
  std::optional<int64_t> number_of_rows;
  /// Physical fields emitted, ascending (projection push-down); empty emits every field. Unprojected
  /// sequence fields still bound the number of rows.
  std::vector<int> projection;
  /// The emitted row type: `row_type` restricted to `projection` (`row_type` when it is empty).
  types::RowType producedType() const;
};

/// One subtask's share of the datagen work (Flink's DataGeneratorSource splits the row count the same
/// way): share `index` of `count`.
struct DataGenSplit {
  int index = 0;        ///< which share: sequences emit start + index, start + index + count, ...
  int count = 1;        ///< number of shares (the source's parallelism)
  int64_t rows = -1;    ///< number-of-rows share (n / count, +1 for index < n % count); -1 when unset
  int64_t rate = 1;     ///< rows-per-second share (same division, at least 1)
  int64_t emitted = 0;  ///< position: rows of this share already emitted (a restored split goes on from here)

  /// "datagen-<index>-of-<count>", the same at every position.
  std::string splitId() const;
};
SLUICE_TYPE(DataGenSplit, index, count, rows, rate, emitted)

/// The datagen source on the FLIP-27 interface: one split per subtask, split i assigned to subtask i.
class DataGenSource final : public runtime::Source<types::RowBatch, DataGenSplit> {
 public:
  explicit DataGenSource(std::shared_ptr<const DataGenSpec> spec) : spec_(std::move(spec)) {}
  /// The splits of `parallelism` subtasks, in subtask order.
  std::vector<DataGenSplit> splits(int parallelism) const;
  std::unique_ptr<runtime::SplitEnumerator<DataGenSplit>> createEnumerator(int parallelism) const override;
  /// The splits of `checkpointed_parallelism` subtasks over `parallelism` readers (split j to reader
  /// j % parallelism).
  std::unique_ptr<runtime::SplitEnumerator<DataGenSplit>> restoreEnumerator(int parallelism,
                                                                            int checkpointed_parallelism) const override;
  /// A DataGenSourceReader.
  std::unique_ptr<runtime::SourceReader<types::RowBatch, DataGenSplit>> createReader(
      const runtime::SourceReaderContext& ctx) const override;

 private:
  std::shared_ptr<const DataGenSpec> spec_;
};

/// Generates the rows of its splits, one after another. Throttling never blocks: pollNext returns
/// kNothingAvailable (after at most a 1 ms pause) until rows are due. A split given back from
/// snapshotState continues its sequences after the last emitted row; its random fields are reseeded
/// from the position, so they differ from an uninterrupted run (Flink's random generator is not
/// repeatable either). Used by one task thread.
class DataGenSourceReader final : public runtime::SourceReader<types::RowBatch, DataGenSplit> {
 public:
  DataGenSourceReader(std::shared_ptr<const DataGenSpec> spec, const runtime::SourceReaderContext& ctx);
  /// Starts the split, or queues it behind the current one. The rate clock of the first split started
  /// when the reader was created (the subtask's open); a later split's clock starts with it.
  void addSplit(DataGenSplit split) override;
  /// Emits the rows that are due (at most `sluice.batch.size`), kNothingAvailable when none is due
  /// yet, kEndOfInput when every split's rows or a sequence is exhausted.
  runtime::InputStatus pollNext(runtime::ReaderOutput<types::RowBatch>& output) override;
  /// The current split (with the rows emitted so far) and the queued ones.
  std::vector<DataGenSplit> snapshotState(int64_t checkpoint_id) override;

  /// Rows of the current split in total, or -1 when unbounded (valid after addSplit).
  int64_t rowLimit() const { return limit_; }

 private:
  struct FieldState {
    int64_t next = 0;       ///< sequence: next value
    int64_t remaining = 0;  ///< sequence: values left
    std::mt19937_64 rng;
  };
  void generate(types::RowBatch& batch, size_t rows);
  void startSplit(const DataGenSplit& split);

  std::shared_ptr<const DataGenSpec> spec_;
  types::RowType produced_type_;
  std::vector<int> emitted_fields_;  ///< physical field of each output column
  std::vector<FieldState> state_;    ///< per physical field
  size_t batch_size_ = 1024;
  bool needs_local_clock_ = false;  ///< a DATE or TIME column is emitted
  bool active_ = false;
  bool started_any_ = false;
  DataGenSplit current_;
  std::deque<DataGenSplit> queued_;
  int64_t base_emitted_ = 0;  ///< emitted_ when the current split started (rows before it are not due)
  int64_t rate_ = 0;
  int64_t limit_ = -1;
  int64_t emitted_ = 0;
  int64_t start_ns_ = 0;
  int stride_ = 1;
  std::string scratch_;
};

/// One subtask of the datagen source: the generic RowBatch source reader operator running a
/// DataGenSource.
using DataGenSourceOperator = runtime::RowSourceReaderOperator<DataGenSplit>;

/// The datagen source the planner gets.
class DataGenTableSource : public table::ScanTableSource {
 public:
  DataGenTableSource(std::shared_ptr<const DataGenSpec> spec, std::optional<int> parallelism);
  std::shared_ptr<const runtime::StreamOperatorFactory> operatorFactory() const override;
  std::optional<int> parallelism() const override { return parallelism_; }
  /// True with number-of-rows or any sequence field.
  bool isBounded() const override;
  std::string summary() const override;
  /// Projection push-down: generates only `fields`. A projected field gets the same values as without
  /// projection (its random generator is seeded by its physical index), and the row count is unchanged
  /// (unprojected sequences still end the source). Always supported; replaces an earlier projection.
  /// Throws InternalError on indexes that are out of range, unsorted or empty.
  bool applyProjection(const std::vector<int>& fields) override;
  /// The spec the operators get (tests).
  const DataGenSpec& spec() const { return *spec_; }

 private:
  std::shared_ptr<const DataGenSpec> spec_;
  std::optional<int> parallelism_;
};

/// Factory for `'connector' = 'datagen'`.
class DataGenTableFactory : public table::DynamicTableFactory {
 public:
  std::string identifier() const override { return "datagen"; }
  std::set<std::string> supportedOptions() const override;
  /// Throws UserError naming the table and option: unknown kind, a sequence without start/end,
  /// min > max, an unsupported column type, a bad number.
  std::unique_ptr<table::ScanTableSource> createSource(const table::ResolvedTable& table,
                                                       const Configuration& config) const override;
};

}  // namespace sluice::connectors
