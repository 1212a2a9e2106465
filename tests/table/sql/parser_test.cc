#include <gtest/gtest.h>

#include "common/error.h"
#include "table/sql/parser.h"

namespace sluice::table::sql {
namespace {

using types::LogicalType;

const char* kFlights = R"(CREATE TABLE flights (
  `YEAR` INT, `MONTH` INT, `DAY` INT, DAY_OF_WEEK INT, AIRLINE STRING, FLIGHT_NUMBER INT, TAIL_NUMBER STRING,
  ORIGIN_AIRPORT STRING, DESTINATION_AIRPORT STRING, SCHEDULED_DEPARTURE STRING, DEPARTURE_TIME STRING,
  DEPARTURE_DELAY INT, CANCELLED INT,
  sched_dep AS TO_TIMESTAMP(
      CAST(`YEAR` AS STRING) || '-' || LPAD(CAST(`MONTH` AS STRING), 2, '0') || '-' ||
      LPAD(CAST(`DAY` AS STRING), 2, '0') || ' ' ||
      SUBSTRING(SCHEDULED_DEPARTURE FROM 1 FOR 2) || ':' ||
      SUBSTRING(SCHEDULED_DEPARTURE FROM 3 FOR 2) || ':00'),
  WATERMARK FOR sched_dep AS sched_dep - INTERVAL '1' MINUTE
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/data/flights.csv',
  'format' = 'csv',
  'csv.ignore-parse-errors' = 'true'
);
INSERT INTO hourly
SELECT window_start, AIRLINE, COUNT(*) AS flights, SUM(CANCELLED), AVG(DEPARTURE_DELAY), MAX(DEPARTURE_DELAY)
FROM TABLE(TUMBLE(TABLE flights, DESCRIPTOR(sched_dep), INTERVAL '1' HOUR))
GROUP BY window_start, window_end, AIRLINE;
)";

TEST(SqlParserTest, FlightsScript) {
  auto stmts = parseScript(kFlights);
  ASSERT_EQ(stmts.size(), 2u);

  const Statement& ddl = stmts[0];
  ASSERT_EQ(ddl.kind, StatementKind::kCreateTable);
  EXPECT_EQ(ddl.pos, (SourcePos{1, 1}));
  const CreateTableStmt& t = *ddl.create_table;
  EXPECT_EQ(t.name, QualifiedName{"flights"});
  ASSERT_EQ(t.columns.size(), 14u);  // 13 physical + sched_dep
  EXPECT_EQ(t.columns[0].name, "YEAR");
  EXPECT_EQ(t.columns[0].type, LogicalType::integer());
  EXPECT_EQ(t.columns[4].name, "AIRLINE");
  EXPECT_EQ(t.columns[4].type, LogicalType::string());
  EXPECT_EQ(t.columns[13].name, "sched_dep");
  EXPECT_EQ(t.columns[13].kind, ColumnKind::kComputed);
  ASSERT_TRUE(t.columns[13].expr);
  EXPECT_EQ(t.columns[13].expr->name, "TO_TIMESTAMP");
  EXPECT_EQ(t.columns[13].pos, (SourcePos{5, 3}));
  ASSERT_TRUE(t.watermark.has_value());
  EXPECT_EQ(t.watermark->column, "sched_dep");
  EXPECT_EQ(t.watermark->expr->toString(), "(sched_dep - INTERVAL '1' MINUTE)");
  EXPECT_EQ(t.watermark->pos, (SourcePos{10, 3}));
  ASSERT_EQ(t.options.size(), 4u);
  EXPECT_EQ(t.options[0].key, "connector");
  EXPECT_EQ(t.options[0].value, "filesystem");
  EXPECT_EQ(t.options[3].key, "csv.ignore-parse-errors");
  EXPECT_EQ(t.options[3].pos, (SourcePos{15, 3}));
  EXPECT_EQ(ddl.text.substr(0, 21), "CREATE TABLE flights ");
  EXPECT_EQ(ddl.text.back(), ')');  // the text stops before ';'

  const Statement& ins = stmts[1];
  ASSERT_EQ(ins.kind, StatementKind::kInsert);
  EXPECT_EQ(ins.pos, (SourcePos{17, 1}));
  EXPECT_EQ(ins.insert->target, QualifiedName{"hourly"});
  const SelectStmt& sel = ins.insert->query->selects.at(0);
  ASSERT_EQ(sel.select_list.size(), 6u);
  EXPECT_EQ(sel.select_list[2].expr->toString(), "COUNT(*)");
  EXPECT_EQ(sel.select_list[2].alias.value_or(""), "flights");
  ASSERT_TRUE(sel.from);
  EXPECT_EQ(sel.from->kind, TableRefKind::kTableFunction);
  EXPECT_EQ(sel.from->call->toString(),
            "TUMBLE(TABLE flights, DESCRIPTOR(sched_dep), INTERVAL '1' HOUR)");
  EXPECT_EQ(sel.from->call->children[0]->kind, ExprKind::kTableArg);
  EXPECT_EQ(sel.from->call->children[1]->kind, ExprKind::kDescriptor);
  ASSERT_EQ(sel.group_by.size(), 3u);
  EXPECT_EQ(sel.group_by[1]->toString(), "window_end");
}

TEST(SqlParserTest, CreateTableConstraintsAndColumnForms) {
  auto st = parseStatement(
      "CREATE TABLE IF NOT EXISTS db.orders (\n"
      "  id BIGINT NOT NULL COMMENT 'the key',\n"
      "  amount DECIMAL(10, 2),\n"
      "  ts TIMESTAMP(3),\n"
      "  part INT METADATA FROM 'partition' VIRTUAL,\n"
      "  total AS amount * 2 COMMENT 'x',\n"
      "  PRIMARY KEY (id) NOT ENFORCED\n"
      ") COMMENT 'orders' WITH ('connector' = 'datagen')");
  ASSERT_EQ(st.kind, StatementKind::kCreateTable);
  const auto& t = *st.create_table;
  EXPECT_TRUE(t.if_not_exists);
  EXPECT_EQ(t.name, (QualifiedName{"db", "orders"}));
  ASSERT_EQ(t.columns.size(), 5u);
  EXPECT_EQ(t.columns[0].type, LogicalType::bigint(false));
  EXPECT_EQ(t.columns[1].type, LogicalType::decimal(10, 2));
  EXPECT_EQ(t.columns[2].type, LogicalType::timestamp(3));
  EXPECT_EQ(t.columns[3].kind, ColumnKind::kMetadata);
  EXPECT_EQ(t.columns[3].metadata_key.value_or(""), "partition");
  EXPECT_TRUE(t.columns[3].metadata_virtual);
  EXPECT_EQ(t.columns[4].kind, ColumnKind::kComputed);
  EXPECT_EQ(t.primary_key, std::vector<std::string>{"id"});
  EXPECT_EQ(t.primary_key_pos, (SourcePos{7, 3}));
  EXPECT_EQ(t.comment.value_or(""), "orders");
  EXPECT_FALSE(t.watermark.has_value());

  auto inline_pk = parseStatement("CREATE TABLE k (a INT PRIMARY KEY NOT ENFORCED, b STRING) WITH ('x'='y')");
  EXPECT_EQ(inline_pk.create_table->primary_key, std::vector<std::string>{"a"});
  auto composite = parseStatement("CREATE TABLE k (a INT, b INT, CONSTRAINT pk PRIMARY KEY (a, b) NOT ENFORCED)");
  EXPECT_EQ(composite.create_table->primary_key, (std::vector<std::string>{"a", "b"}));
}

TEST(SqlParserTest, CreateView) {
  auto st = parseStatement("CREATE TEMPORARY VIEW IF NOT EXISTS v AS SELECT a FROM t");
  ASSERT_EQ(st.kind, StatementKind::kCreateView);
  EXPECT_TRUE(st.create_view->temporary);
  EXPECT_TRUE(st.create_view->if_not_exists);
  EXPECT_EQ(st.create_view->name, QualifiedName{"v"});
  ASSERT_TRUE(st.create_view->query);
  auto plain = parseStatement("create view v2 (x) as select a from t");
  EXPECT_FALSE(plain.create_view->temporary);
  EXPECT_EQ(plain.create_view->column_names, std::vector<std::string>{"x"});
}

TEST(SqlParserTest, InsertForms) {
  auto st = parseStatement("INSERT INTO sink (a, b) SELECT x, y FROM src");
  ASSERT_EQ(st.kind, StatementKind::kInsert);
  EXPECT_EQ(st.insert->columns, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(st.insert->overwrite);
  auto paren = parseStatement("INSERT OVERWRITE sink (SELECT x FROM src)");
  EXPECT_TRUE(paren.insert->overwrite);
  EXPECT_TRUE(paren.insert->columns.empty());
  EXPECT_EQ(paren.insert->query->selects.size(), 1u);
}

TEST(SqlParserTest, SetResetExplain) {
  auto stmts = parseScript("SET 'parallelism.default' = '4'; SET; RESET 'a.b'; RESET; SET table.x = 10 s");
  ASSERT_EQ(stmts.size(), 5u);
  EXPECT_EQ(stmts[0].kind, StatementKind::kSet);
  EXPECT_EQ(stmts[0].key.value_or(""), "parallelism.default");
  EXPECT_EQ(stmts[0].value.value_or(""), "4");
  EXPECT_FALSE(stmts[1].key.has_value());
  EXPECT_EQ(stmts[2].kind, StatementKind::kReset);
  EXPECT_EQ(stmts[2].key.value_or(""), "a.b");
  EXPECT_FALSE(stmts[3].key.has_value());
  EXPECT_EQ(stmts[4].key.value_or(""), "table.x");
  EXPECT_EQ(stmts[4].value.value_or(""), "10 s");

  auto ex = parseStatement("EXPLAIN PLAN FOR SELECT * FROM t");
  ASSERT_EQ(ex.kind, StatementKind::kExplain);
  ASSERT_TRUE(ex.explained);
  EXPECT_EQ(ex.explained->kind, StatementKind::kQuery);
  EXPECT_EQ(ex.explained->text, "SELECT * FROM t");
  auto ex2 = parseStatement("EXPLAIN CHANGELOG_MODE, ESTIMATED_COST INSERT INTO s SELECT * FROM t");
  EXPECT_EQ(ex2.explain_details, (std::vector<std::string>{"CHANGELOG_MODE", "ESTIMATED_COST"}));
  EXPECT_EQ(ex2.explained->kind, StatementKind::kInsert);
}

TEST(SqlParserTest, StatementSets) {
  auto stmts = parseScript(
      "EXECUTE STATEMENT SET BEGIN\n"
      "  INSERT INTO a SELECT * FROM t;\n"
      "  INSERT INTO b SELECT * FROM t;\n"
      "END;\n"
      "BEGIN STATEMENT SET;\n"
      "INSERT INTO c SELECT x FROM t;\n"
      "END;");
  ASSERT_EQ(stmts.size(), 2u);
  ASSERT_EQ(stmts[0].kind, StatementKind::kStatementSet);
  ASSERT_EQ(stmts[0].statement_set.size(), 2u);
  EXPECT_EQ(stmts[0].statement_set[1].target, QualifiedName{"b"});
  EXPECT_EQ(stmts[0].statement_set[1].pos, (SourcePos{3, 3}));
  ASSERT_EQ(stmts[1].kind, StatementKind::kStatementSet);
  EXPECT_EQ(stmts[1].pos, (SourcePos{5, 1}));
  ASSERT_EQ(stmts[1].statement_set.size(), 1u);
  EXPECT_EQ(stmts[1].statement_set[0].target, QualifiedName{"c"});
}

TEST(SqlParserTest, ScriptSplittingIgnoresSemicolonsInStringsAndComments) {
  auto stmts = parseScript(
      ";;\n"
      "-- a comment; with a semicolon\n"
      "SELECT 'a;b' AS `x;y` FROM t /* ; */ ;\n"
      "\n;  SELECT 2\n");
  ASSERT_EQ(stmts.size(), 2u);
  EXPECT_EQ(stmts[0].pos, (SourcePos{3, 1}));
  EXPECT_EQ(stmts[0].text, "SELECT 'a;b' AS `x;y` FROM t");
  const auto& item = stmts[0].query->selects[0].select_list[0];
  EXPECT_EQ(item.expr->text, "a;b");
  EXPECT_EQ(item.alias.value_or(""), "x;y");
  EXPECT_EQ(stmts[1].pos, (SourcePos{5, 4}));
  EXPECT_TRUE(parseScript("  -- nothing\n;").empty());
}

TEST(SqlParserTest, QueryShapes) {
  auto st = parseStatement(
      "SELECT DISTINCT t.*, u.b AS bb, c cc FROM t AS t JOIN u ON t.id = u.id LEFT JOIN (SELECT * FROM w) w2 "
      "ON true WHERE a > 1 GROUP BY a, b HAVING COUNT(*) > 2 UNION ALL SELECT * FROM x, y");
  ASSERT_EQ(st.kind, StatementKind::kQuery);
  ASSERT_EQ(st.query->selects.size(), 2u);
  const SelectStmt& s = st.query->selects[0];
  EXPECT_TRUE(s.distinct);
  ASSERT_EQ(s.select_list.size(), 3u);
  EXPECT_TRUE(s.select_list[0].is_star);
  EXPECT_EQ(s.select_list[0].star_qualifier, std::vector<std::string>{"t"});
  EXPECT_EQ(s.select_list[1].alias.value_or(""), "bb");
  EXPECT_EQ(s.select_list[2].alias.value_or(""), "cc");
  // ((t JOIN u) LEFT JOIN (subquery))
  ASSERT_EQ(s.from->kind, TableRefKind::kJoin);
  EXPECT_EQ(s.from->join_type, JoinType::kLeft);
  EXPECT_EQ(s.from->right->kind, TableRefKind::kSubquery);
  EXPECT_EQ(s.from->right->alias.value_or(""), "w2");
  EXPECT_EQ(s.from->left->kind, TableRefKind::kJoin);
  EXPECT_EQ(s.from->left->condition->toString(), "(t.id = u.id)");
  EXPECT_EQ(s.from->left->left->alias.value_or(""), "t");
  EXPECT_EQ(s.where->toString(), "(a > 1)");
  EXPECT_EQ(s.group_by.size(), 2u);
  EXPECT_EQ(s.having->toString(), "(COUNT(*) > 2)");
  const SelectStmt& s2 = st.query->selects[1];
  EXPECT_TRUE(s2.select_list[0].is_star);
  EXPECT_TRUE(s2.select_list[0].star_qualifier.empty());
  EXPECT_EQ(s2.from->kind, TableRefKind::kJoin);
  EXPECT_EQ(s2.from->join_type, JoinType::kCross);  // comma join

  auto hop = parseStatement(
      "SELECT * FROM TABLE(HOP(TABLE db.t, DESCRIPTOR(ts), INTERVAL '5' MINUTE, INTERVAL '1' HOUR)) AS w");
  const TableRef& ref = *hop.query->selects[0].from;
  EXPECT_EQ(ref.kind, TableRefKind::kTableFunction);
  EXPECT_EQ(ref.call->name, "HOP");
  EXPECT_EQ(ref.call->children.size(), 4u);
  EXPECT_EQ(ref.call->children[0]->names, (std::vector<std::string>{"db", "t"}));
  EXPECT_EQ(ref.alias.value_or(""), "w");

  auto nofrom = parseStatement("SELECT 1 + 1");
  EXPECT_FALSE(nofrom.query->selects[0].from);

  auto nested = parseStatement("(SELECT a FROM t) UNION ALL (SELECT a FROM u UNION ALL SELECT a FROM v)");
  EXPECT_EQ(nested.query->selects.size(), 3u);
}

TEST(SqlParserTest, ExecutePrefixAndStatementText) {
  auto st = parseStatement("EXECUTE INSERT INTO s SELECT a FROM t;");
  ASSERT_EQ(st.kind, StatementKind::kInsert);
  EXPECT_EQ(st.pos, (SourcePos{1, 1}));
  EXPECT_EQ(st.text, "EXECUTE INSERT INTO s SELECT a FROM t");
  EXPECT_EQ(st.end_pos, (SourcePos{1, 37}));  // "t" is the 37th character
  EXPECT_THROW(parseStatement("SELECT 1; SELECT 2"), SqlError);
}

TEST(SqlParserTest, KeywordsAreCaseInsensitiveAndQuotedNamesMayBeKeywords) {
  auto st = parseStatement("select `from`, `Select` from `table` where `from` is unknown");
  const SelectStmt& s = st.query->selects[0];
  EXPECT_EQ(s.select_list[0].expr->names, std::vector<std::string>{"from"});
  EXPECT_EQ(s.select_list[1].expr->names, std::vector<std::string>{"Select"});
  EXPECT_EQ(s.from->name, QualifiedName{"table"});
  EXPECT_EQ(s.where->kind, ExprKind::kIsNull);  // IS UNKNOWN is IS NULL for booleans
}

TEST(SqlParserTest, QueryCloneIsDeep) {
  auto st = parseStatement("SELECT a + 1 AS x FROM t WHERE b GROUP BY a");
  auto copy = st.query->clone();
  st.query->selects[0].where.reset();
  ASSERT_TRUE(copy->selects[0].where);
  EXPECT_EQ(copy->selects[0].select_list[0].expr->toString(), "(a + 1)");
  EXPECT_EQ(copy->selects[0].from->name, QualifiedName{"t"});
}

}  // namespace
}  // namespace sluice::table::sql
