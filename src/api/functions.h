#pragma once
/// The user-facing function, state, time and window types of the DataStream API. The interfaces live in
/// runtime (the operators call them) and are re-exported here under sluice::api with Flink's names.

#include <chrono>
#include <cstdint>
#include <string>

#include "runtime/operators/functions.h"
#include "runtime/operators/keyed_operators.h"
#include "runtime/operators/object_operators.h"
#include "runtime/operators/source_sink_operators.h"
#include "runtime/operators/window_operator.h"
#include "runtime/serialization/record_format.h"
#include "runtime/serialization/type_serializer.h"

namespace sluice::api {

using runtime::AggregateFunction;
using runtime::AggregatingState;
using runtime::AggregatingStateDescriptor;
using runtime::CoProcessFunction;
using runtime::CollectedValues;
using runtime::Collector;
using runtime::FilterFunction;
using runtime::FlatMapFunction;
using runtime::InputStatus;
using runtime::KeyedCoProcessFunction;
using runtime::KeyedProcessFunction;
using runtime::ListState;
using runtime::ListStateDescriptor;
using runtime::LongCounter;
using runtime::MapFunction;
using runtime::MapState;
using runtime::MapStateDescriptor;
using runtime::OutputTag;
using runtime::PrintSink;
using runtime::ProcessFunction;
using runtime::ProcessWindowFunction;
using runtime::ReaderOutput;
using runtime::ReduceFunction;
using runtime::ReducingState;
using runtime::ReducingStateDescriptor;
using runtime::RichFunction;
using runtime::RuntimeContext;
using runtime::Sink;
using runtime::SinkWriter;
using runtime::SinkWriterContext;
using runtime::Source;
using runtime::SourceReader;
using runtime::SourceReaderContext;
using runtime::SplitEnumerator;
using runtime::TimeDomain;
using runtime::TimerService;
using runtime::TimeWindow;
using runtime::TypeSerializer;
using runtime::ValueState;
using runtime::ValueStateDescriptor;
using runtime::WatermarkStrategy;
using runtime::WindowAssigner;

/// Flink's CoMapFunction: one map per input of connected streams.
template <typename I1, typename I2, typename O>
class CoMapFunction : public RichFunction {
 public:
  using Input1Type = I1;
  using Input2Type = I2;
  using OutputType = O;
  virtual O map1(const I1& value) = 0;
  virtual O map2(const I2& value) = 0;
};

/// A duration in ms from a std::chrono duration or a plain ms count.
template <typename D>
int64_t toMillis(D d) {
  if constexpr (std::is_integral_v<D>) return static_cast<int64_t>(d);
  else return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

/// Tumbling event-time windows of `size` (Flink's TumblingEventTimeWindows.of(size[, offset])).
struct TumblingEventTimeWindows {
  template <typename D, typename O = int64_t>
  static WindowAssigner of(D size, O offset = 0) {
    return make(toMillis(size), toMillis(size), toMillis(offset), true);
  }
  static WindowAssigner make(int64_t size, int64_t slide, int64_t offset, bool event_time) {
    if (size <= 0 || slide <= 0) {
      throw UserError(fmt::format("Window size and slide must be positive, got size {} ms and slide {} ms", size, slide));
    }
    if (std::abs(offset) >= slide) {
      throw UserError(fmt::format("Window offset {} ms must be smaller than the slide {} ms", offset, slide));
    }
    return WindowAssigner{size, slide, offset, event_time};
  }
};
/// Sliding event-time windows (Flink's SlidingEventTimeWindows.of(size, slide[, offset])).
struct SlidingEventTimeWindows {
  template <typename D, typename S, typename O = int64_t>
  static WindowAssigner of(D size, S slide, O offset = 0) {
    return TumblingEventTimeWindows::make(toMillis(size), toMillis(slide), toMillis(offset), true);
  }
};
/// Tumbling processing-time windows (Flink's TumblingProcessingTimeWindows.of).
struct TumblingProcessingTimeWindows {
  template <typename D, typename O = int64_t>
  static WindowAssigner of(D size, O offset = 0) {
    return TumblingEventTimeWindows::make(toMillis(size), toMillis(size), toMillis(offset), false);
  }
};
/// Sliding processing-time windows (Flink's SlidingProcessingTimeWindows.of).
struct SlidingProcessingTimeWindows {
  template <typename D, typename S, typename O = int64_t>
  static WindowAssigner of(D size, S slide, O offset = 0) {
    return TumblingEventTimeWindows::make(toMillis(size), toMillis(slide), toMillis(offset), false);
  }
};

/// Flink-like description of an assigner: "TumblingEventTimeWindows(3600000)".
std::string describeWindowAssigner(const WindowAssigner& a);

}  // namespace sluice::api
