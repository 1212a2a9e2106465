#include "table/sql/lexer.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace sluice::table::sql {
namespace {

TEST(SqlLexerTest, WordsKeepCaseAndHaveUpperForm) {
  auto toks = tokenize("select Foo_1");
  ASSERT_EQ(toks.size(), 3u);  // two words + end
  EXPECT_EQ(toks[0].kind, TokenKind::kWord);
  EXPECT_EQ(toks[0].upper, "SELECT");
  EXPECT_EQ(toks[1].text, "Foo_1");
  EXPECT_EQ(toks[1].upper, "FOO_1");
  EXPECT_EQ(toks[2].kind, TokenKind::kEnd);
}

TEST(SqlLexerTest, StringAndQuotedIdentifierEscapes) {
  auto toks = tokenize("'it''s' `my``col`");
  ASSERT_EQ(toks.size(), 3u);
  EXPECT_EQ(toks[0].kind, TokenKind::kString);
  EXPECT_EQ(toks[0].text, "it's");
  EXPECT_EQ(toks[1].kind, TokenKind::kQuotedIdent);
  EXPECT_EQ(toks[1].text, "my`col");
}

TEST(SqlLexerTest, Numbers) {
  auto toks = tokenize("42 1.5 .5 2. 1e3 1.5E-2 7e");
  ASSERT_EQ(toks.size(), 9u);  // "7e" is 7 followed by the word e
  EXPECT_EQ(toks[0].kind, TokenKind::kInteger);
  EXPECT_EQ(toks[1].kind, TokenKind::kDecimal);
  EXPECT_EQ(toks[1].text, "1.5");
  EXPECT_EQ(toks[2].kind, TokenKind::kDecimal);
  EXPECT_EQ(toks[2].text, ".5");
  EXPECT_EQ(toks[3].kind, TokenKind::kDecimal);
  EXPECT_EQ(toks[4].kind, TokenKind::kApproximate);
  EXPECT_EQ(toks[5].kind, TokenKind::kApproximate);
  EXPECT_EQ(toks[5].text, "1.5E-2");
  EXPECT_EQ(toks[6].kind, TokenKind::kInteger);
  EXPECT_EQ(toks[7].kind, TokenKind::kWord);
}

TEST(SqlLexerTest, OperatorsTwoCharFirst) {
  auto toks = tokenize("a||b<>c!=d<=e>=f=>g<h");
  std::vector<std::string> syms;
  for (const auto& t : toks)
    if (t.kind == TokenKind::kSymbol) syms.push_back(t.text);
  EXPECT_EQ(syms, (std::vector<std::string>{"||", "<>", "!=", "<=", ">=", "=>", "<"}));
}

TEST(SqlLexerTest, CommentsAreSkippedAndPositionsCounted) {
  // line 1: "-- c ; 'x"   line 2: "/* ; */ a"   line 3: "  b"
  auto toks = tokenize("-- c ; 'x\n/* ; */ a\n  b");
  ASSERT_EQ(toks.size(), 3u);
  EXPECT_EQ(toks[0].text, "a");
  EXPECT_EQ(toks[0].pos, (SourcePos{2, 9}));  // "/* ; */ " is 8 characters
  EXPECT_EQ(toks[1].text, "b");
  EXPECT_EQ(toks[1].pos, (SourcePos{3, 3}));
}

TEST(SqlLexerTest, ColumnsCountCharactersNotBytes) {
  // 'é' is two bytes in UTF-8 but one column: "'é' x" -> x at column 5.
  auto toks = tokenize("'\xC3\xA9' x");
  ASSERT_EQ(toks.size(), 3u);
  EXPECT_EQ(toks[1].pos, (SourcePos{1, 5}));
}

// Expected bytes are the UTF-8 encodings: U+00E9 = C3 A9, U+0416 = D0 96, U+1F600 = F0 9F 98 80
// (also the surrogate pair D83D DE00).
TEST(SqlLexerTest, UnicodeStrings) {
  auto one = [](std::string_view sql) {
    auto toks = tokenize(sql);
    EXPECT_EQ(toks.size(), 2u) << sql;
    EXPECT_EQ(toks[0].kind, TokenKind::kString) << sql;
    return toks[0].text;
  };
  EXPECT_EQ(one("U&'caf\\00E9'"), "caf\xC3\xA9");
  EXPECT_EQ(one("u&'\\0416\\00e9'"), "\xD0\x96\xC3\xA9");
  EXPECT_EQ(one("U&'\\+01F600 x'"), "\xF0\x9F\x98\x80 x");
  EXPECT_EQ(one("U&'\\D83D\\DE00'"), "\xF0\x9F\x98\x80");
  EXPECT_EQ(one("U&'a\\\\b it''s'"), "a\\b it's");
  EXPECT_EQ(one("U&''"), "");
  EXPECT_EQ(one("U&'!0041!!\\0041' UESCAPE '!'"), "A!\\0041");
  EXPECT_EQ(one("U&'x\xC3\xA9" "0041' /* c */ uescape\n'\xC3\xA9'"), "xA");
  // Without UESCAPE the next token is untouched; the escape may be a quote.
  auto toks = tokenize("U&'x' y, U&'''0041' UESCAPE ''''");
  ASSERT_EQ(toks.size(), 5u);
  EXPECT_EQ(toks[1].text, "y");
  EXPECT_EQ(toks[3].text, "A");
  EXPECT_EQ(toks[4].kind, TokenKind::kEnd);
}

TEST(SqlLexerTest, UnicodeStringErrors) {
  struct Case {
    std::string sql;
    int line, column;
    std::string message;
  };
  const Case cases[] = {
      {"SELECT U&'ab\\00G1'", 1, 13, "Unicode escape sequence starting at character 2 is not exactly four hex digits"},
      {"SELECT\n  U&'\\12'", 2, 6, "starting at character 0 is not exactly four hex digits"},
      {"U&'\\+0041'", 1, 4, "starting at character 0 is not exactly six hex digits"},
      {"U&'x\\+110000'", 1, 5, "starting at character 1 is not a valid code point"},
      {"U&'\\D83Dx'", 1, 4, "a high surrogate without a low one"},
      {"U&'\\DE00'", 1, 4, "a lone low surrogate"},
      {"U&'x' UESCAPE 'ab'", 1, 15, "UESCAPE 'ab' must be exactly one character"},
      {"U&'x' UESCAPE ''", 1, 15, "UESCAPE '' must be exactly one character"},
      {"U&'x' UESCAPE 'a'", 1, 15, "UESCAPE 'a' may not be hex digit, whitespace, plus sign, or double quote"},
      {"U&'x' UESCAPE '+'", 1, 15, "may not be hex digit, whitespace, plus sign, or double quote"},
      {"U&'x' UESCAPE ' '", 1, 15, "may not be hex digit, whitespace, plus sign, or double quote"},
      {"U&'x' UESCAPE 1", 1, 7, "UESCAPE must be followed by a one-character string literal"},
      {"SELECT 'x' UESCAPE '!'", 1, 12, "UESCAPE cannot be specified without Unicode literal introducer"},
      {"U&'abc", 1, 1, "unterminated string literal"},
  };
  for (const Case& c : cases) {
    try {
      tokenize(c.sql);
      ADD_FAILURE() << "expected SqlError: " << c.sql;
    } catch (const SqlError& e) {
      EXPECT_EQ(e.line(), c.line) << c.sql;
      EXPECT_EQ(e.column(), c.column) << c.sql;
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << c.sql << "\n" << e.what();
    }
  }
}

TEST(SqlLexerTest, Errors) {
  try {
    tokenize("a\n  'abc");
    FAIL() << "expected SqlError";
  } catch (const SqlError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.column(), 3);
    EXPECT_NE(std::string(e.what()).find("unterminated string literal"), std::string::npos);
  }
  try {
    tokenize("x /* never closed");
    FAIL() << "expected SqlError";
  } catch (const SqlError& e) {
    EXPECT_EQ(e.column(), 3);
  }
  try {
    tokenize("a # b");
    FAIL() << "expected SqlError";
  } catch (const SqlError& e) {
    EXPECT_EQ(e.column(), 3);
    EXPECT_NE(std::string(e.what()).find("unexpected character \"#\""), std::string::npos);
  }
  EXPECT_THROW(tokenize("select \"a\""), SqlError);
  EXPECT_THROW(tokenize("`unterminated"), SqlError);
}

}  // namespace
}  // namespace sluice::table::sql
