#pragma once
/// An external merge sorter of (key bytes, value bytes) records (Flink's ExternalSorter with its
/// NormalizedKeySorter in-memory buffer and SpillingThread / merge of sorted runs): records are kept in a
/// memory buffer of at most `SorterOptions::memory_bytes`; a full buffer is sorted and spilled as a run
/// to a file under `io.tmp.dirs`; finish() sorts what is left in memory and next() merges it with the
/// runs. Order: key bytes compared as unsigned bytes (a shorter key before a longer one it prefixes), then
/// arrival order: the sort is stable, so the records of one key come out in the order they were added.
/// Used by the backlog sorting of keyed inputs (FLIP-327, SortingBacklogDataInput) and by sort-based BATCH
/// operators. Threading: one thread at a time (the task thread); not thread-safe.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {
class Configuration;
}

namespace sluice::runtime::sort {

/// How a sorter works; `fromConfiguration` reads Flink's keys.
struct SorterOptions {
  /// Bytes of the in-memory buffer (records plus their index entries) before a run is spilled
  /// (`execution.sorted-inputs.memory`, 128 mb: Flink's managed memory for sorted inputs). At least one
  /// record is always buffered, whatever its size.
  int64_t memory_bytes = 128LL << 20;
  /// Directories for spill files (`io.tmp.dirs`): the sorter's own directory is made in the first one
  /// (empty: the system temp dir).
  std::vector<std::string> spill_dirs;
  /// >= 0: every key has exactly this many bytes (fixed-length fast path: keys of up to 16 bytes are
  /// compared inside the index entries, never in the record bytes). -1: variable-length keys.
  int32_t fixed_key_length = -1;
  /// The most runs merged at once (`taskmanager.runtime.max-fan`, 128); more runs are merged in passes.
  int32_t max_fan = 128;
  /// Who sorts (e.g. the task and operator name): part of the spill directory name and of error messages.
  std::string owner = "sorter";

  /// memory_bytes, spill_dirs and max_fan from `config`. ConfigError naming the key for a memory size
  /// below 1 kb or a fan below 2.
  static SorterOptions fromConfiguration(const Configuration& config);
};

/// The order of sort keys: unsigned bytes, a key before a longer one it prefixes (<0, 0, >0).
int compareSortKeys(std::string_view a, std::string_view b);

/// Where a bounded read of sorted records stops (the merge of several sorted inputs, MultiInputSortingDataInput):
/// a record is admitted while (its key, its timestamp) is before (key, timestamp), or equal to it when
/// `inclusive`. Keys by compareSortKeys, then timestamps (ms) as signed numbers. The views belong to the
/// caller and must stay valid during the read.
struct SortBound {
  std::string_view key;
  int64_t timestamp = 0;
  bool inclusive = false;
  bool admits(std::string_view k, int64_t ts) const {
    const int c = compareSortKeys(k, key);
    if (c != 0) return c < 0;
    return ts < timestamp || (inclusive && ts == timestamp);
  }
};

/// The external sorter. Records are (key, value) byte strings; both are copied in.
/// Errors: an I/O failure while spilling or reading a run is a TransientError naming the spill file and
/// the OS error; a run file whose bytes are not what was written (truncated, changed) is an InputError
/// naming the file and the byte offset. Spill files (and the sorter's directory) are removed by
/// reset(), close() and the destructor, also after an error or a cancellation.
class ExternalSorter {
 public:
  explicit ExternalSorter(SorterOptions options);
  ~ExternalSorter();
  ExternalSorter(const ExternalSorter&) = delete;
  ExternalSorter& operator=(const ExternalSorter&) = delete;

  /// Adds a record. Before finish() only. May spill a run (see the class comment for errors). With a
  /// fixed key length, a key of another length is an InternalError.
  void add(std::string_view key, std::string_view value);
  /// No more records: sorts the buffer and prepares the merge (merging runs in passes when there are more
  /// than max_fan). next() may be called afterwards.
  void finish();
  /// The next record in sorted order into `key` / `value` (views valid until the next call of next(),
  /// reset() or close()); false when every record has been returned.
  bool next(std::string_view& key, std::string_view& value);
  /// The record next() returns next, without taking it (views valid until the next call of next(),
  /// reset() or close()); false when every record has been returned. After finish() only.
  bool peek(std::string_view& key, std::string_view& value);
  /// Drops every record and spill file; the sorter takes records again (a new backlog phase).
  void reset();
  /// Drops every record and spill file; the sorter must not be used afterwards except for reset().
  void close();

  /// Records added since the last reset.
  int64_t numRecords() const { return num_records_; }
  /// Bytes written to spill files since construction (runs and merge passes).
  int64_t bytesSpilled() const { return bytes_spilled_; }
  /// Runs spilled since construction.
  int64_t numSpilledRuns() const { return spilled_runs_total_; }
  /// Bytes the memory buffer holds now (records and index).
  int64_t memoryInUse() const;
  /// The directory spill files go to, or "" while nothing was spilled.
  const std::string& spillDirectory() const;
  const SorterOptions& options() const { return options_; }

 private:
  struct Impl;
  SorterOptions options_;
  std::unique_ptr<Impl> impl_;
  int64_t num_records_ = 0;
  int64_t bytes_spilled_ = 0;
  int64_t spilled_runs_total_ = 0;
  // The record peek() read ahead (its views stay valid: the merge has not advanced past it).
  bool peeked_ = false;
  std::string_view peeked_key_;
  std::string_view peeked_value_;
};

}  // namespace sluice::runtime::sort
