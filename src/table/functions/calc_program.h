#pragma once
/// CalcProgram: Flink's Calc (StreamExecCalc) as data plus its compiled evaluators: an optional
/// filter condition and a list of projections over the input row. Shared read-only by all subtasks.

#include <memory>
#include <string>
#include <vector>

#include "table/functions/evaluator.h"
#include "table/functions/expression.h"
#include "types/row_batch.h"

namespace sluice::table {

/// Memory a CalcProgram reuses from batch to batch (one per operator instance; not thread-safe).
struct CalcScratch {
  EvalScratch filter;
  std::vector<EvalScratch> projections;
  std::vector<uint32_t> selected;
};

/// Filter then project, a batch at a time. Thread-safe: apply() is const; per-thread memory lives in
/// the optional CalcScratch.
class CalcProgram {
 public:
  /// `condition` may be null (no filter); it must be BOOLEAN. `names` are the output field names
  /// (same length as `projections`). Throws UserError when the condition is not BOOLEAN.
  CalcProgram(types::RowType input_type, ExprPtr condition, std::vector<ExprPtr> projections,
              std::vector<std::string> names);
  /// Same without schema names: the input type is inferred from the input references (unreferenced
  /// columns are untyped) and the outputs are named "EXPR$0", "EXPR$1", ...
  CalcProgram(ExprPtr condition, std::vector<ExprPtr> projections);

  const types::RowType& inputType() const { return input_type_; }
  const types::RowType& outputType() const { return output_type_; }
  const ExprPtr& condition() const { return condition_; }
  const std::vector<ExprPtr>& projections() const { return projections_; }

  /// Keeps the rows where the condition is TRUE and computes the projections for them. Each output
  /// row keeps its input row's RowKind. Bare column references move the input column (no copy)
  /// when nothing was filtered. Evaluation errors propagate as UserError.
  types::RowBatch apply(types::RowBatch&& in, CalcScratch* scratch = nullptr) const;

  /// Explain text as Flink prints a Calc: "select=[a, +(b, 1) AS c], where=[>(b, 10)]".
  std::string toString() const;

 private:
  types::RowType input_type_;
  types::RowType output_type_;
  ExprPtr condition_;
  std::vector<ExprPtr> projections_;
  std::unique_ptr<ExprEvaluator> filter_;
  std::vector<ExprEvaluator> evaluators_;
  std::vector<bool> used_columns_;   ///< input columns read by a projection
  std::vector<bool> movable_;        ///< projection i is a bare reference used exactly once
};

}  // namespace sluice::table
