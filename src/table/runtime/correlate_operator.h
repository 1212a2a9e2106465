#pragma once
/// Flink's Correlate of a user-defined table function (`FROM t, LATERAL TABLE(f(t.x)) AS r(a, b)`,
/// StreamExecCorrelate): each input row is followed, as one output row each, by the rows f gives for it;
/// a row for which f gives none is dropped (INNER) or padded with NULLs (LEFT JOIN ... ON TRUE). Every
/// output row keeps the kind of its input row, so a changelog passes through as one. Stateless; the
/// arguments are evaluated column-wise per batch. Threading: task thread only (the function object is
/// shared by all subtasks).

#include <memory>
#include <string>
#include <vector>

#include "runtime/operators/stream_operator.h"
#include "table/functions/evaluator.h"
#include "types/row_batch.h"

namespace sluice::table {

class TableFunction;

class CorrelateOperator : public runtime::StreamOperator {
 public:
  /// `output_type`: the input's columns then the function's. `args`: over the input row.
  CorrelateOperator(types::RowType input_type, types::RowType output_type, std::shared_ptr<const TableFunction> function,
                    std::string function_name, const std::vector<ExprPtr>& args, bool left_outer);
  /// Throws UserError (naming the call) for what the function throws.
  void processBatch(types::RowBatch&& batch) override;

 private:
  types::RowType input_type_;
  types::RowType output_type_;
  std::shared_ptr<const TableFunction> function_;
  std::string call_;  ///< f($0, ...) for errors
  std::vector<ExprEvaluator> args_;
  bool left_outer_;
  EvalScratch scratch_;
};

std::shared_ptr<const runtime::StreamOperatorFactory> makeCorrelateFactory(
    types::RowType input_type, types::RowType output_type, std::shared_ptr<const TableFunction> function,
    std::string function_name, std::vector<ExprPtr> args, bool left_outer);

}  // namespace sluice::table
