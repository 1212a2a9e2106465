#pragma once
/// SQL rows through the external sorter: a RowBatch's rows sorted by (key group, key columns), rows of
/// one key in arrival order, read back as RowBatches of the same schema (sort-based BATCH operators and
/// the backlog sorting of keyed SQL operators, FLIP-327). Rows keep their RowKind. The order of keys is the
/// order of their bytes (below): equal keys are adjacent, and integral keys ascend; it is not SQL's ORDER BY
/// order for strings, doubles or NULLs. Threading: one thread at a time.

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/sort/external_sorter.h"
#include "types/row_batch.h"

namespace sluice::runtime::sort {

/// Sorts rows of one schema by key columns.
class RowBatchSorter {
 public:
  /// `key_columns`: indexes into `schema` (UserError when one is out of range). `with_key_groups`: every
  /// add() passes the key group of each row, which sorts before the key (state backends read a key group
  /// after the other). Keys without a string column take the sorter's fixed-length fast path.
  RowBatchSorter(const types::RowType& schema, std::vector<int> key_columns, bool with_key_groups,
                 SorterOptions options);

  /// Adds every row of `batch` (the schema's columns). `key_groups`: one per row when the sorter was made
  /// with key groups (each in [0, 65535]), else null.
  void add(const types::RowBatch& batch, const int32_t* key_groups = nullptr);
  /// No more rows (ExternalSorter::finish).
  void finish();
  /// Replaces `out` with up to `max_rows` next rows in order, with `bound` only those it admits (rows
  /// have no timestamp: kNoTimestamp, the smallest); false (and `out` empty) when none were taken.
  bool next(types::RowBatch& out, size_t max_rows, const SortBound* bound = nullptr);
  /// The key of the row next() returns next (valid until next() or reset()); false when none is left.
  bool peek(std::string_view& key);
  /// Drops every row and spill file (ExternalSorter::reset).
  void reset() { sorter_.reset(); }
  /// Removes the spill files (ExternalSorter::close).
  void close() { sorter_.close(); }
  const ExternalSorter& sorter() const { return sorter_; }

 private:
  void encodeKey(const types::RowBatch& batch, size_t row, const int32_t* key_groups);
  void encodeRow(const types::RowBatch& batch, size_t row);
  void decodeRow(std::string_view bytes, types::RowBatch& out) const;
  static SorterOptions withKeyLength(SorterOptions o, const types::RowType& schema, const std::vector<int>& keys,
                                     bool with_key_groups);

  types::RowType schema_;
  std::vector<int> key_columns_;
  bool with_key_groups_;
  ExternalSorter sorter_;
  std::string key_;
  std::string row_;
};

}  // namespace sluice::runtime::sort
