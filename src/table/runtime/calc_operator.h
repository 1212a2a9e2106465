#pragma once
/// The Calc operator (Flink's StreamExecCalc): filter and projection of each batch through a shared
/// CalcProgram. Every method runs on the owning task's thread.

#include <memory>

#include "runtime/operators/stream_operator.h"
#include "table/functions/calc_program.h"

namespace sluice::table {

/// Applies a CalcProgram to every batch; rows keep their RowKind; empty results are not emitted.
/// Watermarks pass through unchanged. Evaluation errors (UserError) fail the task.
class CalcOperator : public runtime::StreamOperator {
 public:
  explicit CalcOperator(std::shared_ptr<const CalcProgram> program) : program_(std::move(program)) {}

  void processBatch(types::RowBatch&& batch) override;

 private:
  std::shared_ptr<const CalcProgram> program_;
  CalcScratch scratch_;
};

/// A factory for the Calc of a Transformation (chaining strategy ALWAYS). The program is shared by
/// all subtasks (it is immutable and thread-safe).
std::shared_ptr<const runtime::StreamOperatorFactory> makeCalcOperatorFactory(std::shared_ptr<const CalcProgram> program);

}  // namespace sluice::table
