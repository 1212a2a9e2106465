#include <charconv>
#include <set>

#include <fmt/format.h>

#include "common/error.h"
#include "table/sql/parser_internal.h"

namespace sluice::table::sql {

// ---------------------------------------------------------------------------------------------
// Error text
// ---------------------------------------------------------------------------------------------

std::string formatSqlError(const std::string& message, std::string_view script, int line, int column,
                           std::string_view what) {
  if (line <= 0) return fmt::format("{}: {}", what, message);
  std::string header = fmt::format("{} at line {}, column {}: {}", what, line, column, message);
  size_t start = 0;
  for (int l = 1; l < line; ++l) {
    size_t nl = script.find('\n', start);
    if (nl == std::string_view::npos) return header;
    start = nl + 1;
  }
  size_t end = script.find('\n', start);
  std::string_view text = script.substr(start, end == std::string_view::npos ? script.size() - start : end - start);
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  std::string caret;
  int col = 1;
  for (size_t i = 0; i < text.size() && col < column; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) == 0x80) continue;  // UTF-8 continuation byte: same column
    caret.push_back(c == '\t' ? '\t' : ' ');
    ++col;
  }
  for (; col < column; ++col) caret.push_back(' ');
  return fmt::format("{}\n  {}\n  {}^", header, text, caret);
}

void throwSqlError(const std::string& message, std::string_view script, SourcePos pos, std::string_view what) {
  throw SqlError(formatSqlError(message, script, pos.line, pos.column, what), pos.line, pos.column);
}

// ---------------------------------------------------------------------------------------------
// Parser basics
// ---------------------------------------------------------------------------------------------

Parser::Parser(std::string_view script) : script_(script), tokens_(tokenize(script)) {}

const Token& Parser::peek(size_t ahead) const {
  size_t i = pos_ + ahead;
  return i < tokens_.size() ? tokens_[i] : tokens_.back();
}

const Token& Parser::next() {
  const Token& t = tokens_[pos_];
  if (pos_ + 1 < tokens_.size()) ++pos_;
  return t;
}

bool Parser::acceptWord(std::string_view kw) {
  if (!peek().isWord(kw)) return false;
  next();
  return true;
}

bool Parser::acceptSymbol(std::string_view sym) {
  if (!peek().isSymbol(sym)) return false;
  next();
  return true;
}

const Token& Parser::expectWord(std::string_view kw) {
  if (!peek().isWord(kw)) unexpected(peek(), {std::string(kw)});
  return next();
}

const Token& Parser::expectSymbol(std::string_view sym) {
  if (!peek().isSymbol(sym)) unexpected(peek(), {std::string(sym)});
  return next();
}

const Token& Parser::expectString(const char* what) {
  if (peek().kind != TokenKind::kString) unexpectedWhat(peek(), what);
  return next();
}

int64_t Parser::expectInteger(const char* what, int64_t min, int64_t max) {
  const Token& t = peek();
  if (t.kind != TokenKind::kInteger) unexpectedWhat(t, what);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  if (ec != std::errc() || p != t.text.data() + t.text.size() || v < min || v > max)
    fail(fmt::format("{} must be between {} and {}, got {}", what, min, max, t.text), t.pos);
  next();
  return v;
}

bool Parser::isReserved(const std::string& upper) {
  // Words that cannot be an unquoted identifier or alias (a subset of Calcite's reserved words:
  // the ones this grammar needs to tell clauses apart). Quote them with backquotes to use as names.
  static const std::set<std::string> kReserved = {
      "ALL",    "AND",       "AS",     "BETWEEN", "BY",      "CASE",   "CAST",     "CREATE",  "CROSS",
      "DISTINCT", "ELSE",    "END",    "ESCAPE",  "EXCEPT",  "EXISTS", "FALSE",    "FETCH",   "FOR",
      "FROM",   "FULL",      "GROUP",  "HAVING",  "IN",      "INNER",  "INSERT",   "INTERSECT", "INTERVAL",
      "INTO",   "IS",        "JOIN",   "LATERAL", "LEFT",    "LIKE",   "LIMIT",    "MINUS",   "NATURAL",
      "NOT",    "NULL",      "OFFSET", "ON",      "OR",      "ORDER",  "OUTER",    "OVER",    "RIGHT",
      "SELECT", "SET",       "SIMILAR", "TABLE",  "THEN",    "TRUE",   "UNION",    "UNKNOWN", "USING",
      "VALUES", "WHEN",      "WHERE",  "WINDOW",  "WITH",
  };
  return kReserved.count(upper) > 0;
}

bool Parser::isIdentifier(const Token& t) const {
  return t.kind == TokenKind::kQuotedIdent || (t.kind == TokenKind::kWord && !isReserved(t.upper));
}

std::string Parser::parseIdentifier(const char* what) {
  if (!isIdentifier(peek())) unexpectedWhat(peek(), what);
  return next().text;
}

QualifiedName Parser::parseQualifiedName(const char* what) {
  QualifiedName name{parseIdentifier(what)};
  while (peek().isSymbol(".") && isIdentifier(peek(1))) {
    next();
    name.push_back(next().text);
  }
  return name;
}

void Parser::fail(const std::string& message, SourcePos pos) const { throwSqlError(message, script_, pos); }

namespace {
std::string quoteExpected(const std::string& e) {
  if (!e.empty() && (std::isalpha(static_cast<unsigned char>(e[0])) || e[0] == '<')) return e;
  return "\"" + e + "\"";
}
}  // namespace

void Parser::unexpected(const Token& t, const std::vector<std::string>& expected) const {
  std::string list;
  std::set<std::string> seen;
  for (const auto& e : expected) {
    if (!seen.insert(e).second) continue;
    if (!list.empty()) list += ", ";
    list += quoteExpected(e);
  }
  fail(fmt::format("Encountered \"{}\" but expected {}{}", t.describe(),
                   expected.size() == 1 ? "" : "one of: ", list),
       t.pos);
}

void Parser::unexpectedWhat(const Token& t, const std::string& what) const {
  fail(fmt::format("Encountered \"{}\" but expected {}", t.describe(), what), t.pos);
}

void Parser::unsupported(const Token& t, const std::string& what) const {
  fail(fmt::format("{} is not supported yet", what), t.pos);
}

Parser::DepthGuard::DepthGuard(Parser& p, const Token& at) : p_(p) {
  ++p_.depth_;
  ++p_.tree_depth_;
  if (p_.depth_ > kMaxNestingDepth || p_.tree_depth_ > kMaxTreeDepth) {
    --p_.depth_;
    --p_.tree_depth_;
    p_.fail(fmt::format("SQL is nested too deeply (the limit is {} levels of parentheses, subqueries or "
                        "prefix operators and {} levels of operators)",
                        kMaxNestingDepth, kMaxTreeDepth),
            at.pos);
  }
}

Parser::DepthGuard::~DepthGuard() {
  --p_.depth_;
  --p_.tree_depth_;
}

void Parser::ChainGuard::step(const Token& at) {
  ++links_;
  ++p_.tree_depth_;
  if (p_.tree_depth_ > kMaxTreeDepth) {
    p_.fail(fmt::format("expression is too deep (more than {} chained operators)", kMaxTreeDepth), at.pos);
  }
}

// ---------------------------------------------------------------------------------------------
// Script and statements
// ---------------------------------------------------------------------------------------------

std::vector<Statement> Parser::parseScript() {
  std::vector<Statement> out;
  for (;;) {
    while (acceptSymbol(";")) {
    }
    if (peek().kind == TokenKind::kEnd) return out;
    out.push_back(parseStatement());
    if (peek().kind != TokenKind::kEnd && !peek().isSymbol(";")) {
      std::vector<std::string> expected = follow_;
      expected.push_back(";");
      unexpected(peek(), expected);
    }
  }
}

Statement Parser::parseOneStatement() {
  while (acceptSymbol(";")) {
  }
  if (peek().kind == TokenKind::kEnd) unexpectedWhat(peek(), "a statement");
  Statement st = parseStatement();
  while (acceptSymbol(";")) {
  }
  if (peek().kind != TokenKind::kEnd) {
    std::vector<std::string> expected = follow_;
    expected.push_back(";");
    expected.push_back("<EOF>");
    unexpected(peek(), expected);
  }
  return st;
}

ExprPtr Parser::parseOneExpression() {
  ExprPtr e = parseExpr();
  if (peek().kind != TokenKind::kEnd) unexpectedWhat(peek(), "an operator or <EOF>");
  return e;
}

Statement Parser::parseStatement() {
  follow_.clear();
  const Token& first = peek();
  size_t first_index = pos_;
  Statement st;
  st.pos = first.pos;
  if (first.isWord("SELECT") || first.isSymbol("(") || first.isWord("WITH") || first.isWord("VALUES")) {
    st.kind = StatementKind::kQuery;
    st.query = parseQuery();
  } else if (first.isWord("CREATE")) {
    parseCreate(st);
  } else if (first.isWord("INSERT")) {
    st.kind = StatementKind::kInsert;
    st.insert = std::make_unique<InsertStmt>(parseInsert());
  } else if (first.isWord("SET")) {
    parseSet(st);
  } else if (first.isWord("RESET")) {
    parseReset(st);
  } else if (first.isWord("EXPLAIN")) {
    parseExplain(st);
  } else if (first.isWord("EXECUTE")) {
    next();
    if (peek().isWord("STATEMENT")) {
      next();
      expectWord("SET");
      expectWord("BEGIN");
      parseStatementSetBody(st, false);
    } else if (peek().isWord("INSERT") || peek().isWord("SELECT") || peek().isSymbol("(")) {
      Statement inner = parseStatement();
      inner.pos = st.pos;
      st = std::move(inner);
    } else {
      unexpected(peek(), {"STATEMENT", "INSERT", "SELECT"});
    }
  } else if (first.isWord("BEGIN")) {
    next();
    expectWord("STATEMENT");
    expectWord("SET");
    expectSymbol(";");
    parseStatementSetBody(st, true);
  } else if (first.isWord("SHOW")) {
    parseShow(st);
  } else if (first.isWord("DESCRIBE") || first.isWord("DESC")) {
    next();
    acceptWord("EXTENDED");
    st.kind = StatementKind::kDescribe;
    st.object_pos = peek().pos;
    st.object = parseQualifiedName("a table or view name");
  } else if (first.isWord("DROP")) {
    parseDrop(st);
  } else if (first.isWord("USE")) {
    parseUse(st);
  } else if (first.isWord("ALTER")) {
    parseAlter(st);
  } else if (first.kind == TokenKind::kWord &&
             (first.upper == "LOAD" || first.upper == "UNLOAD" || first.upper == "ADD" ||
              first.upper == "REMOVE" || first.upper == "ANALYZE" || first.upper == "TRUNCATE" ||
              first.upper == "DELETE" || first.upper == "UPDATE")) {
    unsupported(first, first.upper + " statement");
  } else {
    unexpected(first, {"SELECT", "INSERT", "CREATE", "SET", "RESET", "EXPLAIN", "EXECUTE", "BEGIN", "WITH",
                       "VALUES", "SHOW", "DESCRIBE", "DROP", "USE", "ALTER"});
  }
  // The statement spans its first token to the last token consumed.
  size_t last_index = pos_ > first_index ? pos_ - 1 : first_index;
  const Token& last = tokens_[last_index];
  st.end_pos = last.pos;
  st.text = std::string(script_.substr(tokens_[first_index].offset, last.end - tokens_[first_index].offset));
  return st;
}

void Parser::parseShow(Statement& st) {
  expectWord("SHOW");
  st.kind = StatementKind::kShow;
  const Token& t = peek();
  // [(FROM | IN) name] [[NOT] LIKE | ILIKE 'pattern'] (Flink 1.17+).
  auto fromAndLike = [&](bool from_required) {
    if (peek().isWord("FROM") || peek().isWord("IN")) {
      next();
      st.object_pos = peek().pos;
      st.object = parseQualifiedName(st.show == "COLUMNS" ? "a table or view name" : "a database name");
    } else if (from_required) {
      unexpected(peek(), {"FROM", "IN"});
    }
    const Token& n = peek();
    if (n.isWord("NOT") && (peek(1).isWord("LIKE") || peek(1).isWord("ILIKE"))) {
      next();
      st.like_not = true;
    } else if (n.isWord("NOT")) {
      next();
      unexpected(peek(), {"LIKE", "ILIKE"});
    }
    if (peek().isWord("LIKE") || peek().isWord("ILIKE")) {
      st.like_case_insensitive = next().upper == "ILIKE";
      st.like_pattern = expectString("a pattern string ('...')").text;
    }
  };
  if (t.isWord("CATALOGS") || t.isWord("DATABASES") || t.isWord("MODULES") || t.isWord("JARS")) {
    st.show = next().upper;
  } else if (t.isWord("TABLES") || t.isWord("VIEWS") || t.isWord("FUNCTIONS")) {
    st.show = next().upper;
    fromAndLike(false);
  } else if (t.isWord("USER") || (t.isWord("FULL") && peek(1).isWord("MODULES"))) {
    next();
    st.show = t.upper + " " + expectWord(t.isWord("USER") ? "FUNCTIONS" : "MODULES").upper;
    if (st.show == "USER FUNCTIONS") fromAndLike(false);
  } else if (t.isWord("COLUMNS")) {
    st.show = next().upper;
    fromAndLike(true);
  } else if (t.isWord("CURRENT")) {
    next();
    const Token& what = peek();
    if (!what.isWord("CATALOG") && !what.isWord("DATABASE")) unexpected(what, {"CATALOG", "DATABASE"});
    st.show = "CURRENT " + next().upper;
  } else if (t.isWord("CREATE")) {
    next();
    const Token& what = peek();
    if (!what.isWord("TABLE") && !what.isWord("VIEW")) unexpected(what, {"TABLE", "VIEW"});
    st.show = "CREATE " + next().upper;
    st.object_pos = peek().pos;
    st.object = parseQualifiedName("a table or view name");
  } else if (t.kind == TokenKind::kWord) {
    unsupported(t, "SHOW " + t.upper);
  } else {
    unexpected(t, {"CATALOGS", "DATABASES", "TABLES", "VIEWS", "FUNCTIONS", "COLUMNS", "MODULES", "CURRENT", "CREATE"});
  }
}

void Parser::parseUse(Statement& st) {
  expectWord("USE");
  st.kind = StatementKind::kUse;
  if (peek().isWord("CATALOG")) {
    next();
    st.show = "CATALOG";
  } else if (peek().isWord("MODULES")) {
    unsupported(peek(), "USE MODULES");
  }
  st.object_pos = peek().pos;
  st.object = parseQualifiedName(st.show == "CATALOG" ? "a catalog name" : "a database name");
}

void Parser::parseAlter(Statement& st) {
  expectWord("ALTER");
  const Token& what = peek();
  if (what.isWord("TABLE")) {
    st.kind = StatementKind::kAlterTable;
  } else if (what.isWord("VIEW")) {
    st.kind = StatementKind::kAlterView;
  } else if (what.kind == TokenKind::kWord) {
    unsupported(what, "ALTER " + what.upper);
  } else {
    unexpected(what, {"TABLE", "VIEW"});
  }
  next();
  if (st.kind == StatementKind::kAlterTable && acceptWord("IF")) {
    expectWord("EXISTS");
    st.if_exists = true;
  }
  st.object_pos = peek().pos;
  st.object = parseQualifiedName(st.kind == StatementKind::kAlterTable ? "a table name" : "a view name");
  const Token& action = peek();
  if (action.isWord("RENAME")) {
    next();
    expectWord("TO");
    st.alter = "RENAME";
    st.new_name = parseQualifiedName(st.kind == StatementKind::kAlterTable ? "a table name" : "a view name");
  } else if (st.kind == StatementKind::kAlterTable && (action.isWord("SET") || action.isWord("RESET"))) {
    st.alter = next().upper;
    st.options = parseOptionList(st.alter == "SET", /*allow_empty=*/false);
  } else if (st.kind == StatementKind::kAlterView && action.isWord("AS")) {
    next();
    st.alter = "AS";
    if (!startsQuery(0)) unexpected(peek(), {"SELECT", "("});
    auto view = std::make_unique<CreateViewStmt>();
    view->name = st.object;
    const size_t first = pos_;
    view->query = parseQuery();
    const Token& last = tokens_[pos_ > first ? pos_ - 1 : first];
    view->query_text = std::string(script_.substr(tokens_[first].offset, last.end - tokens_[first].offset));
    st.create_view = std::move(view);
  } else if (action.kind == TokenKind::kWord && st.kind == StatementKind::kAlterTable) {
    unsupported(action, "ALTER TABLE ... " + action.upper);
  } else if (st.kind == StatementKind::kAlterTable) {
    unexpected(action, {"RENAME", "SET", "RESET"});
  } else {
    unexpected(action, {"RENAME", "AS"});
  }
}

void Parser::parseDrop(Statement& st) {
  expectWord("DROP");
  const bool temporary = acceptWord("TEMPORARY");
  const bool system = temporary && acceptWord("SYSTEM");
  const Token& what = peek();
  if (what.isWord("FUNCTION")) {
    st.kind = StatementKind::kDropFunction;
    st.function_temporary = temporary;
    st.function_system = system;
    next();
    if (acceptWord("IF")) {
      expectWord("EXISTS");
      st.if_exists = true;
    }
    st.object_pos = peek().pos;
    st.object = parseQualifiedName("a function name");
    return;
  }
  if (system) unexpected(what, {"FUNCTION"});
  if (what.isWord("TABLE")) {
    st.kind = StatementKind::kDropTable;
  } else if (what.isWord("VIEW")) {
    st.kind = StatementKind::kDropView;
  } else if (what.kind == TokenKind::kWord) {
    unsupported(what, "DROP " + what.upper);
  } else {
    unexpected(what, {"TABLE", "VIEW"});
  }
  next();
  if (acceptWord("IF")) {
    expectWord("EXISTS");
    st.if_exists = true;
  }
  st.object_pos = peek().pos;
  st.object = parseQualifiedName(st.kind == StatementKind::kDropTable ? "a table name" : "a view name");
}

void Parser::parseStatementSetBody(Statement& st, bool begin_form) {
  st.kind = StatementKind::kStatementSet;
  for (;;) {
    while (acceptSymbol(";")) {
    }
    if (acceptWord("END")) break;
    if (!peek().isWord("INSERT")) unexpected(peek(), {"INSERT", "END"});
    follow_.clear();
    st.statement_set.push_back(parseInsert());
    if (!peek().isSymbol(";") && !peek().isWord("END")) {
      std::vector<std::string> expected = follow_;
      expected.push_back(";");
      expected.push_back("END");
      unexpected(peek(), expected);
    }
  }
  (void)begin_form;
  follow_.clear();
}

void Parser::parseSet(Statement& st) {
  st.kind = StatementKind::kSet;
  next();  // SET
  if (peek().kind == TokenKind::kEnd || peek().isSymbol(";")) return;
  if (peek().kind == TokenKind::kString) {
    st.key = next().text;
    expectSymbol("=");
    st.value = expectString("a quoted value ('...')").text;
    return;
  }
  // Legacy form SET key = value: both sides are the raw text around '='.
  size_t key_start = peek().offset;
  while (!peek().isSymbol("=")) {
    if (peek().kind == TokenKind::kEnd || peek().isSymbol(";")) unexpected(peek(), {"="});
    next();
  }
  size_t key_end = tokens_[pos_ - 1].end;
  next();  // '='
  if (peek().kind == TokenKind::kEnd || peek().isSymbol(";")) unexpectedWhat(peek(), "a value");
  size_t value_start = peek().offset;
  size_t value_end = value_start;
  while (peek().kind != TokenKind::kEnd && !peek().isSymbol(";")) value_end = next().end;
  st.key = std::string(script_.substr(key_start, key_end - key_start));
  st.value = std::string(script_.substr(value_start, value_end - value_start));
}

void Parser::parseReset(Statement& st) {
  st.kind = StatementKind::kReset;
  next();  // RESET
  if (peek().kind == TokenKind::kEnd || peek().isSymbol(";")) return;
  if (peek().kind == TokenKind::kString) {
    st.key = next().text;
    return;
  }
  size_t start = peek().offset;
  size_t end = start;
  while (peek().kind != TokenKind::kEnd && !peek().isSymbol(";")) end = next().end;
  st.key = std::string(script_.substr(start, end - start));
}

void Parser::parseExplain(Statement& st) {
  st.kind = StatementKind::kExplain;
  next();  // EXPLAIN
  if (acceptWord("PLAN")) {
    expectWord("FOR");
  } else {
    static const std::set<std::string> kDetails = {"ESTIMATED_COST", "CHANGELOG_MODE", "JSON_EXECUTION_PLAN",
                                                   "PLAN_ADVICE"};
    while (peek().kind == TokenKind::kWord && kDetails.count(peek().upper)) {
      st.explain_details.push_back(next().upper);
      if (!acceptSymbol(",")) break;
      if (!(peek().kind == TokenKind::kWord && kDetails.count(peek().upper)))
        unexpected(peek(), {"ESTIMATED_COST", "CHANGELOG_MODE", "JSON_EXECUTION_PLAN", "PLAN_ADVICE"});
    }
  }
  const Token& t = peek();
  auto inner = std::make_unique<Statement>();
  inner->pos = t.pos;
  size_t first_index = pos_;
  if (t.isWord("SELECT") || t.isSymbol("(") || t.isWord("WITH") || t.isWord("VALUES")) {
    inner->kind = StatementKind::kQuery;
    inner->query = parseQuery();
  } else if (t.isWord("INSERT")) {
    inner->kind = StatementKind::kInsert;
    inner->insert = std::make_unique<InsertStmt>(parseInsert());
  } else if (t.isWord("STATEMENT")) {
    next();
    expectWord("SET");
    expectWord("BEGIN");
    parseStatementSetBody(*inner, false);
  } else {
    unexpected(t, {"SELECT", "INSERT", "STATEMENT", "PLAN"});
  }
  const Token& last = tokens_[pos_ > first_index ? pos_ - 1 : first_index];
  inner->end_pos = last.pos;
  inner->text = std::string(script_.substr(tokens_[first_index].offset, last.end - tokens_[first_index].offset));
  st.explained = std::move(inner);
}

InsertStmt Parser::parseInsert() {
  InsertStmt ins;
  ins.pos = next().pos;  // INSERT
  if (acceptWord("OVERWRITE")) {
    ins.overwrite = true;
  } else if (!acceptWord("INTO")) {
    unexpected(peek(), {"INTO", "OVERWRITE"});
  }
  ins.target = parseQualifiedName("a table name");
  if (peek().isWord("PARTITION")) unsupported(peek(), "INSERT with PARTITION");
  if (peek().isSymbol("(") && !startsQuery(1)) ins.columns = parseParenNameList("a column name");
  if (!startsQuery(0)) unexpected(peek(), {"SELECT", "("});
  ins.query = parseQuery();
  return ins;
}

std::vector<std::string> Parser::parseParenNameList(const char* what) {
  expectSymbol("(");
  std::vector<std::string> names;
  do {
    names.push_back(parseIdentifier(what));
  } while (acceptSymbol(","));
  if (!peek().isSymbol(")")) unexpected(peek(), {",", ")"});
  next();
  return names;
}

// ---------------------------------------------------------------------------------------------
// DDL
// ---------------------------------------------------------------------------------------------

void Parser::parseCreate(Statement& st) {
  next();  // CREATE
  if (peek().isWord("OR")) unsupported(peek(), "CREATE OR REPLACE");
  bool temporary = acceptWord("TEMPORARY");
  const bool system = temporary && acceptWord("SYSTEM");
  if (peek().isWord("FUNCTION")) {
    parseCreateFunction(st, temporary, system);
  } else if (system) {
    unexpected(peek(), {"FUNCTION"});
  } else if (peek().isWord("TABLE")) {
    parseCreateTable(st);
    st.create_table->temporary = temporary;
  } else if (peek().isWord("VIEW")) {
    parseCreateView(st, temporary);
  } else if (peek().kind == TokenKind::kWord &&
             (peek().upper == "CATALOG" || peek().upper == "DATABASE" || peek().upper == "SYSTEM")) {
    unsupported(peek(), "CREATE " + peek().upper);
  } else {
    unexpected(peek(), temporary ? std::vector<std::string>{"TABLE", "VIEW"}
                                 : std::vector<std::string>{"TABLE", "VIEW", "TEMPORARY"});
  }
}

void Parser::parseCreateFunction(Statement& st, bool temporary, bool system) {
  next();  // FUNCTION
  st.kind = StatementKind::kCreateFunction;
  auto f = std::make_unique<CreateFunctionStmt>();
  f->temporary = temporary;
  f->system = system;
  if (acceptWord("IF")) {
    expectWord("NOT");
    expectWord("EXISTS");
    f->if_not_exists = true;
  }
  f->name_pos = peek().pos;
  f->name = parseQualifiedName("a function name");
  expectWord("AS");
  f->identifier_pos = peek().pos;
  f->identifier = expectString("the function's class name").text;
  if (acceptWord("LANGUAGE")) {
    f->language_pos = peek().pos;
    if (peek().kind != TokenKind::kWord) unexpected(peek(), {"JAVA", "SCALA", "PYTHON"});
    f->language = next().upper;
  }
  if (peek().isWord("USING")) unsupported(peek(), "CREATE FUNCTION ... USING JAR");
  st.create_function = std::move(f);
}

void Parser::parseCreateView(Statement& st, bool temporary) {
  next();  // VIEW
  st.kind = StatementKind::kCreateView;
  auto view = std::make_unique<CreateViewStmt>();
  view->temporary = temporary;
  if (acceptWord("IF")) {
    expectWord("NOT");
    expectWord("EXISTS");
    view->if_not_exists = true;
  }
  view->name = parseQualifiedName("a view name");
  if (peek().isSymbol("(")) view->column_names = parseParenNameList("a column name");
  if (acceptWord("COMMENT")) expectString("a comment string");
  expectWord("AS");
  if (!startsQuery(0)) unexpected(peek(), {"SELECT", "("});
  const size_t first = pos_;
  view->query = parseQuery();
  const Token& last = tokens_[pos_ > first ? pos_ - 1 : first];
  view->query_text = std::string(script_.substr(tokens_[first].offset, last.end - tokens_[first].offset));
  st.create_view = std::move(view);
}

void Parser::parseCreateTable(Statement& st) {
  next();  // TABLE
  st.kind = StatementKind::kCreateTable;
  auto table = std::make_unique<CreateTableStmt>();
  if (acceptWord("IF")) {
    expectWord("NOT");
    expectWord("EXISTS");
    table->if_not_exists = true;
  }
  table->name = parseQualifiedName("a table name");
  // The column list is optional with LIKE and AS (the schema then comes from the base table or the query).
  const bool has_columns = peek().isSymbol("(");
  if (!has_columns && !peek().isWord("WITH") && !peek().isWord("LIKE") && !peek().isWord("AS") &&
      !peek().isWord("COMMENT"))
    unexpected(peek(), {"(", "WITH", "LIKE", "AS"});
  if (has_columns) parseTableElements(*table);
  follow_ = {"COMMENT", "WITH", "LIKE", "AS"};
  if (acceptWord("COMMENT")) table->comment = expectString("a comment string").text;
  follow_ = {"PARTITIONED", "WITH", "LIKE", "AS"};
  if (acceptWord("PARTITIONED")) {
    expectWord("BY");
    expectSymbol("(");
    do {
      table->partition_key_pos.push_back(peek().pos);
      table->partition_keys.push_back(parseIdentifier("a partition column name"));
    } while (acceptSymbol(","));
    if (!peek().isSymbol(")")) unexpected(peek(), {",", ")"});
    next();
  }
  follow_ = {"WITH", "LIKE", "AS"};
  if (acceptWord("WITH")) table->options = parseOptionList(/*with_values=*/true, /*allow_empty=*/true);
  follow_ = {"LIKE", "AS"};
  if (peek().isWord("LIKE")) parseLikeClause(*table);
  if (peek().isWord("AS")) {
    if (table->like) fail("CREATE TABLE ... AS SELECT cannot have a LIKE clause", peek().pos);
    if (has_columns) unsupported(peek(), "CREATE TABLE AS SELECT with a column list");
    table->as_pos = next().pos;
    if (!startsQuery(0)) unexpected(peek(), {"SELECT", "("});
    table->as_query = parseQuery();
  } else if (!has_columns && !table->like) {
    unexpected(peek(), {"LIKE", "AS"});
  }
  follow_.clear();
  st.create_table = std::move(table);
}

std::vector<TableOption> Parser::parseOptionList(bool with_values, bool allow_empty) {
  std::vector<TableOption> options;
  expectSymbol("(");
  if (!(allow_empty && peek().isSymbol(")"))) {
    do {
      TableOption opt;
      const Token& key = expectString("an option key string ('key')");
      opt.pos = key.pos;
      opt.key = key.text;
      if (with_values) {
        expectSymbol("=");
        opt.value = expectString("an option value string ('value')").text;
      }
      options.push_back(std::move(opt));
    } while (acceptSymbol(","));
  }
  if (!peek().isSymbol(")")) unexpected(peek(), {",", ")"});
  next();
  return options;
}

void Parser::parseLikeClause(CreateTableStmt& table) {
  expectWord("LIKE");
  LikeClause like;
  like.pos = peek().pos;
  like.source = parseQualifiedName("a table name");
  if (acceptSymbol("(")) {
    do {
      LikeOption opt;
      opt.pos = peek().pos;
      const Token& s = peek();
      if (s.isWord("INCLUDING")) opt.strategy = LikeStrategy::kIncluding;
      else if (s.isWord("EXCLUDING")) opt.strategy = LikeStrategy::kExcluding;
      else if (s.isWord("OVERWRITING")) opt.strategy = LikeStrategy::kOverwriting;
      else unexpected(s, {"INCLUDING", "EXCLUDING", "OVERWRITING"});
      next();
      static const std::vector<std::pair<const char*, LikeFeature>> kFeatures = {
          {"ALL", LikeFeature::kAll},           {"CONSTRAINTS", LikeFeature::kConstraints},
          {"GENERATED", LikeFeature::kGenerated}, {"METADATA", LikeFeature::kMetadata},
          {"OPTIONS", LikeFeature::kOptions},   {"PARTITIONS", LikeFeature::kPartitions},
          {"WATERMARKS", LikeFeature::kWatermarks}};
      bool found = false;
      for (const auto& [word, feature] : kFeatures) {
        if (peek().isWord(word)) {
          opt.feature = feature;
          found = true;
        }
      }
      if (!found) unexpected(peek(), {"ALL", "CONSTRAINTS", "GENERATED", "METADATA", "OPTIONS", "PARTITIONS", "WATERMARKS"});
      next();
      // Flink's SqlTableLike validation: ALL and CONSTRAINTS cannot be OVERWRITING.
      if (opt.strategy == LikeStrategy::kOverwriting && opt.feature == LikeFeature::kAll)
        fail("Illegal merging strategy 'OVERWRITING' for 'ALL' option.", opt.pos);
      if (opt.strategy == LikeStrategy::kOverwriting && opt.feature == LikeFeature::kConstraints)
        fail("Illegal merging strategy 'OVERWRITING' for 'CONSTRAINTS' option.", opt.pos);
      for (const auto& o : like.options)
        if (o.feature == opt.feature && o.feature != LikeFeature::kAll)
          fail("Each like option feature can be declared only once.", opt.pos);
      like.options.push_back(opt);
    } while (acceptSymbol(","));
    if (!peek().isSymbol(")")) unexpected(peek(), {",", ")"});
    next();
  }
  table.like = std::move(like);
}

void Parser::parseTableElements(CreateTableStmt& table_ref) {
  CreateTableStmt* table = &table_ref;
  expectSymbol("(");
  for (;;) {
    const Token& t = peek();
    if (t.isWord("WATERMARK") && peek(1).isWord("FOR")) {
      if (table->watermark) fail("Multiple WATERMARK definitions are not supported", t.pos);
      next();
      next();  // FOR
      WatermarkDef wm;
      wm.pos = t.pos;
      wm.column = parseIdentifier("a column name");
      expectWord("AS");
      wm.expr = parseExpr();
      table->watermark = std::move(wm);
    } else if (t.isWord("PRIMARY") || t.isWord("CONSTRAINT")) {
      if (acceptWord("CONSTRAINT")) parseIdentifier("a constraint name");
      const Token& pk = expectWord("PRIMARY");
      expectWord("KEY");
      if (!table->primary_key.empty()) fail("Duplicate PRIMARY KEY definition", pk.pos);
      table->primary_key = parseParenNameList("a column name");
      table->primary_key_pos = pk.pos;
      if (!acceptWord("NOT")) {
        fail("Flink only supports PRIMARY KEY ... NOT ENFORCED (Flink does not own the data, so it cannot "
             "enforce the key)",
             peek().pos);
      }
      expectWord("ENFORCED");
    } else if (t.isWord("UNIQUE")) {
      unsupported(t, "UNIQUE constraint");
    } else {
      parseColumn(*table);
    }
    if (acceptSymbol(",")) continue;
    if (acceptSymbol(")")) break;
    unexpected(peek(), {",", ")"});
  }
}

void Parser::parseColumn(CreateTableStmt& table) {
  ColumnDef col;
  col.pos = peek().pos;
  col.name = parseIdentifier("a column name");
  for (const auto& c : table.columns)
    if (c.name == col.name) fail(fmt::format("Duplicate column name '{}'", col.name), col.pos);
  if (acceptWord("AS")) {
    col.kind = ColumnKind::kComputed;
    col.expr = parseExpr();
    if (acceptWord("COMMENT")) expectString("a comment string");
    table.columns.push_back(std::move(col));
    return;
  }
  col.type = parseType();
  for (;;) {
    const Token& t = peek();
    if (t.isWord("COMMENT")) {
      next();
      expectString("a comment string");
    } else if (t.isWord("METADATA")) {
      next();
      col.kind = ColumnKind::kMetadata;
      if (acceptWord("FROM")) col.metadata_key = expectString("a metadata key string").text;
      if (acceptWord("VIRTUAL")) col.metadata_virtual = true;
    } else if (t.isWord("PRIMARY") || t.isWord("CONSTRAINT")) {
      if (acceptWord("CONSTRAINT")) parseIdentifier("a constraint name");
      const Token& pk = expectWord("PRIMARY");
      expectWord("KEY");
      if (!table.primary_key.empty()) fail("Duplicate PRIMARY KEY definition", pk.pos);
      if (!acceptWord("NOT")) {
        fail("Flink only supports PRIMARY KEY ... NOT ENFORCED (Flink does not own the data, so it cannot "
             "enforce the key)",
             peek().pos);
      }
      expectWord("ENFORCED");
      table.primary_key = {col.name};
      table.primary_key_pos = pk.pos;
    } else {
      break;
    }
  }
  table.columns.push_back(std::move(col));
}

// ---------------------------------------------------------------------------------------------
// Public entry points
// ---------------------------------------------------------------------------------------------

std::vector<Statement> parseScript(std::string_view script) { return Parser(script).parseScript(); }

Statement parseStatement(std::string_view sql) { return Parser(sql).parseOneStatement(); }

ExprPtr parseExpression(std::string_view sql) { return Parser(sql).parseOneExpression(); }

}  // namespace sluice::table::sql
