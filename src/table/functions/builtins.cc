// Names, type inference and compilation of Flink's built-in scalar functions beyond the core
// operators. Return types follow Flink's FlinkSqlOperatorTable / BuiltInFunctionDefinitions and
// Calcite's ReturnTypes, noted per group.
#include "table/functions/builtins.h"

#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "common/error.h"
#include "table/functions/type_rules.h"

namespace sluice::table::internal {

using types::LogicalType;
using types::TypeId;

namespace {

constexpr size_t kMany = std::numeric_limits<size_t>::max();

struct BuiltinInfo {
  ScalarOp op;
  const char* name;
};

// The first entry of an op is its printed name; later ones are aliases.
constexpr BuiltinInfo kBuiltins[] = {
    {ScalarOp::kPower, "POWER"}, {ScalarOp::kSqrt, "SQRT"}, {ScalarOp::kLn, "LN"}, {ScalarOp::kLog, "LOG"},
    {ScalarOp::kLog10, "LOG10"}, {ScalarOp::kLog2, "LOG2"}, {ScalarOp::kExp, "EXP"}, {ScalarOp::kSin, "SIN"},
    {ScalarOp::kCos, "COS"}, {ScalarOp::kTan, "TAN"}, {ScalarOp::kCot, "COT"}, {ScalarOp::kAsin, "ASIN"},
    {ScalarOp::kAcos, "ACOS"}, {ScalarOp::kAtan, "ATAN"}, {ScalarOp::kAtan2, "ATAN2"}, {ScalarOp::kSinh, "SINH"},
    {ScalarOp::kCosh, "COSH"}, {ScalarOp::kTanh, "TANH"}, {ScalarOp::kDegrees, "DEGREES"},
    {ScalarOp::kRadians, "RADIANS"}, {ScalarOp::kPi, "PI"}, {ScalarOp::kE, "E"}, {ScalarOp::kCeil, "CEIL"},
    {ScalarOp::kCeil, "CEILING"}, {ScalarOp::kFloor, "FLOOR"}, {ScalarOp::kTruncate, "TRUNCATE"},
    {ScalarOp::kSign, "SIGN"}, {ScalarOp::kRand, "RAND"}, {ScalarOp::kRandInteger, "RAND_INTEGER"},
    {ScalarOp::kIf, "IF"}, {ScalarOp::kNullIf, "NULLIF"}, {ScalarOp::kIfNull, "IFNULL"},
    {ScalarOp::kGreatest, "GREATEST"}, {ScalarOp::kLeast, "LEAST"},
    {ScalarOp::kIsDistinctFrom, "IS DISTINCT FROM"}, {ScalarOp::kIsNotDistinctFrom, "IS NOT DISTINCT FROM"},
    {ScalarOp::kConcatWs, "CONCAT_WS"}, {ScalarOp::kReplace, "REPLACE"}, {ScalarOp::kRegexp, "REGEXP"},
    {ScalarOp::kRegexpExtract, "REGEXP_EXTRACT"}, {ScalarOp::kRegexpReplace, "REGEXP_REPLACE"},
    {ScalarOp::kSplitIndex, "SPLIT_INDEX"}, {ScalarOp::kLeft, "LEFT"}, {ScalarOp::kRight, "RIGHT"},
    {ScalarOp::kInitCap, "INITCAP"}, {ScalarOp::kPosition, "POSITION"}, {ScalarOp::kLocate, "LOCATE"},
    {ScalarOp::kInstr, "INSTR"}, {ScalarOp::kReverse, "REVERSE"}, {ScalarOp::kRepeat, "REPEAT"},
    {ScalarOp::kAscii, "ASCII"}, {ScalarOp::kChr, "CHR"}, {ScalarOp::kMd5, "MD5"}, {ScalarOp::kSha1, "SHA1"},
    {ScalarOp::kSha224, "SHA224"}, {ScalarOp::kSha256, "SHA256"}, {ScalarOp::kSha384, "SHA384"},
    {ScalarOp::kSha512, "SHA512"}, {ScalarOp::kSha2, "SHA2"}, {ScalarOp::kToBase64, "TO_BASE64"},
    {ScalarOp::kFromBase64, "FROM_BASE64"}, {ScalarOp::kExtract, "EXTRACT"},
    {ScalarOp::kTimestampAdd, "TIMESTAMPADD"}, {ScalarOp::kTimestampDiff, "TIMESTAMPDIFF"},
    {ScalarOp::kCurrentTimestamp, "CURRENT_TIMESTAMP"}, {ScalarOp::kCurrentDate, "CURRENT_DATE"},
    {ScalarOp::kCurrentTime, "CURRENT_TIME"}, {ScalarOp::kLocalTimestamp, "LOCALTIMESTAMP"},
    {ScalarOp::kLocalTime, "LOCALTIME"}, {ScalarOp::kNow, "NOW"}, {ScalarOp::kUnixTimestamp, "UNIX_TIMESTAMP"},
    {ScalarOp::kFromUnixtime, "FROM_UNIXTIME"}, {ScalarOp::kToDate, "TO_DATE"},
    {ScalarOp::kDayOfWeek, "DAYOFWEEK"}, {ScalarOp::kDayOfYear, "DAYOFYEAR"}, {ScalarOp::kWeek, "WEEK"},
    {ScalarOp::kQuarter, "QUARTER"}, {ScalarOp::kConvertTz, "CONVERT_TZ"}, {ScalarOp::kJsonValue, "JSON_VALUE"},
    {ScalarOp::kJsonQuery, "JSON_QUERY"}, {ScalarOp::kJsonExists, "JSON_EXISTS"},
    {ScalarOp::kJsonObject, "JSON_OBJECT"}, {ScalarOp::kJsonArray, "JSON_ARRAY"}, {ScalarOp::kUuid, "UUID"},
    {ScalarOp::kHex, "HEX"}, {ScalarOp::kBin, "BIN"}, {ScalarOp::kIsAlpha, "IS_ALPHA"},
    {ScalarOp::kIsDigit, "IS_DIGIT"}, {ScalarOp::kIsDecimal, "IS_DECIMAL"}, {ScalarOp::kOverlay, "OVERLAY"},
    {ScalarOp::kParseUrl, "PARSE_URL"}, {ScalarOp::kTypeOf, "TYPEOF"},
    {ScalarOp::kCurrentTimestamp, "CURRENT_ROW_TIMESTAMP"}, {ScalarOp::kProctime, "PROCTIME"},
    {ScalarOp::kToTimestampLtz, "TO_TIMESTAMP_LTZ"},
};

bool isDoubleMath(ScalarOp op) {
  return static_cast<int>(op) >= static_cast<int>(ScalarOp::kPower) &&
         static_cast<int>(op) <= static_cast<int>(ScalarOp::kRadians);
}

void requireNumeric(ScalarOp op, std::vector<ExprPtr>& args, size_t i, const std::string& forms) {
  if (i >= args.size()) return;
  if (isNullLiteral(args[i])) args[i] = typedNull(LogicalType::doubleType());
  if (!args[i]->type.isNumeric()) cannotApply(op, args, forms);
}

std::string forms1(const char* name, const char* arg) { return fmt::format("'{}(<{}>)'", name, arg); }

std::optional<int64_t> intLiteral(const ExprPtr& e) {
  if (e->kind != ExprKind::kLiteral || !std::holds_alternative<int64_t>(e->literal) || !e->type.isIntegral())
    return std::nullopt;
  return std::get<int64_t>(e->literal);
}

LogicalType commonOf(ScalarOp op, std::vector<ExprPtr>& args, size_t from, size_t to) {
  std::vector<LogicalType> ts;
  for (size_t i = from; i < to; ++i) ts.push_back(args[i]->type);
  std::optional<LogicalType> common = findCommonType(ts);
  if (!common) {
    std::string list;
    for (const auto& t : ts) list += fmt::format("{}{}", list.empty() ? "" : ", ", t.withNullable(true).toString());
    throw UserError(fmt::format("Parameters of '{}' must have a common type, but got: {}", builtinName(op), list));
  }
  for (size_t i = from; i < to; ++i)
    if (isNullLiteral(args[i])) args[i] = typedNull(*common);
  return *common;
}

/// CEIL/FLOOR/TRUNCATE/SIGN keep the argument type; DECIMAL(p, s) -> DECIMAL(p, 0) for CEIL/FLOOR
/// (Calcite's ARG0_OR_EXACT_NO_SCALE) and the ROUND rule for TRUNCATE.
LogicalType roundingType(ScalarOp op, std::vector<ExprPtr>& args) {
  const char* name = builtinName(op);
  const std::string forms = op == ScalarOp::kTruncate ? "'TRUNCATE(<NUMERIC>)', 'TRUNCATE(<NUMERIC>, <INTEGER>)'"
                                                      : forms1(name, "NUMERIC");
  if (isNullLiteral(args[0])) args[0] = typedNull(LogicalType::integer());
  requireNumeric(op, args, 0, forms);
  requireIntegral(op, args, 1, forms);
  const LogicalType& t = args[0]->type;
  const bool nullable = anyNullable(args);
  if (t.id != TypeId::kDecimal || op == ScalarOp::kSign) return t.withNullable(nullable);
  if (op != ScalarOp::kTruncate) return LogicalType::decimal(t.precision, 0, nullable);
  int32_t r = 0;
  if (args.size() == 2) {
    const std::optional<int64_t> n = intLiteral(args[1]);
    if (!n) return t.withNullable(nullable);
    r = static_cast<int32_t>(*n);
  }
  const DecimalPs d = roundDecimal(decimalView(t), r);
  return LogicalType::decimal(d.precision, d.scale, nullable);
}

LogicalType stringFunctionType(ScalarOp op, std::vector<ExprPtr>& args) {
  const char* name = builtinName(op);
  const auto strings = [&](const std::string& forms, size_t n) {
    for (size_t i = 0; i < std::min(n, args.size()); ++i) requireString(op, args, i, forms);
  };
  const bool nullable = anyNullable(args);
  switch (op) {
    case ScalarOp::kConcatWs:
      checkArity(op, args.size(), 2, kMany);
      strings("'CONCAT_WS(<STRING>, <STRING>, ...)'", kMany);
      return LogicalType::string(args[0]->type.nullable);  // NULL arguments after the separator are skipped
    case ScalarOp::kReplace:
      checkArity(op, args.size(), 3, 3);
      strings("'REPLACE(<STRING>, <STRING>, <STRING>)'", 3);
      return LogicalType::string(anyNullable(args));
    case ScalarOp::kRegexp:
      checkArity(op, args.size(), 2, 2);
      strings("'REGEXP(<STRING>, <STRING>)'", 2);
      return LogicalType::boolean(anyNullable(args));
    case ScalarOp::kRegexpExtract: {
      checkArity(op, args.size(), 2, 3);
      const std::string forms = "'REGEXP_EXTRACT(<STRING>, <STRING>)', 'REGEXP_EXTRACT(<STRING>, <STRING>, <INTEGER>)'";
      strings(forms, 2);
      requireIntegral(op, args, 2, forms);
      return LogicalType::string(true);  // NULL when nothing matches
    }
    case ScalarOp::kRegexpReplace:
      checkArity(op, args.size(), 3, 3);
      strings("'REGEXP_REPLACE(<STRING>, <STRING>, <STRING>)'", 3);
      return LogicalType::string(true);  // NULL on an invalid pattern
    case ScalarOp::kSplitIndex: {
      // The separator is a string, or the code (1..255) of one character.
      checkArity(op, args.size(), 3, 3);
      const std::string forms = "'SPLIT_INDEX(<STRING>, <STRING>, <INTEGER>)', 'SPLIT_INDEX(<STRING>, <INTEGER>, <INTEGER>)'";
      strings(forms, 1);
      if (!args[1]->type.isIntegral()) requireString(op, args, 1, forms);
      requireIntegral(op, args, 2, forms);
      return LogicalType::string(true);  // NULL when the index is out of range
    }
    case ScalarOp::kLeft: case ScalarOp::kRight: case ScalarOp::kRepeat: {
      checkArity(op, args.size(), 2, 2);
      const std::string forms = fmt::format("'{}(<STRING>, <INTEGER>)'", name);
      strings(forms, 1);
      requireIntegral(op, args, 1, forms);
      if (op == ScalarOp::kRepeat) return LogicalType::string(anyNullable(args));
      return LogicalType::varchar(args[0]->type.precision, anyNullable(args));
    }
    case ScalarOp::kInitCap:
      checkArity(op, args.size(), 1, 1);
      strings(forms1(name, "STRING"), 1);
      return args[0]->type;  // Calcite ARG0_NULLABLE
    case ScalarOp::kReverse:
      checkArity(op, args.size(), 1, 1);
      strings(forms1(name, "STRING"), 1);
      return LogicalType::varchar(args[0]->type.precision, nullable);
    case ScalarOp::kPosition:
      checkArity(op, args.size(), 2, 2);
      strings("'POSITION(<STRING> IN <STRING>)'", 2);
      return LogicalType::integer(anyNullable(args));
    case ScalarOp::kLocate: {
      checkArity(op, args.size(), 2, 3);
      const std::string forms = "'LOCATE(<STRING>, <STRING>)', 'LOCATE(<STRING>, <STRING>, <INTEGER>)'";
      strings(forms, 2);
      requireIntegral(op, args, 2, forms);
      return LogicalType::integer(anyNullable(args));
    }
    case ScalarOp::kInstr: case ScalarOp::kOverlay: {
      // INSTR(s, sub [, start [, nth]]) -> INT; OVERLAY(s PLACING r FROM start [FOR length]) -> STRING.
      const bool instr = op == ScalarOp::kInstr;
      checkArity(op, args.size(), instr ? 2 : 3, 4);
      const std::string forms = instr ? "'INSTR(<STRING>, <STRING> [, <INTEGER> [, <INTEGER>]])'"
                                      : "'OVERLAY(<STRING> PLACING <STRING> FROM <INTEGER> [FOR <INTEGER>])'";
      strings(forms, 2);
      requireIntegral(op, args, 2, forms);
      requireIntegral(op, args, 3, forms);
      return instr ? LogicalType::integer(anyNullable(args)) : LogicalType::string(anyNullable(args));
    }
    case ScalarOp::kAscii:
      checkArity(op, args.size(), 1, 1);
      strings(forms1(name, "STRING"), 1);
      return LogicalType::integer(nullable);
    case ScalarOp::kChr:
      checkArity(op, args.size(), 1, 1);
      requireIntegral(op, args, 0, forms1(name, "INTEGER"));
      return LogicalType::varchar(1, args[0]->type.nullable);
    case ScalarOp::kMd5: case ScalarOp::kSha1: case ScalarOp::kSha224: case ScalarOp::kSha256:
    case ScalarOp::kSha384: case ScalarOp::kSha512: {
      // VARCHAR of the hex digest length (FlinkSqlOperatorTable: explicit VARCHAR(n), nullable).
      checkArity(op, args.size(), 1, 1);
      strings(forms1(name, "STRING"), 1);
      const int32_t len = op == ScalarOp::kMd5 ? 32 : op == ScalarOp::kSha1 ? 40 : op == ScalarOp::kSha224 ? 56
                        : op == ScalarOp::kSha256 ? 64 : op == ScalarOp::kSha384 ? 96 : 128;
      return LogicalType::varchar(len, nullable);
    }
    case ScalarOp::kSha2: {
      checkArity(op, args.size(), 2, 2);
      strings("'SHA2(<STRING>, <INTEGER>)'", 1);
      requireIntegral(op, args, 1, "'SHA2(<STRING>, <INTEGER>)'");
      const std::optional<int64_t> bits = intLiteral(args[1]);
      if (bits && *bits != 224 && *bits != 256 && *bits != 384 && *bits != 512)
        throw UserError(fmt::format("SHA2 supports hash lengths 224, 256, 384 and 512, not {}", *bits));
      return LogicalType::varchar(128, anyNullable(args));
    }
    case ScalarOp::kToBase64: case ScalarOp::kFromBase64:
      checkArity(op, args.size(), 1, 1);
      strings(forms1(name, "STRING"), 1);
      return LogicalType::string(nullable);
    case ScalarOp::kUuid:
      checkArity(op, args.size(), 0, 0);
      return LogicalType::charType(36, false);  // RFC 4122 version 4, a new one per row
    case ScalarOp::kHex:
      // Long.toHexString of an integer, or the hex of a string's UTF-8 bytes; upper case.
      checkArity(op, args.size(), 1, 1);
      if (isNullLiteral(args[0])) args[0] = typedNull(LogicalType::bigint());
      if (!args[0]->type.isIntegral() && !args[0]->type.isString()) cannotApply(op, args, "'HEX(<INTEGER>)', 'HEX(<STRING>)'");
      return LogicalType::string(nullable);
    case ScalarOp::kBin:
      checkArity(op, args.size(), 1, 1);
      requireIntegral(op, args, 0, forms1(name, "INTEGER"));
      return LogicalType::string(args[0]->type.nullable);
    case ScalarOp::kIsAlpha: case ScalarOp::kIsDigit: case ScalarOp::kIsDecimal:
      // SqlFunctionUtils.isAlpha / isDigit / isDecimal: FALSE for NULL, never NULL.
      checkArity(op, args.size(), 1, 1);
      if (isNullLiteral(args[0])) args[0] = typedNull(LogicalType::string());
      if (!args[0]->type.isString() && !args[0]->type.isNumeric()) cannotApply(op, args, forms1(name, "ANY"));
      return LogicalType::boolean(false);
    case ScalarOp::kTypeOf:
      checkArity(op, args.size(), 1, 2);
      if (args.size() == 2 && args[1]->type.id != TypeId::kBoolean) cannotApply(op, args, "'TYPEOF(<ANY>)', 'TYPEOF(<ANY>, <BOOLEAN>)'");
      return LogicalType::string(false);
    case ScalarOp::kParseUrl:
      checkArity(op, args.size(), 2, 3);
      strings("'PARSE_URL(<STRING>, <STRING>)', 'PARSE_URL(<STRING>, <STRING>, <STRING>)'", 3);
      return LogicalType::string(true);
    default:
      throw InternalError(fmt::format("not a string function: {}", name));
  }
}

}  // namespace

bool isBuiltin(ScalarOp op) {
  return static_cast<int>(op) >= static_cast<int>(ScalarOp::kPower) && op != ScalarOp::kUserFunction;
}

const char* builtinName(ScalarOp op) {
  for (const auto& b : kBuiltins)
    if (b.op == op) return b.name;
  return nullptr;
}

std::optional<ScalarOp> builtinByName(const std::string& name) {
  static const std::unordered_map<std::string, ScalarOp> kByName = [] {
    std::unordered_map<std::string, ScalarOp> m;
    for (const auto& b : kBuiltins) m.emplace(b.name, b.op);
    return m;
  }();
  auto it = kByName.find(name);
  if (it == kByName.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> builtinNames() {
  std::vector<std::string> out;
  for (const auto& b : kBuiltins) out.push_back(b.name);
  return out;
}

bool isNonDeterministic(ScalarOp op) {
  switch (op) {
    case ScalarOp::kRand: case ScalarOp::kRandInteger: case ScalarOp::kUuid: case ScalarOp::kCurrentTimestamp:
    case ScalarOp::kCurrentDate:
    case ScalarOp::kCurrentTime: case ScalarOp::kLocalTimestamp: case ScalarOp::kLocalTime: case ScalarOp::kNow:
    case ScalarOp::kUnixTimestamp: case ScalarOp::kProctime:
      return true;
    default:
      return false;
  }
}

LogicalType inferBuiltinType(ScalarOp op, std::vector<ExprPtr>& args) {
  const char* name = builtinName(op);
  SLUICE_CHECK(name != nullptr, "not a built-in function: {}", static_cast<int>(op));
  const size_t n = args.size();
  if (isTemporal(op, n)) return inferTemporalType(op, args);
  if (isJson(op)) return inferJsonType(op, args);
  if (isDoubleMath(op)) {
    // ReturnTypes.DOUBLE_NULLABLE: every argument numeric, computed in DOUBLE.
    const bool two = op == ScalarOp::kPower || op == ScalarOp::kAtan2;
    checkArity(op, n, op == ScalarOp::kLog || !two ? 1 : 2, two || op == ScalarOp::kLog ? 2 : 1);
    const std::string forms = two ? fmt::format("'{}(<NUMERIC>, <NUMERIC>)'", name)
                            : op == ScalarOp::kLog ? "'LOG(<NUMERIC>)', 'LOG(<NUMERIC>, <NUMERIC>)'"
                                                   : forms1(name, "NUMERIC");
    for (size_t i = 0; i < n; ++i) requireNumeric(op, args, i, forms);
    return LogicalType::doubleType(anyNullable(args));
  }
  switch (op) {
    case ScalarOp::kPi: case ScalarOp::kE:
      checkArity(op, n, 0, 0);
      return LogicalType::doubleType(false);
    case ScalarOp::kCeil: case ScalarOp::kFloor: case ScalarOp::kSign:
      checkArity(op, n, 1, op == ScalarOp::kSign ? 1 : 2);
      return roundingType(op, args);
    case ScalarOp::kTruncate:
      checkArity(op, n, 1, 2);
      return roundingType(op, args);
    case ScalarOp::kRand: case ScalarOp::kRandInteger: {
      // RAND([seed]), RAND_INTEGER([seed,] bound): the seed must be an integer literal (it seeds one
      // java.util.Random per subtask, as Flink's generated code does).
      const bool integer = op == ScalarOp::kRandInteger;
      checkArity(op, n, integer ? 1 : 0, integer ? 2 : 1);
      const size_t seeds = integer ? n - 1 : n;
      const std::string forms = integer ? "'RAND_INTEGER(<INTEGER>)', 'RAND_INTEGER(<INTEGER>, <INTEGER>)'"
                                        : "'RAND()', 'RAND(<INTEGER>)'";
      for (size_t i = 0; i < n; ++i) requireIntegral(op, args, i, forms);
      if (seeds == 1 && !intLiteral(args[0]))
        throw UserError(fmt::format("The seed of {} must be an integer literal", name));
      if (!integer) return LogicalType::doubleType(false);
      return LogicalType::integer(args.back()->type.nullable);
    }
    case ScalarOp::kIf: {
      checkArity(op, n, 3, 3);
      requireBoolean(op, args, 0, 1, "'IF(<BOOLEAN>, <ANY>, <ANY>)'", 1);
      if (isNullLiteral(args[1]) && isNullLiteral(args[2])) throw UserError("Illegal use of 'NULL' in 'IF'");
      const LogicalType common = commonOf(op, args, 1, 3);
      return common.withNullable(args[1]->type.nullable || args[2]->type.nullable);
    }
    case ScalarOp::kNullIf: {
      checkArity(op, n, 2, 2);
      if (isNullLiteral(args[0])) throw UserError("Illegal use of 'NULL': the first argument of NULLIF must not be NULL");
      retypeNulls(args, 1, args[0]->type);
      if (!isComparable(args[0]->type, args[1]->type)) cannotApply(op, args, "'NULLIF(<COMPARABLE_TYPE>, <COMPARABLE_TYPE>)'");
      return args[0]->type.withNullable(true);
    }
    case ScalarOp::kIfNull: {
      // Flink's IFNULL: the common type, nullable only when the replacement is nullable.
      checkArity(op, n, 2, 2);
      const LogicalType common = commonOf(op, args, 0, 2);
      return common.withNullable(args[0]->type.nullable && args[1]->type.nullable);
    }
    case ScalarOp::kGreatest: case ScalarOp::kLeast: {
      // Calcite's leastRestrictive over all arguments; NULL when any argument is NULL.
      checkArity(op, n, 1, kMany);
      const LogicalType common = commonOf(op, args, 0, n);
      return common.withNullable(anyNullable(args));
    }
    case ScalarOp::kIsDistinctFrom: case ScalarOp::kIsNotDistinctFrom: {
      checkArity(op, n, 2, 2);
      if (isNullLiteral(args[0]) && isNullLiteral(args[1])) {
        args[0] = typedNull(LogicalType::integer());
        args[1] = typedNull(LogicalType::integer());
      }
      retypeNulls(args, 0, isNullLiteral(args[0]) ? args[1]->type : args[0]->type);
      if (!isComparable(args[0]->type, args[1]->type))
        cannotApply(op, args, fmt::format("'<COMPARABLE_TYPE> {} <COMPARABLE_TYPE>'", name));
      return LogicalType::boolean(false);
    }
    default:
      return stringFunctionType(op, args);
  }
}

NodePtr Compiler::compileBuiltin(const ExprPtr& e) {
  const std::vector<ExprPtr>& args = e->args;
  const LogicalType& t = e->type;
  const ScalarOp op = e->op;
  std::vector<NodePtr> nodes;
  if (isTemporal(op, args.size())) {
    for (const auto& a : args) nodes.push_back(compile(a));
    return makeTemporalNode(op, t, std::move(nodes), newReg());
  }
  if (isJson(op)) {
    // Arguments that are JSON themselves (JSON_OBJECT / JSON_ARRAY / JSON_QUERY results) are embedded
    // as JSON, not as strings (Flink's JSON_OBJECT('a' VALUE JSON_ARRAY(1)) gives {"a":[1]}).
    std::vector<bool> raw;
    for (const auto& a : args) {
      nodes.push_back(compile(a));
      raw.push_back(a->kind == ExprKind::kCall && (a->op == ScalarOp::kJsonObject || a->op == ScalarOp::kJsonArray ||
                                                   a->op == ScalarOp::kJsonQuery));
    }
    return makeJsonNode(op, t, std::move(nodes), raw, newReg());
  }
  if (isDoubleMath(op)) {
    for (const auto& a : args) nodes.push_back(compileAs(a, LogicalType::doubleType()));
    return makeMathNode(op, t, std::move(nodes), newReg(), -1);
  }
  switch (op) {
    case ScalarOp::kPi: case ScalarOp::kE: case ScalarOp::kCeil: case ScalarOp::kFloor: case ScalarOp::kSign:
    case ScalarOp::kTruncate:
      for (const auto& a : args) nodes.push_back(compile(a));
      return makeMathNode(op, t, std::move(nodes), newReg(), -1);
    case ScalarOp::kRand: case ScalarOp::kRandInteger: {
      for (const auto& a : args) nodes.push_back(compile(a));
      const int reg = newReg();
      return makeMathNode(op, t, std::move(nodes), reg, newReg());
    }
    case ScalarOp::kIf:
      return compile(makeCall(ScalarOp::kCase, {args[0], args[1], args[2]}));
    case ScalarOp::kNullIf:
      // Calcite rewrites NULLIF(a, b) to CASE WHEN a = b THEN NULL ELSE a END.
      return compile(makeCall(ScalarOp::kCase, {makeCall(ScalarOp::kEquals, {args[0], args[1]}),
                                                typedNull(t), args[0]}));
    case ScalarOp::kIfNull:
      return compile(makeCall(ScalarOp::kCoalesce, {args[0], args[1]}));
    case ScalarOp::kGreatest: case ScalarOp::kLeast: case ScalarOp::kIsDistinctFrom:
    case ScalarOp::kIsNotDistinctFrom: {
      std::vector<LogicalType> ts;
      for (const auto& a : args) ts.push_back(a->type);
      const std::optional<LogicalType> common = findCommonType(ts);
      SLUICE_CHECK(common.has_value(), "{} without a common type", builtinName(op));
      for (const auto& a : args) nodes.push_back(compileAs(a, common->withNullable(true)));
      return makeCompareListNode(op, t, std::move(nodes), newReg());
    }
    case ScalarOp::kTypeOf: {
      // Flink's TYPEOF: the logical type summary ("INT NOT NULL", "CHAR(3) NOT NULL"), known at planning.
      types::Column c(t);
      c.appendString(args[0]->type.toString());
      return makeConstNode(std::move(c));
    }
    default:
      for (const auto& a : args) nodes.push_back(compile(a));
      return makeTextNode(op, t, std::move(nodes), newReg());
  }
}

}  // namespace sluice::table::internal
