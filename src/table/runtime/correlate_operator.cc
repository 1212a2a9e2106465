#include "table/runtime/correlate_operator.h"

#include <fmt/format.h>

#include <exception>

#include "common/error.h"
#include "table/functions/user_function.h"

namespace sluice::table {

CorrelateOperator::CorrelateOperator(types::RowType input_type, types::RowType output_type,
                                     std::shared_ptr<const TableFunction> function, std::string function_name,
                                     const std::vector<ExprPtr>& args, bool left_outer)
    : input_type_(std::move(input_type)),
      output_type_(std::move(output_type)),
      function_(std::move(function)),
      left_outer_(left_outer) {
  std::vector<std::string> texts;
  for (const auto& a : args) {
    args_.emplace_back(a);
    texts.push_back(a->toString());
  }
  call_ = fmt::format("{}({})", function_name, fmt::join(texts, ", "));
}

void CorrelateOperator::processBatch(types::RowBatch&& batch) {
  if (batch.empty()) return;
  const size_t n_in = input_type_.size();
  const size_t n_fn = output_type_.size() - n_in;
  std::vector<types::Column> values;
  values.reserve(args_.size());
  for (const auto& e : args_) values.push_back(e.evaluate(batch, &scratch_));
  std::vector<const types::Column*> cols;
  for (const auto& v : values) cols.push_back(&v);
  const std::vector<uint8_t> consts(cols.size(), 0);  // evaluate() gives one value per row

  types::RowBatch out(output_type_);
  std::vector<types::Column> produced;
  for (size_t c = 0; c < n_fn; ++c) produced.emplace_back(output_type_.types[n_in + c]);
  for (size_t row = 0; row < batch.numRows(); ++row) {
    for (auto& p : produced) p.clear();
    TableFunctionOutput sink(produced);
    try {
      function_->eval(FunctionArgs(cols, consts, row), sink);
    } catch (const std::exception& e) {
      throw UserError(fmt::format("user-defined table function {} failed: {}", call_, e.what()));
    }
    const size_t rows = sink.rows();
    if (rows == 0 && !left_outer_) continue;
    for (size_t r = 0; r < std::max<size_t>(rows, 1); ++r) {
      for (size_t c = 0; c < n_in; ++c) out.column(c).appendFrom(batch.column(c), row);
      for (size_t c = 0; c < n_fn; ++c) {
        if (rows == 0) {
          out.column(n_in + c).appendNull();
        } else {
          out.column(n_in + c).appendFrom(produced[c], r);
        }
      }
      out.kinds().push_back(batch.kind(row));
    }
  }
  if (!out.empty()) output_->collect(std::move(out));
}

std::shared_ptr<const runtime::StreamOperatorFactory> makeCorrelateFactory(
    types::RowType input_type, types::RowType output_type, std::shared_ptr<const TableFunction> function,
    std::string function_name, std::vector<ExprPtr> args, bool left_outer) {
  return runtime::makeOperatorFactory(
      [input_type = std::move(input_type), output_type = std::move(output_type), function = std::move(function),
       function_name = std::move(function_name), args = std::move(args), left_outer]() -> std::unique_ptr<runtime::StreamOperator> {
        return std::make_unique<CorrelateOperator>(input_type, output_type, function, function_name, args, left_outer);
      });
}

}  // namespace sluice::table
