#include "types/row_batch.h"

#include <cstring>

#include "common/error.h"

namespace sluice::types {

void Column::reserve(size_t n) {
  validity_.reserve(n);
  if (type_.isString()) strings_.reserve(n);
  else if (type_.isApproximate()) doubles_.reserve(n);
  else longs_.reserve(n);
}

void Column::clear() {
  longs_.clear();
  doubles_.clear();
  strings_.clear();
  arena_.clear();
  validity_.clear();
}

void Column::appendNull() {
  if (type_.isString()) strings_.push_back({static_cast<uint32_t>(arena_.size()), 0});
  else if (type_.isApproximate()) doubles_.push_back(0);
  else longs_.push_back(0);
  validity_.push_back(0);
}

void Column::appendString(std::string_view v) {
  strings_.push_back({static_cast<uint32_t>(arena_.size()), static_cast<uint32_t>(v.size())});
  arena_.append(v.data(), v.size());
  validity_.push_back(1);
}

void Column::appendFrom(const Column& other, size_t row) {
  if (other.isNull(row)) {
    appendNull();
  } else if (type_.isString()) {
    appendString(other.getString(row));
  } else if (type_.isApproximate()) {
    appendDouble(other.getDouble(row));
  } else {
    appendLong(other.getLong(row));
  }
}

RowBatch::RowBatch(const RowType& schema) {
  columns_.reserve(schema.size());
  for (const auto& t : schema.types) columns_.emplace_back(t);
}

void RowBatch::appendRow(const RowBatch& other, size_t row) { appendRow(other, row, other.kinds_[row]); }

void RowBatch::appendRow(const RowBatch& other, size_t row, RowKind kind) {
  for (size_t c = 0; c < columns_.size(); ++c) columns_[c].appendFrom(other.columns_[c], row);
  kinds_.push_back(kind);
}

RowBatch RowBatch::select(const std::vector<uint32_t>& rows) const {
  RowBatch out;
  out.columns_.reserve(columns_.size());
  for (const auto& c : columns_) {
    out.columns_.emplace_back(c.type());
    out.columns_.back().reserve(rows.size());
  }
  out.kinds_.reserve(rows.size());
  for (uint32_t r : rows) out.appendRow(*this, r);
  return out;
}

void RowBatch::reserve(size_t rows) {
  for (auto& c : columns_) c.reserve(rows);
  kinds_.reserve(rows);
}

void RowBatch::clear() {
  for (auto& c : columns_) c.clear();
  kinds_.clear();
}

RowType RowBatch::rowType() const {
  RowType t;
  for (const auto& c : columns_) {
    t.names.emplace_back();
    t.types.push_back(c.type());
  }
  return t;
}

namespace {
template <typename T>
void put(std::string& out, T v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  out.append(buf, sizeof(T));
}

// Reads serialized RowBatch bytes from a peer or a spill file: every read is bounds-checked and a failure is
// an InputError with the byte offset in the batch.
class BatchReader {
 public:
  explicit BatchReader(std::string_view& in) : in_(in), total_(in.size()) {}
  template <typename T>
  T get(const char* what) {
    at_ = total_ - in_.size();
    need(sizeof(T), what);
    T v;
    std::memcpy(&v, in_.data(), sizeof(T));
    in_.remove_prefix(sizeof(T));
    return v;
  }
  std::string_view take(uint64_t n, const char* what) {
    at_ = total_ - in_.size();
    need(n, what);
    std::string_view s = in_.substr(0, n);
    in_.remove_prefix(n);
    return s;
  }
  // `why` concerns the field read last, which starts at offset at_ (or the byte at `at`).
  [[noreturn]] void fail(const std::string& why) const { failAt(at_, why); }
  [[noreturn]] void failAt(size_t at, const std::string& why) const {
    throw InputError(fmt::format("corrupt RowBatch bytes at offset {}: {}", at, why));
  }
  size_t offset() const { return total_ - in_.size(); }

 private:
  void need(uint64_t n, const char* what) {
    if (n > in_.size()) fail(fmt::format("{} needs {} bytes, only {} left", what, n, in_.size()));
  }
  std::string_view& in_;
  size_t total_;
  size_t at_ = 0;
};

// The type ranges the engine creates (parser and planner): anything else is corruption, and would break the
// formatting and arithmetic downstream.
bool validType(const LogicalType& t) {
  switch (t.id) {
    case TypeId::kDecimal:
      return t.precision >= 0 && t.precision <= kMaxDecimalPrecision && t.scale >= 0 && t.scale <= kMaxDecimalPrecision;
    case TypeId::kTimestamp:
    case TypeId::kTimestampLtz:
    case TypeId::kTime:
    case TypeId::kIntervalDayTime:
      return t.precision >= 0 && t.precision <= 9 && t.scale == 0;
    default:
      return t.precision >= 0 && t.scale == 0;
  }
}
}  // namespace

void RowBatch::serialize(std::string& out) const {
  const uint32_t rows = static_cast<uint32_t>(numRows());
  put<uint32_t>(out, rows);
  put<uint32_t>(out, static_cast<uint32_t>(columns_.size()));
  for (const auto& c : columns_) {
    const LogicalType& t = c.type();
    put<uint8_t>(out, static_cast<uint8_t>(t.id));
    put<uint8_t>(out, t.nullable ? 1 : 0);
    put<int32_t>(out, t.precision);
    put<int32_t>(out, t.scale);
    out.append(reinterpret_cast<const char*>(c.validity().data()), rows);
    if (t.isString()) {
      for (uint32_t r = 0; r < rows; ++r) {
        std::string_view s = c.getString(r);
        put<uint32_t>(out, static_cast<uint32_t>(s.size()));
        out.append(s.data(), s.size());
      }
    } else if (t.isApproximate()) {
      out.append(reinterpret_cast<const char*>(c.doubles().data()), rows * sizeof(double));
    } else {
      out.append(reinterpret_cast<const char*>(c.longs().data()), rows * sizeof(int64_t));
    }
  }
  out.append(reinterpret_cast<const char*>(kinds_.data()), rows);
}

RowBatch RowBatch::deserialize(std::string_view& in) {
  BatchReader r(in);
  RowBatch b;
  const uint32_t rows = r.get<uint32_t>("the row count");
  const uint32_t cols = r.get<uint32_t>("the column count");
  // Each row takes at least its kind byte, each column at least its 10-byte type: bounds the allocations.
  if (rows > in.size() || cols > in.size() / 10) {
    r.fail(fmt::format("{} rows and {} columns do not fit in the {} bytes left", rows, cols, in.size()));
  }
  b.columns_.reserve(cols);
  for (uint32_t ci = 0; ci < cols; ++ci) {
    LogicalType t;
    const uint8_t id = r.get<uint8_t>("a column type");
    if (id > static_cast<uint8_t>(kLastTypeId) || id == static_cast<uint8_t>(TypeId::kRow)) r.fail(fmt::format("unknown type id {}", id));
    t.id = static_cast<TypeId>(id);
    const uint8_t nullable = r.get<uint8_t>("a nullable flag");
    if (nullable > 1) r.fail(fmt::format("nullable flag {} (0 or 1)", nullable));
    t.nullable = nullable == 1;
    t.precision = r.get<int32_t>("a precision");
    t.scale = r.get<int32_t>("a scale");
    if (!validType(t)) {
      r.fail(fmt::format("type id {} with precision {} and scale {} is no type the engine writes", id, t.precision,
                         t.scale));
    }
    Column c(t);
    const std::string_view validity = r.take(rows, "the validity bytes");
    c.validity().assign(validity.begin(), validity.end());
    if (t.isString()) {
      for (uint32_t row = 0; row < rows; ++row) {
        const uint32_t len = r.get<uint32_t>("a string length");
        const std::string_view value = r.take(len, "a string");
        c.strings().push_back({static_cast<uint32_t>(c.arena().size()), len});
        c.arena().append(value.data(), value.size());
      }
    } else if (t.isApproximate()) {
      const std::string_view values = r.take(uint64_t{rows} * sizeof(double), "the values");
      c.doubles().resize(rows);
      // A column of zero rows has no storage (data() may be null): nothing to copy.
      if (rows != 0) std::memcpy(c.doubles().data(), values.data(), values.size());
    } else {
      const std::string_view values = r.take(uint64_t{rows} * sizeof(int64_t), "the values");
      c.longs().resize(rows);
      if (rows != 0) std::memcpy(c.longs().data(), values.data(), values.size());
    }
    b.columns_.push_back(std::move(c));
  }
  const size_t kinds_at = r.offset();
  const std::string_view kinds = r.take(rows, "the row kinds");
  b.kinds_.resize(rows);
  for (uint32_t row = 0; row < rows; ++row) {
    const auto k = static_cast<uint8_t>(kinds[row]);
    if (k > 3) r.failAt(kinds_at + row, fmt::format("row kind {} of row {} (0 to 3)", k, row));
    b.kinds_[row] = static_cast<RowKind>(k);
  }
  return b;
}

}  // namespace sluice::types
