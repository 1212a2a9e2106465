#pragma once
/// The columnar micro-batch SQL rows travel in (ARCHITECTURE.md "Data"): typed column vectors with a
/// validity byte per row, one string arena per string column, and one RowKind per row.
/// A RowBatch is owned by one thread at a time; it is moved (never shared) between tasks.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "types/logical_type.h"
#include "types/row_kind.h"

namespace sluice::types {

/// A string inside a column's arena: byte offset and length.
struct StringRef {
  uint32_t offset;
  uint32_t length;
};

/// One typed column. Exactly one of `longs`, `doubles`, `strings` holds the values, chosen by the type
/// (see logical_type.h); `validity[i]` is 1 when row i is not NULL. Values of NULL rows are 0 / empty.
class Column {
 public:
  Column() = default;
  explicit Column(LogicalType type) : type_(type) {}

  const LogicalType& type() const { return type_; }
  size_t size() const { return validity_.size(); }
  void reserve(size_t n);
  void clear();

  bool isNull(size_t row) const { return validity_[row] == 0; }
  int64_t getLong(size_t row) const { return longs_[row]; }
  double getDouble(size_t row) const { return doubles_[row]; }
  std::string_view getString(size_t row) const {
    const StringRef r = strings_[row];
    return std::string_view(arena_.data() + r.offset, r.length);
  }

  void appendNull();
  void appendLong(int64_t v) { longs_.push_back(v); validity_.push_back(1); }
  void appendDouble(double v) { doubles_.push_back(v); validity_.push_back(1); }
  void appendString(std::string_view v);
  /// Appends row `row` of `other` (same physical type).
  void appendFrom(const Column& other, size_t row);

  /// Raw access for vectorized kernels.
  std::vector<int64_t>& longs() { return longs_; }
  const std::vector<int64_t>& longs() const { return longs_; }
  std::vector<double>& doubles() { return doubles_; }
  const std::vector<double>& doubles() const { return doubles_; }
  std::vector<StringRef>& strings() { return strings_; }
  const std::vector<StringRef>& strings() const { return strings_; }
  std::string& arena() { return arena_; }
  const std::string& arena() const { return arena_; }
  std::vector<uint8_t>& validity() { return validity_; }
  const std::vector<uint8_t>& validity() const { return validity_; }

 private:
  LogicalType type_;
  std::vector<int64_t> longs_;
  std::vector<double> doubles_;
  std::vector<StringRef> strings_;
  std::string arena_;
  std::vector<uint8_t> validity_;
};

/// A batch of rows in columns, one RowKind per row. Rows are in order; order matters for changelogs.
class RowBatch {
 public:
  RowBatch() = default;
  explicit RowBatch(const RowType& schema);

  size_t numRows() const { return kinds_.size(); }
  size_t numColumns() const { return columns_.size(); }
  bool empty() const { return kinds_.empty(); }

  Column& column(size_t i) { return columns_[i]; }
  const Column& column(size_t i) const { return columns_[i]; }
  std::vector<Column>& columns() { return columns_; }
  const std::vector<Column>& columns() const { return columns_; }
  RowKind kind(size_t row) const { return kinds_[row]; }
  std::vector<RowKind>& kinds() { return kinds_; }
  const std::vector<RowKind>& kinds() const { return kinds_; }

  /// Appends row `row` of `other` (same schema) with its kind.
  void appendRow(const RowBatch& other, size_t row);
  /// Appends row `row` of `other` with a different kind.
  void appendRow(const RowBatch& other, size_t row, RowKind kind);
  /// A new batch with the rows whose indexes are listed, in that order.
  RowBatch select(const std::vector<uint32_t>& rows) const;
  void reserve(size_t rows);
  void clear();
  /// The schema of the columns (names are not kept in a batch: empty names).
  RowType rowType() const;

  /// Appends the serialized batch to `out`. Layout (little endian): u32 rows, u32 columns, per column
  /// its type (id u8, nullable u8, precision i32, scale i32), validity bytes, then values (8 bytes each,
  /// or u32 length + bytes for strings); then one byte per row for the RowKind.
  void serialize(std::string& out) const;
  /// Reads a batch written by serialize from `data` (bytes from a peer or a spill file: untrusted), advancing
  /// it. Throws InputError ("corrupt RowBatch bytes at offset N: ...") on truncated or invalid bytes; the
  /// caller adds where they came from. Allocates at most a small multiple of `data.size()`.
  static RowBatch deserialize(std::string_view& data);

 private:
  std::vector<Column> columns_;
  std::vector<RowKind> kinds_;
};

}  // namespace sluice::types
