#pragma once
/// The recursive-descent parser behind parser.h. Internal to this module: split over parser.cc
/// (script, statements, DDL), parser_query.cc (SELECT, FROM, UNION ALL) and parser_expr.cc
/// (expressions, data types). One Parser parses one script on one thread.

#include <string>
#include <string_view>
#include <vector>

#include "table/sql/ast.h"
#include "table/sql/lexer.h"
#include "table/sql/parser.h"

namespace sluice::table::sql {

class Parser {
 public:
  explicit Parser(std::string_view script);

  std::vector<Statement> parseScript();
  Statement parseOneStatement();
  ExprPtr parseOneExpression();

  // Statements (parser.cc).
  Statement parseStatement();
  void parseCreate(Statement& st);
  void parseCreateTable(Statement& st);
  void parseCreateView(Statement& st, bool temporary);
  void parseCreateFunction(Statement& st, bool temporary, bool system);
  InsertStmt parseInsert();
  void parseSet(Statement& st);
  void parseReset(Statement& st);
  void parseExplain(Statement& st);
  void parseShow(Statement& st);
  void parseDrop(Statement& st);
  void parseUse(Statement& st);
  void parseAlter(Statement& st);
  void parseLikeClause(CreateTableStmt& table);
  /// `('k' = 'v', ...)` (or `('k', ...)` without values, for ALTER TABLE RESET).
  std::vector<TableOption> parseOptionList(bool with_values, bool allow_empty);
  void parseTableElements(CreateTableStmt& table);
  void parseStatementSetBody(Statement& st, bool begin_form);
  void parseColumn(CreateTableStmt& table);
  std::vector<std::string> parseParenNameList(const char* what);

  // Queries (parser_query.cc).
  std::unique_ptr<Query> parseQuery();
  void parseQueryTerm(Query& q);
  /// Query terms joined by INTERSECT (binds tighter than UNION / EXCEPT).
  void parseIntersectLevel(Query& q);
  /// Replaces `q` by one term: the set operation `kind` of the old `q` and `right`.
  void wrapSetOperation(Query& q, SourcePos at, SetOpKind kind, bool all, Query right);
  std::vector<WithItem> parseWith();
  SelectStmt parseValues();
  SelectStmt parseSelect();
  SelectItem parseSelectItem();
  std::unique_ptr<TableRef> parseFrom();
  std::unique_ptr<TableRef> parseTableRefPrimary();
  std::optional<std::string> parseOptionalAlias(const std::vector<std::string>& follow);
  bool startsQuery(size_t ahead) const;
  void parseOrderByAndLimit(Query& q);

  // OVER windows, WINDOW clauses, ORDER BY items (parser_window.cc).
  OrderItem parseOrderItem();
  FrameBound parseFrameBound();
  void parseWindowSpecBody(OverWindow& w);
  /// `call` OVER w / OVER (...), with OVER the next token.
  ExprPtr parseOver(ExprPtr call);
  /// WINDOW name AS (...), ...; resolves the OVER name references of the select list.
  void parseWindowClause(SelectStmt& s);
  /// `w` with its reference to one of the first `visible` named windows of `s` resolved.
  std::shared_ptr<const OverWindow> resolveWindow(const OverWindow& w, const SelectStmt& s, size_t visible) const;
  void resolveWindowRefs(Expr& e, const SelectStmt& s) const;
  /// Fails at the first OVER name reference left in `e` (a SELECT without a matching WINDOW clause).
  void checkNoWindowRefs(const Expr& e) const;

  // Expressions and types (parser_expr.cc).
  ExprPtr parseExpr();
  ExprPtr parseOr();
  ExprPtr parseAnd();
  ExprPtr parseNot();
  ExprPtr parsePredicate();
  ExprPtr parseAdditive();
  ExprPtr parseMultiplicative();
  ExprPtr parseUnary();
  ExprPtr parsePrimary();
  ExprPtr parseWordPrimary();
  ExprPtr parseFunctionCall(const Token& name_tok);
  // parser_json.cc
  ExprPtr parseJsonConstructor(const Token& name_tok, ExprPtr call);
  ExprPtr parseJsonQuery(const Token& name_tok, ExprPtr call);
  ExprPtr parseSubstring(const Token& name_tok);
  ExprPtr parseTrim(const Token& name_tok);
  ExprPtr parseCase();
  ExprPtr parseCast();
  ExprPtr parseInterval();
  types::LogicalType parseType();

  // Tokens.
  const Token& peek(size_t ahead = 0) const;
  const Token& next();
  bool acceptWord(std::string_view kw);
  bool acceptSymbol(std::string_view sym);
  const Token& expectWord(std::string_view kw);
  const Token& expectSymbol(std::string_view sym);
  const Token& expectString(const char* what);
  int64_t expectInteger(const char* what, int64_t min, int64_t max);
  /// An unquoted non-reserved word or a quoted identifier.
  bool isIdentifier(const Token& t) const;
  std::string parseIdentifier(const char* what);
  types::LogicalType parseRowFields();
  QualifiedName parseQualifiedName(const char* what);
  static bool isReserved(const std::string& upper);

  // Errors.
  [[noreturn]] void fail(const std::string& message, SourcePos pos) const;
  [[noreturn]] void unexpected(const Token& t, const std::vector<std::string>& expected) const;
  [[noreturn]] void unexpectedWhat(const Token& t, const std::string& what) const;
  [[noreturn]] void unsupported(const Token& t, const std::string& what) const;

  /// Counts nesting (and tree depth) while alive; throws when a cap is exceeded.
  class DepthGuard {
   public:
    DepthGuard(Parser& p, const Token& at);
    ~DepthGuard();
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Parser& p_;
  };
  /// Counts links of a left-deep operator chain toward the tree depth while alive.
  class ChainGuard {
   public:
    explicit ChainGuard(Parser& p) : p_(p) {}
    ~ChainGuard() { p_.tree_depth_ -= links_; }
    void step(const Token& at);
    ChainGuard(const ChainGuard&) = delete;
    ChainGuard& operator=(const ChainGuard&) = delete;

   private:
    Parser& p_;
    int links_ = 0;
  };

  std::string_view script_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
  int tree_depth_ = 0;
  /// What may follow the clause just parsed; used to word the error when a statement does not end.
  std::vector<std::string> follow_;
};

}  // namespace sluice::table::sql
