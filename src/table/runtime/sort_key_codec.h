#pragma once
/// Module-internal: an order-preserving byte encoding of ORDER BY columns, so sorted containers of
/// std::string (byte order, unsigned) hold rows in SQL order. Per column: a NULL marker byte placing NULL
/// first or last (0x00 / 0x02; a value has 0x01), then the value: BIGINT-like columns as the big-endian
/// two's complement with the sign bit flipped, DOUBLE/FLOAT as IEEE bits made monotonic (Java's
/// Double.compare order, NaN last), strings as their bytes with 0x00 escaped as 0x00 0xFF and ended by
/// 0x00 0x00; a DESC column has its value bytes inverted. Used by rank_operator.cc and window_rank.cc.
/// Thread-compatible.

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/error.h"
#include "table/runtime/accumulators_internal.h"
#include "table/runtime/rank_spec.h"
#include "types/row_batch.h"

namespace sluice::table {

class SortKeyCodec {
 public:
  /// Throws UserError when a column is out of range.
  SortKeyCodec(const types::RowType& input, std::vector<SortField> fields) : fields_(std::move(fields)) {
    for (const auto& f : fields_) {
      SLUICE_USER_CHECK(f.column >= 0 && static_cast<size_t>(f.column) < input.size(),
                        "ORDER BY column {} out of range (input has {} columns)", f.column, input.size());
      phys_.push_back(agg::physOf(input.types[static_cast<size_t>(f.column)]));
    }
  }

  /// Replaces `out` with the sort key of row `row` of `batch`.
  void encode(const types::RowBatch& batch, size_t row, std::string& out) const {
    out.clear();
    for (size_t i = 0; i < fields_.size(); ++i) {
      const SortField& f = fields_[i];
      const types::Column& c = batch.column(static_cast<size_t>(f.column));
      if (c.isNull(row)) {
        out.push_back(f.nulls_first ? '\0' : '\2');
        continue;
      }
      out.push_back('\1');
      const size_t start = out.size();
      switch (phys_[i]) {
        case agg::Phys::kLong:
          appendBigEndian(out, static_cast<uint64_t>(c.getLong(row)) ^ (uint64_t{1} << 63));
          break;
        case agg::Phys::kDouble: {
          double d = c.getDouble(row);
          if (d != d) d = __builtin_nan("");  // one NaN, sorted after +Infinity as Double.compare
          uint64_t bits;
          std::memcpy(&bits, &d, 8);
          bits = (bits >> 63) != 0 ? ~bits : bits ^ (uint64_t{1} << 63);
          appendBigEndian(out, bits);
          break;
        }
        case agg::Phys::kString: {
          for (char ch : c.getString(row)) {
            out.push_back(ch);
            if (ch == '\0') out.push_back('\xff');
          }
          out.push_back('\0');
          out.push_back('\0');
          break;
        }
      }
      if (!f.ascending)
        for (size_t k = start; k < out.size(); ++k) out[k] = static_cast<char>(~static_cast<unsigned char>(out[k]));
    }
  }

 private:
  static void appendBigEndian(std::string& out, uint64_t v) {
    for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>((v >> shift) & 0xff));
  }

  std::vector<SortField> fields_;
  std::vector<agg::Phys> phys_;
};

}  // namespace sluice::table
