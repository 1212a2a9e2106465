#pragma once
// The keyed two-input function of the two-input backlog tests (two_input_backlog_sorting_test.cc,
// two_input_backlog_recovery_test.cc): a running sum per key over both inputs of connect().keyBy().

#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include "api/datastream.h"

namespace sluice::api::test_functions {

using A = std::pair<int64_t, int64_t>;      // (key, value)
using B = std::pair<std::string, int64_t>;  // (key as text, value)
// (subtask, input 1|2, key, value, running sum of the key over both inputs, 1 when the watermark had not
// advanced yet: the record came through the sorted backlog)
using Out = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;

// Keeps a key's running sum over both inputs in keyed state and emits it with each record.
class RunningSum final : public KeyedCoProcessFunction<int64_t, A, B, Out> {
 public:
  void open() override { sum_ = &getRuntimeContext().getState(ValueStateDescriptor<int64_t>("sum")); }
  void processElement1(const A& a, Context& ctx, Collector<Out>& out) override { emit(1, a.second, ctx, out); }
  void processElement2(const B& b, Context& ctx, Collector<Out>& out) override { emit(2, b.second, ctx, out); }

 private:
  void emit(int64_t input, int64_t v, Context& ctx, Collector<Out>& out) {
    const int64_t sum = sum_->value().value_or(0) + v;
    sum_->update(sum);
    const bool held = ctx.timerService().currentWatermark() == std::numeric_limits<int64_t>::min();
    out.collect(Out{getRuntimeContext().getIndexOfThisSubtask(), input, ctx.getCurrentKey(), v, sum, held ? 1 : 0});
  }
  ValueState<int64_t>* sum_ = nullptr;
};

}  // namespace sluice::api::test_functions
