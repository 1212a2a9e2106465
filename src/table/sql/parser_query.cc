#include <fmt/format.h>

#include "table/sql/parser_internal.h"

namespace sluice::table::sql {

bool Parser::startsQuery(size_t ahead) const {
  // A query starts with SELECT (or WITH/VALUES, rejected later), possibly behind parentheses.
  size_t i = ahead;
  while (peek(i).isSymbol("(")) ++i;
  const Token& t = peek(i);
  return t.isWord("SELECT") || t.isWord("WITH") || t.isWord("VALUES");
}

std::unique_ptr<Query> Parser::parseQuery() {
  DepthGuard guard(*this, peek());
  auto q = std::make_unique<Query>();
  q->pos = peek().pos;
  std::vector<WithItem> with;
  if (peek().isWord("WITH")) with = parseWith();
  parseIntersectLevel(*q);
  for (;;) {
    const Token& t = peek();
    const bool is_union = t.isWord("UNION");
    if (!is_union && !t.isWord("EXCEPT") && !t.isWord("MINUS")) break;
    const bool ordered = !q->order_by.empty() || q->limit || q->offset;
    next();
    bool all = acceptWord("ALL");
    if (!all) acceptWord("DISTINCT");
    if (is_union && all && ordered)
      fail("ORDER BY / LIMIT / OFFSET are only allowed at the end of a UNION ALL (or inside a subquery)", t.pos);
    Query right;
    right.pos = peek().pos;
    parseIntersectLevel(right);
    if (is_union && all) {
      if (!right.order_by.empty() || right.limit || right.offset)
        fail("ORDER BY / LIMIT inside a parenthesized UNION ALL branch is not supported; use a subquery in FROM",
             right.selects.front().pos);
      for (auto& sel : right.selects) q->selects.push_back(std::move(sel));
    } else {
      wrapSetOperation(*q, t.pos, is_union ? SetOpKind::kUnion : SetOpKind::kExcept, all, std::move(right));
    }
  }
  parseOrderByAndLimit(*q);
  q->with = std::move(with);
  return q;
}

void Parser::parseIntersectLevel(Query& q) {
  parseQueryTerm(q);
  while (peek().isWord("INTERSECT")) {
    const SourcePos at = next().pos;
    bool all = acceptWord("ALL");
    if (!all) acceptWord("DISTINCT");
    Query right;
    right.pos = peek().pos;
    parseQueryTerm(right);
    wrapSetOperation(q, at, SetOpKind::kIntersect, all, std::move(right));
  }
}

void Parser::wrapSetOperation(Query& q, SourcePos at, SetOpKind kind, bool all, Query right) {
  auto op = std::make_shared<SetOperation>();
  op->pos = at;
  op->kind = kind;
  op->all = all;
  op->left = std::make_shared<Query>(std::move(q));
  op->right = std::make_shared<Query>(std::move(right));
  Query wrapped;
  wrapped.pos = op->left->pos;
  SelectStmt s;
  s.pos = at;
  s.set_op = std::move(op);
  wrapped.selects.push_back(std::move(s));
  q = std::move(wrapped);
  follow_ = {"UNION", "INTERSECT", "EXCEPT"};
}

std::vector<WithItem> Parser::parseWith() {
  const Token& w = expectWord("WITH");
  if (peek().isWord("RECURSIVE")) unsupported(peek(), "WITH RECURSIVE");
  (void)w;
  std::vector<WithItem> items;
  do {
    WithItem item;
    item.pos = peek().pos;
    item.name = parseIdentifier("the name of a WITH item");
    for (const auto& before : items)
      if (before.name == item.name) fail(fmt::format("Duplicate name '{}' in WITH clause", item.name), item.pos);
    if (peek().isSymbol("(")) item.columns = parseParenNameList("column");
    expectWord("AS");
    expectSymbol("(");
    follow_.clear();
    item.query = parseQuery();
    if (!peek().isSymbol(")")) {
      std::vector<std::string> expected = follow_;
      expected.push_back(")");
      unexpected(peek(), expected);
    }
    next();
    items.push_back(std::move(item));
  } while (acceptSymbol(","));
  if (!startsQuery(0)) unexpected(peek(), {",", "SELECT"});
  return items;
}

SelectStmt Parser::parseValues() {
  SelectStmt s;
  s.pos = expectWord("VALUES").pos;
  do {
    std::vector<ExprPtr> row;
    const Token& start = peek();
    if (acceptSymbol("(")) {
      do {
        row.push_back(parseExpr());
      } while (acceptSymbol(","));
      expectSymbol(")");
    } else {
      row.push_back(parseExpr());
    }
    if (!s.values.empty() && row.size() != s.values.front().size())
      fail(fmt::format("Each row of VALUES must have the same number of fields: the first has {}, this one {}",
                       s.values.front().size(), row.size()),
           start.pos);
    s.values.push_back(std::move(row));
  } while (acceptSymbol(","));
  follow_ = {",", "UNION", "INTERSECT", "EXCEPT"};
  return s;
}

void Parser::parseOrderByAndLimit(Query& q) {
  if (peek().isWord("ORDER")) {
    if (!q.order_by.empty()) unexpected(peek(), follow_);
    q.order_pos = next().pos;
    expectWord("BY");
    do {
      q.order_by.push_back(parseOrderItem());
    } while (acceptSymbol(","));
    follow_ = {",", "LIMIT", "OFFSET", "FETCH"};
  }
  if (acceptWord("LIMIT")) {
    if (q.limit) fail("LIMIT given twice", peek().pos);
    if (peek().isWord("ALL")) unsupported(peek(), "LIMIT ALL");
    q.limit = parseAdditive();
    if (peek().isSymbol(",")) unsupported(peek(), "LIMIT offset, count (write LIMIT count OFFSET offset)");
    follow_ = {"OFFSET"};
  }
  if (acceptWord("OFFSET")) {
    q.offset = parseAdditive();
    if (!acceptWord("ROWS")) acceptWord("ROW");
    follow_ = {"FETCH"};
  }
  if (peek().isWord("FETCH")) {
    const Token& t = next();
    if (q.limit) fail("FETCH and LIMIT cannot both be given", t.pos);
    if (!acceptWord("FIRST")) expectWord("NEXT");
    q.limit = parseAdditive();
    if (!acceptWord("ROWS")) expectWord("ROW");
    expectWord("ONLY");
    follow_ = {};
  }
}

void Parser::parseQueryTerm(Query& q) {
  const Token& t = peek();
  if (t.isWord("SELECT")) {
    q.selects.push_back(parseSelect());
  } else if (t.isSymbol("(")) {
    next();
    auto inner = parseQuery();
    if (!inner->with.empty()) {
      // (WITH ... SELECT ...) as a term: its names are visible inside only, so it stays a subquery.
      SelectStmt sel;
      sel.pos = inner->pos;
      SelectItem star;
      star.pos = inner->pos;
      star.is_star = true;
      sel.select_list.push_back(std::move(star));
      sel.from = std::make_unique<TableRef>();
      sel.from->kind = TableRefKind::kSubquery;
      sel.from->pos = inner->pos;
      sel.from->subquery = std::move(inner);
      inner = std::make_unique<Query>();
      inner->pos = sel.pos;
      inner->selects.push_back(std::move(sel));
    }
    const bool ordered = !inner->order_by.empty() || inner->limit || inner->offset;
    // (SELECT ... ORDER BY ... LIMIT n) as the whole query keeps its ORDER BY / LIMIT; inside a UNION ALL
    // a branch of its own would need a subquery.
    if (ordered && !q.selects.empty())
      fail("ORDER BY / LIMIT inside a parenthesized UNION ALL branch is not supported; use a subquery in FROM",
           inner->pos);
    for (auto& s : inner->selects) q.selects.push_back(std::move(s));
    if (ordered) {
      q.order_by = std::move(inner->order_by);
      q.order_pos = inner->order_pos;
      q.limit = std::move(inner->limit);
      q.offset = std::move(inner->offset);
    }
    if (!peek().isSymbol(")")) {
      std::vector<std::string> expected = follow_;
      expected.push_back(")");
      unexpected(peek(), expected);
    }
    next();
    follow_ = {"UNION"};
  } else if (t.isWord("VALUES")) {
    q.selects.push_back(parseValues());
  } else {
    unexpected(t, {"SELECT", "("});
  }
}

SelectStmt Parser::parseSelect() {
  SelectStmt s;
  s.pos = expectWord("SELECT").pos;
  if (acceptWord("DISTINCT")) {
    s.distinct = true;
  } else {
    acceptWord("ALL");
  }
  do {
    s.select_list.push_back(parseSelectItem());
  } while (acceptSymbol(","));
  follow_ = {",", "FROM", "WHERE", "GROUP", "HAVING", "UNION"};
  if (acceptWord("FROM")) {
    s.from = parseFrom();
    follow_ = {",", "JOIN", "WHERE", "GROUP", "HAVING", "UNION"};
  }
  if (acceptWord("WHERE")) {
    s.where = parseExpr();
    follow_ = {"GROUP", "HAVING", "UNION"};
  }
  if (peek().isWord("GROUP")) {
    next();
    expectWord("BY");
    const Token& t = peek();
    if (t.kind == TokenKind::kWord &&
        (t.upper == "GROUPING" || t.upper == "ROLLUP" || t.upper == "CUBE") && peek(1).isSymbol("(")) {
      unsupported(t, t.upper);
    }
    do {
      s.group_by.push_back(parseExpr());
    } while (acceptSymbol(","));
    follow_ = {",", "HAVING", "UNION"};
  }
  if (acceptWord("HAVING")) {
    s.having = parseExpr();
    follow_ = {"UNION"};
  }
  if (peek().isWord("WINDOW")) {
    parseWindowClause(s);
    follow_ = {",", "UNION", "ORDER", "LIMIT"};
  } else {
    for (const auto& item : s.select_list)
      if (item.expr) checkNoWindowRefs(*item.expr);
  }
  return s;
}

SelectItem Parser::parseSelectItem() {
  SelectItem item;
  item.pos = peek().pos;
  if (acceptSymbol("*")) {
    item.is_star = true;
    return item;
  }
  // t.* / db.t.*
  for (size_t i = 0; isIdentifier(peek(i)) && peek(i + 1).isSymbol("."); i += 2) {
    if (peek(i + 2).isSymbol("*")) {
      for (size_t k = 0; k <= i; k += 2) item.star_qualifier.push_back(peek(k).text);
      for (size_t k = 0; k < i + 3; ++k) next();
      item.is_star = true;
      return item;
    }
  }
  item.expr = parseExpr();
  item.alias = parseOptionalAlias({",", "AS", "FROM", "WHERE", "GROUP", "HAVING", "UNION"});
  return item;
}

std::optional<std::string> Parser::parseOptionalAlias(const std::vector<std::string>& follow) {
  if (acceptWord("AS")) return parseIdentifier("an alias");
  if (!isIdentifier(peek())) return std::nullopt;
  // A bare word right after an expression is an alias, unless yet another name or value follows:
  // then the word is far more likely a misspelt keyword ("SELECT a FORM t"), so point at it.
  const Token& after = peek(1);
  bool suspicious = isIdentifier(after) || after.kind == TokenKind::kString ||
                    after.kind == TokenKind::kInteger || after.kind == TokenKind::kDecimal ||
                    after.kind == TokenKind::kApproximate;
  if (suspicious) unexpected(peek(), follow);
  return next().text;
}

std::unique_ptr<TableRef> Parser::parseFrom() {
  auto left = parseTableRefPrimary();
  ChainGuard chain(*this);
  for (;;) {
    const Token& t = peek();
    JoinType type = JoinType::kInner;
    bool needs_condition = true;
    if (t.isSymbol(",")) {
      next();
      type = JoinType::kCross;
      needs_condition = false;
    } else if (t.isWord("JOIN") || t.isWord("INNER")) {
      if (acceptWord("INNER")) {
        expectWord("JOIN");
      } else {
        next();
      }
    } else if (t.isWord("LEFT") || t.isWord("RIGHT") || t.isWord("FULL")) {
      next();
      type = t.upper == "LEFT" ? JoinType::kLeft : t.upper == "RIGHT" ? JoinType::kRight : JoinType::kFull;
      acceptWord("OUTER");
      expectWord("JOIN");
    } else if (t.isWord("CROSS")) {
      next();
      if (peek().isWord("APPLY")) unsupported(peek(), "CROSS APPLY");
      expectWord("JOIN");
      type = JoinType::kCross;
      needs_condition = false;
    } else if (t.isWord("NATURAL")) {
      unsupported(t, "NATURAL JOIN");
    } else {
      return left;
    }
    chain.step(t);
    auto join = std::make_unique<TableRef>();
    join->kind = TableRefKind::kJoin;
    join->pos = t.pos;
    join->join_type = type;
    join->left = std::move(left);
    join->right = parseTableRefPrimary();
    if (needs_condition) {
      if (peek().isWord("USING")) unsupported(peek(), "JOIN ... USING");
      expectWord("ON");
      join->condition = parseExpr();
    }
    left = std::move(join);
  }
}

std::unique_ptr<TableRef> Parser::parseTableRefPrimary() {
  static const std::vector<std::string> kAliasFollow = {",", "AS", "JOIN", "ON", "WHERE", "GROUP", "HAVING",
                                                        "UNION"};
  const Token& t = peek();
  DepthGuard guard(*this, t);
  auto ref = std::make_unique<TableRef>();
  ref->pos = t.pos;
  if (t.isWord("TABLE")) {
    next();
    expectSymbol("(");
    const Token& fn = peek();
    if (!isIdentifier(fn) || !peek(1).isSymbol("(")) unexpectedWhat(fn, "a table function call such as TUMBLE(...)");
    next();
    ref->kind = TableRefKind::kTableFunction;
    ref->call = parseFunctionCall(fn);
    expectSymbol(")");
    ref->alias = parseOptionalAlias(kAliasFollow);
  } else if (t.isWord("LATERAL")) {
    next();
    expectWord("TABLE");
    expectSymbol("(");
    const Token& fn = peek();
    if (!isIdentifier(fn) || !peek(1).isSymbol("(")) unexpectedWhat(fn, "a table function call");
    next();
    ref->kind = TableRefKind::kLateral;
    ref->call = parseFunctionCall(fn);
    expectSymbol(")");
    ref->alias = parseOptionalAlias(kAliasFollow);
  } else if (t.isWord("UNNEST")) {
    unsupported(t, "UNNEST");
  } else if (t.isSymbol("(")) {
    if (startsQuery(0)) {
      ref->kind = TableRefKind::kSubquery;
      follow_.clear();
      next();  // '('
      ref->subquery = parseQuery();
      if (!peek().isSymbol(")")) {
        std::vector<std::string> expected = follow_;
        expected.push_back(")");
        unexpected(peek(), expected);
      }
      next();
      ref->alias = parseOptionalAlias(kAliasFollow);
    } else {
      next();
      ref = parseFrom();
      expectSymbol(")");
    }
  } else {
    ref->kind = TableRefKind::kNamed;
    ref->name = parseQualifiedName("a table name");
    if (peek().isWord("FOR")) {
      // Calcite's table snapshot: FOR SYSTEM_TIME AS OF <expression>.
      ref->system_time_pos = next().pos;
      expectWord("SYSTEM_TIME");
      expectWord("AS");
      expectWord("OF");
      ref->system_time = parseExpr();
    }
    ref->alias = parseOptionalAlias(kAliasFollow);
  }
  if (ref->alias && peek().isSymbol("(")) ref->column_aliases = parseParenNameList("column alias");
  return ref;
}

}  // namespace sluice::table::sql
