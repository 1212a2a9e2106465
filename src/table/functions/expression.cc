#include "table/functions/expression.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "common/error.h"
#include "table/functions/builtins.h"
#include "table/functions/time_zone.h"
#include "table/functions/type_rules.h"
#include "types/value_format.h"

namespace sluice::table {

using types::LogicalType;
using types::TypeId;

namespace internal {

std::string argTypeName(const LogicalType& t) { return fmt::format("<{}>", t.withNullable(true).toString()); }

bool isInfix(ScalarOp op) {
  switch (op) {
    case ScalarOp::kPlus: case ScalarOp::kMinus: case ScalarOp::kTimes: case ScalarOp::kDivide:
    case ScalarOp::kEquals: case ScalarOp::kNotEquals: case ScalarOp::kLessThan:
    case ScalarOp::kLessThanOrEqual: case ScalarOp::kGreaterThan: case ScalarOp::kGreaterThanOrEqual:
    case ScalarOp::kAnd: case ScalarOp::kOr: case ScalarOp::kLike: case ScalarOp::kNotLike:
      return true;
    default:
      return false;
  }
}

bool isPostfix(ScalarOp op) {
  return op == ScalarOp::kIsNull || op == ScalarOp::kIsNotNull || op == ScalarOp::kIsTrue ||
         op == ScalarOp::kIsFalse;
}

/// The call as Calcite prints it in "Cannot apply" errors: "<INT> + <STRING>", "UPPER(<INT>)".
std::string signature(ScalarOp op, const std::vector<ExprPtr>& args) {
  const std::string name = scalarOpName(op);
  if (isInfix(op) && args.size() == 2) return fmt::format("{} {} {}", argTypeName(args[0]->type), name, argTypeName(args[1]->type));
  if ((op == ScalarOp::kNegate || op == ScalarOp::kNot) && args.size() == 1)
    return fmt::format("{}{}{}", name, op == ScalarOp::kNot ? " " : "", argTypeName(args[0]->type));
  if (isPostfix(op) && args.size() == 1) return fmt::format("{} {}", argTypeName(args[0]->type), name);
  std::string s = fmt::format("{}(", name);
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) s += ", ";
    s += argTypeName(args[i]->type);
  }
  s += ')';
  return s;
}

void cannotApply(ScalarOp op, const std::vector<ExprPtr>& args, const std::string& forms) {
  throw UserError(fmt::format("Cannot apply '{}' to arguments of type '{}'. Supported form(s): {}",
                              scalarOpName(op), signature(op, args), forms));
}

void checkArity(ScalarOp op, size_t n, size_t lo, size_t hi) {
  if (n >= lo && n <= hi) return;
  std::string expect;
  if (lo == hi) expect = fmt::format("{} argument{}", lo, lo == 1 ? "" : "s");
  else if (hi == std::numeric_limits<size_t>::max()) expect = fmt::format("at least {} arguments", lo);
  else expect = fmt::format("{} to {} arguments", lo, hi);
  throw UserError(fmt::format("Invalid number of arguments to function '{}'. Was expecting {}", scalarOpName(op), expect));
}

bool isNullLiteral(const ExprPtr& e) { return e->type.id == TypeId::kNull; }

/// Gives an untyped NULL literal a real type (the type it is used as).
ExprPtr typedNull(const LogicalType& t) { return makeLiteral(std::monostate{}, t.withNullable(true)); }

void retypeNulls(std::vector<ExprPtr>& args, size_t from, const LogicalType& t) {
  for (size_t i = from; i < args.size(); ++i)
    if (isNullLiteral(args[i])) args[i] = typedNull(t);
}

bool anyNullable(const std::vector<ExprPtr>& args) {
  for (const auto& a : args)
    if (a->type.nullable) return true;
  return false;
}

void requireBoolean(ScalarOp op, std::vector<ExprPtr>& args, size_t from, size_t step, const std::string& forms,
                    size_t end) {
  for (size_t i = from; i < std::min(end, args.size()); i += step) {
    if (isNullLiteral(args[i])) args[i] = typedNull(LogicalType::boolean());
    if (args[i]->type.id != TypeId::kBoolean) cannotApply(op, args, forms);
  }
}

void requireString(ScalarOp op, std::vector<ExprPtr>& args, size_t i, const std::string& forms) {
  if (i >= args.size()) return;
  if (isNullLiteral(args[i])) args[i] = typedNull(LogicalType::string());
  if (!args[i]->type.isString()) cannotApply(op, args, forms);
}

void requireIntegral(ScalarOp op, std::vector<ExprPtr>& args, size_t i, const std::string& forms) {
  if (i >= args.size()) return;
  if (isNullLiteral(args[i])) args[i] = typedNull(LogicalType::integer());
  if (!args[i]->type.isIntegral()) cannotApply(op, args, forms);
}

void requireTimestamp(ScalarOp op, std::vector<ExprPtr>& args, size_t i, const std::string& forms) {
  if (isNullLiteral(args[i])) args[i] = typedNull(LogicalType::timestamp(3));
  if (args[i]->type.id != TypeId::kTimestamp) cannotApply(op, args, forms);
}

}  // namespace internal

namespace {
using namespace internal;

void arityOf(ScalarOp op, size_t n) {
  constexpr size_t kMany = std::numeric_limits<size_t>::max();
  switch (op) {
    case ScalarOp::kNegate: case ScalarOp::kNot: case ScalarOp::kIsNull: case ScalarOp::kIsNotNull:
    case ScalarOp::kIsTrue: case ScalarOp::kIsFalse: case ScalarOp::kUpper: case ScalarOp::kLower:
    case ScalarOp::kCharLength: case ScalarOp::kHour: case ScalarOp::kAbs: case ScalarOp::kCast:
    case ScalarOp::kTryCast: case ScalarOp::kYear: case ScalarOp::kMonth: case ScalarOp::kDayOfMonth:
    case ScalarOp::kMinute: case ScalarOp::kSecond:
      return checkArity(op, n, 1, 1);
    case ScalarOp::kAnd: case ScalarOp::kOr:
      return checkArity(op, n, 2, kMany);
    case ScalarOp::kBetween: case ScalarOp::kNotBetween: case ScalarOp::kLpad: case ScalarOp::kRpad:
      return checkArity(op, n, 3, 3);
    case ScalarOp::kIn: case ScalarOp::kNotIn: case ScalarOp::kCase:
      return checkArity(op, n, 2, kMany);
    case ScalarOp::kLike: case ScalarOp::kNotLike:
      return checkArity(op, n, 2, 3);
    case ScalarOp::kCoalesce: case ScalarOp::kConcat:
      return checkArity(op, n, 1, kMany);
    case ScalarOp::kTrim:
      return checkArity(op, n, 1, 3);
    case ScalarOp::kLtrim: case ScalarOp::kRtrim: case ScalarOp::kToTimestamp: case ScalarOp::kRound:
      return checkArity(op, n, 1, 2);
    case ScalarOp::kSubstring:
      return checkArity(op, n, 2, 3);
    case ScalarOp::kDateFormat:
      return checkArity(op, n, 2, 2);
    default:
      if (isBuiltin(op)) return;  // checked by inferBuiltinType

      return checkArity(op, n, 2, 2);
  }
}

bool isExact(const LogicalType& t) { return t.isIntegral() || t.id == TypeId::kDecimal; }

LogicalType fromDecimal(internal::DecimalPs d, bool nullable) { return LogicalType::decimal(d.precision, d.scale, nullable); }

/// +, -, *, / over numeric operands (Flink: INT op INT -> INT including '/', mixed integers -> the wider one,
/// DOUBLE wins, DECIMAL by LogicalTypeMerging), and the datetime forms of + and -.
LogicalType arithmeticType(ScalarOp op, std::vector<ExprPtr>& args) {
  if (isNullLiteral(args[0]) && isNullLiteral(args[1])) throw UserError(fmt::format("Illegal use of 'NULL' in '{}'", scalarOpName(op)));
  if (isNullLiteral(args[0])) args[0] = typedNull(args[1]->type);
  if (isNullLiteral(args[1])) args[1] = typedNull(args[0]->type);
  const LogicalType& a = args[0]->type;
  const LogicalType& b = args[1]->type;
  const bool nullable = a.nullable || b.nullable;
  if (a.isNumeric() && b.isNumeric()) {
    if (a.id == TypeId::kDouble || b.id == TypeId::kDouble) return LogicalType::doubleType(nullable);
    // Calcite's leastRestrictive (ReturnTypes.NULLABLE_SUM): FLOAT with DECIMAL is DOUBLE, with an integer FLOAT.
    if (a.id == TypeId::kFloat || b.id == TypeId::kFloat) {
      if (a.id == TypeId::kDecimal || b.id == TypeId::kDecimal) return LogicalType::doubleType(nullable);
      return LogicalType::floatType(nullable);
    }
    if (a.id == TypeId::kDecimal || b.id == TypeId::kDecimal) {
      const internal::DecimalPs da = internal::decimalView(a), db = internal::decimalView(b);
      switch (op) {
        case ScalarOp::kPlus: case ScalarOp::kMinus: return fromDecimal(internal::additionDecimal(da, db), nullable);
        case ScalarOp::kTimes: return fromDecimal(internal::multiplicationDecimal(da, db), nullable);
        default: return fromDecimal(internal::divisionDecimal(da, db), nullable);
      }
    }
    // Integers: the wider type, the result wraps like Java's (byte) / (short) / (int) narrowing.
    return (a.integralBits() >= b.integralBits() ? a : b).withNullable(nullable);
  }
  const auto datetime = [](const LogicalType& t) {
    return t.isTimestampFamily() || t.id == TypeId::kDate || t.id == TypeId::kTime;
  };
  const bool ts_a = datetime(a), ts_b = datetime(b);
  const bool iv_a = a.id == TypeId::kIntervalDayTime, iv_b = b.id == TypeId::kIntervalDayTime;
  if (op == ScalarOp::kPlus) {
    if (ts_a && iv_b) return a.withNullable(nullable);
    if (iv_a && ts_b) return b.withNullable(nullable);
    if (iv_a && iv_b) return LogicalType::intervalDayTime(nullable);
  } else if (op == ScalarOp::kMinus) {
    if (ts_a && iv_b) return a.withNullable(nullable);
    if (iv_a && iv_b) return LogicalType::intervalDayTime(nullable);
  }
  std::string forms = fmt::format("'<NUMERIC> {0} <NUMERIC>'", scalarOpName(op));
  if (op == ScalarOp::kPlus) forms += ", '<DATETIME_INTERVAL> + <DATETIME_INTERVAL>', '<DATETIME> + <DATETIME_INTERVAL>'";
  if (op == ScalarOp::kMinus) forms += ", '<DATETIME_INTERVAL> - <DATETIME_INTERVAL>', '<DATETIME> - <DATETIME_INTERVAL>'";
  cannotApply(op, args, forms);
}

/// MOD / %: exact numerics only (Calcite's EXACT_NUMERIC_EXACT_NUMERIC). The result is the type of the
/// divisor for integers (Calcite's NULLABLE_MOD = ARG1_NULLABLE) and findModuloDecimalType for DECIMAL
/// (FlinkTypeSystem.deriveDecimalModType).
LogicalType modType(std::vector<ExprPtr>& args) {
  if (isNullLiteral(args[0]) && !isNullLiteral(args[1])) args[0] = typedNull(args[1]->type);
  if (isNullLiteral(args[1]) && !isNullLiteral(args[0])) args[1] = typedNull(args[0]->type);
  const LogicalType& a = args[0]->type;
  const LogicalType& b = args[1]->type;
  if (!isExact(a) || !isExact(b)) cannotApply(ScalarOp::kMod, args, "'MOD(<EXACT_NUMERIC>, <EXACT_NUMERIC>)'");
  const bool nullable = a.nullable || b.nullable;
  if (a.id == TypeId::kDecimal || b.id == TypeId::kDecimal)
    return fromDecimal(internal::moduloDecimal(internal::decimalView(a), internal::decimalView(b)), nullable);
  return b.withNullable(nullable);
}

LogicalType comparisonType(ScalarOp op, std::vector<ExprPtr>& args) {
  // Every argument must be comparable with the first (value vs. candidates / bounds).
  LogicalType value_type = args[0]->type;
  if (value_type.id == TypeId::kNull) {
    for (size_t i = 1; i < args.size(); ++i)
      if (!isNullLiteral(args[i])) { value_type = args[i]->type; break; }
  }
  if (value_type.id == TypeId::kNull) return LogicalType::boolean(true);
  retypeNulls(args, 0, value_type);
  for (size_t i = 1; i < args.size(); ++i) {
    if (!internal::isComparable(args[0]->type, args[i]->type)) {
      const std::string name = scalarOpName(op);
      if (op == ScalarOp::kIn || op == ScalarOp::kNotIn)
        throw UserError(fmt::format("Values passed to {} operator must have compatible types: {} and {}", name,
                                    args[0]->type.withNullable(true).toString(), args[i]->type.withNullable(true).toString()));
      if (op == ScalarOp::kBetween || op == ScalarOp::kNotBetween)
        cannotApply(op, args, fmt::format("'<COMPARABLE_TYPE> {} <COMPARABLE_TYPE> AND <COMPARABLE_TYPE>'", name));
      cannotApply(op, args, fmt::format("'<COMPARABLE_TYPE> {} <COMPARABLE_TYPE>'", name));
    }
  }
  return LogicalType::boolean(anyNullable(args));
}

LogicalType inferType(ScalarOp op, std::vector<ExprPtr>& args) {
  const std::string name = scalarOpName(op);
  switch (op) {
    case ScalarOp::kPlus: case ScalarOp::kMinus: case ScalarOp::kTimes: case ScalarOp::kDivide:
      return arithmeticType(op, args);
    case ScalarOp::kMod:
      return modType(args);
    case ScalarOp::kNegate: case ScalarOp::kAbs: {
      if (isNullLiteral(args[0])) args[0] = typedNull(LogicalType::integer());
      const LogicalType& t = args[0]->type;
      if (!t.isNumeric() && !(op == ScalarOp::kNegate && t.id == TypeId::kIntervalDayTime))
        cannotApply(op, args, op == ScalarOp::kAbs ? "'ABS(<NUMERIC>)'" : "'-<NUMERIC>', '-<DATETIME_INTERVAL>'");
      return t;
    }
    case ScalarOp::kEquals: case ScalarOp::kNotEquals: case ScalarOp::kLessThan: case ScalarOp::kLessThanOrEqual:
    case ScalarOp::kGreaterThan: case ScalarOp::kGreaterThanOrEqual: case ScalarOp::kBetween:
    case ScalarOp::kNotBetween: case ScalarOp::kIn: case ScalarOp::kNotIn:
      return comparisonType(op, args);
    case ScalarOp::kAnd: case ScalarOp::kOr:
      requireBoolean(op, args, 0, 1, fmt::format("'<BOOLEAN> {} <BOOLEAN>'", name));
      return LogicalType::boolean(anyNullable(args));
    case ScalarOp::kNot:
      requireBoolean(op, args, 0, 1, "'NOT<BOOLEAN>'");
      return LogicalType::boolean(args[0]->type.nullable);
    case ScalarOp::kIsNull: case ScalarOp::kIsNotNull:
      return LogicalType::boolean(false);
    case ScalarOp::kIsTrue: case ScalarOp::kIsFalse:
      requireBoolean(op, args, 0, 1, fmt::format("'<BOOLEAN> {}'", name));
      return LogicalType::boolean(false);
    case ScalarOp::kLike: case ScalarOp::kNotLike: {
      const std::string forms = fmt::format("'<STRING> {0} <STRING>', '<STRING> {0} <STRING> ESCAPE <STRING>'", name);
      for (size_t i = 0; i < args.size(); ++i) requireString(op, args, i, forms);
      if (args.size() == 3) {
        const Expr& esc = *args[2];
        if (esc.kind != ExprKind::kLiteral || !std::holds_alternative<std::string>(esc.literal) ||
            std::get<std::string>(esc.literal).size() != 1)
          throw UserError("Invalid escape character in LIKE: the ESCAPE argument must be a literal of one character");
      }
      return LogicalType::boolean(anyNullable(args));
    }
    case ScalarOp::kCase: {
      const bool has_else = args.size() % 2 == 1;
      const size_t n_when = args.size() / 2;
      requireBoolean(op, args, 0, 2, "'CASE WHEN <BOOLEAN> THEN <ANY> [ELSE <ANY>] END'", 2 * n_when);
      std::vector<LogicalType> results;
      for (size_t i = 0; i < n_when; ++i) results.push_back(args[2 * i + 1]->type);
      if (has_else) results.push_back(args.back()->type);
      std::optional<LogicalType> common = findCommonType(results);
      if (!common) {
        bool all_null = std::all_of(results.begin(), results.end(), [](const LogicalType& t) { return t.id == TypeId::kNull; });
        if (all_null) throw UserError("Illegal use of 'NULL': at least one result of CASE must not be NULL");
        std::string list;
        for (const auto& t : results) list += fmt::format("{}{}", list.empty() ? "" : ", ", t.withNullable(true).toString());
        throw UserError(fmt::format("Illegal mixing of types in CASE or COALESCE statement: {}", list));
      }
      for (size_t i = 0; i < n_when; ++i)
        if (isNullLiteral(args[2 * i + 1])) args[2 * i + 1] = typedNull(*common);
      if (has_else && isNullLiteral(args.back())) args.back() = typedNull(*common);
      return common->withNullable(common->nullable || !has_else);
    }
    case ScalarOp::kCoalesce: {
      std::vector<LogicalType> ts;
      for (const auto& a : args) ts.push_back(a->type);
      std::optional<LogicalType> common = findCommonType(ts);
      if (!common) {
        std::string list;
        for (const auto& t : ts) list += fmt::format("{}{}", list.empty() ? "" : ", ", t.withNullable(true).toString());
        throw UserError(fmt::format("Illegal mixing of types in CASE or COALESCE statement: {}", list));
      }
      retypeNulls(args, 0, *common);
      const bool all_nullable = std::all_of(args.begin(), args.end(), [](const ExprPtr& a) { return a->type.nullable; });
      return common->withNullable(all_nullable);
    }
    case ScalarOp::kConcat: {
      int64_t len = 0;
      bool all_char = true;
      for (size_t i = 0; i < args.size(); ++i) {
        requireString(op, args, i, "'<STRING> || <STRING>'");
        len += args[i]->type.precision;
        all_char = all_char && args[i]->type.id == TypeId::kChar;
      }
      const bool nullable = anyNullable(args);
      if (all_char && len <= types::kMaxVarcharLength) return LogicalType::charType(static_cast<int32_t>(len), nullable);
      return LogicalType::varchar(static_cast<int32_t>(std::min<int64_t>(len, types::kMaxVarcharLength)), nullable);
    }
    case ScalarOp::kUpper: case ScalarOp::kLower:
      requireString(op, args, 0, fmt::format("'{}(<STRING>)'", name));
      return args[0]->type;  // Calcite ARG0_NULLABLE
    case ScalarOp::kTrim: case ScalarOp::kLtrim: case ScalarOp::kRtrim:
      requireString(op, args, 0, fmt::format("'{0}(<STRING>)', '{0}(<STRING>, <STRING>)'", name));
      requireString(op, args, 1, fmt::format("'{0}(<STRING>)', '{0}(<STRING>, <STRING>)'", name));
      if (args.size() == 3) {
        // TRIM(s, chars, mode): mode 0 BOTH, 1 LEADING, 2 TRAILING as an INT literal.
        const Expr& m = *args[2];
        if (m.kind != ExprKind::kLiteral || !std::holds_alternative<int64_t>(m.literal) ||
            std::get<int64_t>(m.literal) < 0 || std::get<int64_t>(m.literal) > 2)
          throw InternalError("TRIM mode must be an INT literal 0 (BOTH), 1 (LEADING) or 2 (TRAILING)");
      }
      return LogicalType::varchar(args[0]->type.precision, args[0]->type.nullable || (args.size() > 1 && args[1]->type.nullable));
    case ScalarOp::kCharLength:
      requireString(op, args, 0, "'CHAR_LENGTH(<STRING>)'");
      return LogicalType::integer(args[0]->type.nullable);
    case ScalarOp::kSubstring: {
      const std::string forms = "'SUBSTRING(<STRING> FROM <INTEGER>)', 'SUBSTRING(<STRING> FROM <INTEGER> FOR <INTEGER>)'";
      requireString(op, args, 0, forms);
      requireIntegral(op, args, 1, forms);
      requireIntegral(op, args, 2, forms);
      return LogicalType::varchar(args[0]->type.precision, anyNullable(args));
    }
    case ScalarOp::kLpad: case ScalarOp::kRpad: {
      const std::string forms = fmt::format("'{}(<STRING>, <INTEGER>, <STRING>)'", name);
      requireString(op, args, 0, forms);
      requireIntegral(op, args, 1, forms);
      requireString(op, args, 2, forms);
      return LogicalType::string(true);  // NULL on a negative length or an empty pad
    }
    case ScalarOp::kToTimestamp:
      requireString(op, args, 0, "'TO_TIMESTAMP(<STRING>)', 'TO_TIMESTAMP(<STRING>, <STRING>)'");
      requireString(op, args, 1, "'TO_TIMESTAMP(<STRING>)', 'TO_TIMESTAMP(<STRING>, <STRING>)'");
      return LogicalType::timestamp(3, true);  // NULL when the text does not parse
    case ScalarOp::kDateFormat: {
      const std::string forms = "'DATE_FORMAT(<TIMESTAMP>, <STRING>)', 'DATE_FORMAT(<STRING>, <STRING>)'";
      if (isNullLiteral(args[0])) args[0] = typedNull(LogicalType::timestamp(3));
      if (args[0]->type.id != TypeId::kTimestamp && !args[0]->type.isString()) cannotApply(op, args, forms);
      requireString(op, args, 1, forms);
      return LogicalType::string(true);
    }
    case ScalarOp::kHour: case ScalarOp::kMinute: case ScalarOp::kSecond: case ScalarOp::kYear:
    case ScalarOp::kMonth: case ScalarOp::kDayOfMonth: {
      // Calendar fields of a TIMESTAMP or DATE, time-of-day fields of a TIMESTAMP or TIME.
      const bool calendar = op == ScalarOp::kYear || op == ScalarOp::kMonth || op == ScalarOp::kDayOfMonth;
      const TypeId id = args[0]->type.id;
      if (!(id == (calendar ? TypeId::kDate : TypeId::kTime)))
        requireTimestamp(op, args, 0, fmt::format("'{0}(<TIMESTAMP>)', '{0}(<{1}>)'", name, calendar ? "DATE" : "TIME"));
      return LogicalType::bigint(args[0]->type.nullable);  // EXTRACT returns BIGINT
    }
    case ScalarOp::kRound: {
      if (isNullLiteral(args[0])) args[0] = typedNull(LogicalType::integer());
      requireIntegral(op, args, 1, "'ROUND(<NUMERIC>)', 'ROUND(<NUMERIC>, <INTEGER>)'");
      const LogicalType& t = args[0]->type;
      if (!t.isNumeric()) cannotApply(op, args, "'ROUND(<NUMERIC>)', 'ROUND(<NUMERIC>, <INTEGER>)'");
      const bool nullable = anyNullable(args);
      if (t.id != TypeId::kDecimal) return t.withNullable(nullable);
      // FlinkReturnTypes.ROUND_FUNCTION: DECIMAL result only with a literal digit count.
      int32_t r = 0;
      if (args.size() == 2) {
        const Expr& n = *args[1];
        if (n.kind != ExprKind::kLiteral || !std::holds_alternative<int64_t>(n.literal)) return t.withNullable(nullable);
        r = static_cast<int32_t>(std::get<int64_t>(n.literal));
      }
      return fromDecimal(internal::roundDecimal(internal::decimalView(t), r), nullable);
    }
    case ScalarOp::kCast: case ScalarOp::kTryCast:
      throw InternalError("CAST is built with makeCast / makeTryCast");
    default:
      return inferBuiltinType(op, args);
  }
  throw InternalError("unknown scalar op");
}

}  // namespace

ExprPtr makeInputRef(int index, const LogicalType& type) {
  SLUICE_CHECK(index >= 0, "negative input index {}", index);
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kInputRef;
  e->type = type;
  e->input_index = index;
  return e;
}

ExprPtr makeLiteral(LiteralValue value, const LogicalType& type) {
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kLiteral;
  e->type = type;
  if (std::holds_alternative<std::monostate>(value)) e->type.nullable = true;
  e->literal = std::move(value);
  return e;
}

ExprPtr makeCall(ScalarOp op, std::vector<ExprPtr> args) {
  arityOf(op, args.size());
  for (const auto& a : args) SLUICE_CHECK(a != nullptr, "null argument to {}", scalarOpName(op));
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kCall;
  e->op = op;
  e->type = inferType(op, args);
  e->args = std::move(args);
  return e;
}

namespace {
ExprPtr buildCast(ScalarOp op, ExprPtr value, const LogicalType& target, const std::string& zone) {
  SLUICE_CHECK(value != nullptr, "null argument to CAST");
  if (!supportsExplicitCast(value->type, target))
    throw UserError(fmt::format("Cast function cannot convert value of type {} to type {}",
                                value->type.withNullable(true).toString(), target.withNullable(true).toString()));
  const bool zoned = castNeedsTimeZone(value->type, target);
  if (zoned && zone.empty())
    throw UserError(fmt::format("Casting {} to {} needs the session time zone (table.local-time-zone)",
                                value->type.withNullable(true).toString(), target.withNullable(true).toString()));
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kCall;
  e->op = op;
  // CAST keeps the operand's nullability (Calcite); TRY_CAST is always nullable.
  e->type = target.withNullable(op == ScalarOp::kTryCast || value->type.nullable);
  e->args.push_back(std::move(value));
  if (zoned) {
    ZoneRules::resolve(zone);  // an unknown id is the user's error, now
    e->args.push_back(makeLiteral(zone, LogicalType::charType(static_cast<int32_t>(zone.size()), false)));
  }
  return e;
}
}  // namespace

ExprPtr makeCast(ExprPtr value, const LogicalType& target, const std::string& zone) {
  return buildCast(ScalarOp::kCast, std::move(value), target, zone);
}
ExprPtr makeTryCast(ExprPtr value, const LogicalType& target, const std::string& zone) {
  return buildCast(ScalarOp::kTryCast, std::move(value), target, zone);
}

const char* scalarOpName(ScalarOp op) {
  switch (op) {
    case ScalarOp::kPlus: return "+";
    case ScalarOp::kMinus: return "-";
    case ScalarOp::kTimes: return "*";
    case ScalarOp::kDivide: return "/";
    case ScalarOp::kMod: return "MOD";
    case ScalarOp::kNegate: return "-";
    case ScalarOp::kEquals: return "=";
    case ScalarOp::kNotEquals: return "<>";
    case ScalarOp::kLessThan: return "<";
    case ScalarOp::kLessThanOrEqual: return "<=";
    case ScalarOp::kGreaterThan: return ">";
    case ScalarOp::kGreaterThanOrEqual: return ">=";
    case ScalarOp::kAnd: return "AND";
    case ScalarOp::kOr: return "OR";
    case ScalarOp::kNot: return "NOT";
    case ScalarOp::kIsNull: return "IS NULL";
    case ScalarOp::kIsNotNull: return "IS NOT NULL";
    case ScalarOp::kIsTrue: return "IS TRUE";
    case ScalarOp::kIsFalse: return "IS FALSE";
    case ScalarOp::kBetween: return "BETWEEN";
    case ScalarOp::kNotBetween: return "NOT BETWEEN";
    case ScalarOp::kIn: return "IN";
    case ScalarOp::kNotIn: return "NOT IN";
    case ScalarOp::kLike: return "LIKE";
    case ScalarOp::kNotLike: return "NOT LIKE";
    case ScalarOp::kCase: return "CASE";
    case ScalarOp::kCast: return "CAST";
    case ScalarOp::kTryCast: return "TRY_CAST";
    case ScalarOp::kCoalesce: return "COALESCE";
    case ScalarOp::kConcat: return "||";
    case ScalarOp::kUpper: return "UPPER";
    case ScalarOp::kLower: return "LOWER";
    case ScalarOp::kTrim: return "TRIM";
    case ScalarOp::kLtrim: return "LTRIM";
    case ScalarOp::kRtrim: return "RTRIM";
    case ScalarOp::kCharLength: return "CHAR_LENGTH";
    case ScalarOp::kSubstring: return "SUBSTRING";
    case ScalarOp::kLpad: return "LPAD";
    case ScalarOp::kRpad: return "RPAD";
    case ScalarOp::kToTimestamp: return "TO_TIMESTAMP";
    case ScalarOp::kDateFormat: return "DATE_FORMAT";
    case ScalarOp::kHour: return "HOUR";
    case ScalarOp::kMinute: return "MINUTE";
    case ScalarOp::kSecond: return "SECOND";
    case ScalarOp::kYear: return "YEAR";
    case ScalarOp::kMonth: return "MONTH";
    case ScalarOp::kDayOfMonth: return "DAYOFMONTH";
    case ScalarOp::kAbs: return "ABS";
    case ScalarOp::kRound: return "ROUND";
    default: break;
  }
  const char* name = builtinName(op);
  return name ? name : "?";
}

namespace {
const std::unordered_map<std::string, ScalarOp>& coreFunctions() {
  static const std::unordered_map<std::string, ScalarOp> kFunctions = {
      {"UPPER", ScalarOp::kUpper},           {"LOWER", ScalarOp::kLower},
      {"TRIM", ScalarOp::kTrim},             {"LTRIM", ScalarOp::kLtrim},
      {"RTRIM", ScalarOp::kRtrim},           {"CHAR_LENGTH", ScalarOp::kCharLength},
      {"CHARACTER_LENGTH", ScalarOp::kCharLength},
      {"SUBSTRING", ScalarOp::kSubstring},   {"SUBSTR", ScalarOp::kSubstring},
      {"LPAD", ScalarOp::kLpad},             {"RPAD", ScalarOp::kRpad},
      {"CONCAT", ScalarOp::kConcat},         {"MOD", ScalarOp::kMod},
      {"ROUND", ScalarOp::kRound},           {"ABS", ScalarOp::kAbs},
      {"COALESCE", ScalarOp::kCoalesce},     {"TO_TIMESTAMP", ScalarOp::kToTimestamp},
      {"DATE_FORMAT", ScalarOp::kDateFormat}, {"HOUR", ScalarOp::kHour},
      {"MINUTE", ScalarOp::kMinute},         {"SECOND", ScalarOp::kSecond},
      {"YEAR", ScalarOp::kYear},             {"MONTH", ScalarOp::kMonth},
      {"DAYOFMONTH", ScalarOp::kDayOfMonth},
  };
  return kFunctions;
}
}  // namespace

std::optional<ScalarOp> scalarFunctionByName(const std::string& name) {
  auto it = coreFunctions().find(name);
  if (it == coreFunctions().end()) return builtinByName(name);
  return it->second;
}

std::vector<std::string> scalarFunctionNames() {
  std::vector<std::string> out = internal::builtinNames();
  for (const auto& kv : coreFunctions()) out.push_back(kv.first);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// ---------------------------------------------------------------------------------------------
// toString
// ---------------------------------------------------------------------------------------------

namespace {
void appendLiteral(const Expr& e, std::string& out) {
  if (std::holds_alternative<std::monostate>(e.literal)) {
    out += "null";
    if (e.type.id != TypeId::kNull) {
      out += ':';
      out += e.type.withNullable(true).toString();
    }
    return;
  }
  switch (e.type.id) {
    case TypeId::kBoolean: out += std::get<int64_t>(e.literal) ? "true" : "false"; return;
    case TypeId::kDecimal: types::formatDecimal(std::get<int64_t>(e.literal), e.type.scale, out); return;
    case TypeId::kTimestamp: types::formatTimestampSql(std::get<int64_t>(e.literal), e.type.precision, out); return;
    case TypeId::kTimestampLtz:
      types::formatTimestampSql(std::get<int64_t>(e.literal), e.type.precision, out);
      out += ":TIMESTAMP_WITH_LOCAL_TIME_ZONE";
      return;
    case TypeId::kIntervalDayTime: out += fmt::format("{}:INTERVAL DAY TO SECOND", std::get<int64_t>(e.literal)); return;
    case TypeId::kDate: types::formatDate(std::get<int64_t>(e.literal), out); return;
    case TypeId::kTime: types::formatTimeSql(std::get<int64_t>(e.literal), e.type.precision, out); return;
    case TypeId::kVarchar: case TypeId::kChar: {
      out += '\'';
      for (char c : std::get<std::string>(e.literal)) {
        if (c == '\'') out += '\'';
        out += c;
      }
      out += '\'';
      return;
    }
    case TypeId::kDouble:
      if (std::holds_alternative<double>(e.literal)) { types::formatDouble(std::get<double>(e.literal), out); return; }
      break;
    case TypeId::kFloat:
      if (std::holds_alternative<double>(e.literal)) { types::formatFloat(std::get<double>(e.literal), out); return; }
      break;
    default:
      break;
  }
  if (std::holds_alternative<int64_t>(e.literal)) out += std::to_string(std::get<int64_t>(e.literal));
  else if (std::holds_alternative<double>(e.literal)) types::formatDouble(std::get<double>(e.literal), out);
  else out += std::get<std::string>(e.literal);
}

void appendExpr(const Expr& e, const std::vector<std::string>* names, std::string& out) {
  switch (e.kind) {
    case ExprKind::kInputRef:
      if (names && e.input_index < static_cast<int>(names->size()) && !(*names)[e.input_index].empty()) out += (*names)[e.input_index];
      else out += fmt::format("${}", e.input_index);
      return;
    case ExprKind::kLiteral:
      appendLiteral(e, out);
      return;
    case ExprKind::kCall:
      break;
  }
  out += e.op == ScalarOp::kUserFunction ? e.function_name.c_str() : scalarOpName(e.op);
  out += '(';
  const bool cast = e.op == ScalarOp::kCast || e.op == ScalarOp::kTryCast;
  for (size_t i = 0; i < (cast ? std::min<size_t>(1, e.args.size()) : e.args.size()); ++i) {
    if (i) out += ", ";
    appendExpr(*e.args[i], names, out);
  }
  if (e.op == ScalarOp::kCast || e.op == ScalarOp::kTryCast) {
    out += " AS ";
    out += e.type.withNullable(true).toString();
  }
  out += ')';
}
}  // namespace

std::string Expr::toString(const std::vector<std::string>* names) const {
  std::string out;
  appendExpr(*this, names, out);
  return out;
}

}  // namespace sluice::table
