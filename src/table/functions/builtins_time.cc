// Type inference of the temporal built-ins. Return types as Flink's: EXTRACT and the DAYOFWEEK family
// are BIGINT, TIMESTAMPDIFF is INT, TIMESTAMPADD keeps the datetime type except DATE plus a time unit,
// which is TIMESTAMP(0) (Calcite's SqlTimestampAddFunction); CURRENT_TIMESTAMP / NOW are
// TIMESTAMP_LTZ(3) (the instant), LOCALTIMESTAMP is TIMESTAMP(3) (the session zone's wall clock).
// Functions that break a TIMESTAMP_LTZ into fields (EXTRACT, HOUR, DATE_FORMAT, FLOOR, ...) see the
// session zone's wall clock: the planner casts the argument to TIMESTAMP first (sql_to_rel_expr.cc).
#include <fmt/format.h>

#include "common/error.h"
#include "table/functions/builtins.h"
#include "table/functions/datetime_pattern.h"
#include "table/functions/time_zone.h"

namespace sluice::table::internal {

using types::LogicalType;
using types::TypeId;

namespace {

bool isDateUnit(TimeUnit u) {
  switch (u) {
    case TimeUnit::kHour: case TimeUnit::kMinute: case TimeUnit::kSecond: case TimeUnit::kMillisecond:
    case TimeUnit::kMicrosecond: case TimeUnit::kEpoch:
      return false;
    default:
      return true;
  }
}

bool isDatetime(const LogicalType& t) {
  return t.id == TypeId::kTimestamp || t.id == TypeId::kDate || t.id == TypeId::kTime;
}

/// `allow_ltz`: TIMESTAMPADD / TIMESTAMPDIFF work on the instant of a TIMESTAMP_LTZ; the field
/// functions get it converted to the session zone's TIMESTAMP by the planner.
void requireDatetime(ScalarOp op, std::vector<ExprPtr>& args, size_t i, bool allow_time, const std::string& forms,
                     bool allow_ltz = false) {
  if (isNullLiteral(args[i])) args[i] = typedNull(LogicalType::timestamp(3));
  const LogicalType& t = args[i]->type;
  if ((!isDatetime(t) && !(allow_ltz && t.id == TypeId::kTimestampLtz)) || (!allow_time && t.id == TypeId::kTime))
    cannotApply(op, args, forms);
}

constexpr const char* kToTimestampLtzForms =
    "'TO_TIMESTAMP_LTZ(<NUMERIC>)', 'TO_TIMESTAMP_LTZ(<NUMERIC>, <INTEGER>)', 'TO_TIMESTAMP_LTZ(<STRING>)', "
    "'TO_TIMESTAMP_LTZ(<STRING>, <STRING>)', 'TO_TIMESTAMP_LTZ(<STRING>, <STRING>, <STRING>)'";

bool isStringLiteral(const ExprPtr& e) {
  return e->kind == ExprKind::kLiteral && std::holds_alternative<std::string>(e->literal);
}

void requireStrings(ScalarOp op, std::vector<ExprPtr>& args, size_t from, size_t to, const std::string& forms) {
  for (size_t i = from; i < to; ++i) requireString(op, args, i, forms);
}

const char* unitName(TimeUnit u) {
  static const char* const kNames[] = {"MILLENNIUM", "CENTURY", "DECADE", "YEAR", "QUARTER", "MONTH",
                                       "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND",
                                       "MICROSECOND", "DOW", "ISODOW", "DOY", "EPOCH"};
  return kNames[static_cast<int>(u)];
}

}  // namespace

std::optional<TimeUnit> parseTimeUnit(std::string_view name) {
  if (name.substr(0, 8) == "SQL_TSI_") name.remove_prefix(8);
  if (name == "FRAC_SECOND") return TimeUnit::kMicrosecond;
  for (int u = 0; u <= static_cast<int>(TimeUnit::kEpoch); ++u)
    if (name == unitName(static_cast<TimeUnit>(u))) return static_cast<TimeUnit>(u);
  return std::nullopt;
}

TimeUnit unitArg(ScalarOp op, const ExprPtr& e) {
  if (e->kind != ExprKind::kLiteral || !std::holds_alternative<std::string>(e->literal))
    throw UserError(fmt::format("The time unit of {} must be a unit keyword such as DAY", scalarOpName(op)));
  const std::string& text = std::get<std::string>(e->literal);
  const std::optional<TimeUnit> u = parseTimeUnit(text);
  if (!u) throw UserError(fmt::format("'{}' is not a valid time unit for {}", text, scalarOpName(op)));
  return *u;
}

bool isTemporal(ScalarOp op, size_t num_args) {
  if (op == ScalarOp::kFloor || op == ScalarOp::kCeil) return num_args == 2;
  if (op == ScalarOp::kProctime || op == ScalarOp::kToTimestampLtz) return true;
  return static_cast<int>(op) >= static_cast<int>(ScalarOp::kExtract) &&
         static_cast<int>(op) <= static_cast<int>(ScalarOp::kConvertTz);
}

LogicalType inferTemporalType(ScalarOp op, std::vector<ExprPtr>& args) {
  const char* name = scalarOpName(op);
  size_t n = args.size();
  if (table::usesSessionTimeZone(op)) {
    // The planner appended the session zone; validate it against the tz database now.
    SLUICE_CHECK(n >= 1 && args.back()->kind == ExprKind::kLiteral &&
                     std::holds_alternative<std::string>(args.back()->literal),
                 "{} without its session time zone argument", name);
    ZoneRules::resolve(std::get<std::string>(args.back()->literal));
    --n;
  }
  switch (op) {
    case ScalarOp::kExtract: {
      checkArity(op, n, 2, 2);
      const TimeUnit u = unitArg(op, args[0]);
      const std::string forms = "'EXTRACT(<DATETIME_INTERVAL> FROM <DATETIME>)'";
      requireDatetime(op, args, 1, true, forms);
      const TypeId id = args[1]->type.id;
      if ((id == TypeId::kDate && !isDateUnit(u) && u != TimeUnit::kEpoch) || (id == TypeId::kTime && isDateUnit(u)))
        throw UserError(fmt::format("Cannot apply 'EXTRACT' to arguments of type 'EXTRACT(<INTERVAL {}> FROM <{}>)'",
                                    unitName(u), args[1]->type.withNullable(true).toString()));
      return LogicalType::bigint(args[1]->type.nullable);
    }
    case ScalarOp::kDayOfWeek: case ScalarOp::kDayOfYear: case ScalarOp::kWeek: case ScalarOp::kQuarter:
      checkArity(op, n, 1, 1);
      requireDatetime(op, args, 0, false, fmt::format("'{0}(<DATE>)', '{0}(<TIMESTAMP>)'", name));
      return LogicalType::bigint(args[0]->type.nullable);
    case ScalarOp::kFloor: case ScalarOp::kCeil: {
      const TimeUnit u = unitArg(op, args[1]);
      requireDatetime(op, args, 0, false, fmt::format("'{0}(<DATETIME> TO <TIME_UNIT>)'", name));
      if (u == TimeUnit::kDow || u == TimeUnit::kIsoDow || u == TimeUnit::kDoy || u == TimeUnit::kEpoch ||
          u == TimeUnit::kMicrosecond)
        throw UserError(fmt::format("'{}' is not a valid time unit for {}", unitName(u), name));
      return args[0]->type;
    }
    case ScalarOp::kTimestampAdd: {
      checkArity(op, n, 3, 3);
      const TimeUnit u = unitArg(op, args[0]);
      const std::string forms = "'TIMESTAMPADD(<TIME_UNIT>, <INTEGER>, <DATETIME>)'";
      requireIntegral(op, args, 1, forms);
      requireDatetime(op, args, 2, true, forms, /*allow_ltz=*/true);
      const LogicalType& t = args[2]->type;
      const bool nullable = args[1]->type.nullable || t.nullable;
      if (u == TimeUnit::kDow || u == TimeUnit::kIsoDow || u == TimeUnit::kDoy || u == TimeUnit::kEpoch)
        throw UserError(fmt::format("'{}' is not a valid time unit for TIMESTAMPADD", unitName(u)));
      if (t.id == TypeId::kDate && !isDateUnit(u)) return LogicalType::timestamp(u == TimeUnit::kMillisecond ? 3 : 0, nullable);
      if (t.id == TypeId::kTime && isDateUnit(u))
        throw UserError(fmt::format("Cannot add a {} interval to a TIME value", unitName(u)));
      return t.withNullable(nullable);
    }
    case ScalarOp::kTimestampDiff: {
      checkArity(op, n, 3, 3);
      const TimeUnit u = unitArg(op, args[0]);
      const std::string forms = "'TIMESTAMPDIFF(<TIME_UNIT>, <DATETIME>, <DATETIME>)'";
      requireDatetime(op, args, 1, false, forms, /*allow_ltz=*/true);
      requireDatetime(op, args, 2, false, forms, /*allow_ltz=*/true);
      if ((args[1]->type.id == TypeId::kTimestampLtz) != (args[2]->type.id == TypeId::kTimestampLtz))
        cannotApply(op, args, forms);
      if (u == TimeUnit::kDow || u == TimeUnit::kIsoDow || u == TimeUnit::kDoy || u == TimeUnit::kEpoch)
        throw UserError(fmt::format("'{}' is not a valid time unit for TIMESTAMPDIFF", unitName(u)));
      return LogicalType::integer(args[1]->type.nullable || args[2]->type.nullable);
    }
    case ScalarOp::kCurrentTimestamp: case ScalarOp::kNow:
      checkArity(op, n, 0, 0);
      return LogicalType::timestampLtz(3, false);
    case ScalarOp::kLocalTimestamp: case ScalarOp::kProctime:
      checkArity(op, n, 0, 0);
      return LogicalType::timestamp(3, false);
    case ScalarOp::kToTimestampLtz: {
      // ToTimestampLtzFunction (Flink 2.x): epoch seconds (precision 0) or millis (3, the default), or text.
      checkArity(op, n, 1, 3);
      if (isNullLiteral(args[0])) args[0] = typedNull(n == 1 ? LogicalType::string() : LogicalType::bigint());
      if (args[0]->type.isNumeric()) {
        // ToTimestampLtzTypeStrategy: a literal precision is the result's, else TIMESTAMP_LTZ(3); nullable.
        int32_t precision = 3;
        if (n > 2) cannotApply(op, args, kToTimestampLtzForms);
        if (n == 2) {
          requireIntegral(op, args, 1, kToTimestampLtzForms);
          const Expr& p = *args[1];
          if (p.kind == ExprKind::kLiteral && std::holds_alternative<int64_t>(p.literal)) {
            const int64_t v = std::get<int64_t>(p.literal);
            if (v != 0 && v != 3)
              throw UserError(fmt::format("The precision value '{}' for function TO_TIMESTAMP_LTZ(numeric, precision) "
                                          "is unsupported, the supported value is '0' for second or '3' for millisecond",
                                          v));
            precision = static_cast<int32_t>(v);
          }
        }
        return LogicalType::timestampLtz(precision, true);
      }
      requireStrings(op, args, 0, n, kToTimestampLtzForms);
      // A zone written as a literal is checked now; one read from a column gives NULL when unknown (Flink).
      if (n == 3 && isStringLiteral(args[2])) ZoneRules::resolve(std::get<std::string>(args[2]->literal));
      if (n >= 2 && isStringLiteral(args[1])) DateTimePattern(std::get<std::string>(args[1]->literal));
      return LogicalType::timestampLtz(3, true);  // NULL when the text does not parse
    }
    case ScalarOp::kCurrentDate:
      checkArity(op, n, 0, 0);
      return LogicalType::date(false);
    case ScalarOp::kCurrentTime: case ScalarOp::kLocalTime:
      checkArity(op, n, 0, 0);
      return LogicalType::time(0, false);
    case ScalarOp::kUnixTimestamp: {
      checkArity(op, n, 0, 2);
      requireStrings(op, args, 0, n, "'UNIX_TIMESTAMP()', 'UNIX_TIMESTAMP(<STRING>)', 'UNIX_TIMESTAMP(<STRING>, <STRING>)'");
      bool nullable = false;
      for (size_t i = 0; i < n; ++i) nullable = nullable || args[i]->type.nullable;
      return LogicalType::bigint(nullable);
    }
    case ScalarOp::kFromUnixtime: {
      checkArity(op, n, 1, 2);
      const std::string forms = "'FROM_UNIXTIME(<INTEGER>)', 'FROM_UNIXTIME(<INTEGER>, <STRING>)'";
      requireIntegral(op, args, 0, forms);
      if (n == 2) requireString(op, args, 1, forms);
      return LogicalType::string(args[0]->type.nullable || (n == 2 && args[1]->type.nullable));
    }
    case ScalarOp::kToDate:
      checkArity(op, n, 1, 2);
      requireStrings(op, args, 0, n, "'TO_DATE(<STRING>)', 'TO_DATE(<STRING>, <STRING>)'");
      return LogicalType::date(true);  // NULL when the text does not parse
    case ScalarOp::kConvertTz:
      checkArity(op, n, 3, 3);
      requireStrings(op, args, 0, 3, "'CONVERT_TZ(<STRING>, <STRING>, <STRING>)'");
      return LogicalType::string(true);
    default:
      throw InternalError(fmt::format("not a temporal function: {}", name));
  }
}

}  // namespace sluice::table::internal

namespace sluice::table {

bool usesSessionTimeZone(ScalarOp op) {
  switch (op) {
    case ScalarOp::kCurrentTimestamp: case ScalarOp::kCurrentDate: case ScalarOp::kCurrentTime:
    case ScalarOp::kLocalTimestamp: case ScalarOp::kLocalTime: case ScalarOp::kNow: case ScalarOp::kUnixTimestamp:
    case ScalarOp::kFromUnixtime: case ScalarOp::kProctime:
      return true;
    default:
      return false;
  }
}

}  // namespace sluice::table
