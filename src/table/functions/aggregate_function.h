#pragma once
/// User-defined aggregate functions (Flink's AggregateFunction<T, ACC>): a C++ object that folds the rows
/// of a group into an accumulator and reads a result from it, called from SQL like a built-in aggregate
/// (`SELECT k, wavg(v, w) FROM t GROUP BY k`, in a window TVF aggregation, `wavg(v, w) OVER (...)`, with
/// `FILTER (WHERE ...)` outside OVER and, for one argument, `DISTINCT` (which skips NULL arguments before
/// the function sees them, as the built-in DISTINCT aggregates do)). Registered like the scalar and table
/// functions of user_function.h (`TableEnvironment::createTemporarySystemFunction`,
/// `createTemporaryFunction`, `registerFunctionClass` + `CREATE FUNCTION ... AS 'class'`).
///
/// Flink's contract (AggregateFunction's javadoc):
/// - createAccumulator() starts the accumulator of a group; accumulate(acc, args...) adds one row;
///   getValue(acc) gives the result, at every change of a GROUP BY result and when a window fires.
/// - retract(acc, args...) takes a row back out: needed over an updating input (a GROUP BY over a
///   changelog), and for bounded OVER frames. The planner refuses such a query at the call's SQL position
///   ("Function f does not implement retract ...") when the function has none.
/// - merge(acc, other) adds another accumulator of the same call: needed by SESSION windows (sessions
///   merge) and, as Flink asks, by HOP and CUMULATE; refused at plan time the same way when absent.
/// - getValue returning NULL for a NOT NULL result type (see inferType) fails the job naming the call.
///
/// State: the accumulator of each group lives in the operator's keyed state (runtime/state), so it is
/// part of every checkpoint and savepoint and restored on either state backend (hashmap: the object
/// itself, serialized only by snapshots; rocksdb: serialized on every write and deserialized on every
/// read of its key). The function therefore serializes it: serialize() / deserialize() below; the typed
/// makeAggregateFunction does it with runtime::TypeSerializer<Acc>. A restore of another function's
/// bytes is refused by deserialize() with an InputError, which fails the restore naming the state.
///
/// Threading: one function object is shared by every subtask of every query that uses it, so all methods
/// are const and may run concurrently on different accumulators (keep per-call state in the accumulator or
/// on the stack). An accumulator is used by one thread at a time: the task thread of its subtask, or a
/// snapshot thread serializing a frozen copy.
///
/// Errors: any exception thrown by accumulate, retract, merge or getValue fails the job with the function's
/// name and the call's SQL text ("user-defined aggregate function wavg(v, w) failed: ..."), as a scalar
/// function's does; the job may then restart from its last checkpoint.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/error.h"
#include "runtime/serialization/type_serializer.h"
#include "table/functions/user_function.h"

namespace sluice::table {

/// The accumulator of one group of one aggregate call (Flink's ACC), made by its AggregateFunction and
/// opaque to the engine.
class AggregateAccumulator {
 public:
  virtual ~AggregateAccumulator() = default;
};

/// A user-defined aggregate function (Flink's AggregateFunction with its type inference). See the file
/// comment for the contract, state and threading.
class AggregateFunction : public UserDefinedFunction {
 public:
  /// Type inference for a call, as ScalarFunction::inferType: `args` holds the argument types (set an
  /// entry to another type to have the argument cast to it first); returns the result type. Throw
  /// UserError to refuse the call: the planner reports it at the call's SQL position.
  virtual types::LogicalType inferType(std::vector<types::LogicalType>& args) const = 0;
  /// A fresh accumulator (a group's first row, a new window); never null.
  virtual std::unique_ptr<AggregateAccumulator> createAccumulator() const = 0;
  /// Adds one row, its arguments in `args` (a NULL argument is passed as NULL).
  virtual void accumulate(AggregateAccumulator& acc, const FunctionArgs& args) const = 0;
  /// True when retract() is implemented.
  virtual bool hasRetract() const { return false; }
  /// Takes one row, accumulated before, back out of `acc`. The default throws UserError.
  virtual void retract(AggregateAccumulator& acc, const FunctionArgs& args) const;
  /// True when merge() is implemented.
  virtual bool hasMerge() const { return false; }
  /// Adds `other` (an accumulator of this function) into `acc`; `acc` holds the earlier rows. The default
  /// throws UserError.
  virtual void merge(AggregateAccumulator& acc, const AggregateAccumulator& other) const;
  /// Writes the result into `out` (representation as FunctionResult); false means NULL.
  virtual bool getValue(const AggregateAccumulator& acc, FunctionResult& out) const = 0;
  /// Appends the snapshot form of `acc` to `out` (the bytes deserialize() reads back).
  virtual void serialize(const AggregateAccumulator& acc, std::string& out) const = 0;
  /// The accumulator serialize() wrote as exactly `bytes`. Bytes come from checkpoint files: throw
  /// InputError on anything malformed, never read past them.
  virtual std::unique_ptr<AggregateAccumulator> deserialize(std::string_view bytes) const = 0;
  /// A deep copy (the heap backend copies an accumulator before changing it while a snapshot holds it).
  /// The default goes through serialize() and deserialize().
  virtual std::unique_ptr<AggregateAccumulator> copy(const AggregateAccumulator& acc) const;
  /// The signature shown in errors, e.g. "(DOUBLE, BIGINT)"; empty: not shown.
  virtual std::string signature() const { return {}; }
};

namespace udf_internal {

/// The accumulator of a makeAggregateFunction function: the user's Acc value.
template <typename Acc>
struct TypedAccumulator final : AggregateAccumulator {
  TypedAccumulator() = default;
  explicit TypedAccumulator(Acc v) : value(std::move(v)) {}
  Acc value{};
};

/// Throws UserError: an accumulator of another function (or query) reached this one.
[[noreturn]] void refuseAccumulator();
/// Throws InputError: `extra` bytes were left after an accumulator's snapshot form.
[[noreturn]] void refuseTrailingBytes(size_t extra);

template <typename Acc>
Acc& valueOf(AggregateAccumulator& acc) {
  auto* typed = dynamic_cast<TypedAccumulator<Acc>*>(&acc);
  if (typed == nullptr) refuseAccumulator();
  return typed->value;
}
template <typename Acc>
const Acc& valueOf(const AggregateAccumulator& acc) {
  const auto* typed = dynamic_cast<const TypedAccumulator<Acc>*>(&acc);
  if (typed == nullptr) refuseAccumulator();
  return typed->value;
}

template <typename Acc, typename FAcc, typename FGet, typename FRet, typename FMerge, typename R, typename... A>
class LambdaAggregateFunction final : public AggregateFunction {
  static constexpr bool kRetract = !std::is_same_v<FRet, std::nullptr_t>;
  static constexpr bool kMerge = !std::is_same_v<FMerge, std::nullptr_t>;
  static_assert(!kRetract || std::is_invocable_v<const FRet&, Acc&, A...>,
                "retract must take the parameters of accumulate: (Acc&, same arguments)");
  static_assert(!kMerge || std::is_invocable_v<const FMerge&, Acc&, const Acc&>,
                "merge must take (Acc&, const Acc&)");
  static_assert(runtime::hasTypeSerializer<Acc>(),
                "the accumulator needs a TypeSerializer: arithmetic, std::string, pair, tuple, optional, vector, "
                "a SLUICE_TYPE struct, or a user specialization of runtime::TypeSerializer<Acc>");

 public:
  LambdaAggregateFunction(Acc initial, FAcc accumulate, FGet get_value, FRet retract, FMerge merge)
      : initial_(std::move(initial)),
        accumulate_(std::move(accumulate)),
        get_value_(std::move(get_value)),
        retract_(std::move(retract)),
        merge_(std::move(merge)) {}

  types::LogicalType inferType(std::vector<types::LogicalType>& args) const override {
    const std::vector<types::LogicalType> params = {sqlTypeOf<typename Param<std::decay_t<A>>::Value>(true)...};
    if (args.size() != params.size()) refuseArguments(params, args);
    for (size_t k = 0; k < args.size(); ++k) {
      if (!acceptsArgument(params[k], args[k])) refuseArguments(params, args);
      args[k] = params[k].withNullable(args[k].nullable || args[k].id == types::TypeId::kNull);
    }
    // An optional result is nullable; a plain one is NOT NULL (NULL arguments skip rows, they never make
    // the result NULL).
    return sqlTypeOf<typename Param<R>::Value>(Param<R>::kOptional);
  }
  std::unique_ptr<AggregateAccumulator> createAccumulator() const override {
    return std::make_unique<TypedAccumulator<Acc>>(initial_);
  }
  void accumulate(AggregateAccumulator& acc, const FunctionArgs& a) const override {
    call(accumulate_, valueOf<Acc>(acc), a, std::index_sequence_for<A...>{});
  }
  bool hasRetract() const override { return kRetract; }
  void retract(AggregateAccumulator& acc, const FunctionArgs& a) const override {
    if constexpr (kRetract) call(retract_, valueOf<Acc>(acc), a, std::index_sequence_for<A...>{});
    else AggregateFunction::retract(acc, a);
  }
  bool hasMerge() const override { return kMerge; }
  void merge(AggregateAccumulator& acc, const AggregateAccumulator& other) const override {
    if constexpr (kMerge) merge_(valueOf<Acc>(acc), valueOf<Acc>(other));
    else AggregateFunction::merge(acc, other);
  }
  bool getValue(const AggregateAccumulator& acc, FunctionResult& out) const override {
    R r = get_value_(valueOf<Acc>(acc));
    if constexpr (Param<R>::kOptional) {
      if (!r) return false;
      write(out, *r);
    } else {
      write(out, r);
    }
    return true;
  }
  void serialize(const AggregateAccumulator& acc, std::string& out) const override {
    runtime::DataOutputView w(out);
    runtime::TypeSerializer<Acc>::serialize(valueOf<Acc>(acc), w);
  }
  std::unique_ptr<AggregateAccumulator> deserialize(std::string_view bytes) const override {
    runtime::DataInputView r(bytes);
    auto acc = std::make_unique<TypedAccumulator<Acc>>(runtime::TypeSerializer<Acc>::deserialize(r));
    if (!r.atEnd()) refuseTrailingBytes(bytes.size() - r.position());
    return acc;
  }
  std::unique_ptr<AggregateAccumulator> copy(const AggregateAccumulator& acc) const override {
    if constexpr (std::is_copy_constructible_v<Acc>) return std::make_unique<TypedAccumulator<Acc>>(valueOf<Acc>(acc));
    else return AggregateFunction::copy(acc);
  }
  std::string signature() const override {
    return signatureOf({sqlTypeOf<typename Param<std::decay_t<A>>::Value>(true)...});
  }

 private:
  template <typename F, size_t... I>
  static void call(const F& f, Acc& acc, const FunctionArgs& a, std::index_sequence<I...>) {
    // A NULL for a plain (non-optional) parameter skips the row, as the built-in aggregates skip NULLs.
    if ((... || (!Param<std::decay_t<A>>::kOptional && a.isNull(I)))) return;
    f(acc, argOf<std::decay_t<A>>(a, I)...);
  }

  Acc initial_;
  FAcc accumulate_;
  FGet get_value_;
  FRet retract_;
  FMerge merge_;
};

template <typename Acc, typename FAcc, typename FGet, typename FRet, typename FMerge, typename R, typename... A>
std::shared_ptr<const AggregateFunction> makeAggregateLambda(Acc initial, FAcc accumulate, FGet get_value, FRet retract,
                                                             FMerge merge, void (FAcc::*)(Acc&, A...) const,
                                                             R (FGet::*)(const Acc&) const) {
  return std::make_shared<LambdaAggregateFunction<Acc, FAcc, FGet, FRet, FMerge, R, A...>>(
      std::move(initial), std::move(accumulate), std::move(get_value), std::move(retract), std::move(merge));
}

}  // namespace udf_internal

/// An aggregate function from C++ callables (non-generic lambdas, or functors with one const
/// operator(): the signature is read from it) over an accumulator of type `Acc`, its SQL signature taken
/// from the C++ one as Flink extracts it from the accumulate and getValue methods:
/// - `accumulate`: `void(Acc&, A...)`, the A of the types makeScalarFunction takes (bool, int32_t,
///   int64_t, float, double, std::string / std::string_view, std::optional of them). A NULL argument for a
///   plain parameter skips the row (not called); std::optional parameters see NULLs.
/// - `get_value`: `R(const Acc&)`, R one of those types; std::optional<R> makes the result nullable
///   (nullopt is NULL), a plain R makes it NOT NULL.
/// - `retract` (optional; nullptr for none): `void(Acc&, A...)` with accumulate's parameters.
/// - `merge` (optional; nullptr for none): `void(Acc&, const Acc&)`.
/// - `initial`: the accumulator createAccumulator() returns (default `Acc{}`).
/// Acc is kept in keyed state and serialized with runtime::TypeSerializer<Acc>: arithmetic types,
/// std::string, std::pair, std::tuple, std::optional, std::vector of those, structs declared with
/// SLUICE_TYPE, or a user specialization of runtime::TypeSerializer (compile error otherwise); it should
/// be copyable (the heap backend copies it for copy-on-write snapshots). The callables are called
/// concurrently from several subtasks (on different accumulators): see the file comment. E.g. a weighted
/// average:
///
///     struct WeightedAvg { double sum = 0; int64_t weight = 0; };
///     SLUICE_TYPE(WeightedAvg, sum, weight)
///     auto wavg = makeAggregateFunction<WeightedAvg>(
///         [](WeightedAvg& a, double v, int64_t w) { a.sum += v * w; a.weight += w; },
///         [](const WeightedAvg& a) -> std::optional<double> {
///           if (a.weight == 0) return std::nullopt;
///           return a.sum / a.weight;
///         },
///         [](WeightedAvg& a, double v, int64_t w) { a.sum -= v * w; a.weight -= w; },
///         [](WeightedAvg& a, const WeightedAvg& b) { a.sum += b.sum; a.weight += b.weight; });
template <typename Acc, typename FAcc, typename FGet, typename FRet = std::nullptr_t, typename FMerge = std::nullptr_t>
std::shared_ptr<const AggregateFunction> makeAggregateFunction(FAcc accumulate, FGet get_value, FRet retract = nullptr,
                                                               FMerge merge = nullptr, Acc initial = Acc{}) {
  return udf_internal::makeAggregateLambda(std::move(initial), std::move(accumulate), std::move(get_value),
                                           std::move(retract), std::move(merge), &FAcc::operator(),
                                           &FGet::operator());
}

}  // namespace sluice::table
