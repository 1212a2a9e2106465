#include "table/planner/sql_to_rel.h"

#include <algorithm>
#include <optional>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "common/config.h"
#include "table/functions/time_zone.h"
#include "common/error.h"
#include "table/planner/sql_to_rel_internal.h"
#include "table/functions/user_function.h"
#include "table/planner/type_coercion.h"
#include "types/value_format.h"

namespace sluice::table {

namespace {
/// Flink built-ins the engine does not have yet: named as such rather than as unknown functions.
bool isFlinkBuiltinFunction(const std::string& name) {
  static const char* const kNames[] = {
      "ROW", "ARRAY", "MAP", "CARDINALITY", "ELEMENT", "STR_TO_MAP",
      "COLLECT", "ROW_NUMBER",
      "RANK", "DENSE_RANK", "LAG", "LEAD", "PROCTIME", "CURRENT_WATERMARK", "SOURCE_WATERMARK"};
  for (const char* n : kNames)
    if (name == n) return true;
  return false;
}
}  // namespace

ExprPtr SqlToRelConverter::Impl::resolveIdentifier(const sql::Expr& e, const Scope& scope) const {
  const auto& parts = e.names;
  const ScopeColumn* found = nullptr;
  // `name[.field...]` or `qualifier.name[.field...]`; a qualified match wins over a nested one.
  auto matches = [&](const ScopeColumn& c, size_t skip) {
    if (parts.size() != skip + 1 + c.nested.size() || parts[skip] != c.name) return false;
    for (size_t k = 0; k < c.nested.size(); ++k)
      if (parts[skip + 1 + k] != c.nested[k]) return false;
    return skip == 0 || c.qualifier == parts[0];
  };
  const ScopeColumn* qualified = nullptr;
  // The innermost query that has the name wins (a correlated subquery sees the outer row's columns last).
  int max_depth = 0;
  for (const auto& c : scope.columns) max_depth = std::max(max_depth, c.depth);
  for (int depth = 0; depth <= max_depth && found == nullptr && qualified == nullptr; ++depth) {
    for (const auto& c : scope.columns) {
      if (c.depth != depth) continue;
      if (parts.size() > 1 && matches(c, 1)) {
        qualified = &c;
      } else if (matches(c, 0)) {
        if (found != nullptr) fail(e.pos, fmt::format("Column '{}' is ambiguous", sql::qualifiedNameToString(parts)));
        found = &c;
      }
    }
  }
  if (qualified != nullptr) found = qualified;
  if (found == nullptr) {
    std::vector<std::string> names;
    for (const auto& c : scope.columns) names.push_back(c.name);
    std::string close = closestConfigKey(parts.back(), names);
    std::string text = sql::qualifiedNameToString(parts);
    if (parts.size() == 2) {
      bool known_table = std::any_of(scope.columns.begin(), scope.columns.end(),
                                     [&](const ScopeColumn& c) { return c.qualifier == parts[0] || c.name == parts[0]; });
      if (!known_table) fail(e.pos, fmt::format("Table '{}' not found", parts[0]));
    }
    fail(e.pos, close.empty() ? fmt::format("Column '{}' not found in any table", text)
                              : fmt::format("Column '{}' not found in any table; did you mean '{}'?", text, close));
  }
  if (found->window_property)
    fail(e.pos, fmt::format("'{}' can only be used in a window aggregation grouped by window_start and window_end",
                            found->name));
  if (found->row_value)
    fail(e.pos, fmt::format("ROW values are not supported yet: '{}' is a ROW column ({}); name one of its fields, "
                            "e.g. {}.{}",
                            found->name, found->type.toString(), found->name,
                            found->type.fields && found->type.fields->size() ? found->type.fields->names[0] : "f"));
  return makeInputRef(found->index, found->type);
}

ExprPtr SqlToRelConverter::Impl::literal(const sql::Expr& e) const {
  switch (e.literal_kind) {
    case sql::LiteralKind::kInteger: {
      errno = 0;
      char* end = nullptr;
      unsigned long long v = std::strtoull(e.text.c_str(), &end, 10);
      if (errno != 0 || v > static_cast<unsigned long long>(INT64_MAX)) {
        // Beyond BIGINT: Flink types it DECIMAL(p, 0); we keep integers within 64 bits.
        fail(e.pos, fmt::format("Numeric literal '{}' out of range", e.text));
      }
      if (v <= static_cast<unsigned long long>(INT32_MAX))
        return makeLiteral(static_cast<int64_t>(v), LogicalType::integer(false));
      return makeLiteral(static_cast<int64_t>(v), LogicalType::bigint(false));
    }
    case sql::LiteralKind::kDecimal: {
      std::string digits;
      int scale = 0;
      bool after = false;
      for (char c : e.text) {
        if (c == '.') {
          after = true;
          continue;
        }
        digits += c;
        if (after) ++scale;
      }
      size_t nz = digits.find_first_not_of('0');
      std::string sig = nz == std::string::npos ? "0" : digits.substr(nz);
      int precision = std::max<int>(static_cast<int>(sig.size()), scale);
      if (precision == 0) precision = 1;
      if (sig.size() > 18) fail(e.pos, fmt::format("Decimal literal '{}' has more than 18 digits", e.text));
      return makeLiteral(static_cast<int64_t>(std::stoll(sig)), LogicalType::decimal(precision, scale, false));
    }
    case sql::LiteralKind::kApproximate:
      // As Java's Double.parseDouble: out of range gives 0.0 or Infinity, never an error.
      return makeLiteral(std::strtod(e.text.c_str(), nullptr), LogicalType::doubleType(false));
    case sql::LiteralKind::kString:
      return makeLiteral(e.text,
                         LogicalType::charType(static_cast<int32_t>(std::max<size_t>(1, e.text.size())), false));
    case sql::LiteralKind::kBoolean:
      return makeLiteral(static_cast<int64_t>(e.bool_value ? 1 : 0), LogicalType::boolean(false));
    case sql::LiteralKind::kNull:
      return makeLiteral(std::monostate{}, LogicalType::null());
    case sql::LiteralKind::kTimestamp: {
      int64_t ms = 0;
      int precision = 0;
      if (!parseTimestampLiteral(e.text, ms, precision))
        fail(e.pos, fmt::format("Illegal TIMESTAMP literal '{}': not in format 'yyyy-MM-dd HH:mm:ss[.fff]'", e.text));
      return makeLiteral(ms, LogicalType::timestamp(precision, false));
    }
    case sql::LiteralKind::kDate: {
      int64_t days = 0;
      if (!types::parseDate(e.text, days))
        fail(e.pos, fmt::format("Illegal DATE literal '{}': not in format 'yyyy-MM-dd'", e.text));
      return makeLiteral(days, LogicalType::date(false));
    }
    case sql::LiteralKind::kTime: {
      int64_t ms = 0;
      if (!types::parseTime(e.text, ms))
        fail(e.pos, fmt::format("Illegal TIME literal '{}': not in format 'HH:mm:ss'", e.text));
      // The precision is the number of fraction digits written (Calcite's TimeString).
      const size_t dot = e.text.find('.');
      int32_t p = 0;
      if (dot != std::string::npos) {
        for (size_t i = dot + 1; i < e.text.size() && std::isdigit(static_cast<unsigned char>(e.text[i])); ++i) ++p;
      }
      return makeLiteral(ms, LogicalType::time(std::min(p, 9), false));
    }
    case sql::LiteralKind::kInterval:
      return makeLiteral(sql::intervalMillis(e), LogicalType::intervalDayTime(false));
  }
  fail(e.pos, "unsupported literal");
}

bool SqlToRelConverter::Impl::parseTimestampLiteral(const std::string& s, int64_t& ms, int& precision) {
  types::DateTimeParts p{};
  unsigned y = 0;
  int n = 0;
  if (std::sscanf(s.c_str(), "%4u-%2u-%2u %2u:%2u:%2u%n", &y, &p.month, &p.day, &p.hour, &p.minute, &p.second, &n) != 6)
    return false;
  p.year = y;
  precision = 0;
  size_t i = static_cast<size_t>(n);
  if (i < s.size() && s[i] == '.') {
    ++i;
    unsigned frac = 0;
    int digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (digits < 3) frac = frac * 10 + static_cast<unsigned>(s[i] - '0');
      ++digits;
      ++i;
    }
    for (int d = digits; d < 3; ++d) frac *= 10;
    p.millis = frac;
    precision = digits;
  }
  if (i != s.size() || p.month < 1 || p.month > 12 || p.day < 1 || p.day > 31 || p.hour > 23 || p.minute > 59 ||
      p.second > 59)
    return false;
  ms = types::joinTimestamp(p);
  return true;
}

namespace {

bool isLtz(const ExprPtr& e) { return e->type.id == TypeId::kTimestampLtz; }

/// The functions that read calendar or clock fields: on a TIMESTAMP_LTZ they read the session zone's
/// wall clock (Flink converts with the session zone), so their argument `index` is cast to TIMESTAMP.
std::optional<size_t> fieldArgument(ScalarOp op, size_t num_args) {
  switch (op) {
    case ScalarOp::kExtract: return 1;
    case ScalarOp::kHour: case ScalarOp::kMinute: case ScalarOp::kSecond: case ScalarOp::kYear: case ScalarOp::kMonth:
    case ScalarOp::kDayOfMonth: case ScalarOp::kDayOfWeek: case ScalarOp::kDayOfYear: case ScalarOp::kWeek:
    case ScalarOp::kQuarter: case ScalarOp::kDateFormat:
      return 0;
    case ScalarOp::kFloor: case ScalarOp::kCeil:
      if (num_args == 2) return 0;
      return std::nullopt;
    default: return std::nullopt;
  }
}

/// Operators whose arguments must share a type: a TIMESTAMP among TIMESTAMP_LTZ values is cast to
/// TIMESTAMP_LTZ (Flink's implicit cast, LogicalTypeMerging's common type). Returns the positions to
/// unify (CASE: its values, not its conditions).
std::vector<size_t> unifiedArguments(ScalarOp op, size_t n) {
  std::vector<size_t> out;
  switch (op) {
    case ScalarOp::kEquals: case ScalarOp::kNotEquals: case ScalarOp::kLessThan: case ScalarOp::kLessThanOrEqual:
    case ScalarOp::kGreaterThan: case ScalarOp::kGreaterThanOrEqual: case ScalarOp::kBetween:
    case ScalarOp::kNotBetween: case ScalarOp::kIn: case ScalarOp::kNotIn: case ScalarOp::kCoalesce:
    case ScalarOp::kGreatest: case ScalarOp::kLeast: case ScalarOp::kIsDistinctFrom:
    case ScalarOp::kIsNotDistinctFrom: case ScalarOp::kNullIf: case ScalarOp::kIfNull:
      for (size_t i = 0; i < n; ++i) out.push_back(i);
      break;
    case ScalarOp::kCase:
      for (size_t i = 1; i < n; i += 2) out.push_back(i);
      if (n % 2 == 1) out.push_back(n - 1);
      break;
    case ScalarOp::kIf:
      if (n == 3) out = {1, 2};
      break;
    default:
      break;
  }
  return out;
}

}  // namespace

ExprPtr SqlToRelConverter::Impl::call(const sql::Expr& at, ScalarOp op, std::vector<ExprPtr> args) const {
  try {
    const std::string zone = config.get(options::kLocalTimeZone);
    if (auto k = fieldArgument(op, args.size()); k && *k < args.size() && isLtz(args[*k])) {
      const int32_t p = args[*k]->type.precision;
      args[*k] = makeCast(args[*k], LogicalType::timestamp(p, args[*k]->type.nullable), zone);
      ExprPtr r = makeCall(op, std::move(args));
      // FLOOR / CEIL of a TIMESTAMP_LTZ is a TIMESTAMP_LTZ: the local boundary as an instant again.
      if (op == ScalarOp::kFloor || op == ScalarOp::kCeil) r = makeCast(r, LogicalType::timestampLtz(p, r->type.nullable), zone);
      return r;
    }
    if (op == ScalarOp::kTimestampAdd && args.size() == 3 && isLtz(args[2]) && args[0]->kind == ExprKind::kLiteral &&
        std::holds_alternative<std::string>(args[0]->literal)) {
      // Adding months moves the wall clock of the session zone (the day clamped), then back to an instant;
      // smaller units add their milliseconds to the instant.
      const std::string& u = std::get<std::string>(args[0]->literal);
      const bool months = u == "MONTH" || u == "QUARTER" || u == "YEAR" || u == "SQL_TSI_MONTH" ||
                          u == "SQL_TSI_QUARTER" || u == "SQL_TSI_YEAR" || u == "DECADE" || u == "CENTURY" ||
                          u == "MILLENNIUM";
      if (months) {
        const LogicalType t = args[2]->type;
        args[2] = makeCast(args[2], LogicalType::timestamp(t.precision, t.nullable), zone);
        ExprPtr r = makeCall(op, std::move(args));
        return makeCast(r, LogicalType::timestampLtz(t.precision, r->type.nullable), zone);
      }
    }
    const std::vector<size_t> unified = unifiedArguments(op, args.size());
    const bool any_ltz = std::any_of(unified.begin(), unified.end(), [&](size_t i) { return isLtz(args[i]); });
    if (any_ltz) {
      for (size_t i : unified)
        if (args[i]->type.id == TypeId::kTimestamp)
          args[i] = makeCast(args[i], LogicalType::timestampLtz(args[i]->type.precision, args[i]->type.nullable), zone);
    }
    return makeCall(op, std::move(args));
  } catch (const SqlError&) {
    throw;
  } catch (const UserError& err) {
    fail(at.pos, err.what());
  }
}

ExprPtr SqlToRelConverter::Impl::convert(const sql::Expr& e, const Scope& scope, const NodeResolver* resolver) const {
  if (resolver) {
    if (auto r = (*resolver)(e)) return *r;
  }
  auto sub = [&](size_t i) { return convert(*e.children[i], scope, resolver); };
  switch (e.kind) {
    case sql::ExprKind::kIdentifier:
      return resolveIdentifier(e, scope);
    case sql::ExprKind::kLiteral:
      return literal(e);
    case sql::ExprKind::kUnary: {
      if (e.unary_op == sql::UnaryOp::kPlus) return sub(0);
      if (e.unary_op == sql::UnaryOp::kNot) return call(e, ScalarOp::kNot, {sub(0)});
      const sql::Expr& operand = *e.children[0];
      if (operand.kind == sql::ExprKind::kLiteral && operand.literal_kind == sql::LiteralKind::kInteger) {
        if (operand.text == "9223372036854775808") return makeLiteral(INT64_MIN, LogicalType::bigint(false));
        if (operand.text == "2147483648")
          return makeLiteral(static_cast<int64_t>(INT32_MIN), LogicalType::integer(false));
      }
      ExprPtr v = sub(0);
      if (v->kind == ExprKind::kLiteral && v->type.id != TypeId::kDouble && v->type.id != TypeId::kNull &&
          std::holds_alternative<int64_t>(v->literal))
        return makeLiteral(-std::get<int64_t>(v->literal), v->type);
      if (v->kind == ExprKind::kLiteral && std::holds_alternative<double>(v->literal))
        return makeLiteral(-std::get<double>(v->literal), v->type);
      return call(e, ScalarOp::kNegate, {v});
    }
    case sql::ExprKind::kBinary: {
      static const std::pair<sql::BinaryOp, ScalarOp> kOps[] = {
          {sql::BinaryOp::kPlus, ScalarOp::kPlus},
          {sql::BinaryOp::kMinus, ScalarOp::kMinus},
          {sql::BinaryOp::kTimes, ScalarOp::kTimes},
          {sql::BinaryOp::kDivide, ScalarOp::kDivide},
          {sql::BinaryOp::kMod, ScalarOp::kMod},
          {sql::BinaryOp::kConcat, ScalarOp::kConcat},
          {sql::BinaryOp::kEquals, ScalarOp::kEquals},
          {sql::BinaryOp::kNotEquals, ScalarOp::kNotEquals},
          {sql::BinaryOp::kLess, ScalarOp::kLessThan},
          {sql::BinaryOp::kLessOrEqual, ScalarOp::kLessThanOrEqual},
          {sql::BinaryOp::kGreater, ScalarOp::kGreaterThan},
          {sql::BinaryOp::kGreaterOrEqual, ScalarOp::kGreaterThanOrEqual},
          {sql::BinaryOp::kAnd, ScalarOp::kAnd},
          {sql::BinaryOp::kOr, ScalarOp::kOr},
      };
      if (e.binary_op == sql::BinaryOp::kPlus || e.binary_op == sql::BinaryOp::kMinus) {
        // x +/- INTERVAL 'n' MONTH|YEAR (and INTERVAL + x): TIMESTAMPADD(MONTH, +/-n, x), which clamps the
        // day to the month's end as Flink's DATE/TIMESTAMP + INTERVAL YEAR TO MONTH does.
        const bool right = sql::isYearMonthInterval(*e.children[1]);
        const bool left = e.binary_op == sql::BinaryOp::kPlus && sql::isYearMonthInterval(*e.children[0]);
        if (right || left) {
          const sql::Expr& iv = *e.children[right ? 1 : 0];
          ExprPtr x = sub(right ? 0 : 1);
          if (x->type.id != TypeId::kDate && !x->type.isTimestampFamily())
            fail(e.pos, fmt::format("Cannot apply '{}' to arguments of type '<{}> {} <INTERVAL {}>'. A year-month "
                                    "interval can be added to or subtracted from a DATE or TIMESTAMP",
                                    sql::binaryOpToString(e.binary_op), x->type.withNullable(true).toString(),
                                    sql::binaryOpToString(e.binary_op), sql::intervalUnitToString(iv.interval_unit)));
          int64_t months = sql::intervalMonths(iv);
          if (e.binary_op == sql::BinaryOp::kMinus) months = -months;
          return call(e, ScalarOp::kTimestampAdd,
                      {makeLiteral(std::string("MONTH"), LogicalType::charType(5, false)),
                       makeLiteral(months, LogicalType::integer(false)), x});
        }
      }
      for (const auto& [b, s] : kOps)
        if (b == e.binary_op) return call(e, s, {sub(0), sub(1)});
      fail(e.pos, "unsupported operator");
    }
    case sql::ExprKind::kBetween:
      return call(e, e.negated ? ScalarOp::kNotBetween : ScalarOp::kBetween, {sub(0), sub(1), sub(2)});
    case sql::ExprKind::kIn: {
      if (e.subquery)
        fail(e.pos, "IN (subquery) is supported only as a conjunct of a WHERE clause (a semi or anti join)");
      std::vector<ExprPtr> args;
      for (size_t i = 0; i < e.children.size(); ++i) args.push_back(sub(i));
      return call(e, e.negated ? ScalarOp::kNotIn : ScalarOp::kIn, std::move(args));
    }
    case sql::ExprKind::kLike: {
      std::vector<ExprPtr> args;
      for (size_t i = 0; i < e.children.size(); ++i) args.push_back(sub(i));
      return call(e, e.negated ? ScalarOp::kNotLike : ScalarOp::kLike, std::move(args));
    }
    case sql::ExprKind::kIsNull:
      return call(e, e.negated ? ScalarOp::kIsNotNull : ScalarOp::kIsNull, {sub(0)});
    case sql::ExprKind::kIsTrue: {
      ExprPtr r = call(e, ScalarOp::kIsTrue, {sub(0)});
      return e.negated ? call(e, ScalarOp::kNot, {r}) : r;
    }
    case sql::ExprKind::kIsFalse: {
      ExprPtr r = call(e, ScalarOp::kIsFalse, {sub(0)});
      return e.negated ? call(e, ScalarOp::kNot, {r}) : r;
    }
    case sql::ExprKind::kCase: {
      std::vector<ExprPtr> args;
      size_t i = 0;
      ExprPtr operand;
      if (e.case_has_operand) operand = sub(i++);
      size_t end = e.children.size() - (e.case_has_else ? 1 : 0);
      for (; i + 1 < end + 1 && i < end; i += 2) {
        ExprPtr when = sub(i);
        if (operand) when = call(*e.children[i], ScalarOp::kEquals, {operand, when});
        args.push_back(when);
        args.push_back(sub(i + 1));
      }
      if (e.case_has_else) args.push_back(sub(e.children.size() - 1));
      return call(e, ScalarOp::kCase, std::move(args));
    }
    case sql::ExprKind::kCast: {
      if (e.cast_type.id == TypeId::kRow)
        fail(e.pos, fmt::format("ROW values are not supported yet: CAST to {}", e.cast_type.toString()));
      ExprPtr v = sub(0);
      try {
        LogicalType target =
            e.cast_type.withNullable(e.cast_type.nullable && v->type.nullable ? true : e.cast_type.nullable);
        const std::string zone = config.get(options::kLocalTimeZone);
        return e.try_cast ? makeTryCast(v, target, zone) : makeCast(v, target, zone);
      } catch (const SqlError&) {
        throw;
      } catch (const UserError& err) {
        fail(e.pos, err.what());
      }
    }
    case sql::ExprKind::kCall: {
      if (isAggregateCall(e)) fail(e.pos, fmt::format("Aggregate function {} is not allowed here", e.name));
      if (e.filter) fail(e.filter->pos, "FILTER must be applied to aggregate function");
      if (e.name == "TUMBLE" || e.name == "HOP" || e.name == "CUMULATE" || e.name == "SESSION")
        fail(e.pos, fmt::format("Window function {} can only be used in FROM TABLE(...)", e.name));
      // Flink's resolution order: temporary system functions, built-ins, temporary and catalog functions.
      const CatalogFunction* udf = catalog.findFunction(e.name, /*system=*/true);
      std::optional<ScalarOp> op = udf ? std::nullopt : scalarFunctionByName(e.name);
      if (!udf && !op) udf = catalog.findFunction(e.name, /*system=*/false);
      if (udf) {
        auto scalar = std::dynamic_pointer_cast<const ScalarFunction>(udf->function);
        if (!scalar)
          fail(e.pos, fmt::format("{} is a table function: call it in FROM ..., LATERAL TABLE({}(...))", udf->name,
                                  udf->name));
        std::vector<ExprPtr> args;
        for (size_t i = 0; i < e.children.size(); ++i) args.push_back(sub(i));
        try {
          return makeUserFunctionCall(udf->name, std::move(scalar), std::move(args));
        } catch (const SqlError&) {
          throw;
        } catch (const UserError& err) {
          fail(e.pos, err.what());
        }
      }
      if (!op) {
        if (isFlinkBuiltinFunction(e.name)) fail(e.pos, fmt::format("Function {} is not supported yet", e.name));
        fail(e.pos, fmt::format("No match found for function signature {}(...)", e.name));
      }
      std::vector<ExprPtr> args;
      for (size_t i = 0; i < e.children.size(); ++i) args.push_back(sub(i));
      if (usesSessionTimeZone(*op)) {
        // The session time zone travels with the call (validated by makeCall against the tz database).
        const std::string zone = config.get(options::kLocalTimeZone);
        args.push_back(makeLiteral(zone, LogicalType::charType(static_cast<int32_t>(std::max<size_t>(1, zone.size())), false)));
      }
      if (*op == ScalarOp::kTrim) {
        // TRIM(mode chars FROM s): the evaluator takes (s, chars, mode as INT literal 0/1/2).
        if (args.size() == 1) args.push_back(makeLiteral(std::string(" "), LogicalType::charType(1, false)));
        args.push_back(makeLiteral(static_cast<int64_t>(e.trim_mode), LogicalType::integer(false)));
      }
      return call(e, *op, std::move(args));
    }
    case sql::ExprKind::kDescriptor:
    case sql::ExprKind::kTableArg:
      fail(e.pos, "DESCRIPTOR and TABLE arguments are only allowed in window functions");
    case sql::ExprKind::kOver:
      // Ranking functions as whole SELECT items are planned by sql_to_rel_rank.cc before this.
      fail(e.pos, overNotHere(e));
    case sql::ExprKind::kExists:
      // WHERE conjuncts [NOT] EXISTS (...) are semi / anti joins (sql_to_rel_join.cc); elsewhere not yet.
      fail(e.pos, "EXISTS (subquery) is only supported as a conjunct of a WHERE clause (AND-ed with the rest), "
                  "and not yet in the WHERE of a subquery under IN or EXISTS");
  }
  fail(e.pos, "unsupported expression");
}

}  // namespace sluice::table
