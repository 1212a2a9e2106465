// KeyCodec: group keys as compact byte strings (accumulators_internal.h).
#include <cstring>

#include "common/error.h"
#include "table/runtime/accumulators_internal.h"

namespace sluice::table::agg {

using types::Column;
using types::RowBatch;

KeyCodec::KeyCodec(const types::RowType& input, std::vector<int> key_columns)
    : key_columns_(std::move(key_columns)) {
  for (int k : key_columns_) {
    SLUICE_USER_CHECK(k >= 0 && static_cast<size_t>(k) < input.size(),
                      "group key column {} out of range (input has {} columns)", k, input.size());
    phys_.push_back(physOf(input.types[static_cast<size_t>(k)]));
  }
}

void KeyCodec::encode(const RowBatch& batch, size_t row, std::string& out) const {
  out.clear();
  for (size_t i = 0; i < key_columns_.size(); ++i) {
    const Column& c = batch.column(static_cast<size_t>(key_columns_[i]));
    if (c.isNull(row)) {
      out.push_back('\0');
      continue;
    }
    out.push_back('\1');
    char buf[8];
    switch (phys_[i]) {
      case Phys::kLong: {
        const int64_t v = c.getLong(row);
        std::memcpy(buf, &v, 8);
        out.append(buf, 8);
        break;
      }
      case Phys::kDouble: {
        const double v = c.getDouble(row);
        std::memcpy(buf, &v, 8);
        out.append(buf, 8);
        break;
      }
      case Phys::kString: {
        const std::string_view s = c.getString(row);
        const uint32_t n = static_cast<uint32_t>(s.size());
        std::memcpy(buf, &n, 4);
        out.append(buf, 4);
        out.append(s.data(), s.size());
        break;
      }
    }
  }
}

void KeyCodec::decodeAppend(std::string_view key, RowBatch& out, size_t first_column) const {
  size_t pos = 0;
  for (size_t i = 0; i < key_columns_.size(); ++i) {
    Column& c = out.column(first_column + i);
    SLUICE_CHECK(pos < key.size(), "truncated group key");
    if (key[pos++] == '\0') {
      c.appendNull();
      continue;
    }
    switch (phys_[i]) {
      case Phys::kLong: {
        int64_t v;
        std::memcpy(&v, key.data() + pos, 8);
        pos += 8;
        c.appendLong(v);
        break;
      }
      case Phys::kDouble: {
        double v;
        std::memcpy(&v, key.data() + pos, 8);
        pos += 8;
        c.appendDouble(v);
        break;
      }
      case Phys::kString: {
        uint32_t n;
        std::memcpy(&n, key.data() + pos, 4);
        pos += 4;
        c.appendString(key.substr(pos, n));
        pos += n;
        break;
      }
    }
  }
}

bool KeyCodec::isValid(std::string_view key) const {
  size_t pos = 0;
  for (Phys p : phys_) {
    if (pos >= key.size()) return false;
    const char marker = key[pos++];
    if (marker == '\0') continue;
    if (marker != '\1') return false;
    if (p != Phys::kString) {
      if (key.size() - pos < 8) return false;
      pos += 8;
      continue;
    }
    if (key.size() - pos < 4) return false;
    uint32_t n;
    std::memcpy(&n, key.data() + pos, 4);
    pos += 4;
    if (key.size() - pos < n) return false;
    pos += n;
  }
  return pos == key.size();
}

}  // namespace sluice::table::agg
