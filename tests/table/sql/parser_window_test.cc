// OVER windows, WINDOW clauses and a query's ORDER BY / LIMIT / OFFSET / FETCH in the syntax tree.
#include <gtest/gtest.h>

#include "common/error.h"
#include "table/sql/parser.h"

namespace sluice::table::sql {
namespace {

const SelectStmt& onlySelect(const Statement& st) { return st.query->selects.at(0); }

TEST(SqlParserWindowTest, RankingFunctionWithPartitionAndOrder) {
  auto st = parseStatement("SELECT ROW_NUMBER() OVER (PARTITION BY a, b ORDER BY c DESC NULLS FIRST, d) AS rn FROM t");
  const Expr& e = *onlySelect(st).select_list[0].expr;
  ASSERT_EQ(e.kind, ExprKind::kOver);
  EXPECT_EQ(e.pos, (SourcePos{1, 8}));
  ASSERT_EQ(e.children.size(), 1u);
  EXPECT_EQ(e.children[0]->name, "ROW_NUMBER");
  ASSERT_TRUE(e.over);
  EXPECT_EQ(e.over->pos, (SourcePos{1, 21}));
  ASSERT_EQ(e.over->partition_by.size(), 2u);
  ASSERT_EQ(e.over->order_by.size(), 2u);
  EXPECT_TRUE(e.over->order_by[0].descending);
  EXPECT_TRUE(e.over->order_by[0].nullsFirst());
  EXPECT_FALSE(e.over->order_by[1].descending);
  EXPECT_TRUE(e.over->order_by[1].nullsFirst());  // ASC: NULLs first by default (NullCollation.LOW)
  EXPECT_FALSE(e.over->has_frame);
  EXPECT_EQ(e.toString(), "ROW_NUMBER() OVER (PARTITION BY a, b ORDER BY c DESC NULLS FIRST, d)");
  // Clones share the immutable window and compare equal.
  ExprPtr copy = e.clone();
  EXPECT_TRUE(copy->equals(e));
}

TEST(SqlParserWindowTest, Frames) {
  auto rows = parseStatement("SELECT SUM(v) OVER (ORDER BY ts ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) FROM t");
  const OverWindow& w = *onlySelect(rows).select_list[0].expr->over;
  EXPECT_TRUE(w.has_frame);
  EXPECT_TRUE(w.rows);
  EXPECT_EQ(w.lower.kind, FrameBoundKind::kPreceding);
  EXPECT_EQ(w.lower.offset->toString(), "2");
  EXPECT_EQ(w.upper.kind, FrameBoundKind::kCurrentRow);
  EXPECT_EQ(w.frame_pos, (SourcePos{1, 33}));

  auto range = parseStatement("SELECT COUNT(*) OVER (ORDER BY ts RANGE INTERVAL '1' HOUR PRECEDING) FROM t");
  const OverWindow& r = *onlySelect(range).select_list[0].expr->over;
  EXPECT_FALSE(r.rows);
  EXPECT_EQ(r.lower.offset->toString(), "INTERVAL '1' HOUR");
  EXPECT_EQ(r.upper.kind, FrameBoundKind::kCurrentRow);  // one bound: ... AND CURRENT ROW
  EXPECT_EQ(onlySelect(range).select_list[0].expr->toString(),
            "COUNT(*) OVER (ORDER BY ts RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW)");

  auto unbounded = parseStatement(
      "SELECT MAX(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) FROM t");
  const OverWindow& u = *onlySelect(unbounded).select_list[0].expr->over;
  EXPECT_EQ(u.lower.kind, FrameBoundKind::kUnboundedPreceding);
  EXPECT_EQ(u.upper.kind, FrameBoundKind::kUnboundedFollowing);
}

TEST(SqlParserWindowTest, NamedWindowsAreResolved) {
  auto st = parseStatement(
      "SELECT ROW_NUMBER() OVER w AS rn, SUM(v) OVER (w2 ROWS 1 PRECEDING) FROM t "
      "WINDOW w AS (PARTITION BY k ORDER BY ts), w2 AS (w)");
  const SelectStmt& s = onlySelect(st);
  ASSERT_EQ(s.windows.size(), 2u);
  const OverWindow& a = *s.select_list[0].expr->over;
  EXPECT_TRUE(a.ref.empty());
  EXPECT_EQ(a.toString(), "(PARTITION BY k ORDER BY ts)");
  const OverWindow& b = *s.select_list[1].expr->over;
  EXPECT_EQ(b.toString(), "(PARTITION BY k ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)");
}

TEST(SqlParserWindowTest, WindowErrorsNameTheirPosition) {
  auto col = [](const char* sql) {
    try {
      parseStatement(sql);
    } catch (const SqlError& e) {
      return e.column();
    }
    return -1;
  };
  // Unknown window name (the name at 26), a duplicate (the second name at 43).
  EXPECT_EQ(col("SELECT ROW_NUMBER() OVER w2 FROM t WINDOW w AS (ORDER BY a)"), 26);
  EXPECT_EQ(col("SELECT a FROM t WINDOW w AS (ORDER BY a), w AS (ORDER BY b)"), 43);
  // UNBOUNDED FOLLOWING as the lower bound (at 45).
  EXPECT_EQ(col("SELECT SUM(a) OVER (ORDER BY a ROWS BETWEEN UNBOUNDED FOLLOWING AND CURRENT ROW) FROM t"), 45);
  // A missing ')' after the window: FROM at 47 where ')' or more of the window is expected.
  EXPECT_EQ(col("SELECT SUM(a) OVER (PARTITION BY a ORDER BY a FROM t"), 47);
}

TEST(SqlParserWindowTest, OrderByLimitOffsetFetch) {
  auto st = parseStatement("SELECT a FROM t UNION ALL SELECT a FROM u ORDER BY a DESC LIMIT 5 OFFSET 2");
  const Query& q = *st.query;
  EXPECT_EQ(q.selects.size(), 2u);
  ASSERT_EQ(q.order_by.size(), 1u);
  EXPECT_TRUE(q.order_by[0].descending);
  EXPECT_EQ(q.order_pos, (SourcePos{1, 43}));
  ASSERT_TRUE(q.limit);
  EXPECT_EQ(q.limit->text, "5");
  ASSERT_TRUE(q.offset);
  EXPECT_EQ(q.offset->text, "2");

  auto fetch = parseStatement("SELECT a FROM t ORDER BY a OFFSET 1 ROWS FETCH NEXT 3 ROWS ONLY");
  EXPECT_EQ(fetch.query->limit->text, "3");
  EXPECT_EQ(fetch.query->offset->text, "1");

  auto paren = parseStatement("(SELECT a FROM t ORDER BY a LIMIT 1)");
  EXPECT_EQ(paren.query->order_by.size(), 1u);
  EXPECT_TRUE(paren.query->limit);
  auto cloned = paren.query->clone();
  EXPECT_EQ(cloned->order_by.size(), 1u);
  EXPECT_EQ(cloned->limit->text, "1");

  // A subquery keeps its own ORDER BY / LIMIT.
  auto sub = parseStatement("SELECT * FROM (SELECT a FROM t ORDER BY a LIMIT 2) x");
  EXPECT_TRUE(sub.query->order_by.empty());
  EXPECT_EQ(onlySelect(sub).from->subquery->limit->text, "2");
}

}  // namespace
}  // namespace sluice::table::sql
