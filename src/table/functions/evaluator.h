#pragma once
/// Vectorized evaluation of a typed scalar expression over RowBatches (ARCHITECTURE.md "Data": no
/// virtual call per row per expression node). The expression is compiled once into a tree of batch
/// kernels; evaluation dispatches on types once per node per batch and runs tight loops over the
/// column vectors.

#include <cstdint>
#include <memory>
#include <vector>

#include "table/functions/expression.h"
#include "types/row_batch.h"

namespace sluice::table {

namespace internal {
class Node;
}

/// Registers an evaluation reuses from batch to batch, so that steady-state evaluation does not
/// allocate (except the result column). Not thread-safe: one per thread (e.g. per operator
/// instance), and one per ExprEvaluator when several evaluators alternate.
class EvalScratch {
 public:
  EvalScratch();
  ~EvalScratch();
  EvalScratch(EvalScratch&&) noexcept;
  EvalScratch& operator=(EvalScratch&&) noexcept;

 private:
  friend class ExprEvaluator;
  std::vector<types::Column> regs_;
};

/// A compiled expression. Immutable after construction: evaluate() and evaluateFilter() are const
/// and may be called from several threads at once (scratch is per call).
///
/// Semantics follow Flink: NULL propagates through strict operators, AND/OR are three-valued and
/// lazy (the right side of `b <> 0 AND a / b > 1` is not evaluated where the left is FALSE), CASE
/// and COALESCE evaluate a branch only for the rows that take it.
/// Errors (sluice::UserError, thrown from evaluate): "Division by zero", DECIMAL results that do not
/// fit in 64 bits ("DECIMAL overflow in '*'"), CAST of text that does not convert (names the value).
class ExprEvaluator {
 public:
  /// Compiles `expr` (constant sub-expressions are folded here). Throws InternalError on a tree that
  /// makeCall would not have built.
  explicit ExprEvaluator(ExprPtr expr);
  ~ExprEvaluator();
  ExprEvaluator(ExprEvaluator&&) noexcept;
  ExprEvaluator& operator=(ExprEvaluator&&) noexcept;

  const ExprPtr& expr() const { return expr_; }
  const types::LogicalType& type() const { return expr_->type; }

  /// The expression's value for every row of `batch`: a column of batch.numRows() rows of type().
  /// A bare input reference returns a copy of that column (CalcProgram moves it instead).
  /// `scratch` (optional) keeps intermediate columns' memory for the next call.
  types::Column evaluate(const types::RowBatch& batch, EvalScratch* scratch = nullptr) const;

  /// Rows where the BOOLEAN expression is TRUE (NULL and FALSE drop the row), as ascending indexes
  /// appended to `selected` after clearing it.
  void evaluateFilter(const types::RowBatch& batch, std::vector<uint32_t>& selected, EvalScratch* scratch = nullptr) const;

  /// Column index when the expression is a bare input reference, else -1.
  int inputIndex() const;

 private:
  ExprPtr expr_;
  std::unique_ptr<internal::Node> root_;
  int num_regs_ = 0;
};

/// Copies the rows of `column` listed in `rows` (ascending or not) into a new column.
types::Column gatherColumn(const types::Column& column, const std::vector<uint32_t>& rows);

}  // namespace sluice::table
