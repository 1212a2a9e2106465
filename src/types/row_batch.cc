#include "types/row_batch.h"

#include <cstring>

#include "common/error.h"

namespace sluice::types {

void Column::reserve(size_t n) {
  validity_.reserve(n);
  if (type_.isString()) strings_.reserve(n);
  else if (type_.id == TypeId::kDouble) doubles_.reserve(n);
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
  else if (type_.id == TypeId::kDouble) doubles_.push_back(0);
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
  } else if (type_.id == TypeId::kDouble) {
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

template <typename T>
T get(std::string_view& in) {
  SLUICE_CHECK(in.size() >= sizeof(T), "truncated RowBatch bytes");
  T v;
  std::memcpy(&v, in.data(), sizeof(T));
  in.remove_prefix(sizeof(T));
  return v;
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
    } else if (t.id == TypeId::kDouble) {
      out.append(reinterpret_cast<const char*>(c.doubles().data()), rows * sizeof(double));
    } else {
      out.append(reinterpret_cast<const char*>(c.longs().data()), rows * sizeof(int64_t));
    }
  }
  out.append(reinterpret_cast<const char*>(kinds_.data()), rows);
}

RowBatch RowBatch::deserialize(std::string_view& in) {
  RowBatch b;
  const uint32_t rows = get<uint32_t>(in);
  const uint32_t cols = get<uint32_t>(in);
  SLUICE_CHECK(cols <= in.size(), "corrupt RowBatch header");
  b.columns_.reserve(cols);
  for (uint32_t ci = 0; ci < cols; ++ci) {
    LogicalType t;
    uint8_t id = get<uint8_t>(in);
    SLUICE_CHECK(id <= static_cast<uint8_t>(TypeId::kIntervalDayTime), "corrupt type id {}", id);
    t.id = static_cast<TypeId>(id);
    t.nullable = get<uint8_t>(in) != 0;
    t.precision = get<int32_t>(in);
    t.scale = get<int32_t>(in);
    Column c(t);
    SLUICE_CHECK(in.size() >= rows, "truncated RowBatch validity");
    c.validity().assign(in.begin(), in.begin() + rows);
    in.remove_prefix(rows);
    if (t.isString()) {
      for (uint32_t r = 0; r < rows; ++r) {
        uint32_t len = get<uint32_t>(in);
        SLUICE_CHECK(in.size() >= len, "truncated RowBatch string");
        c.strings().push_back({static_cast<uint32_t>(c.arena().size()), len});
        c.arena().append(in.data(), len);
        in.remove_prefix(len);
      }
    } else if (t.id == TypeId::kDouble) {
      SLUICE_CHECK(in.size() >= rows * sizeof(double), "truncated RowBatch values");
      c.doubles().resize(rows);
      std::memcpy(c.doubles().data(), in.data(), rows * sizeof(double));
      in.remove_prefix(rows * sizeof(double));
    } else {
      SLUICE_CHECK(in.size() >= rows * sizeof(int64_t), "truncated RowBatch values");
      c.longs().resize(rows);
      std::memcpy(c.longs().data(), in.data(), rows * sizeof(int64_t));
      in.remove_prefix(rows * sizeof(int64_t));
    }
    b.columns_.push_back(std::move(c));
  }
  SLUICE_CHECK(in.size() >= rows, "truncated RowBatch kinds");
  b.kinds_.resize(rows);
  for (uint32_t r = 0; r < rows; ++r) {
    uint8_t k = static_cast<uint8_t>(in[r]);
    SLUICE_CHECK(k <= 3, "corrupt RowKind {}", k);
    b.kinds_[r] = static_cast<RowKind>(k);
  }
  in.remove_prefix(rows);
  return b;
}

}  // namespace sluice::types
