#pragma once
/// The `filesystem` connector with the `csv` and `json` formats (Flink's FileSystemTableFactory, FileSource,
/// FileSink). Source: reads a file or every file under a directory; sink: writes csv or json part files
/// (PARTITIONED BY tables: into partition directories, see FileSystemSinkOperator).
///
/// Parallel reading (deterministic, every line read exactly once):
///  - `path` is a directory: the regular files under it (recursively; names starting with '.' or '_'
///    skipped, as Flink's default file filter) sorted by relative path, file k read whole by subtask
///    k % parallelism;
///  - `path` is a file: split into parallelism byte ranges [size*i/N, size*(i+1)/N); subtask i reads the
///    lines that start in its range. Error line numbers count the newlines before the range.
/// Files are memory-mapped and parsed in place (no per-line copies).
///
/// Sink (Flink's FileSink as used by the filesystem table sink in streaming mode): `path` is always a
/// directory, created with its parents when missing; a `path` that is a regular file is an error. Each
/// job's sink gets a random UUID at planning time (shared by its subtasks); subtask i writes part files
/// `<path>/part-<uuid>-<i>-<counter>.csv`, counter from 0, rolling to the next counter once a file exceeds
/// `sink.rolling-policy.file-size` (default 128mb). Earlier files in the directory are never touched, so
/// running a job twice appends (the source reading the directory sees both runs). A part file is written
/// under the hidden name `.part-<uuid>-<i>-<counter>.csv.inprogress` and becomes visible only by a rename
/// to its final name, so readers never see a half-written file (Flink's FileSink, flink-checkpointing.md
/// §5.1, §5.2: in-progress -> pending -> finished):
///  - snapshotState(n) closes the open part file (Flink's checkpoint rolling policy for the table sink):
///    it is now pending, recorded with checkpoint id n in the UNION operator list state
///    "FileSinkPendingFiles" (hidden name, final name); UNION "FileSinkRunIds": the part-file prefixes of the
///    runs the state has seen, so a restore in a new run (`sluice run -s`) removes the killed run's hidden files;
///  - notifyCheckpointComplete(m) renames every pending file of a checkpoint <= m to its final name;
///  - on restore every subtask commits every pending file of the restored state (their checkpoint
///    completed; the notification may have been lost). The rename is idempotent: a file already renamed,
///    by an earlier notification or by another subtask of the restore, is fine. Then it removes the
///    in-progress files of this sink that belong to the attempt that failed: those of subtask i, and of
///    subtasks j >= parallelism with j % parallelism == i (scale-in), not in the restored state; and it
///    continues the part counter after the highest part of subtask i on disk, so no committed file is
///    overwritten;
///  - endInput (a bounded input, also without checkpointing) commits everything still pending, as before.
/// A failed or cancelled subtask removes its open and closed-but-not-checkpointed files; files pending
/// for a checkpoint stay hidden until a restore commits them. So no visible file ever holds data of a
/// checkpoint that did not complete.
/// A subtask that receives no row leaves no file (Flink opens a part file on the first record). Rows are
/// buffered and written in large blocks.
/// Threading: operators are used by their task thread only; the counters are atomics readable anywhere.

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "connectors/csv_format.h"
#include "connectors/json_format.h"
#include "runtime/operators/row_source_reader_operator.h"
#include "runtime/operators/stream_operator.h"
#include "runtime/serialization/type_traits.h"
#include "runtime/state/operator_state_backend.h"
#include "runtime/state/stream_operator_state_context.h"
#include "table/catalog/table_factory.h"

namespace sluice::connectors {

/// "file:///a/b" -> "/a/b", "file:/a/b" -> "/a/b"; other paths unchanged (relative ones stay relative
/// to the current directory).
std::string stripFileScheme(const std::string& path);

/// What every source subtask needs: fixed at planning time, shared read-only.
struct FileSystemSourceSpec {
  std::string table_name;
  std::string path;          ///< as the user wrote it, scheme stripped (used in messages)
  std::string absolute_path; ///< resolved against the current directory at planning time
  types::RowType row_type;   ///< the table's physical row type (every field of a line)
  CsvFormatOptions csv;
  /// `format`: "csv", "json" or "debezium-json". The json formats read one object per line and never
  /// split a file (each file is read whole by one subtask, so the changes in a file stay in order).
  std::string format = "csv";
  JsonFormatOptions json;
  /// `source.path.regex-pattern` (empty: none). When `path` is a directory, only the files whose absolute
  /// path the regex matches as a whole are read (ECMAScript syntax, close to Java's for ordinary patterns);
  /// every non-hidden subdirectory is still descended, as Flink's NonSplittingRecursiveAllDirEnumerator.
  std::string path_regex;
  /// Physical fields emitted, ascending (projection push-down); empty emits every field.
  std::vector<int> projection;
  /// `lookup.join.cache.ttl` (ms, Flink's default 60 min): how long a lookup join uses a loaded copy of the
  /// table before it reads the files again.
  int64_t lookup_cache_ttl_ms = 60 * 60 * 1000;
  /// PARTITIONED BY columns (indexes into row_type): not in the files; their values come from the `k=v`
  /// directories of each file's path (unescaped; `default_partition_name`, a missing directory: NULL), as
  /// Flink's PartitionPathUtils#extractPartitionSpecFromPath.
  std::vector<int> partition_keys;
  std::string default_partition_name = "__DEFAULT_PARTITION__";  ///< `partition.default-name`
  /// The emitted row type: `row_type` restricted to `projection` (`row_type` when it is empty).
  types::RowType producedType() const;
  /// The columns of the files: row_type without the partition keys.
  types::RowType fileType() const;
  /// The projection over fileType() that the deserializer reads (empty: every field).
  std::vector<int> fileProjection() const;
};

/// A piece of work of the filesystem source (Flink's FileSourceSplit): one file, or the byte range
/// [from, to) of one file, whose reader reads the lines that start inside the range (a line starting
/// exactly at `from` belongs to it; the first one starting at or after `to` does not).
/// Its position (Flink's FileSourceSplit with a CheckpointedPosition): `offset` is the byte of the next
/// line to read and `line` its 1-based line number, so a restored reader continues after the last row
/// it emitted and reports path:line as before the restore.
struct FileSplit {
  std::string open_path;     ///< path passed to open(2)
  std::string display_path;  ///< path shown in error messages
  int64_t from = 0;          ///< first byte of the range
  int64_t to = -1;           ///< end of the range (exclusive); negative: the whole file
  int64_t offset = -1;       ///< start of the next line to read; negative: not started
  int64_t line = 0;          ///< line number of the line at `offset` (when offset >= 0)

  /// "<open_path>:<from>:<to>", the same before and after reading starts.
  std::string splitId() const;
};
SLUICE_TYPE(FileSplit, open_path, display_path, from, to, offset, line)

/// The filesystem source on the FLIP-27 interface. The enumerator assigns splits by subtask, as
/// Sluice always divided the work: a directory's files (sorted) round-robin over the subtasks; a single
/// csv file at parallelism p > 1 cut into p near-equal byte ranges, range i for subtask i; a json file
/// whole to subtask 0 (so the changes in a file stay in order).
class FileSystemSource final : public runtime::Source<types::RowBatch, FileSplit> {
 public:
  explicit FileSystemSource(std::shared_ptr<const FileSystemSourceSpec> spec) : spec_(std::move(spec)) {}
  /// The splits of each of `parallelism` subtasks. Throws UserError when the path does not exist or a
  /// directory cannot be listed.
  std::vector<std::vector<FileSplit>> splitsBySubtask(int parallelism) const;
  /// A SubtaskSplitEnumerator over splitsBySubtask (throws as it does).
  std::unique_ptr<runtime::SplitEnumerator<FileSplit>> createEnumerator(int parallelism) const override;
  /// The splits of splitsBySubtask(checkpointed_parallelism) over `parallelism` readers (list j to reader
  /// j % parallelism). Throws as splitsBySubtask does.
  std::unique_ptr<runtime::SplitEnumerator<FileSplit>> restoreEnumerator(int parallelism,
                                                                         int checkpointed_parallelism) const override;
  /// A FileSystemSourceReader.
  std::unique_ptr<runtime::SourceReader<types::RowBatch, FileSplit>> createReader(
      const runtime::SourceReaderContext& ctx) const override;

 private:
  std::shared_ptr<const FileSystemSourceSpec> spec_;
};

/// Reads the lines of its splits into RowBatches of at most `sluice.batch.size` +I rows (more for
/// debezium updates). Throws InputError "<file>:<line>: ..." on a bad row without
/// csv.ignore-parse-errors, UserError when a file cannot be opened or read; either after emitting the
/// rows read before the failure, so a sink has seen every row up to the bad one (as Flink's
/// record-at-a-time reader). Used by one task thread; the counters are atomics readable anywhere.
class FileSystemSourceReader final : public runtime::SourceReader<types::RowBatch, FileSplit> {
 public:
  FileSystemSourceReader(std::shared_ptr<const FileSystemSourceSpec> spec, const runtime::SourceReaderContext& ctx);
  ~FileSystemSourceReader() override;
  void addSplit(FileSplit split) override;
  /// Emits one batch; kEndOfInput once every assigned split was read.
  runtime::InputStatus pollNext(runtime::ReaderOutput<types::RowBatch>& output) override;
  /// The split being read (with the offset and line number of its next line) and the queued ones.
  std::vector<FileSplit> snapshotState(int64_t checkpoint_id) override;
  void close() override;

  /// Fields nulled plus rows dropped under csv.ignore-parse-errors so far (any thread).
  int64_t parseErrors() const { return parse_errors_.load(std::memory_order_relaxed); }
  /// Rows emitted so far (any thread).
  int64_t rowsEmitted() const { return rows_emitted_.load(std::memory_order_relaxed); }

 private:
  bool openNextSplit();
  void closeFile();
  size_t readJsonLines(types::RowBatch& batch, size_t max_rows);
  /// The rows read from a file of the current split with the split's partition values put in (the batch
  /// itself when the table is not partitioned).
  types::RowBatch withPartitions(types::RowBatch&& file_rows) const;

  std::shared_ptr<const FileSystemSourceSpec> spec_;
  std::unique_ptr<CsvRowDeserializer> deserializer_;
  std::unique_ptr<JsonRowDeserializer> json_deserializer_;
  std::deque<FileSplit> splits_;
  size_t batch_size_ = 1024;
  // The file being read: mapping, this split's range, cursor and line number of the cursor.
  const char* map_ = nullptr;
  size_t map_size_ = 0;
  std::string owned_data_;  ///< used instead of a mapping for files that cannot be mapped
  std::string_view data_;
  std::string display_path_;
  FileSplit current_;  ///< the split of the open file
  /// The partition columns of the open file's rows: one row each (a projected partition key), in order.
  std::vector<types::Column> partition_values_;
  bool file_open_ = false;
  size_t pos_ = 0;
  size_t range_end_ = 0;
  int64_t line_number_ = 1;
  std::atomic<int64_t> parse_errors_{0};
  std::atomic<int64_t> rows_emitted_{0};
};

/// One subtask of the filesystem source: the generic RowBatch source reader operator running a
/// FileSystemSource, with the reader's counters.
class FileSystemSourceOperator final : public runtime::RowSourceReaderOperator<FileSplit> {
 public:
  explicit FileSystemSourceOperator(std::shared_ptr<const FileSystemSourceSpec> spec)
      : RowSourceReaderOperator(std::make_shared<FileSystemSource>(std::move(spec))) {}
  /// Fields nulled plus rows dropped under csv.ignore-parse-errors so far (0 before open; any thread).
  int64_t parseErrors() const { return fileReader() ? fileReader()->parseErrors() : 0; }
  /// Rows emitted so far (0 before open; any thread).
  int64_t rowsEmitted() const { return fileReader() ? fileReader()->rowsEmitted() : 0; }

 private:
  const FileSystemSourceReader* fileReader() const { return static_cast<const FileSystemSourceReader*>(reader()); }
};

/// The source the planner gets for a filesystem table.
class FileSystemTableSource : public table::ScanTableSource {
 public:
  FileSystemTableSource(std::shared_ptr<const FileSystemSourceSpec> spec, std::optional<int> parallelism);
  std::shared_ptr<const runtime::StreamOperatorFactory> operatorFactory() const override;
  std::optional<int> parallelism() const override { return parallelism_; }
  /// A retract changelog for `debezium-json`, insert-only otherwise.
  table::ChangelogMode changelogMode() const override;
  bool isBounded() const override { return true; }
  std::string summary() const override;
  /// Projection push-down: every line is still split into all its fields (the field count is checked
  /// as before), but only `fields` are converted and emitted. Always supported; replaces an earlier
  /// projection. Throws InternalError on indexes that are out of range, unsorted or empty.
  bool applyProjection(const std::vector<int>& fields) override;
  /// The spec the operators get (tests).
  const FileSystemSourceSpec& spec() const { return *spec_; }
  /// A lookup join reads the table whole (Flink's FileSystemLookupFunction): every file of the path in
  /// order, through the reader of the scan (same parsing, `<file>:<line>` errors). Null for
  /// `debezium-json` (a changelog is no lookup table).
  std::shared_ptr<const table::LookupTableLoader> lookupLoader() const override;

 private:
  std::shared_ptr<const FileSystemSourceSpec> spec_;
  std::optional<int> parallelism_;
};

/// What every sink subtask needs; shared read-only by the subtasks of one job.
struct FileSystemSinkSpec {
  std::string table_name;
  std::string path;           ///< scheme stripped, as written (used in messages)
  std::string absolute_path;  ///< the directory the part files go into
  /// Random UUID of this sink, fixed at planning time: part file names start with `part-<run_id>-`.
  std::string run_id;
  /// `sink.rolling-policy.file-size` in bytes: a part file that has grown past it is closed before the
  /// next row, which starts the next part file.
  int64_t rolling_file_size = int64_t{128} << 20;
  types::RowType row_type;    ///< the table's physical columns (what the sink receives)
  /// `format`: "csv" or "json" (one object per line, Flink's json format); part files end in ".csv" / ".json".
  std::string format = "csv";
  CsvFormatOptions csv;
  JsonFormatOptions json;
  /// PARTITIONED BY columns (indexes into row_type, declared order); empty = one directory. Their values
  /// name the directories `k1=v1/k2=v2` (escapePathName) and are left out of the rows in the files.
  std::vector<int> partition_keys;
  /// `partition.default-name`: the directory name of a NULL or empty partition value.
  std::string default_partition_name = "__DEFAULT_PARTITION__";
  /// Partition commit (partitioned tables with `sink.partition-commit.policy.kind` = success-file only).
  bool success_file = false;
  std::string success_file_name = "_SUCCESS";  ///< `sink.partition-commit.success-file.name`
  int trigger = 0;                             ///< PartitionCommitTrigger (0 process-time, 1 partition-time)
  int64_t commit_delay_ms = 0;                 ///< `sink.partition-commit.delay`
  std::string timestamp_pattern;               ///< `partition.time-extractor.timestamp-pattern` ("" = first key)
  /// The columns written into the files: row_type without the partition keys.
  types::RowType dataType() const;
};

/// A random (version 4) UUID in the usual 8-4-4-4-12 lowercase hex form, as Java's UUID.randomUUID()
/// prints it. Draws from std::random_device; thread-safe.
std::string randomUuid();

/// One subtask of the filesystem sink. Accepts only +I rows (throws InternalError otherwise, since the
/// planner must have rejected an updating input).
///
/// Partitioned tables: each partition of a row has its own open part file (a bucket, Flink's Bucket)
/// under `<path>/<partition>/`; the part counter is one per subtask across partitions. At most 64 part
/// files are open at once: opening one more closes the oldest (it waits for the next commit like any
/// closed file). Every part file moves through in-progress -> pending -> committed as in the
/// unpartitioned case (see the file comment).
///
/// Partition commit with the success-file policy (Flink's PartitionCommitter, which runs as one task
/// behind the writers): a partition is committed, i.e. `<partition>/_SUCCESS` written, once every subtask
/// has made the files of a checkpoint visible and the trigger allows it (process-time: the partition was
/// first written at least `delay` ago; partition-time: the watermark of that checkpoint (the minimum over
/// the subtasks) is past the partition's time plus `delay`). The subtasks agree through small files in
/// the hidden directory `<path>/.partition-commit-<run>-<tag>/` (tag = the restored checkpoint, 0 on a
/// fresh start): after committing its files at a checkpoint completion, subtask i writes (rename) the file
/// `<i>`: the checkpoint it has committed through, its watermark at that checkpoint, whether it has ended,
/// and the partitions it made visible that have no success file yet; then it reads every subtask's file,
/// and writes the success file of each listed partition that every subtask has committed through and
/// that the trigger allows. Since each subtask writes before it reads, the last one sees everything. At
/// the end of a bounded input (every subtask ended) every listed partition is committed, whatever the
/// trigger, and the directory is removed. The partitions waiting for their commit are kept in the UNION
/// list state "FileSinkPartitions", so a restore commits them too.
class FileSystemSinkOperator : public runtime::StreamOperator {
 public:
  explicit FileSystemSinkOperator(std::shared_ptr<const FileSystemSinkSpec> spec);
  /// Closes and removes any in-progress file still open (a failed or cancelled subtask).
  ~FileSystemSinkOperator() override;
  /// Creates the directory (and its parents) when missing; on restore commits the restored pending files
  /// and removes the files of the failed attempt (see the file comment). Part files are opened on the
  /// first row. Throws UserError naming the path when `path` is a file, the directory cannot be created,
  /// or a restored pending file is neither at its hidden nor at its final name.
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override;
  /// Serializes the rows into the part file of their partition; rolls to the next part file when the
  /// current one exceeds the rolling size. Throws UserError naming the file on a write error.
  void processBatch(types::RowBatch&& batch) override;
  /// Records the watermark (for the partition-time trigger); does not forward it (a sink has no output).
  void processWatermark(runtime::Watermark mark) override;
  /// Closes the open part files: they are pending for `checkpoint_id`, recorded in the operator state with
  /// the ones not committed yet. Throws UserError naming the file on a write error.
  void snapshotState(int64_t checkpoint_id) override;
  /// Commits (renames to the final name) every pending file of a checkpoint <= `checkpoint_id`, then
  /// commits the partitions that are due (success files). Throws UserError naming the file when a rename
  /// or a write fails.
  void notifyCheckpointComplete(int64_t checkpoint_id) override;
  /// Writes the buffered rows and, without checkpointing, commits every part file of this subtask and
  /// its partitions. Throws UserError naming the file when a write or rename fails.
  void endInput() override;
  /// Closes the open files; files not committed and not pending for a checkpoint are removed.
  void close() override;
  /// Final path of this subtask's part file number `counter` in `partition` ("k=v/..."; "" = the table's
  /// directory) (valid after open).
  std::string partFilePath(int counter, const std::string& partition = "") const;
  /// Hidden in-progress path of this subtask's part file number `counter` (valid after open).
  std::string inProgressPath(int counter, const std::string& partition = "") const;
  /// The final paths committed so far (by restore, notifications and endInput), in commit order.
  const std::vector<std::string>& committedFiles() const { return committed_; }

  /// One partition made visible by a subtask and not yet committed: (subtask, checkpoint through which
  /// its files are visible, processing time it was first written (ms), partition directory).
  using PartitionEntry = std::tuple<int32_t, int64_t, int64_t, std::string>;

 private:
  /// (checkpoint id, hidden file name, final file name), names relative to the sink's directory.
  using PendingFile = std::tuple<int64_t, std::string, std::string>;
  /// An open in-progress part file of one partition.
  struct Bucket {
    int counter = 0;
    int fd = -1;
    int64_t bytes = 0;      ///< written to the file (excluding `buffer`)
    std::string buffer;     ///< serialized rows not yet written
    uint64_t opened = 0;    ///< order of opening (the oldest is closed when too many are open)
  };
  /// A closed part file awaiting its checkpoint.
  struct Finished {
    std::string partition;
    int counter = 0;
  };

  std::string relativeName(int counter, const std::string& partition, bool hidden) const;
  Bucket& bucketFor(const std::string& partition);
  void appendRow(const types::RowBatch& data, size_t row, std::string& out) const;
  void writeRows(const std::string& partition, const types::RowBatch& data, const std::vector<uint32_t>* rows);
  void flushBucket(const std::string& partition, Bucket& b);
  void finishBucket(const std::string& partition);
  void finishAll();
  void discardUncommitted();
  void commit(const std::string& hidden_name, const std::string& final_name);
  void notePartitionVisible(const std::string& final_name, int64_t checkpoint_id);
  void commitPartitions(int64_t committed_through, bool ended);
  std::string commitDirectory() const;
  void restore();

  std::unique_ptr<runtime::state::StreamOperatorStateContext> own_state_;  ///< when ctx.state is null
  runtime::state::PartitionableListState<PendingFile>* pending_state_ = nullptr;
  runtime::state::PartitionableListState<std::string>* run_ids_state_ = nullptr;  ///< "FileSinkRunIds"
  runtime::state::PartitionableListState<PartitionEntry>* partitions_state_ = nullptr;  ///< "FileSinkPartitions"
  runtime::state::PartitionableListState<int64_t>* checkpoint_state_ = nullptr;  ///< "FileSinkCheckpoint"
  std::vector<std::string> run_ids_;  ///< part-file prefixes of this sink's runs, this one included
  std::vector<PendingFile> pending_;  ///< closed part files of snapshotted checkpoints, not committed yet

  std::shared_ptr<const FileSystemSinkSpec> spec_;
  std::vector<int> data_columns_;  ///< the columns written into the files (not partition keys)
  std::unique_ptr<CsvRowSerializer> serializer_;
  std::unique_ptr<JsonRowSerializer> json_serializer_;
  std::string extension_;          ///< ".csv" or ".json"
  int counter_ = 0;                ///< part number of the next part file this subtask opens
  uint64_t opened_ = 0;
  std::map<std::string, Bucket> buckets_;  ///< open part files by partition ("" unpartitioned)
  std::vector<Finished> finished_;         ///< closed part files awaiting a checkpoint or endInput
  std::vector<std::string> committed_;
  // Partition commit (spec_->success_file).
  std::map<std::string, int64_t> created_;   ///< partitions written since their last commit: first write (ms)
  std::vector<PartitionEntry> visible_;      ///< this subtask's partitions made visible, not yet committed
  std::map<int64_t, int64_t> watermarks_;    ///< watermark at each snapshotted checkpoint
  int64_t watermark_ = INT64_MIN;
  int64_t commit_tag_ = 0;                   ///< the restored checkpoint (0: a fresh start)
  bool ended_ = false;
  bool final_marker_written_ = false;        ///< the partition commit file said "ended"
};

/// The sink the planner gets for a filesystem table (insert-only).
class FileSystemTableSink : public table::DynamicTableSink {
 public:
  FileSystemTableSink(std::shared_ptr<const FileSystemSinkSpec> spec, std::optional<int> parallelism);
  std::shared_ptr<const runtime::StreamOperatorFactory> operatorFactory() const override;
  std::optional<int> parallelism() const override { return parallelism_; }
  bool acceptsUpdates() const override { return false; }
  bool supportsPartitioning() const override { return true; }
  std::string summary() const override;
  /// The spec the operators get (tests).
  const FileSystemSinkSpec& spec() const { return *spec_; }

 private:
  std::shared_ptr<const FileSystemSinkSpec> spec_;
  std::optional<int> parallelism_;
};

/// Factory for `'connector' = 'filesystem'`.
class FileSystemTableFactory : public table::DynamicTableFactory {
 public:
  std::string identifier() const override { return "filesystem"; }
  std::set<std::string> supportedOptions() const override;
  /// Throws UserError when `path` or `format` is missing, the format is not csv, an option value is
  /// bad, or the path does not exist ("... does not exist", naming the path).
  std::unique_ptr<table::ScanTableSource> createSource(const table::ResolvedTable& table,
                                                       const Configuration& config) const override;
  /// Draws the sink's run UUID. Throws UserError when `path` or `format` is missing or bad, when
  /// `sink.rolling-policy.file-size` is not a positive memory size, or when `path` exists as a regular
  /// file ("... is a file; the filesystem sink writes part files into a directory").
  std::unique_ptr<table::DynamicTableSink> createSink(const table::ResolvedTable& table,
                                                      const Configuration& config) const override;
};

}  // namespace sluice::connectors
