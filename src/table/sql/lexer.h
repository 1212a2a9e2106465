#pragma once
/// The SQL lexer: turns a script into tokens, dropping whitespace and comments (`-- ...` to end of line,
/// `/* ... */`, which also drops `/*+ hints */`). Used by the parser; public so that tests and tools can
/// look at tokens. Rules follow Flink's SQL dialect (Calcite with backquoted identifiers):
///  - keywords are not told apart here: a word is kWord, the parser compares `upper`;
///  - `'it''s'` is a string ('' escapes a quote), `` `my``col` `` a quoted identifier (`` `` `` escapes);
///  - `U&'caf\00E9'` is a Unicode string (kString, `text` in UTF-8): `\XXXX` is a UTF-16 code unit (a
///    surrogate pair is two escapes), `\+XXXXXX` a code point, `\\` a backslash; `UESCAPE '!'` after it
///    picks another escape character (one character; not a hex digit, whitespace, `+` or `"`), as
///    Calcite's SqlLiteral.unescapeUnicode (`\+XXXXXX` is the SQL standard's; Calcite reads only `\XXXX`);
///  - numbers: 42 (kInteger), 1.5 / .5 / 2. (kDecimal), 1e3 / 1.5E-2 (kApproximate).
/// Errors: throws SqlError (message formatted by formatSqlError) for an unterminated string, quoted
/// identifier or block comment (at its start), for a character that starts no token, for a malformed
/// Unicode escape (at the escape) and for a bad UESCAPE (at its string, or at UESCAPE after a plain string).

#include <string>
#include <string_view>
#include <vector>

#include "table/sql/ast.h"

namespace sluice::table::sql {

enum class TokenKind : uint8_t {
  kWord,         ///< unquoted identifier or keyword; `text` as written, `upper` upper-cased
  kQuotedIdent,  ///< `...`; `text` unescaped
  kInteger,
  kDecimal,
  kApproximate,
  kString,       ///< '...'; `text` unescaped
  kSymbol,       ///< ( ) , . ; + - * / % || = <> != < <= > >= => [ ] ? : { }
  kEnd,          ///< end of the script
};

/// One token. `offset`/`end` are byte offsets into the script ([offset, end) covers the token as written).
struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;
  std::string upper;  ///< kWord: text upper-cased; kSymbol: same as text; else empty
  SourcePos pos;
  size_t offset = 0;
  size_t end = 0;

  /// True for an unquoted word whose upper-case spelling is `keyword`.
  bool isWord(std::string_view keyword) const { return kind == TokenKind::kWord && upper == keyword; }
  /// True for the symbol `sym`.
  bool isSymbol(std::string_view sym) const { return kind == TokenKind::kSymbol && text == sym; }
  /// How the token appears in an error: "FORM", "<EOF>", "'abc'".
  std::string describe() const;
};

/// Splits `script` into tokens; the last token is always kEnd. Throws SqlError on lexical errors.
std::vector<Token> tokenize(std::string_view script);

}  // namespace sluice::table::sql
