// Temporal built-in kernels with the arithmetic of Flink's DateTimeUtils (and Calcite's, which it
// keeps): EXTRACT's julian-day fields, FLOOR/CEIL to a unit (julianDateFloor, including its rule
// that CEIL works on the day, so CEIL(2024-01-01 10:00 TO MONTH) is 2024-01-01), TIMESTAMPADD's
// month arithmetic (the day clamped to the month's last day) and TIMESTAMPDIFF's subtractMonths.
#include <chrono>
#include <cmath>
#include <optional>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "common/error.h"
#include "table/functions/builtins.h"
#include "table/functions/datetime_pattern.h"
#include "table/functions/time_zone.h"
#include "types/value_format.h"

namespace sluice::table::internal {

using types::Column;
using types::LogicalType;
using types::TypeId;

namespace {

constexpr int64_t kDay = 86400000;
constexpr int64_t kEpochJulian = 2440588;

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t floorMod(int64_t a, int64_t b) { return a - floorDiv(a, b) * b; }

struct Ymd {
  int64_t y;
  unsigned m, d;
};
Ymd ymd(int64_t days) {
  Ymd r{};
  types::civilFromDays(days, r.y, r.m, r.d);
  return r;
}
/// Days of (y, m, 1 + d - 1) where m may be 13 (January of the next year), as ymdToUnixDate.
int64_t unixDate(int64_t y, int64_t m, int64_t d) {
  y += floorDiv(m - 1, 12);
  m = floorMod(m - 1, 12) + 1;
  return types::daysFromCivil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
}

int64_t isoWeek(int64_t days) {
  const int64_t iso_dow = floorMod(days + kEpochJulian, 7) + 1;  // Monday 1 .. Sunday 7
  const int64_t thursday = days + 4 - iso_dow;
  const Ymd t = ymd(thursday);
  return (thursday - unixDate(t.y, 1, 1)) / 7 + 1;
}

/// DateTimeUtils.extractFromDate over days since the epoch.
int64_t extractDate(TimeUnit u, int64_t days) {
  const Ymd p = ymd(days);
  const int64_t julian = days + kEpochJulian;
  switch (u) {
    case TimeUnit::kYear: return p.y;
    case TimeUnit::kQuarter: return (p.m + 2) / 3;
    case TimeUnit::kMonth: return p.m;
    case TimeUnit::kDay: return p.d;
    case TimeUnit::kDow: return floorMod(julian + 1, 7) + 1;  // Sunday 1 .. Saturday 7
    case TimeUnit::kIsoDow: return floorMod(julian, 7) + 1;
    case TimeUnit::kWeek: return isoWeek(days);
    case TimeUnit::kDoy: return days - unixDate(p.y, 1, 1) + 1;
    case TimeUnit::kDecade: return p.y / 10;
    case TimeUnit::kCentury: return p.y > 0 ? (p.y + 99) / 100 : (p.y - 99) / 100;
    case TimeUnit::kMillennium: return p.y > 0 ? (p.y + 999) / 1000 : (p.y - 999) / 1000;
    default: return 0;
  }
}

/// EXTRACT from milliseconds (TIMESTAMP, or TIME of day): DateTimeUtils.convertExtract with Java's %.
int64_t extractMillis(TimeUnit u, int64_t ms) {
  switch (u) {
    case TimeUnit::kEpoch: return ms / 1000;
    case TimeUnit::kMicrosecond: return ms % 1000 * 1000;
    case TimeUnit::kMillisecond: return ms % 1000;
    case TimeUnit::kSecond: return ms % 60000 / 1000;
    case TimeUnit::kMinute: return ms % 3600000 / 60000;
    case TimeUnit::kHour: return ms % kDay / 3600000;
    default: return extractDate(u, floorDiv(ms, kDay));
  }
}

int64_t unitMillis(TimeUnit u) {
  switch (u) {
    case TimeUnit::kWeek: return 7 * kDay;
    case TimeUnit::kDay: return kDay;
    case TimeUnit::kHour: return 3600000;
    case TimeUnit::kMinute: return 60000;
    case TimeUnit::kSecond: return 1000;
    default: return 1;
  }
}

/// julianDateFloor over days since the epoch.
int64_t dateFloorCeil(TimeUnit u, int64_t days, bool floor) {
  const Ymd p = ymd(days);
  int64_t year = p.y, month = p.m, day = p.d;
  switch (u) {
    case TimeUnit::kMillennium:
      return floor ? unixDate(1000 * ((year + 999) / 1000) - 999, 1, 1) : unixDate(1000 * ((year + 999) / 1000) + 1, 1, 1);
    case TimeUnit::kCentury:
      return floor ? unixDate(100 * ((year + 99) / 100) - 99, 1, 1) : unixDate(100 * ((year + 99) / 100) + 1, 1, 1);
    case TimeUnit::kDecade:
      return floor ? unixDate(10 * (year / 10), 1, 1) : unixDate(10 * (1 + year / 10), 1, 1);
    case TimeUnit::kYear:
      if (!floor && (month > 1 || day > 1)) ++year;
      return unixDate(year, 1, 1);
    case TimeUnit::kMonth:
      if (!floor && day > 1) ++month;
      return unixDate(year, month, 1);
    case TimeUnit::kQuarter: {
      int64_t quarter = (month + 2) / 3;
      if (!floor && (month > 1 || day > 1)) ++quarter;
      return unixDate(year, quarter * 3 - 2, 1);
    }
    case TimeUnit::kWeek: {
      int64_t offset = floorMod(days + kEpochJulian + 1, 7);  // Sunday 0 .. Saturday 6
      if (!floor && offset > 0) offset -= 7;
      return days - offset;
    }
    case TimeUnit::kDay:
      return floor ? days : days + 1;
    default:
      return days;
  }
}

/// FLOOR/CEIL(ts TO unit) of a TIMESTAMP (DateTimeUtils.timestampFloor/timestampCeil at UTC).
int64_t timestampFloorCeil(TimeUnit u, int64_t ts, bool floor) {
  switch (u) {
    case TimeUnit::kMillisecond:
      return ts;
    case TimeUnit::kSecond: case TimeUnit::kMinute: case TimeUnit::kHour: case TimeUnit::kDay: {
      const int64_t b = unitMillis(u), r = ts % b;
      if (floor) return r < 0 ? ts - r - b : ts - r;
      return r > 0 ? ts - r + b : ts - r;
    }
    default:
      // Java's int division of the millis (truncating) as Flink's code does.
      return dateFloorCeil(u, ts / kDay, floor) * kDay;
  }
}

/// Calcite's DateTimeUtils.addMonths: the day is clamped to the last day of the target month.
int64_t addMonthsToDate(int64_t days, int64_t months) {
  const Ymd p = ymd(days);
  const int64_t m0 = static_cast<int64_t>(p.m) - 1 + months;
  const int64_t y = p.y + floorDiv(m0, 12);
  const int64_t m = floorMod(m0, 12) + 1;
  const int64_t last = unixDate(y, m + 1, 1) - unixDate(y, m, 1);
  return unixDate(y, m, std::min<int64_t>(p.d, last));
}
int64_t addMonthsToTimestamp(int64_t ts, int64_t months) {
  const int64_t millis = floorMod(ts, kDay);
  return addMonthsToDate(floorDiv(ts, kDay), months) * kDay + millis;
}

int64_t subtractMonthsDates(int64_t d0, int64_t d1) {
  if (d0 < d1) return -subtractMonthsDates(d1, d0);
  int64_t m = (d0 - d1) / 31;  // no month is longer, so this never overshoots
  for (;;) {
    if (addMonthsToDate(d1, m) >= d0) return m;
    if (addMonthsToDate(d1, m + 1) > d0) return m;
    ++m;
  }
}
/// Calcite's subtractMonths(long t0, long t1): whole months from t1 to t0.
int64_t subtractMonths(int64_t t0, int64_t t1) {
  const int64_t ms0 = floorMod(t0, kDay), d0 = floorDiv(t0, kDay);
  const int64_t ms1 = floorMod(t1, kDay), d1 = floorDiv(t1, kDay);
  int64_t x = subtractMonthsDates(d0, d1);
  if (addMonthsToDate(d1, x) == d0 && ms0 < ms1) --x;
  return x;
}

int64_t toMillis(const LogicalType& t, int64_t v) { return t.id == TypeId::kDate ? v * kDay : v; }

int64_t nowMillis() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

const char* const kDefaultTimestampFormat = "yyyy-MM-dd HH:mm:ss";

/// A pattern argument: compiled once when constant (or the default when absent), else per row.
class FormatArg {
 public:
  FormatArg(const std::vector<NodePtr>& args, size_t k, const char* fallback) : index_(k) {
    if (k >= args.size()) {
      fixed_ = std::make_shared<DateTimePattern>(fallback);
    } else if (args[k]->isConst()) {
      const std::string text = constString(*args[k]);
      fixed_ = std::make_shared<DateTimePattern>(text);
    }
  }
  std::shared_ptr<const DateTimePattern> get(const RowArgs& a) const {
    if (fixed_) return fixed_;
    return std::make_shared<DateTimePattern>(a.s(index_));
  }

 private:
  size_t index_;
  std::shared_ptr<const DateTimePattern> fixed_;
};

RowFn zoneKernel(ScalarOp op, const std::vector<NodePtr>& args, const ZoneRules& zone) {
  const size_t n = args.size() - 1;  // without the zone
  switch (op) {
    case ScalarOp::kCurrentTimestamp: case ScalarOp::kNow:  // TIMESTAMP_LTZ: the instant
      return [](const RowArgs&, Column& out, size_t i) { out.longs()[i] = nowMillis(); return true; };
    case ScalarOp::kLocalTimestamp: case ScalarOp::kProctime:
      return [zone](const RowArgs&, Column& out, size_t i) { out.longs()[i] = zone.toLocal(nowMillis()); return true; };
    case ScalarOp::kCurrentDate:
      return [zone](const RowArgs&, Column& out, size_t i) {
        out.longs()[i] = floorDiv(zone.toLocal(nowMillis()), kDay);
        return true;
      };
    case ScalarOp::kCurrentTime: case ScalarOp::kLocalTime:
      return [zone](const RowArgs&, Column& out, size_t i) {
        out.longs()[i] = floorMod(zone.toLocal(nowMillis()), kDay) / 1000 * 1000;  // TIME(0)
        return true;
      };
    case ScalarOp::kUnixTimestamp: {
      if (n == 0) return [](const RowArgs&, Column& out, size_t i) { out.longs()[i] = nowMillis() / 1000; return true; };
      auto format = std::make_shared<FormatArg>(args, n == 2 ? 1 : args.size(), kDefaultTimestampFormat);
      // Text that does not parse gives Long.MIN_VALUE, as Flink's DateTimeUtils.unixTimestamp.
      return [zone, format](const RowArgs& a, Column& out, size_t i) {
        int64_t local = 0;
        out.longs()[i] = format->get(a)->parse(a.s(0), local) ? zone.toUtc(local) / 1000 : INT64_MIN;
        return true;
      };
    }
    case ScalarOp::kFromUnixtime: {
      auto format = std::make_shared<FormatArg>(args, n == 2 ? 1 : args.size(), kDefaultTimestampFormat);
      return [zone, format](const RowArgs& a, Column& out, size_t i) {
        std::string s;
        format->get(a)->format(zone.toLocal(a.l(0) * 1000), s);
        setString(out, i, s);
        return true;
      };
    }
    default:
      throw InternalError(fmt::format("not a session-zone function: {}", scalarOpName(op)));
  }
}

/// DateTimeUtils.toTimestampData(epoch, precision): 0 = seconds, 3 = milliseconds.
int64_t epochMillis(double epoch, int64_t precision) {
  const double ms = precision == 0 ? epoch * 1000 : epoch;
  return static_cast<int64_t>(ms);
}

[[noreturn]] void badLtzPrecision(int64_t p) {
  throw UserError(fmt::format("The precision value '{}' for function TO_TIMESTAMP_LTZ(numeric, precision) is "
                              "unsupported, the supported value is '0' for second or '3' for millisecond",
                              p));
}

RowFn toTimestampLtzKernel(const std::vector<NodePtr>& args) {
  const LogicalType t0 = args[0]->type();
  if (t0.isNumeric()) {
    const bool has_precision = args.size() == 2;
    return [t0, has_precision](const RowArgs& a, Column& out, size_t i) {
      const int64_t p = has_precision ? a.l(1) : 3;
      if (p != 0 && p != 3) badLtzPrecision(p);
      if (t0.isApproximate()) {
        const double d = a.d(0);
        if (!std::isfinite(d)) return false;
        out.longs()[i] = epochMillis(d, p);
      } else if (t0.id == TypeId::kDecimal) {
        // Exact: unscaled / 10^scale seconds (or millis), truncated to whole milliseconds.
        const int64_t u = a.l(0);
        int64_t scale = 1;
        for (int32_t k = 0; k < t0.scale && k < 18; ++k) scale *= 10;
        const __int128 ms = static_cast<__int128>(u) * (p == 0 ? 1000 : 1) / scale;
        out.longs()[i] = static_cast<int64_t>(ms);
      } else {
        const int64_t v = a.l(0);
        out.longs()[i] = p == 0 ? v * 1000 : v;
      }
      return true;
    };
  }
  // Text: the default layout (yyyy-MM-dd HH:mm:ss[.fraction]) or a pattern, read in the zone (UTC).
  auto format = args.size() >= 2 ? std::make_shared<FormatArg>(args, 1, "") : nullptr;
  std::shared_ptr<const ZoneRules> fixed_zone;
  if (args.size() < 3) fixed_zone = std::make_shared<const ZoneRules>(ZoneRules::resolve("UTC"));
  else if (args[2]->isConst()) fixed_zone = std::make_shared<const ZoneRules>(ZoneRules::resolve(constString(*args[2])));
  return [format, fixed_zone](const RowArgs& a, Column& out, size_t i) {
    int64_t local = 0;
    if (format ? !format->get(a)->parse(a.s(0), local) : !types::parseTimestamp(a.s(0), local)) return false;
    if (fixed_zone) {
      out.longs()[i] = fixed_zone->toUtc(local);
      return true;
    }
    // ZoneId.of of a zone read per row: unknown gives NULL (DateTimeException), as Flink.
    std::optional<ZoneRules> z;
    try {
      z = ZoneRules::resolve(a.s(2));
    } catch (const UserError&) {
      return false;
    }
    out.longs()[i] = z->toUtc(local);
    return true;
  };
}

RowFn temporalKernel(ScalarOp op, const std::vector<NodePtr>& args) {
  switch (op) {
    case ScalarOp::kExtract: case ScalarOp::kDayOfWeek: case ScalarOp::kDayOfYear: case ScalarOp::kWeek:
    case ScalarOp::kQuarter: {
      const bool extract = op == ScalarOp::kExtract;
      const TimeUnit u = extract ? *parseTimeUnit(constString(*args[0]))
                       : op == ScalarOp::kDayOfWeek ? TimeUnit::kDow
                       : op == ScalarOp::kDayOfYear ? TimeUnit::kDoy
                       : op == ScalarOp::kWeek ? TimeUnit::kWeek : TimeUnit::kQuarter;
      const size_t k = extract ? 1 : 0;
      const TypeId id = args[k]->type().id;
      return [u, k, id](const RowArgs& a, Column& out, size_t i) {
        const int64_t v = a.l(k);
        if (id == TypeId::kDate) out.longs()[i] = u == TimeUnit::kEpoch ? v * 86400 : extractDate(u, v);
        else out.longs()[i] = extractMillis(u, v);
        return true;
      };
    }
    case ScalarOp::kFloor: case ScalarOp::kCeil: {
      const TimeUnit u = *parseTimeUnit(constString(*args[1]));
      const bool floor = op == ScalarOp::kFloor;
      const bool date = args[0]->type().id == TypeId::kDate;
      return [u, floor, date](const RowArgs& a, Column& out, size_t i) {
        out.longs()[i] = date ? dateFloorCeil(u, a.l(0), floor) : timestampFloorCeil(u, a.l(0), floor);
        return true;
      };
    }
    case ScalarOp::kTimestampAdd: {
      const TimeUnit u = *parseTimeUnit(constString(*args[0]));
      const TypeId id = args[2]->type().id;
      return [u, id](const RowArgs& a, Column& out, size_t i) {
        const int64_t n = a.l(1), v = a.l(2);
        const bool months = u == TimeUnit::kMonth || u == TimeUnit::kQuarter || u == TimeUnit::kYear ||
                            u == TimeUnit::kDecade || u == TimeUnit::kCentury || u == TimeUnit::kMillennium;
        const int64_t factor = u == TimeUnit::kQuarter ? 3 : u == TimeUnit::kYear ? 12 : u == TimeUnit::kDecade ? 120
                             : u == TimeUnit::kCentury ? 1200 : u == TimeUnit::kMillennium ? 12000 : 1;
        int64_t r = 0;
        if (id == TypeId::kDate && (months || u == TimeUnit::kWeek || u == TimeUnit::kDay)) {
          r = months ? addMonthsToDate(v, n * factor) : v + n * (u == TimeUnit::kWeek ? 7 : 1);
        } else if (months) {
          r = addMonthsToTimestamp(v, n * factor);
        } else if (u == TimeUnit::kMicrosecond) {
          r = (id == TypeId::kDate ? v * kDay : v) + n / 1000;
        } else {
          r = (id == TypeId::kDate ? v * kDay : v) + n * unitMillis(u);
        }
        out.longs()[i] = id == TypeId::kTime ? floorMod(r, kDay) : r;
        return true;
      };
    }
    case ScalarOp::kTimestampDiff: {
      const TimeUnit u = *parseTimeUnit(constString(*args[0]));
      const LogicalType ta = args[1]->type(), tb = args[2]->type();
      return [u, ta, tb](const RowArgs& a, Column& out, size_t i) {
        const int64_t x = toMillis(ta, a.l(1)), y = toMillis(tb, a.l(2));
        int64_t r = 0;
        switch (u) {
          case TimeUnit::kYear: r = subtractMonths(y, x) / 12; break;
          case TimeUnit::kQuarter: r = subtractMonths(y, x) / 3; break;
          case TimeUnit::kMonth: r = subtractMonths(y, x); break;
          case TimeUnit::kMicrosecond: r = (y - x) * 1000; break;
          default: r = (y - x) / unitMillis(u); break;
        }
        out.longs()[i] = types::wrapToType(LogicalType::integer(), r);
        return true;
      };
    }
    case ScalarOp::kToDate: {
      auto format = args.size() > 1 ? std::make_shared<FormatArg>(args, 1, "") : nullptr;
      return [format](const RowArgs& a, Column& out, size_t i) {
        int64_t days = 0, ms = 0;
        if (!format) {
          if (!types::parseDate(a.s(0), days)) return false;
        } else {
          if (!format->get(a)->parse(a.s(0), ms)) return false;
          days = floorDiv(ms, kDay);
        }
        out.longs()[i] = days;
        return true;
      };
    }
    case ScalarOp::kToTimestampLtz:
      return toTimestampLtzKernel(args);
    case ScalarOp::kConvertTz: {
      // DateTimeUtils.convertTz: parse in one zone, print in the other; an unknown zone is GMT.
      std::shared_ptr<ZoneRules> from, to;
      if (args[1]->isConst()) from = std::make_shared<ZoneRules>(ZoneRules::resolveOrGmt(constString(*args[1])));
      if (args[2]->isConst()) to = std::make_shared<ZoneRules>(ZoneRules::resolveOrGmt(constString(*args[2])));
      auto pattern = std::make_shared<DateTimePattern>(kDefaultTimestampFormat);
      return [from, to, pattern](const RowArgs& a, Column& out, size_t i) {
        int64_t local = 0;
        if (!pattern->parse(a.s(0), local)) return false;
        const ZoneRules zf = from ? *from : ZoneRules::resolveOrGmt(a.s(1));
        const ZoneRules zt = to ? *to : ZoneRules::resolveOrGmt(a.s(2));
        std::string s;
        pattern->format(zt.toLocal(zf.toUtc(local)), s);
        setString(out, i, s);
        return true;
      };
    }
    default:
      throw InternalError(fmt::format("not a temporal function: {}", scalarOpName(op)));
  }
}

}  // namespace

std::string constString(const Node& node) {
  SLUICE_CHECK(node.isConst(), "argument is not a constant");
  EvalContext ctx;
  ctx.rows = 1;
  const Column& c = node.eval(ctx, nullptr);
  return c.isNull(0) ? std::string() : std::string(c.getString(0));
}

NodePtr makeTemporalNode(ScalarOp op, const LogicalType& type, std::vector<NodePtr> args, int reg) {
  if (usesSessionTimeZone(op)) {
    const ZoneRules zone = ZoneRules::resolve(constString(*args.back()));
    RowFn fn = zoneKernel(op, args, zone);
    args.pop_back();
    return makeRowFunctionNode(type, std::move(args), true, false, std::move(fn), reg);
  }
  RowFn fn = temporalKernel(op, args);
  // The unit of EXTRACT / TIMESTAMPADD / TIMESTAMPDIFF is a constant: NULL-checking it is harmless.
  return makeRowFunctionNode(type, std::move(args), true, false, std::move(fn), reg);
}

}  // namespace sluice::table::internal
