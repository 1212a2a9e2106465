#include <fmt/format.h>

#include "common/error.h"
#include "table/sql/parser_internal.h"

namespace sluice::table::sql {

namespace {

ExprPtr makeUnary(UnaryOp op, ExprPtr operand, SourcePos pos) {
  auto e = std::make_unique<Expr>();
  e->kind = ExprKind::kUnary;
  e->unary_op = op;
  e->pos = pos;
  e->children.push_back(std::move(operand));
  return e;
}

ExprPtr makeBinary(BinaryOp op, ExprPtr left, ExprPtr right) {
  auto e = std::make_unique<Expr>();
  e->kind = ExprKind::kBinary;
  e->binary_op = op;
  e->pos = left->pos;
  e->children.push_back(std::move(left));
  e->children.push_back(std::move(right));
  return e;
}

ExprPtr makeNode(ExprKind kind, SourcePos pos, bool negated) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->pos = pos;
  e->negated = negated;
  return e;
}

const std::vector<std::string>& niladicFunctions() {
  static const std::vector<std::string> kNames = {"CURRENT_TIMESTAMP", "LOCALTIMESTAMP", "CURRENT_DATE",
                                                  "CURRENT_TIME", "LOCALTIME"};
  return kNames;
}

}  // namespace

ExprPtr Parser::parseExpr() {
  DepthGuard guard(*this, peek());
  return parseOr();
}

ExprPtr Parser::parseOr() {
  ExprPtr left = parseAnd();
  ChainGuard chain(*this);
  while (peek().isWord("OR")) {
    chain.step(next());
    left = makeBinary(BinaryOp::kOr, std::move(left), parseAnd());
  }
  return left;
}

ExprPtr Parser::parseAnd() {
  ExprPtr left = parseNot();
  ChainGuard chain(*this);
  while (peek().isWord("AND")) {
    chain.step(next());
    left = makeBinary(BinaryOp::kAnd, std::move(left), parseNot());
  }
  return left;
}

ExprPtr Parser::parseNot() {
  if (!peek().isWord("NOT")) return parsePredicate();
  const Token& t = next();
  DepthGuard guard(*this, t);
  return makeUnary(UnaryOp::kNot, parseNot(), t.pos);
}

ExprPtr Parser::parsePredicate() {
  ExprPtr left = parseAdditive();
  ChainGuard chain(*this);
  for (;;) {
    const Token& t = peek();
    if (t.kind == TokenKind::kSymbol) {
      BinaryOp op;
      if (t.text == "=") op = BinaryOp::kEquals;
      else if (t.text == "<>" || t.text == "!=") op = BinaryOp::kNotEquals;
      else if (t.text == "<") op = BinaryOp::kLess;
      else if (t.text == "<=") op = BinaryOp::kLessOrEqual;
      else if (t.text == ">") op = BinaryOp::kGreater;
      else if (t.text == ">=") op = BinaryOp::kGreaterOrEqual;
      else return left;
      chain.step(next());
      left = makeBinary(op, std::move(left), parseAdditive());
      continue;
    }
    if (t.isWord("IS")) {
      chain.step(next());
      bool negated = acceptWord("NOT");
      const Token& what = peek();
      ExprKind kind;
      if (what.isWord("NULL") || what.isWord("UNKNOWN")) kind = ExprKind::kIsNull;
      else if (what.isWord("TRUE")) kind = ExprKind::kIsTrue;
      else if (what.isWord("FALSE")) kind = ExprKind::kIsFalse;
      else if (what.isWord("DISTINCT")) {
        // a IS [NOT] DISTINCT FROM b: a call named "IS DISTINCT FROM" / "IS NOT DISTINCT FROM".
        next();
        expectWord("FROM");
        auto call = makeCall(negated ? "IS NOT DISTINCT FROM" : "IS DISTINCT FROM", {}, left->pos);
        call->children.push_back(std::move(left));
        call->children.push_back(parseAdditive());
        left = std::move(call);
        continue;
      } else unexpected(what, negated ? std::vector<std::string>{"NULL", "TRUE", "FALSE", "UNKNOWN"}
                                    : std::vector<std::string>{"NOT", "NULL", "TRUE", "FALSE", "UNKNOWN"});
      next();
      auto e = makeNode(kind, left->pos, negated);
      e->children.push_back(std::move(left));
      left = std::move(e);
      continue;
    }
    bool negated = false;
    if (t.isWord("NOT") &&
        (peek(1).isWord("BETWEEN") || peek(1).isWord("IN") || peek(1).isWord("LIKE") || peek(1).isWord("SIMILAR"))) {
      negated = true;
      next();
    } else if (!(t.isWord("BETWEEN") || t.isWord("IN") || t.isWord("LIKE") || t.isWord("SIMILAR"))) {
      return left;
    }
    const Token& op = next();
    chain.step(op);
    if (op.upper == "SIMILAR") unsupported(op, "SIMILAR TO");
    if (op.upper == "BETWEEN") {
      if (peek().isWord("SYMMETRIC")) unsupported(peek(), "BETWEEN SYMMETRIC");
      acceptWord("ASYMMETRIC");
      auto e = makeNode(ExprKind::kBetween, left->pos, negated);
      e->children.push_back(std::move(left));
      e->children.push_back(parseAdditive());
      expectWord("AND");
      e->children.push_back(parseAdditive());
      left = std::move(e);
    } else if (op.upper == "IN") {
      expectSymbol("(");
      auto e = makeNode(ExprKind::kIn, left->pos, negated);
      e->children.push_back(std::move(left));
      if (startsQuery(0)) {
        // x [NOT] IN (SELECT ...): the planner turns it into a semi / anti join.
        e->subquery = parseQuery();
        if (!peek().isSymbol(")")) unexpected(peek(), {")"});
        next();
        left = std::move(e);
        continue;
      }
      do {
        e->children.push_back(parseExpr());
      } while (acceptSymbol(","));
      if (!peek().isSymbol(")")) unexpected(peek(), {",", ")"});
      next();
      left = std::move(e);
    } else {  // LIKE
      auto e = makeNode(ExprKind::kLike, left->pos, negated);
      e->children.push_back(std::move(left));
      e->children.push_back(parseAdditive());
      if (acceptWord("ESCAPE")) e->children.push_back(parseAdditive());
      left = std::move(e);
    }
  }
}

ExprPtr Parser::parseAdditive() {
  ExprPtr left = parseMultiplicative();
  ChainGuard chain(*this);
  for (;;) {
    const Token& t = peek();
    BinaryOp op;
    if (t.isSymbol("+")) op = BinaryOp::kPlus;
    else if (t.isSymbol("-")) op = BinaryOp::kMinus;
    else if (t.isSymbol("||")) op = BinaryOp::kConcat;
    else return left;
    chain.step(next());
    left = makeBinary(op, std::move(left), parseMultiplicative());
  }
}

ExprPtr Parser::parseMultiplicative() {
  ExprPtr left = parseUnary();
  ChainGuard chain(*this);
  for (;;) {
    const Token& t = peek();
    BinaryOp op;
    if (t.isSymbol("*")) op = BinaryOp::kTimes;
    else if (t.isSymbol("/")) op = BinaryOp::kDivide;
    else if (t.isSymbol("%")) op = BinaryOp::kMod;
    else return left;
    chain.step(next());
    left = makeBinary(op, std::move(left), parseUnary());
  }
}

ExprPtr Parser::parseUnary() {
  const Token& t = peek();
  if (t.isSymbol("-") || t.isSymbol("+")) {
    next();
    DepthGuard guard(*this, t);
    return makeUnary(t.text == "-" ? UnaryOp::kMinus : UnaryOp::kPlus, parseUnary(), t.pos);
  }
  ExprPtr e = parsePrimary();
  if (peek().isSymbol("[")) unsupported(peek(), "element access with [ ]");
  if (peek().isSymbol(".")) unsupported(peek(), "field access on an expression");
  return e;
}

ExprPtr Parser::parsePrimary() {
  const Token& t = peek();
  switch (t.kind) {
    case TokenKind::kInteger:
      next();
      return makeLiteral(LiteralKind::kInteger, t.text, t.pos);
    case TokenKind::kDecimal:
      next();
      return makeLiteral(LiteralKind::kDecimal, t.text, t.pos);
    case TokenKind::kApproximate:
      next();
      return makeLiteral(LiteralKind::kApproximate, t.text, t.pos);
    case TokenKind::kString:
      next();
      return makeLiteral(LiteralKind::kString, t.text, t.pos);
    case TokenKind::kQuotedIdent:
    case TokenKind::kWord:
      return parseWordPrimary();
    case TokenKind::kSymbol:
      if (t.isSymbol("(")) {
        if (startsQuery(1)) unsupported(t, "a subquery in an expression");
        next();
        ExprPtr e = parseExpr();
        if (peek().isSymbol(",")) unsupported(peek(), "a row constructor (a, b, ...)");
        if (!peek().isSymbol(")")) unexpectedWhat(peek(), "\")\" or an operator");
        next();
        return e;
      }
      if (t.isSymbol("?")) unsupported(t, "a dynamic parameter ?");
      break;
    case TokenKind::kEnd:
      break;
  }
  unexpectedWhat(t, "an expression");
}

ExprPtr Parser::parseWordPrimary() {
  const Token& t = peek();
  if (t.kind == TokenKind::kWord) {
    const std::string& u = t.upper;
    const Token& after = peek(1);
    if (u == "TRUE" || u == "FALSE") {
      next();
      auto e = makeLiteral(LiteralKind::kBoolean, "", t.pos);
      e->bool_value = u == "TRUE";
      return e;
    }
    if (u == "NULL") {
      next();
      return makeLiteral(LiteralKind::kNull, "", t.pos);
    }
    if (u == "CASE") return parseCase();
    if (u == "CAST") return parseCast();
    if (u == "INTERVAL") return parseInterval();
    if (u == "TIMESTAMP" && after.kind == TokenKind::kString) {
      next();
      next();
      return makeLiteral(LiteralKind::kTimestamp, after.text, t.pos);
    }
    if ((u == "DATE" || u == "TIME") && after.kind == TokenKind::kString) {
      next();
      next();
      return makeLiteral(u == "DATE" ? LiteralKind::kDate : LiteralKind::kTime, after.text, t.pos);
    }
    if (u == "TRY_CAST" && after.isSymbol("(")) return parseCast();
    if (u == "EXISTS") {
      // EXISTS (SELECT ...): the planner turns it into a semi join (NOT EXISTS: an anti join).
      next();
      expectSymbol("(");
      if (!startsQuery(0)) unexpected(peek(), {"SELECT", "WITH", "VALUES", "("});
      auto e = makeNode(ExprKind::kExists, t.pos, false);
      e->subquery = parseQuery();
      if (!peek().isSymbol(")")) unexpected(peek(), {")"});
      next();
      return e;
    }
    if (u == "TABLE") {
      next();
      auto e = makeNode(ExprKind::kTableArg, t.pos, false);
      if (peek().isSymbol("(")) {
        // TABLE (query): a window TVF over a subquery, as Calcite's table-argument grammar allows.
        next();
        if (!startsQuery(0)) unexpected(peek(), {"SELECT", "WITH", "VALUES", "("});
        e->subquery = parseQuery();
        if (!peek().isSymbol(")")) unexpected(peek(), {")"});
        next();
      } else {
        e->names = parseQualifiedName("a table name");
      }
      if (peek().isWord("PARTITION")) {
        // TABLE t PARTITION BY k / PARTITION BY (k1, k2): a set-semantics table argument (SESSION's keys).
        next();
        expectWord("BY");
        const bool list = acceptSymbol("(");
        do {
          const Token& k = peek();
          e->children.push_back(makeIdentifier(parseQualifiedName("a column name"), k.pos));
        } while (list && acceptSymbol(","));
        if (list) expectSymbol(")");
      }
      return e;
    }
    if (u == "DESCRIPTOR" && after.isSymbol("(")) {
      next();
      auto e = makeNode(ExprKind::kDescriptor, t.pos, false);
      e->names = parseParenNameList("a column name");
      return e;
    }
    if ((u == "LEFT" || u == "RIGHT") && after.isSymbol("(")) {
      next();
      return parseFunctionCall(t);
    }
    if (!after.isSymbol("(")) {
      for (const auto& n : niladicFunctions()) {
        if (u == n) {
          next();
          return makeCall(u, {}, t.pos);
        }
      }
    }
    if (isReserved(u)) unexpectedWhat(t, "an expression");
  }
  // Identifier chain or function call.
  next();
  if (t.kind == TokenKind::kWord && peek().isSymbol("(")) return parseFunctionCall(t);
  std::vector<std::string> names{t.text};
  while (peek().isSymbol(".")) {
    if (peek(1).isSymbol("*")) unsupported(peek(1), "t.* inside an expression");
    next();
    names.push_back(parseIdentifier("a name after \".\""));
  }
  if (peek().isSymbol("(") && names.size() > 1) unsupported(peek(), "a qualified function name");
  return makeIdentifier(std::move(names), t.pos);
}

ExprPtr Parser::parseFunctionCall(const Token& name_tok) {
  // The name token is already consumed; the next token is '('.
  const std::string& u = name_tok.upper;
  if (u == "SUBSTRING") return parseSubstring(name_tok);
  if (u == "TRIM") return parseTrim(name_tok);
  DepthGuard guard(*this, name_tok);
  expectSymbol("(");
  auto call = makeCall(name_tok.kind == TokenKind::kWord ? u : name_tok.text, {}, name_tok.pos);
  if (u == "POSITION") {
    call->children.push_back(parseAdditive());
    expectWord("IN");
    call->children.push_back(parseExpr());
    expectSymbol(")");
    return call;
  }
  if (u == "EXTRACT") {
    const Token& unit = peek();
    if (unit.kind != TokenKind::kWord) unexpectedWhat(unit, "a time unit such as HOUR");
    next();
    call->children.push_back(makeLiteral(LiteralKind::kString, unit.upper, unit.pos));
    expectWord("FROM");
    call->children.push_back(parseExpr());
    expectSymbol(")");
    return call;
  }
  if (u == "JSON_OBJECT" || u == "JSON_ARRAY") return parseJsonConstructor(name_tok, std::move(call));
  if (u == "JSON_VALUE" || u == "JSON_QUERY" || u == "JSON_EXISTS") return parseJsonQuery(name_tok, std::move(call));
  if (u == "OVERLAY") {
    // OVERLAY(s PLACING r FROM start [FOR length]): children = {s, r, start[, length]}.
    call->children.push_back(parseExpr());
    expectWord("PLACING");
    call->children.push_back(parseExpr());
    expectWord("FROM");
    call->children.push_back(parseExpr());
    if (acceptWord("FOR")) call->children.push_back(parseExpr());
    expectSymbol(")");
    return call;
  }
  if (u == "TIMESTAMPADD" || u == "TIMESTAMPDIFF") {
    // The first argument is a unit keyword (DAY, SQL_TSI_DAY, ...), kept as a string literal.
    const Token& unit = peek();
    if (unit.kind != TokenKind::kWord) unexpectedWhat(unit, "a time unit such as DAY");
    next();
    call->children.push_back(makeLiteral(LiteralKind::kString, unit.upper, unit.pos));
    while (acceptSymbol(",")) call->children.push_back(parseExpr());
    expectSymbol(")");
    return call;
  }
  if ((u == "FLOOR" || u == "CEIL" || u == "CEILING") && !peek().isSymbol(")")) {
    // FLOOR(x TO unit): children {x, unit as a string literal}; FLOOR(x) stays a plain call.
    call->children.push_back(parseExpr());
    if (acceptWord("TO")) {
      const Token& unit = peek();
      if (unit.kind != TokenKind::kWord) unexpectedWhat(unit, "a time unit such as HOUR");
      next();
      call->children.push_back(makeLiteral(LiteralKind::kString, unit.upper, unit.pos));
    } else {
      while (acceptSymbol(",")) call->children.push_back(parseExpr());
    }
    expectSymbol(")");
    return call;
  }
  if (peek().isSymbol("*") && peek(1).isSymbol(")")) {
    next();
    next();
    call->star = true;
  } else if (acceptSymbol(")")) {
    // no arguments
  } else {
    if (acceptWord("DISTINCT")) {
      call->distinct = true;
    } else {
      acceptWord("ALL");
    }
    do {
      if (isIdentifier(peek()) && peek(1).isSymbol("=>")) unsupported(peek(1), "a named argument (name => value)");
      call->children.push_back(parseExpr());
    } while (acceptSymbol(","));
    if (!peek().isSymbol(")")) unexpected(peek(), {",", ")"});
    next();
  }
  if (peek().isWord("FILTER") && peek(1).isSymbol("(")) {
    // Calcite's aggregate FILTER clause; the planner refuses it on anything but an aggregate call.
    next();
    next();
    expectWord("WHERE");
    call->filter = std::shared_ptr<const Expr>(parseExpr().release());
    expectSymbol(")");
  }
  if (peek().isWord("WITHIN") && peek(1).isWord("GROUP")) unsupported(peek(), "WITHIN GROUP");
  if (peek().isWord("OVER")) return parseOver(std::move(call));
  return call;
}

ExprPtr Parser::parseSubstring(const Token& name_tok) {
  DepthGuard guard(*this, name_tok);
  expectSymbol("(");
  auto call = makeCall("SUBSTRING", {}, name_tok.pos);
  call->children.push_back(parseExpr());
  if (acceptWord("FROM")) {
    call->children.push_back(parseExpr());
    if (acceptWord("FOR")) call->children.push_back(parseExpr());
  } else if (acceptSymbol(",")) {
    call->children.push_back(parseExpr());
    if (acceptSymbol(",")) call->children.push_back(parseExpr());
  } else {
    unexpected(peek(), {"FROM", ","});
  }
  if (!peek().isSymbol(")")) unexpected(peek(), call->children.size() == 2 ? std::vector<std::string>{"FOR", ",", ")"}
                                                                               : std::vector<std::string>{")"});
  next();
  return call;
}

ExprPtr Parser::parseTrim(const Token& name_tok) {
  DepthGuard guard(*this, name_tok);
  expectSymbol("(");
  auto call = makeCall("TRIM", {}, name_tok.pos);
  bool mode_given = true;
  if (acceptWord("BOTH")) {
    call->trim_mode = TrimMode::kBoth;
  } else if (acceptWord("LEADING")) {
    call->trim_mode = TrimMode::kLeading;
  } else if (acceptWord("TRAILING")) {
    call->trim_mode = TrimMode::kTrailing;
  } else {
    mode_given = false;
  }
  if (acceptWord("FROM")) {
    call->children.push_back(parseExpr());
  } else {
    ExprPtr first = parseExpr();
    if (acceptWord("FROM")) {
      call->children.push_back(parseExpr());
      call->children.push_back(std::move(first));
    } else {
      if (mode_given) unexpected(peek(), {"FROM"});
      call->children.push_back(std::move(first));
    }
  }
  expectSymbol(")");
  return call;
}

ExprPtr Parser::parseCase() {
  const Token& t = next();  // CASE
  DepthGuard guard(*this, t);
  auto e = makeNode(ExprKind::kCase, t.pos, false);
  if (!peek().isWord("WHEN")) {
    e->case_has_operand = true;
    e->children.push_back(parseExpr());
  }
  if (!peek().isWord("WHEN")) unexpected(peek(), {"WHEN"});
  while (acceptWord("WHEN")) {
    e->children.push_back(parseExpr());
    expectWord("THEN");
    e->children.push_back(parseExpr());
  }
  if (acceptWord("ELSE")) {
    e->case_has_else = true;
    e->children.push_back(parseExpr());
  }
  if (!peek().isWord("END")) unexpected(peek(), e->case_has_else ? std::vector<std::string>{"END"}
                                                                 : std::vector<std::string>{"WHEN", "ELSE", "END"});
  next();
  return e;
}

ExprPtr Parser::parseCast() {
  const Token& t = next();  // CAST or TRY_CAST
  DepthGuard guard(*this, t);
  expectSymbol("(");
  auto e = makeNode(ExprKind::kCast, t.pos, false);
  e->try_cast = t.isWord("TRY_CAST");
  e->children.push_back(parseExpr());
  expectWord("AS");
  e->cast_type = parseType();
  expectSymbol(")");
  return e;
}

ExprPtr Parser::parseInterval() {
  const Token& t = next();  // INTERVAL
  bool negative = false;
  if (peek().isSymbol("-") || peek().isSymbol("+")) negative = next().text == "-";
  const Token& value = expectString("an interval string such as '1'");
  const Token& unit = peek();
  IntervalUnit u;
  // Flink also accepts the plural forms (INTERVAL '5' MINUTES).
  if (unit.isWord("SECOND") || unit.isWord("SECONDS")) u = IntervalUnit::kSecond;
  else if (unit.isWord("MINUTE") || unit.isWord("MINUTES")) u = IntervalUnit::kMinute;
  else if (unit.isWord("HOUR") || unit.isWord("HOURS")) u = IntervalUnit::kHour;
  else if (unit.isWord("DAY") || unit.isWord("DAYS")) u = IntervalUnit::kDay;
  else if (unit.isWord("MONTH") || unit.isWord("MONTHS")) u = IntervalUnit::kMonth;
  else if (unit.isWord("YEAR") || unit.isWord("YEARS")) u = IntervalUnit::kYear;
  else unexpected(unit, {"SECOND", "MINUTE", "HOUR", "DAY", "MONTH", "YEAR"});
  next();
  if (peek().isSymbol("(")) unsupported(peek(), "an interval precision");
  if (peek().isWord("TO")) unsupported(peek(), "an interval range (... TO ...)");
  std::string text = value.text;
  if (negative) text = (!text.empty() && text[0] == '-') ? text.substr(1) : "-" + text;
  auto e = makeLiteral(LiteralKind::kInterval, text, t.pos);
  e->interval_unit = u;
  try {
    if (isYearMonthInterval(*e)) intervalMonths(*e);
    else intervalMillis(*e);
  } catch (const SqlError&) {
    fail(fmt::format("Illegal interval literal '{}' {}: expected a whole number{}", value.text,
                     intervalUnitToString(u), u == IntervalUnit::kSecond ? " or seconds with a fraction" : ""),
         value.pos);
  }
  return e;
}

types::LogicalType Parser::parseType() {
  using types::LogicalType;
  const Token& t = peek();
  if (t.kind != TokenKind::kWord) unexpectedWhat(t, "a data type");
  const std::string& u = t.upper;
  next();
  LogicalType type;
  if (u == "BOOLEAN") {
    type = LogicalType::boolean();
  } else if (u == "INT" || u == "INTEGER") {
    type = LogicalType::integer();
  } else if (u == "BIGINT") {
    type = LogicalType::bigint();
  } else if (u == "TINYINT") {
    type = LogicalType::tinyint();
  } else if (u == "SMALLINT") {
    type = LogicalType::smallint();
  } else if (u == "FLOAT" || u == "REAL") {
    type = LogicalType::floatType();  // Flink's FLOAT is 4 bytes and takes no precision; REAL is a synonym
  } else if (u == "DATE") {
    type = LogicalType::date();
  } else if (u == "TIME") {
    int32_t p = 0;  // Flink's TIME = TIME(0)
    if (acceptSymbol("(")) {
      p = static_cast<int32_t>(expectInteger("TIME precision", 0, 9));
      expectSymbol(")");
    }
    if (acceptWord("WITHOUT")) {
      expectWord("TIME");
      expectWord("ZONE");
    }
    type = LogicalType::time(p);
  } else if (u == "DOUBLE") {
    acceptWord("PRECISION");
    type = LogicalType::doubleType();
  } else if (u == "DECIMAL" || u == "DEC" || u == "NUMERIC") {
    int32_t p = 10;  // Flink's DECIMAL = DECIMAL(10, 0)
    int32_t s = 0;
    if (acceptSymbol("(")) {
      p = static_cast<int32_t>(expectInteger("DECIMAL precision", 1, types::kMaxDecimalPrecision));
      if (acceptSymbol(",")) s = static_cast<int32_t>(expectInteger("DECIMAL scale", 0, p));
      expectSymbol(")");
    }
    type = LogicalType::decimal(p, s);
  } else if (u == "STRING") {
    type = LogicalType::string();
  } else if (u == "VARCHAR" || u == "CHAR" || u == "CHARACTER") {
    bool varying = u == "VARCHAR" || acceptWord("VARYING");
    // Flink SQL: VARCHAR = VARCHAR(2147483647) = STRING (FlinkTypeSystem#getDefaultPrecision), CHAR = CHAR(1)
    int32_t n = varying ? types::kMaxVarcharLength : 1;
    if (acceptSymbol("(")) {
      n = static_cast<int32_t>(expectInteger("length", 1, types::kMaxVarcharLength));
      expectSymbol(")");
    }
    type = varying ? LogicalType::varchar(n) : LogicalType::charType(n);
  } else if (u == "TIMESTAMP") {
    int32_t p = 6;  // Flink's TIMESTAMP = TIMESTAMP(6)
    if (acceptSymbol("(")) {
      p = static_cast<int32_t>(expectInteger("TIMESTAMP precision", 0, 9));
      expectSymbol(")");
    }
    bool local_zone = false;
    if (peek().isWord("WITH")) {
      next();
      if (!peek().isWord("LOCAL")) unsupported(t, "type TIMESTAMP WITH TIME ZONE");
      next();
      expectWord("TIME");
      expectWord("ZONE");
      local_zone = true;
    } else if (acceptWord("WITHOUT")) {
      expectWord("TIME");
      expectWord("ZONE");
    }
    type = local_zone ? LogicalType::timestampLtz(p) : LogicalType::timestamp(p);
  } else if (u == "TIMESTAMP_LTZ") {
    int32_t p = 6;  // Flink's TIMESTAMP_LTZ = TIMESTAMP_LTZ(6)
    if (acceptSymbol("(")) {
      p = static_cast<int32_t>(expectInteger("TIMESTAMP_LTZ precision", 0, 9));
      expectSymbol(")");
    }
    type = LogicalType::timestampLtz(p);
  } else if (u == "ROW") {
    type = parseRowFields();
  } else if (u == "BYTES" || u == "BINARY" ||
             u == "VARBINARY" || u == "ARRAY" || u == "MAP" || u == "MULTISET" || u == "RAW" ||
             u == "INTERVAL" || u == "NULL") {
    unsupported(t, "type " + u);
  } else {
    unexpectedWhat(t, "a data type");
  }
  if (peek().isWord("NOT") && peek(1).isWord("NULL")) {
    next();
    next();
    type.nullable = false;
  } else if (peek().isWord("NULL")) {
    next();
  }
  return type;
}

// ROW<name type, ...> or ROW(name type, ...) after the ROW keyword; a field may carry a 'description'
// (Flink's syntax), which is dropped. ROW<> and ROW() are Flink's empty row.
types::LogicalType Parser::parseRowFields() {
  const bool angle = acceptSymbol("<");
  if (!angle && !acceptSymbol("(")) unexpectedWhat(peek(), "'<' or '(' after ROW");
  const char* close = angle ? ">" : ")";
  types::RowType fields;
  if (!acceptSymbol(close)) {
    do {
      const Token& at = peek();
      std::string name = parseIdentifier("a ROW field name");
      if (fields.indexOf(name) >= 0) fail(fmt::format("Field names must be unique. Found duplicates: [{}]", name), at.pos);
      fields.names.push_back(std::move(name));
      fields.types.push_back(parseType());
      if (peek().kind == TokenKind::kString) next();
    } while (acceptSymbol(","));
    expectSymbol(close);
  }
  return types::LogicalType::row(std::move(fields));
}

}  // namespace sluice::table::sql
