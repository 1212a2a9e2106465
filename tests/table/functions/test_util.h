#pragma once
// Helpers to build small batches and read results as text for the expression tests.

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "table/functions/evaluator.h"
#include "table/functions/expression.h"
#include "types/row_batch.h"
#include "types/value_format.h"

namespace sluice::table::testing {

using types::Column;
using types::LogicalType;
using types::RowBatch;

inline Column longColumn(const LogicalType& t, const std::vector<std::optional<int64_t>>& values) {
  Column c(t);
  for (const auto& v : values) {
    if (v) c.appendLong(*v);
    else c.appendNull();
  }
  return c;
}

inline Column doubleColumn(const std::vector<std::optional<double>>& values) {
  Column c(LogicalType::doubleType());
  for (const auto& v : values) {
    if (v) c.appendDouble(*v);
    else c.appendNull();
  }
  return c;
}

inline Column stringColumn(const std::vector<std::optional<std::string>>& values, const LogicalType& t = LogicalType::string()) {
  Column c(t);
  for (const auto& v : values) {
    if (v) c.appendString(*v);
    else c.appendNull();
  }
  return c;
}

/// A batch of the given columns, every row +I.
inline RowBatch batchOf(std::vector<Column> columns) {
  RowBatch b;
  const size_t rows = columns.empty() ? 1 : columns[0].size();
  for (auto& c : columns) b.columns().push_back(std::move(c));
  b.kinds().assign(rows, types::RowKind::kInsert);
  return b;
}

/// Each row of a column in Flink's print format ("null", "3", "1.5", "2024-03-05T10:20").
inline std::vector<std::string> render(const Column& c) {
  std::vector<std::string> out;
  for (size_t i = 0; i < c.size(); ++i) {
    std::string s;
    types::formatField(c, i, s);
    out.push_back(s);
  }
  return out;
}

/// Evaluates `e` over `batch` and renders the result.
inline std::vector<std::string> eval(const ExprPtr& e, const RowBatch& batch) {
  ExprEvaluator ev(e);
  Column c = ev.evaluate(batch);
  EXPECT_EQ(c.size(), batch.numRows());
  return render(c);
}

inline ExprPtr ref(int i, const LogicalType& t) { return makeInputRef(i, t); }
inline ExprPtr lit(int64_t v) { return makeLiteral(v, LogicalType::integer(false)); }
inline ExprPtr str(const std::string& s) { return makeStringLiteral(s); }
inline ExprPtr call(ScalarOp op, std::vector<ExprPtr> args) { return makeCall(op, std::move(args)); }

/// Milliseconds of a wall-clock time, e.g. ts("2024-03-05 10:20:30").
inline int64_t ts(const std::string& text) {
  int64_t ms = 0;
  EXPECT_TRUE(types::parseTimestamp(text, ms)) << text;
  return ms;
}

}  // namespace sluice::table::testing
