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
