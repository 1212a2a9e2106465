// The SQL/JSON functions' own syntax: JSON_OBJECT / JSON_ARRAY constructors and the ON EMPTY /
// ON ERROR clauses of JSON_VALUE, JSON_QUERY and JSON_EXISTS.
#include <fmt/format.h>

#include "common/error.h"
#include "table/sql/parser_internal.h"

namespace sluice::table::sql {

ExprPtr Parser::parseJsonConstructor(const Token& name_tok, ExprPtr call) {
  // JSON_OBJECT([KEY] k VALUE v, ... [NULL|ABSENT ON NULL]), JSON_ARRAY(v, ... [NULL|ABSENT ON NULL]):
  // children = {'NULL' or 'ABSENT' literal, k1, v1, ...} / {mode, v1, ...}. The defaults are the SQL
  // standard's: NULL ON NULL for objects, ABSENT ON NULL for arrays.
  const bool object = name_tok.upper == "JSON_OBJECT";
  call->children.push_back(makeLiteral(LiteralKind::kString, object ? "NULL" : "ABSENT", name_tok.pos));
  auto onNull = [&]() {
    if ((peek().isWord("NULL") || peek().isWord("ABSENT")) && peek(1).isWord("ON")) {
      call->children[0]->text = next().upper;
      next();
      expectWord("NULL");
      return true;
    }
    return false;
  };
  if (!peek().isSymbol(")") && !onNull()) {
    do {
      if (object) {
        if (peek().isWord("KEY") && !peek(1).isWord("VALUE")) next();
        call->children.push_back(parseAdditive());
        if (!acceptWord("VALUE")) {
          if (!acceptSymbol(":")) unexpected(peek(), {"VALUE"});
        }
      }
      call->children.push_back(parseExpr());
    } while (acceptSymbol(","));
    onNull();
  }
  expectSymbol(")");
  return call;
}

ExprPtr Parser::parseJsonQuery(const Token& name_tok, ExprPtr call) {
  // JSON_VALUE(json, path [RETURNING type] [behaviour ON EMPTY] [behaviour ON ERROR]) and likewise for
  // JSON_QUERY / JSON_EXISTS. RETURNING becomes a TRY_CAST around the call. Behaviours other than the
  // defaults add four children: {'<mode>' ON EMPTY, its DEFAULT value or NULL, '<mode>' ON ERROR, its
  // DEFAULT value or NULL}, modes NULL, ERROR, DEFAULT, TRUE, FALSE, UNKNOWN, EMPTY ARRAY, EMPTY OBJECT
  // (the planner checks which the function allows). JSON_QUERY's WITH [CONDITIONAL | UNCONDITIONAL]
  // [ARRAY] WRAPPER adds those four (defaults included) and a seventh, 'CONDITIONAL' or 'UNCONDITIONAL'.
  const std::string& u = name_tok.upper;
  call->children.push_back(parseExpr());
  expectSymbol(",");
  call->children.push_back(parseExpr());
  std::optional<types::LogicalType> returning;
  if (u == "JSON_VALUE" && acceptWord("RETURNING")) returning = parseType();
  std::string modes[2] = {"NULL", u == "JSON_EXISTS" ? "FALSE" : "NULL"};
  ExprPtr defaults[2];
  bool custom = false;
  std::string wrapper;  ///< JSON_QUERY's: empty = WITHOUT
  while (!peek().isSymbol(")")) {
    const Token& what = peek();
    if (what.isWord("WITHOUT")) {
      next();
      acceptWord("ARRAY");
      expectWord("WRAPPER");
      wrapper.clear();
      continue;
    }
    if (what.isWord("WITH")) {
      // WITH [CONDITIONAL | UNCONDITIONAL] [ARRAY] WRAPPER; WITH alone is UNCONDITIONAL.
      if (u != "JSON_QUERY") unsupported(what, fmt::format("WITH ... WRAPPER in {}", u));
      next();
      if (acceptWord("CONDITIONAL")) wrapper = "CONDITIONAL";
      else {
        acceptWord("UNCONDITIONAL");
        wrapper = "UNCONDITIONAL";
      }
      acceptWord("ARRAY");
      expectWord("WRAPPER");
      continue;
    }
    std::string mode;
    ExprPtr value;
    if (what.isWord("NULL") || what.isWord("ERROR") || what.isWord("TRUE") || what.isWord("FALSE") ||
        what.isWord("UNKNOWN")) {
      mode = next().upper;
    } else if (what.isWord("DEFAULT")) {
      next();
      mode = "DEFAULT";
      value = parseAdditive();
    } else if (what.isWord("EMPTY")) {
      next();
      if (acceptWord("ARRAY")) mode = "EMPTY ARRAY";
      else if (acceptWord("OBJECT")) mode = "EMPTY OBJECT";
      else unexpected(peek(), {"ARRAY", "OBJECT"});
    } else {
      unexpected(what, {")"});
    }
    expectWord("ON");
    int which = 0;
    if (acceptWord("EMPTY")) which = 0;
    else if (acceptWord("ERROR")) which = 1;
    else unexpected(peek(), {"EMPTY", "ERROR"});
    custom = custom || mode != modes[which] || value != nullptr;
    modes[which] = mode;
    defaults[which] = std::move(value);
  }
  next();
  if (custom || !wrapper.empty()) {
    for (int k = 0; k < 2; ++k) {
      call->children.push_back(makeLiteral(LiteralKind::kString, modes[k], name_tok.pos));
      call->children.push_back(defaults[k] ? std::move(defaults[k]) : makeLiteral(LiteralKind::kNull, "", name_tok.pos));
    }
  }
  if (!wrapper.empty()) call->children.push_back(makeLiteral(LiteralKind::kString, wrapper, name_tok.pos));
  if (!returning) return call;
  auto cast = std::make_unique<Expr>();
  cast->kind = ExprKind::kCast;
  cast->pos = call->pos;
  cast->cast_type = *returning;
  cast->try_cast = true;
  cast->children.push_back(std::move(call));
  return cast;
}

}  // namespace sluice::table::sql
