#include <gtest/gtest.h>

#include <string>

#include "common/error.h"
#include "table/sql/parser.h"

namespace sluice::table::sql {
namespace {

struct Caught {
  int line = -1;
  int column = -1;
  std::string message;
};

Caught parseError(std::string_view script) {
  try {
    parseScript(script);
  } catch (const SqlError& e) {
    return {e.line(), e.column(), e.what()};
  }
  ADD_FAILURE() << "no SqlError for: " << script;
  return {};
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(SqlErrorTest, MisspeltFromPointsAtTheWordWithCaret) {
  // Line 3 is "  SELECT a, b FORM t": two spaces, SELECT at 3..8, "a," 10..11, b at 13, FORM at 15.
  Caught c = parseError("SET 'a' = 'b';\n\n  SELECT a, b FORM t");
  EXPECT_EQ(c.line, 3);
  EXPECT_EQ(c.column, 15);
  EXPECT_EQ(c.message,
            "SQL parse error at line 3, column 15: Encountered \"FORM\" but expected one of: \",\", AS, FROM, "
            "WHERE, GROUP, HAVING, UNION\n"
            "    SELECT a, b FORM t\n"
            "                ^");
}

TEST(SqlErrorTest, FormatSqlError) {
  EXPECT_EQ(formatSqlError("boom", "ab\n\tcd", 2, 3, "SQL validation error"),
            "SQL validation error at line 2, column 3: boom\n  \tcd\n  \t ^");
  EXPECT_EQ(formatSqlError("boom", "x", 0, 0), "SQL parse error: boom");
}

TEST(SqlErrorTest, UnexpectedTokensAtExactPlaces) {
  // "SELECT a FROM t WHERE" ends early: <EOF> at column 22 (21 characters).
  Caught c = parseError("SELECT a FROM t WHERE");
  EXPECT_EQ(c.line, 1);
  EXPECT_EQ(c.column, 22);
  EXPECT_TRUE(contains(c.message, "Encountered \"<EOF>\" but expected an expression")) << c.message;

  // "SELECT a FROM t GROUP a": GROUP at 17..21, a at 23.
  c = parseError("SELECT a FROM t GROUP a");
  EXPECT_EQ(c.column, 23);
  EXPECT_TRUE(contains(c.message, "Encountered \"a\" but expected BY")) << c.message;

  // Missing ')' : "SELECT f(a, b FROM t" - FROM at column 15.
  c = parseError("SELECT f(a, b FROM t");
  EXPECT_EQ(c.column, 15);
  EXPECT_TRUE(contains(c.message, "expected one of: \",\", \")\"")) << c.message;

  // Statement does not end: "SELECT a FROM t x y" - x is an alias... then y: misspelling heuristic hits x
  // at column 17 because another name follows it.
  c = parseError("SELECT a FROM t x y");
  EXPECT_EQ(c.column, 17);

  // A bare word where a statement should start (line 2, column 1).
  c = parseError("SELECT 1;\nSELEC 2");
  EXPECT_EQ(c.line, 2);
  EXPECT_EQ(c.column, 1);
  EXPECT_TRUE(contains(c.message, "Encountered \"SELEC\" but expected one of: SELECT, INSERT, CREATE")) << c.message;
  EXPECT_TRUE(contains(c.message, "SHOW, DESCRIBE, DROP, USE, ALTER")) << c.message;

  // Two statements without ';' : "SELECT 1 SELECT 2" - the second SELECT at column 10.
  c = parseError("SELECT 1 SELECT 2");
  EXPECT_EQ(c.column, 10);
  EXPECT_TRUE(contains(c.message, "\";\"")) << c.message;
}

TEST(SqlErrorTest, UnsupportedConstructs) {
  // "SELECT a FROM t UNION ALL": nothing after ALL; the end of the script is at column 26.
  Caught c = parseError("SELECT a FROM t UNION ALL");
  EXPECT_EQ(c.column, 26);

  // "SELECT a FROM t ORDER BY a NULLS MIDDLE": MIDDLE at 34, FIRST or LAST expected.
  c = parseError("SELECT a FROM t ORDER BY a NULLS MIDDLE");
  EXPECT_EQ(c.column, 34);
  EXPECT_TRUE(contains(c.message, "FIRST")) << c.message;

  // MySQL's "LIMIT 1, 2": the comma at 24.
  c = parseError("SELECT a FROM t LIMIT 1, 2");
  EXPECT_EQ(c.column, 24);
  EXPECT_TRUE(contains(c.message, "LIMIT offset, count")) << c.message;

  // "CREATE TABLE t (d BYTES)": BYTES at column 19.
  c = parseError("CREATE TABLE t (d BYTES)");
  EXPECT_EQ(c.column, 19);
  EXPECT_TRUE(contains(c.message, "type BYTES is not supported yet")) << c.message;

  // "SELECT COUNT(*) OVER (w) FROM t": no WINDOW w; the name at column 23.
  c = parseError("SELECT COUNT(*) OVER (w) FROM t");
  EXPECT_EQ(c.column, 23);
  EXPECT_TRUE(contains(c.message, "Window 'w' not found")) << c.message;

  // "SELECT a FROM t WHERE EXISTS SELECT b": EXISTS takes a parenthesized query; the SELECT at column 30.
  EXPECT_EQ(parseError("SELECT a FROM t WHERE EXISTS SELECT b").column, 30);

  // Named TVF argument: "SELECT * FROM TABLE(TUMBLE(DATA => TABLE t))": "=>" at column 33.
  EXPECT_EQ(parseError("SELECT * FROM TABLE(TUMBLE(DATA => TABLE t))").column, 33);

  // "VALUES (1), (2, 3)": the second row has two fields; it starts at column 13.
  EXPECT_EQ(parseError("VALUES (1), (2, 3)").column, 13);
}

TEST(SqlErrorTest, MoreUnsupportedAndMisspelt) {
  // "SELECT a FROM t WHER a = 1": WHER would be an alias but a name follows; WHER is at column 17.
  Caught c = parseError("SELECT a FROM t WHER a = 1");
  EXPECT_EQ(c.column, 17);
  EXPECT_TRUE(contains(c.message, "Encountered \"WHER\" but expected one of:")) << c.message;
  EXPECT_TRUE(contains(c.message, "WHERE")) << c.message;

  // "WITH RECURSIVE x AS (SELECT 1) SELECT * FROM x": RECURSIVE at column 6.
  c = parseError("WITH RECURSIVE x AS (SELECT 1) SELECT * FROM x");
  EXPECT_EQ(c.column, 6);
  EXPECT_TRUE(contains(c.message, "WITH RECURSIVE is not supported yet")) << c.message;

  // "SELECT TIMESTAMP_LTZ '2020-01-01'": not a literal; TIMESTAMP_LTZ is a column name there, the string
  // after it is unexpected at column 22.
  EXPECT_EQ(parseError("SELECT TIMESTAMP_LTZ '2020-01-01'").column, 22);

  // "SELECT * FROM t FOR SYSTEM_TIME AS x": FOR SYSTEM_TIME AS OF parses (the planner takes it on the right of
  // a join only); without OF the x at column 36 is unexpected.
  EXPECT_EQ(parseError("SELECT * FROM t FOR SYSTEM_TIME AS x").column, 36);

  // Interval text that is not a number: the string at column 17 of "SELECT INTERVAL 'x' HOUR".
  c = parseError("SELECT INTERVAL 'x' HOUR");
  EXPECT_EQ(c.column, 17);
  // An interval that overflows 64-bit milliseconds.
  EXPECT_TRUE(contains(parseError("SELECT INTERVAL '99999999999999999999' DAY").message, "Illegal interval"));

  // Trailing garbage after WITH (...): "(" at 29, ")" at 30, "x" at 32 of "CREATE TABLE t (a INT) WITH () x".
  c = parseError("CREATE TABLE t (a INT) WITH () x");
  EXPECT_EQ(c.column, 32);
  EXPECT_TRUE(contains(c.message, "Encountered \"x\" but expected \";\"")) << c.message;
}

TEST(SqlErrorTest, DdlErrors) {
  // PRIMARY KEY without NOT ENFORCED: error at ')' after "(a)" - "CREATE TABLE t (a INT, PRIMARY KEY (a))":
  // PRIMARY at 24, KEY at 32, "(a)" at 36..38, the closing ')' at 39.
  Caught c = parseError("CREATE TABLE t (a INT, PRIMARY KEY (a))");
  EXPECT_EQ(c.column, 39);
  EXPECT_TRUE(contains(c.message, "NOT ENFORCED")) << c.message;

  // Duplicate column: "CREATE TABLE t (a INT, a INT)": second a at 24.
  c = parseError("CREATE TABLE t (a INT, a INT)");
  EXPECT_EQ(c.column, 24);
  EXPECT_TRUE(contains(c.message, "Duplicate column name 'a'")) << c.message;

  // Option value must be a string: "CREATE TABLE t (a INT) WITH ('k' = 1)": 1 at column 36.
  EXPECT_EQ(parseError("CREATE TABLE t (a INT) WITH ('k' = 1)").column, 36);

  // Statement set accepts only INSERT: line 2 column 1.
  c = parseError("BEGIN STATEMENT SET;\nSELECT 1;\nEND;");
  EXPECT_EQ(c.line, 2);
  EXPECT_EQ(c.column, 1);
  EXPECT_TRUE(contains(c.message, "expected one of: INSERT, END")) << c.message;
}

TEST(SqlErrorTest, LexicalErrorsInScripts) {
  // Unterminated string starting at line 2, column 8 ("SELECT " is 7 characters).
  Caught c = parseError("SELECT 1;\nSELECT 'abc;\n");
  EXPECT_EQ(c.line, 2);
  EXPECT_EQ(c.column, 8);
}

TEST(SqlErrorTest, DeepNestingIsAnErrorNotACrash) {
  std::string deep(100000, '(');
  Caught c = parseError("SELECT " + deep + "1");
  EXPECT_TRUE(contains(c.message, "nested too deeply")) << c.message.substr(0, 200);

  std::string minus = "SELECT ";
  for (int i = 0; i < 100000; ++i) minus += "- ";  // spaced: "--" would start a comment
  minus += "1";
  EXPECT_TRUE(contains(parseError(minus).message, "nested too deeply"));

  std::string nots = "SELECT 1 FROM t WHERE ";
  for (int i = 0; i < 50000; ++i) nots += "NOT ";
  nots += "a";
  EXPECT_TRUE(contains(parseError(nots).message, "nested too deeply"));

  // A long chain is also bounded: 100000 "+ 1" links build a left-deep tree.
  std::string chain = "SELECT 1";
  for (int i = 0; i < 100000; ++i) chain += "+1";
  EXPECT_TRUE(contains(parseError(chain).message, "too deep"));

  // Moderate depth is fine: 150 parentheses and a 500-link chain.
  EXPECT_NO_THROW(parseScript("SELECT " + std::string(150, '(') + "1" + std::string(150, ')')));
  std::string ok = "SELECT a";
  for (int i = 0; i < 500; ++i) ok += " || a";
  EXPECT_NO_THROW(parseScript(ok));
}

}  // namespace
}  // namespace sluice::table::sql
