#include "table/functions/aggregate_function.h"

#include <fmt/format.h>

namespace sluice::table {

void AggregateFunction::retract(AggregateAccumulator&, const FunctionArgs&) const {
  throw UserError("the function does not implement retract");
}

void AggregateFunction::merge(AggregateAccumulator&, const AggregateAccumulator&) const {
  throw UserError("the function does not implement merge");
}

std::unique_ptr<AggregateAccumulator> AggregateFunction::copy(const AggregateAccumulator& acc) const {
  std::string bytes;
  serialize(acc, bytes);
  return deserialize(bytes);
}

namespace udf_internal {

void refuseAccumulator() { throw UserError("an accumulator of another aggregate function was passed"); }

void refuseTrailingBytes(size_t extra) {
  throw InputError(fmt::format("{} bytes left after the accumulator", extra));
}

}  // namespace udf_internal

}  // namespace sluice::table
