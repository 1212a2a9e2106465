#pragma once
/// Public entry points of the Flink SQL parser (hand-written recursive descent over lexer.h's tokens).
/// All functions are pure (no global state) and may be called from any thread.
///
/// Errors: every syntax error throws sluice::SqlError with line()/column() set and a message such as
///   SQL parse error at line 3, column 15: Encountered "FORM" but expected one of: ",", AS, FROM, ...
///     SELECT a, b FORM t
///                 ^
/// Constructs Sluice does not run yet (ORDER BY, LIMIT, plain UNION, VALUES, WITH, OVER, DATE, ...)
/// are rejected the same way with "... is not supported yet".
/// Nesting (parentheses, subqueries, unary operators) is capped at kMaxNestingDepth and expression
/// trees (including long operator chains such as a || b || c ...) at kMaxTreeDepth, so hostile input
/// cannot overflow the stack; deeper input is a SqlError.

#include <string>
#include <string_view>
#include <vector>

#include "table/sql/ast.h"

namespace sluice::table::sql {

/// Maximum nesting of parentheses / subqueries / prefix operators.
inline constexpr int kMaxNestingDepth = 200;
/// Maximum depth of a parsed tree, counting each link of an operator chain as one level.
inline constexpr int kMaxTreeDepth = 1000;

/// Parses a script: statements separated by ';' (a ';' inside a string, quoted identifier or comment
/// does not separate), empty statements skipped. Statement sets (EXECUTE STATEMENT SET BEGIN ... END
/// and BEGIN STATEMENT SET; ... END) are one Statement each. Throws SqlError at the first error.
std::vector<Statement> parseScript(std::string_view script);

/// Parses exactly one statement (a trailing ';' is allowed). Throws SqlError.
Statement parseStatement(std::string_view sql);

/// Parses one scalar expression, e.g. "a + 1 > b". Throws SqlError.
ExprPtr parseExpression(std::string_view sql);

/// Builds the error text used for every SQL error (parse and validation):
///   "<what> at line <line>, column <column>: <message>\n  <text of that line>\n  <spaces>^"
/// Lines and columns are 1-based; when `line` is 0 or outside the script only
/// "<what>: <message>" is returned. Tabs in the line are kept in the caret line so it aligns.
std::string formatSqlError(const std::string& message, std::string_view script, int line, int column,
                           std::string_view what = "SQL parse error");

/// Throws SqlError(formatSqlError(message, script, pos.line, pos.column, what), pos.line, pos.column).
[[noreturn]] void throwSqlError(const std::string& message, std::string_view script, SourcePos pos,
                                std::string_view what = "SQL parse error");

}  // namespace sluice::table::sql
