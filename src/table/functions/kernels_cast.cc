// CAST / TRY_CAST kernels (Flink 1.15+ cast rules: a value that does not convert fails the job for
// CAST and gives NULL for TRY_CAST; a DECIMAL beyond its precision is NULL; CHAR/VARCHAR(n) targets
// pad/truncate on an explicit cast).
#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "common/error.h"
#include "table/functions/decimal_math.h"
#include "table/functions/evaluator_internal.h"
#include "table/functions/time_zone.h"
#include "types/value_format.h"

namespace sluice::table::internal {

using types::Column;
using types::LogicalType;
using types::TypeId;

namespace {

// Java's (int) / (long) conversion of a double: NaN -> 0, saturating, truncating toward zero.
template <typename T>
int64_t javaDoubleToIntegral(double d) {
  if (std::isnan(d)) return 0;
  if (d >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  if (d <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  return static_cast<int64_t>(static_cast<T>(d));
}

/// Length in code points of UTF-8 text (continuation bytes are not counted).
size_t codePoints(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

/// Byte length of the first `count` code points.
size_t prefixBytes(std::string_view s, size_t count) {
  size_t i = 0, seen = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (seen == count) break;
      ++seen;
    }
  }
  return i;
}

bool parseBooleanText(std::string_view text, bool& out) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  std::string s(text);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "true" || s == "t" || s == "yes" || s == "y" || s == "1") { out = true; return true; }
  if (s == "false" || s == "f" || s == "no" || s == "n" || s == "0") { out = false; return true; }
  return false;
}

class CastNode final : public Node {
 public:
  CastNode(LogicalType target, NodePtr value, bool implicit, bool try_cast, int reg, const std::string& zone)
      : Node(target, reg, value->mayThrow() || (!try_cast && value->type().isString() && !target.isString())),
        value_(std::move(value)), implicit_(implicit), try_(try_cast) {
    if (!zone.empty()) zone_ = std::make_shared<const ZoneRules>(ZoneRules::resolve(zone));
    SLUICE_CHECK(zone_ != nullptr || !castNeedsTimeZone(value_->type(), type_), "CAST {} to {} without a time zone",
                 value_->type().toString(), type_.toString());
  }

  const Column& eval(EvalContext& ctx, const uint8_t* active) const override {
    const size_t n = ctx.rows;
    const Column& v = value_->eval(ctx, active);
    Column& out = prepare(ctx);
    const bool vc = value_->isConst();
    copyValidity(out.validity().data(), v, vc, n);
    const LogicalType& from = value_->type();
    if (type_.isString()) toString(v, vc, out, n);
    else if (from.isString()) fromString(v, vc, out, n, active);
    else if (type_.isApproximate()) toDouble(v, vc, out, n);
    else if (type_.id == TypeId::kDecimal) toDecimal(v, vc, out, n);
    else toLong(v, vc, out, n);
    return out;
  }

 private:
  void toString(const Column& v, bool vc, Column& out, size_t n) const {
    const LogicalType& from = value_->type();
    const uint8_t* ov = out.validity().data();
    if (from.isIntegral() && (implicit_ || type_.precision >= 20)) {
      // Hot path (e.g. building timestamps from INT fields): digits straight into the arena.
      const int64_t* x = v.longs().data();
      out.arena().reserve(n * 4);
      char digits[24];
      for (size_t i = 0; i < n; ++i) {
        if (!ov[i]) continue;
        auto res = std::to_chars(digits, digits + sizeof(digits), x[at(vc, i)]);
        setString(out, i, std::string_view(digits, static_cast<size_t>(res.ptr - digits)));
      }
      return;
    }
    std::string buf;
    for (size_t i = 0; i < n; ++i) {
      if (!ov[i]) continue;
      const size_t j = at(vc, i);
      buf.clear();
      if (from.id == TypeId::kTimestampLtz) types::formatTimestampSql(zone_->toLocal(v.getLong(j)), from.precision, buf);
      else types::formatSqlString(v, j, buf);
      if (!implicit_ && type_.precision < types::kMaxVarcharLength) {
        const size_t len = static_cast<size_t>(type_.precision);
        buf.resize(prefixBytes(buf, len));
        if (type_.id == TypeId::kChar) {
          const size_t cps = codePoints(buf);
          if (cps < len) buf.append(len - cps, ' ');
        }
      }
      setString(out, i, buf);
    }
  }

  [[noreturn]] void fail(std::string_view text) const {
    throw UserError(fmt::format("CAST('{}' AS {}) failed: the text is not a valid {} (use TRY_CAST to get NULL instead)",
                                text, type_.withNullable(true).toString(), type_.withNullable(true).toString()));
  }

  void fromString(const Column& v, bool vc, Column& out, size_t n, const uint8_t* active) const {
    uint8_t* ov = out.validity().data();
    for (size_t i = 0; i < n; ++i) {
      if (!ov[i]) continue;
      const std::string_view s = v.getString(at(vc, i));
      bool ok = true;
      bool null_result = false;
      switch (type_.id) {
        case TypeId::kBoolean: {
          bool b = false;
          ok = parseBooleanText(s, b);
          out.longs()[i] = b;
          break;
        }
        case TypeId::kTinyInt: case TypeId::kSmallInt: case TypeId::kInt: case TypeId::kBigInt: {
          // BinaryStringDataUtil.toByte / toShort / toInt: a value outside the type's range fails.
          int64_t x = 0;
          ok = types::parseInt64(s, x);
          if (ok && types::wrapToType(type_, x) != x) ok = false;
          out.longs()[i] = x;
          break;
        }
        case TypeId::kDouble: {
          double d = 0;
          ok = types::parseDouble(s, d);
          out.doubles()[i] = d;
          break;
        }
        case TypeId::kFloat: {
          float f = 0;
          ok = types::parseFloat(s, f);
          out.doubles()[i] = f;
          break;
        }
        case TypeId::kDate: ok = types::parseDate(s, out.longs()[i]); break;
        case TypeId::kTime:
          ok = types::parseTime(s, out.longs()[i]);
          out.longs()[i] = truncateMillis(out.longs()[i], type_.precision);
          break;
        case TypeId::kDecimal: {
          int64_t x = 0;
          ok = types::parseDecimal(s, type_.scale, x);
          if (ok) {
            int64_t fit = 0;
            null_result = fitDecimal(x, type_.precision, fit) != FitResult::kOk;
            out.longs()[i] = fit;
          }
          break;
        }
        case TypeId::kTimestamp: {
          int64_t ms = 0;
          ok = types::parseTimestamp(s, ms);
          out.longs()[i] = truncateTimestamp(ms);
          break;
        }
        case TypeId::kTimestampLtz: {
          // StringToTimestampCastRule: the text is a wall-clock time of the session zone.
          int64_t ms = 0;
          ok = types::parseTimestamp(s, ms);
          out.longs()[i] = ok ? truncateTimestamp(zone_->toUtc(ms)) : 0;
          break;
        }
        default:
          ok = false;
      }
      if (!ok) {
        if (!try_ && (!active || active[i])) fail(s);
        null_result = true;
      }
      if (null_result) ov[i] = 0;
    }
  }

  int64_t truncateTimestamp(int64_t ms) const { return implicit_ ? ms : truncateMillis(ms, type_.precision); }

  /// Milliseconds floored to `precision` fraction digits (nothing to do for 3 and more).
  static int64_t truncateMillis(int64_t ms, int32_t precision) {
    if (precision >= 3) return ms;
    const int64_t unit = precision == 2 ? 10 : precision == 1 ? 100 : 1000;
    const int64_t q = ms >= 0 ? ms / unit : -((-ms + unit - 1) / unit);
    return q * unit;
  }

  void toDouble(const Column& v, bool vc, Column& out, size_t n) const {
    const LogicalType& from = value_->type();
    double* o = out.doubles().data();
    if (from.id == TypeId::kDecimal) {
      const int64_t* x = v.longs().data();
      const double scale = std::pow(10.0, from.scale);
      for (size_t i = 0; i < n; ++i) {
        const int64_t u = x[at(vc, i)];
        // Exact when the unscaled value and 10^s are exact doubles: one correctly rounded division.
        if (from.scale <= 22 && u < (int64_t{1} << 53) && u > -(int64_t{1} << 53)) {
          o[i] = static_cast<double>(u) / scale;
        } else {
          const std::string t = fmt::format("{}e-{}", u, from.scale);
          std::from_chars(t.data(), t.data() + t.size(), o[i]);
        }
      }
    } else if (from.isApproximate()) {
      for (size_t i = 0; i < n; ++i) o[i] = v.getDouble(at(vc, i));
    } else if (type_.id == TypeId::kFloat) {
      // Java's (float) long rounds once, to the nearest float.
      const int64_t* x = v.longs().data();
      for (size_t i = 0; i < n; ++i) o[i] = static_cast<double>(static_cast<float>(x[at(vc, i)]));
      return;
    } else {
      const int64_t* x = v.longs().data();
      for (size_t i = 0; i < n; ++i) o[i] = static_cast<double>(x[at(vc, i)]);
    }
    // DECIMAL and DOUBLE to FLOAT: (float) of the double value, as Flink's generated code does.
    if (type_.id == TypeId::kFloat)
      for (size_t i = 0; i < n; ++i) o[i] = types::roundToType(type_, o[i]);
  }

  void toDecimal(const Column& v, bool vc, Column& out, size_t n) const {
    const LogicalType& from = value_->type();
    uint8_t* ov = out.validity().data();
    int64_t* o = out.longs().data();
    for (size_t i = 0; i < n; ++i) {
      if (!ov[i]) continue;
      const size_t j = at(vc, i);
      Int128 scaled = 0;
      bool ok = true;
      if (from.isApproximate()) {
        const double d = v.getDouble(j);
        int64_t x = 0;
        char buf[64];
        auto res = std::to_chars(buf, buf + sizeof(buf), d);
        ok = std::isfinite(d) && types::parseDecimal(std::string_view(buf, static_cast<size_t>(res.ptr - buf)), type_.scale, x);
        scaled = x;
      } else {
        const int from_scale = from.id == TypeId::kDecimal ? from.scale : 0;
        ok = rescale(v.getLong(j), from_scale, type_.scale, scaled);
      }
      int64_t fit = 0;
      if (ok && fitDecimal(scaled, type_.precision, fit) == FitResult::kOk) o[i] = fit;
      else ov[i] = 0;  // beyond the target precision: NULL (Flink's DecimalData.fromBigDecimal)
    }
  }

  void toLong(const Column& v, bool vc, Column& out, size_t n) const {
    const LogicalType& from = value_->type();
    int64_t* o = out.longs().data();
    const bool to_bool = type_.id == TypeId::kBoolean;
    const bool to_long = type_.id == TypeId::kBigInt;
    if (from.isApproximate()) {
      // Java's (byte) / (short) of a double go through (int): saturate to int, then wrap.
      const double* x = v.doubles().data();
      for (size_t i = 0; i < n; ++i) {
        const double d = x[at(vc, i)];
        o[i] = to_bool ? d != 0
                       : to_long ? javaDoubleToIntegral<int64_t>(d)
                                 : types::wrapToType(type_, javaDoubleToIntegral<int32_t>(d));
      }
      return;
    }
    const int64_t* x = v.longs().data();
    if (from.id == TypeId::kDecimal && !to_bool && type_.id != TypeId::kDecimal) {
      // Truncation toward zero, like BigDecimal.longValue().
      const int64_t f = from.scale <= 18 ? pow10Wide(from.scale) : 0;
      for (size_t i = 0; i < n; ++i) {
        const int64_t q = f ? x[at(vc, i)] / f : 0;
        o[i] = types::wrapToType(type_, q);
      }
      return;
    }
    constexpr int64_t kDay = 86400000;
    if (type_.id == TypeId::kTimestampLtz || from.id == TypeId::kTimestampLtz) {
      ltzToLong(v, vc, out, n);
      return;
    }
    if (type_.id == TypeId::kTimestamp) {
      // DATE -> midnight of the day; TIME -> that time on 1970-01-01 (Flink's DateToTimestampCastRule,
      // TimeToTimestampCastRule).
      const int64_t mul = from.id == TypeId::kDate ? kDay : 1;
      for (size_t i = 0; i < n; ++i) o[i] = truncateTimestamp(x[at(vc, i)] * mul);
      return;
    }
    if (type_.id == TypeId::kDate) {
      if (from.id == TypeId::kDate) {
        for (size_t i = 0; i < n; ++i) o[i] = x[at(vc, i)];
        return;
      }
      for (size_t i = 0; i < n; ++i) {  // TIMESTAMP -> its day (floor, also before 1970)
        const int64_t ms = x[at(vc, i)];
        o[i] = ms >= 0 ? ms / kDay : -((-ms + kDay - 1) / kDay);
      }
      return;
    }
    if (type_.id == TypeId::kTime) {
      for (size_t i = 0; i < n; ++i) {  // TIMESTAMP -> its time of day; TIME(p) -> TIME(q) truncates
        const int64_t ms = x[at(vc, i)];
        const int64_t tod = from.id == TypeId::kTime ? ms : ((ms % kDay) + kDay) % kDay;
        o[i] = truncateMillis(tod, type_.precision);
      }
      return;
    }
    for (size_t i = 0; i < n; ++i) {
      const int64_t u = x[at(vc, i)];
      o[i] = to_bool ? u != 0 : types::wrapToType(type_, u);
    }
  }

  /// Casts between TIMESTAMP_LTZ and TIMESTAMP / DATE / TIME (Flink's *ToTimestampLtz / TimestampLtzTo*
  /// cast rules): an instant becomes the session zone's wall clock and back.
  void ltzToLong(const Column& v, bool vc, Column& out, size_t n) const {
    constexpr int64_t kDay = 86400000;
    const TypeId from = value_->type().id;
    const uint8_t* ov = out.validity().data();
    const int64_t* x = v.longs().data();
    int64_t* o = out.longs().data();
    for (size_t i = 0; i < n; ++i) {
      if (!ov[i]) {
        o[i] = 0;
        continue;
      }
      const int64_t u = x[at(vc, i)];
      if (from == TypeId::kTimestampLtz && type_.id == TypeId::kTimestampLtz) {
        o[i] = truncateTimestamp(u);
      } else if (from == TypeId::kTimestampLtz) {
        const int64_t local = zone_->toLocal(u);
        const int64_t day = local >= 0 ? local / kDay : -((-local + kDay - 1) / kDay);
        if (type_.id == TypeId::kDate) o[i] = day;
        else if (type_.id == TypeId::kTime) o[i] = truncateMillis(local - day * kDay, type_.precision);
        else o[i] = truncateTimestamp(local);
      } else {
        // DATE is its midnight, TIME that time on 1970-01-01, in the session zone.
        o[i] = truncateTimestamp(zone_->toUtc(from == TypeId::kDate ? u * kDay : u));
      }
    }
  }

  NodePtr value_;
  bool implicit_;
  bool try_;
  std::shared_ptr<const ZoneRules> zone_;  ///< set for a cast to or from TIMESTAMP_LTZ
};

}  // namespace

NodePtr makeCastNode(const LogicalType& target, NodePtr value, bool implicit, bool try_cast, int reg,
                     const std::string& time_zone) {
  return std::make_unique<CastNode>(target, std::move(value), implicit, try_cast, reg, time_zone);
}

}  // namespace sluice::table::internal
