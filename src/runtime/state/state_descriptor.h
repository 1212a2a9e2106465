#pragma once
/// Descriptors of keyed and operator state (Flink's StateDescriptor family): a state's name, the
/// TypeSerializer of its values (as a type: Sluice serializers are static), and its functions (reduce,
/// aggregate). The serializer is used only for snapshots and restores, never on the hot path.
/// Plain values; any thread.

#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "runtime/serialization/type_serializer.h"

namespace sluice::runtime::state {

/// What a keyed state is, as written in snapshots (Flink's StateDescriptor.Type; timers are the priority
/// queue states `_timer_state/event_<name>` and `_timer_state/processing_<name>`). Stable numbers.
enum class StateKind : uint8_t {
  kValue = 0,
  kList = 1,
  kMap = 2,
  kReducing = 3,
  kAggregating = 4,
  kEventTimers = 5,
  kProcessingTimers = 6,
};

/// "VALUE", "LIST", ... for messages.
const char* stateKindName(StateKind kind);

/// Names a ValueState<V> (Flink's ValueStateDescriptor).
template <typename V, typename Ser = TypeSerializer<V>>
struct ValueStateDescriptor {
  std::string name;
};

/// Names a keyed ListState<V>, or an operator list state (Flink's ListStateDescriptor).
template <typename V, typename Ser = TypeSerializer<V>>
struct ListStateDescriptor {
  std::string name;
};

/// Names a MapState<UK, UV> (Flink's MapStateDescriptor).
template <typename UK, typename UV, typename KeySer = TypeSerializer<UK>, typename ValueSer = TypeSerializer<UV>>
struct MapStateDescriptor {
  std::string name;
};

/// Names a ReducingState<V>; `reduce(accumulated, new_value)` folds a value in (Flink's
/// ReducingStateDescriptor with its ReduceFunction).
template <typename V, typename Ser = TypeSerializer<V>>
struct ReducingStateDescriptor {
  std::string name;
  std::function<V(const V&, const V&)> reduce;
};

/// Names an AggregatingState<IN, ACC, OUT> (Flink's AggregatingStateDescriptor with its
/// AggregateFunction): `create_accumulator()` starts an accumulator, `add(acc, in)` folds a value into it in
/// place, `get_result(acc)` reads it. Only the accumulator is stored (serialized with AccSer).
template <typename IN, typename ACC, typename OUT, typename AccSer = TypeSerializer<ACC>>
struct AggregatingStateDescriptor {
  std::string name;
  std::function<ACC()> create_accumulator;
  std::function<void(ACC&, const IN&)> add;
  std::function<OUT(const ACC&)> get_result;
};

/// An AggregatingStateDescriptor from a Flink-shaped aggregate function object (createAccumulator(),
/// ACC add(const IN&, ACC), getResult(const ACC&)), e.g. runtime::AggregateFunction<IN, ACC, OUT>.
template <typename IN, typename ACC, typename OUT, typename AccSer = TypeSerializer<ACC>, typename F>
AggregatingStateDescriptor<IN, ACC, OUT, AccSer> makeAggregatingStateDescriptor(std::string name,
                                                                              std::shared_ptr<F> fn) {
  AggregatingStateDescriptor<IN, ACC, OUT, AccSer> d;
  d.name = std::move(name);
  d.create_accumulator = [fn] { return fn->createAccumulator(); };
  d.add = [fn](ACC& acc, const IN& in) { acc = fn->add(in, std::move(acc)); };
  d.get_result = [fn](const ACC& acc) { return fn->getResult(acc); };
  return d;
}

}  // namespace sluice::runtime::state
