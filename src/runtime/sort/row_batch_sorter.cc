#include "runtime/sort/row_batch_sorter.h"

#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "common/error.h"

namespace sluice::runtime::sort {

namespace {

// Rows carry no timestamp: in a bounded read they compare as runtime::kNoTimestamp, the smallest.
constexpr int64_t kRowTimestamp = std::numeric_limits<int64_t>::min();

// Order-preserving 8 bytes of a number: big endian, sign bit flipped (integers); doubles as their
// IEEE bits flipped so that they order too (negative: all bits, positive: the sign bit).
void appendBigEndian(std::string& out, uint64_t v) {
  char b[8];
  for (int i = 7; i >= 0; --i) {
    b[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  out.append(b, 8);
}
uint64_t orderedLong(int64_t v) { return static_cast<uint64_t>(v) ^ (1ull << 63); }
uint64_t orderedDouble(double d) {
  uint64_t bits;
  std::memcpy(&bits, &d, 8);
  return (bits & (1ull << 63)) ? ~bits : bits ^ (1ull << 63);
}

void appendU32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }

// A row's bytes come from this sorter's own spill files: a short read is a broken file, named by the
// sorter's checks on its blocks, so here it is an invariant.
struct RowReader {
  std::string_view data;
  size_t pos = 0;
  const char* take(size_t n) {
    SLUICE_CHECK(n <= data.size() - pos, "sorted row of {} bytes read past its end at {}", data.size(), pos);
    const char* p = data.data() + pos;
    pos += n;
    return p;
  }
};

}  // namespace

SorterOptions RowBatchSorter::withKeyLength(SorterOptions o, const types::RowType& schema,
                                            const std::vector<int>& keys, bool with_key_groups) {
  int32_t length = with_key_groups ? 2 : 0;
  for (int k : keys) {
    if (k < 0 || static_cast<size_t>(k) >= schema.size()) {
      throw UserError(fmt::format("sort key column {} is out of range for a row of {} columns", k, schema.size()));
    }
    if (schema.types[static_cast<size_t>(k)].isString()) return o;  // variable length
    length += 9;
  }
  o.fixed_key_length = length;
  return o;
}

RowBatchSorter::RowBatchSorter(const types::RowType& schema, std::vector<int> key_columns, bool with_key_groups,
                               SorterOptions options)
    : schema_(schema), key_columns_(std::move(key_columns)), with_key_groups_(with_key_groups),
      sorter_(withKeyLength(std::move(options), schema_, key_columns_, with_key_groups)) {}

void RowBatchSorter::encodeKey(const types::RowBatch& batch, size_t row, const int32_t* key_groups) {
  key_.clear();
  if (with_key_groups_) {
    const int32_t g = key_groups[row];
    SLUICE_CHECK(g >= 0 && g <= 0xffff, "key group {} out of range", g);
    key_.push_back(static_cast<char>(g >> 8));
    key_.push_back(static_cast<char>(g & 0xff));
  }
  for (int k : key_columns_) {
    const types::Column& c = batch.column(static_cast<size_t>(k));
    if (c.isNull(row)) {
      key_.push_back(0);
      if (!c.type().isString()) key_.append(8, '\0');
      else appendU32(key_, 0);
      continue;
    }
    key_.push_back(1);
    if (c.type().isString()) {
      const std::string_view s = c.getString(row);
      appendU32(key_, static_cast<uint32_t>(s.size()));
      key_.append(s);
    } else if (c.type().isApproximate()) {
      appendBigEndian(key_, orderedDouble(c.getDouble(row)));
    } else {
      appendBigEndian(key_, orderedLong(c.getLong(row)));
    }
  }
}

void RowBatchSorter::encodeRow(const types::RowBatch& batch, size_t row) {
  row_.clear();
  row_.push_back(static_cast<char>(batch.kind(row)));
  for (const types::Column& c : batch.columns()) {
    if (c.isNull(row)) {
      row_.push_back(0);
      continue;
    }
    row_.push_back(1);
    if (c.type().isString()) {
      const std::string_view s = c.getString(row);
      appendU32(row_, static_cast<uint32_t>(s.size()));
      row_.append(s);
    } else if (c.type().isApproximate()) {
      const double d = c.getDouble(row);
      row_.append(reinterpret_cast<const char*>(&d), 8);
    } else {
      const int64_t v = c.getLong(row);
      row_.append(reinterpret_cast<const char*>(&v), 8);
    }
  }
}

void RowBatchSorter::decodeRow(std::string_view bytes, types::RowBatch& out) const {
  RowReader in{bytes};
  out.kinds().push_back(static_cast<types::RowKind>(*in.take(1)));
  for (types::Column& c : out.columns()) {
    if (*in.take(1) == 0) {
      c.appendNull();
      continue;
    }
    if (c.type().isString()) {
      uint32_t n;
      std::memcpy(&n, in.take(4), 4);
      c.appendString(std::string_view(in.take(n), n));
    } else if (c.type().isApproximate()) {
      double d;
      std::memcpy(&d, in.take(8), 8);
      c.appendDouble(d);
    } else {
      int64_t v;
      std::memcpy(&v, in.take(8), 8);
      c.appendLong(v);
    }
  }
}

void RowBatchSorter::add(const types::RowBatch& batch, const int32_t* key_groups) {
  SLUICE_CHECK(batch.numColumns() == schema_.size(), "sorting rows of {} columns, schema has {}",
               batch.numColumns(), schema_.size());
  SLUICE_CHECK((key_groups != nullptr) == with_key_groups_, "key groups {} but the sorter {} them",
               key_groups != nullptr ? "given" : "missing", with_key_groups_ ? "needs" : "takes no");
  for (size_t r = 0; r < batch.numRows(); ++r) {
    encodeKey(batch, r, key_groups);
    encodeRow(batch, r);
    sorter_.add(key_, row_);
  }
}

void RowBatchSorter::finish() { sorter_.finish(); }

bool RowBatchSorter::next(types::RowBatch& out, size_t max_rows, const SortBound* bound) {
  out = types::RowBatch(schema_);
  std::string_view key;
  std::string_view value;
  if (bound == nullptr) {
    while (out.numRows() < max_rows && sorter_.next(key, value)) decodeRow(value, out);
  } else {
    while (out.numRows() < max_rows && sorter_.peek(key, value) && bound->admits(key, kRowTimestamp)) {
      sorter_.next(key, value);
      decodeRow(value, out);
    }
  }
  return out.numRows() > 0;
}

bool RowBatchSorter::peek(std::string_view& key) {
  std::string_view value;
  return sorter_.peek(key, value);
}

}  // namespace sluice::runtime::sort
