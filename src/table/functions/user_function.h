#pragma once
/// User-defined scalar functions (Flink's ScalarFunction): a C++ object that computes one value per row,
/// called from SQL by the name it was registered under, either through the Table API
/// (`TableEnvironment::createTemporarySystemFunction`, `createTemporaryFunction`) or from a script with
/// `CREATE [TEMPORARY [SYSTEM]] FUNCTION name AS 'class'`, where 'class' names a factory registered with
/// registerFunctionClass (Flink loads a Java class by that name; Sluice has no class loader, so classes
/// are registered by the program or by a module, e.g. Nexmark's `com.github.nexmark.flink.udf.CountChar`).
///
/// Resolution of a name in SQL, as Flink's FunctionCatalog: temporary system functions, then built-in
/// functions, then temporary and catalog functions; names are case-insensitive.
///
/// Threading: a function object is shared by every subtask of every query that uses it, so eval() is
/// const and must be safe to call from several threads at once (keep per-call state on the stack).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "types/logical_type.h"
#include "types/row_batch.h"

namespace sluice::table {

/// The arguments of one call, for one row (views, valid during eval only). Values in the column
/// representation of their type (logical_type.h): BOOLEAN 0/1, TINYINT ... BIGINT, DATE (days), TIME and
/// TIMESTAMP (ms) and DECIMAL (unscaled) as getLong; FLOAT and DOUBLE as getDouble; CHAR, VARCHAR, STRING
/// as getString (UTF-8).
class FunctionArgs {
 public:
  FunctionArgs(const std::vector<const types::Column*>& cols, const std::vector<uint8_t>& consts, size_t row)
      : cols_(cols), consts_(consts), row_(row) {}
  size_t size() const { return cols_.size(); }
  const types::LogicalType& type(size_t k) const { return cols_[k]->type(); }
  bool isNull(size_t k) const { return cols_[k]->isNull(at(k)); }
  int64_t getLong(size_t k) const { return cols_[k]->getLong(at(k)); }
  double getDouble(size_t k) const { return cols_[k]->getDouble(at(k)); }
  std::string_view getString(size_t k) const { return cols_[k]->getString(at(k)); }

 private:
  size_t at(size_t k) const { return consts_[k] ? 0 : row_; }  // a constant argument is a one-row column
  const std::vector<const types::Column*>& cols_;
  const std::vector<uint8_t>& consts_;
  size_t row_;
};

/// Where eval() writes its (non-NULL) result, in the representation of the result type (as FunctionArgs).
class FunctionResult {
 public:
  FunctionResult(types::Column& out, size_t row) : out_(out), row_(row) {}
  void setLong(int64_t v) { out_.longs()[row_] = v; }
  void setDouble(double v) { out_.doubles()[row_] = v; }
  void setString(std::string_view v);

 private:
  types::Column& out_;
  size_t row_;
};

/// What the catalog and CREATE FUNCTION hold: a ScalarFunction or a TableFunction.
class UserDefinedFunction {
 public:
  virtual ~UserDefinedFunction() = default;
};

/// A user-defined scalar function (Flink's ScalarFunction with its type inference).
class ScalarFunction : public UserDefinedFunction {
 public:
  /// Type inference for a call (Flink's getTypeInference): `args` holds the types of the call's arguments
  /// (a NULL literal is TypeId::kNull); set an entry to another type to have the argument implicitly cast
  /// to it first; return the result type. Throw UserError to refuse the call: the planner reports it at
  /// the call's SQL position with the function's name.
  virtual types::LogicalType inferType(std::vector<types::LogicalType>& args) const = 0;
  /// Computes one row; false means the result is NULL. A UserError (or any std::exception) fails the job
  /// with the function's name and the call's SQL text. Called concurrently: see the file comment.
  virtual bool eval(const FunctionArgs& args, FunctionResult& out) const = 0;
  /// Flink's isDeterministic: false keeps a call with constant arguments from being computed once at
  /// planning (as RAND()).
  virtual bool isDeterministic() const { return true; }
  /// The signature shown in errors, e.g. "(STRING, STRING)"; empty: not shown.
  virtual std::string signature() const { return {}; }
};

/// Where a table function's eval() writes its rows: per row, one append per output column in order,
/// then endRow(). Values in the representation of the column's type (as FunctionArgs).
class TableFunctionOutput {
 public:
  explicit TableFunctionOutput(std::vector<types::Column>& columns) : cols_(columns) {}
  void appendLong(int64_t v) { next().appendLong(v); }
  void appendDouble(double v) { next().appendDouble(v); }
  void appendString(std::string_view v) { next().appendString(v); }
  void appendNull() { next().appendNull(); }
  /// Ends the row. Throws UserError when not every column got a value.
  void endRow();
  /// Rows ended so far.
  size_t rows() const { return rows_; }

 private:
  types::Column& next();
  std::vector<types::Column>& cols_;
  size_t col_ = 0;
  size_t rows_ = 0;
};

/// A user-defined table function (Flink's TableFunction): any number of rows per call, joined to the row
/// that called it by `FROM t, LATERAL TABLE(f(t.x)) AS r(a, b)` (Flink's Correlate). Threading as
/// ScalarFunction.
class TableFunction : public UserDefinedFunction {
 public:
  /// Type inference for a call, as ScalarFunction::inferType; returns the output columns (names and
  /// types; a query may rename them with `AS r(a, b)`).
  virtual types::RowType inferType(std::vector<types::LogicalType>& args) const = 0;
  /// Emits the rows for one call into `out`. Exceptions as ScalarFunction::eval.
  virtual void eval(const FunctionArgs& args, TableFunctionOutput& out) const = 0;
  virtual std::string signature() const { return {}; }
};

namespace udf_internal {
template <typename T>
struct Param {
  static constexpr bool kOptional = false;
  using Value = T;
};
template <typename T>
struct Param<std::optional<T>> {
  static constexpr bool kOptional = true;
  using Value = T;
};
/// The SQL type of a C++ parameter or result type (without std::optional): bool BOOLEAN, int32_t INT,
/// int64_t BIGINT, float FLOAT, double DOUBLE, std::string / std::string_view STRING.
template <typename T>
types::LogicalType sqlTypeOf(bool nullable) {
  using V = std::decay_t<T>;
  if constexpr (std::is_same_v<V, bool>) return types::LogicalType::boolean(nullable);
  else if constexpr (std::is_same_v<V, int32_t>) return types::LogicalType::integer(nullable);
  else if constexpr (std::is_same_v<V, int64_t>) return types::LogicalType::bigint(nullable);
  else if constexpr (std::is_same_v<V, float>) return types::LogicalType::floatType(nullable);
  else if constexpr (std::is_same_v<V, double>) return types::LogicalType::doubleType(nullable);
  else if constexpr (std::is_same_v<V, std::string> || std::is_same_v<V, std::string_view>)
    return types::LogicalType::string(nullable);
  else static_assert(sizeof(V) == 0, "parameter and result types: bool, int32_t, int64_t, float, double, std::string(_view), std::optional of them");
}
template <typename V>
V read(const FunctionArgs& a, size_t k) {
  if constexpr (std::is_same_v<V, bool>) return a.getLong(k) != 0;
  else if constexpr (std::is_integral_v<V>) return static_cast<V>(a.getLong(k));
  else if constexpr (std::is_floating_point_v<V>) return static_cast<V>(a.getDouble(k));
  else return V(a.getString(k));
}
/// Argument k as the C++ parameter type T (std::nullopt for NULL when T is optional).
template <typename T>
T argOf(const FunctionArgs& a, size_t k) {
  if constexpr (Param<T>::kOptional) {
    if (a.isNull(k)) return std::nullopt;
    return read<typename Param<T>::Value>(a, k);
  } else {
    return read<T>(a, k);
  }
}
template <typename V>
void write(FunctionResult& out, const V& v) {
  if constexpr (std::is_same_v<V, bool>) out.setLong(v ? 1 : 0);
  else if constexpr (std::is_integral_v<V>) out.setLong(static_cast<int64_t>(v));
  else if constexpr (std::is_floating_point_v<V>) out.setDouble(static_cast<double>(v));
  else out.setString(std::string_view(v));
}
/// The argument types a parameter of type `param` accepts by implicit cast (Flink's implicit casts for a
/// call's arguments): integers widen to wider integers, FLOAT and DOUBLE; every numeric to DOUBLE; any
/// character string to STRING; NULL to anything.
bool acceptsArgument(const types::LogicalType& param, const types::LogicalType& arg);
/// Throws UserError "Invalid input arguments. Expected signature: name(...)" style text (the planner adds
/// the name and position).
[[noreturn]] void refuseArguments(const std::vector<types::LogicalType>& params,
                                  const std::vector<types::LogicalType>& args);
std::string signatureOf(const std::vector<types::LogicalType>& params);
/// Throws UserError: a table function's column names do not match its row.
[[noreturn]] void refuseNames(size_t names, size_t columns);

template <typename F, typename R, typename... A>
class LambdaFunction final : public ScalarFunction {
 public:
  LambdaFunction(F f, bool deterministic) : f_(std::move(f)), deterministic_(deterministic) {}
  types::LogicalType inferType(std::vector<types::LogicalType>& args) const override {
    const std::vector<types::LogicalType> params = {sqlTypeOf<typename Param<std::decay_t<A>>::Value>(true)...};
    if (args.size() != params.size()) refuseArguments(params, args);
    for (size_t k = 0; k < args.size(); ++k) {
      if (!acceptsArgument(params[k], args[k])) refuseArguments(params, args);
      args[k] = params[k].withNullable(args[k].nullable || args[k].id == types::TypeId::kNull);
    }
    // Flink's reflective extraction: an optional result is nullable; a plain one is NOT NULL unless a
    // NULL argument of a plain parameter makes the call NULL.
    bool nullable = Param<R>::kOptional;
    const bool plain[] = {!Param<std::decay_t<A>>::kOptional..., false};
    for (size_t k = 0; k < args.size(); ++k) nullable = nullable || (plain[k] && args[k].nullable);
    return sqlTypeOf<typename Param<R>::Value>(nullable);
  }
  bool eval(const FunctionArgs& a, FunctionResult& out) const override {
    return call(a, out, std::index_sequence_for<A...>{});
  }
  bool isDeterministic() const override { return deterministic_; }
  std::string signature() const override {
    return signatureOf({sqlTypeOf<typename Param<std::decay_t<A>>::Value>(true)...});
  }

 private:
  template <size_t... I>
  bool call(const FunctionArgs& a, FunctionResult& out, std::index_sequence<I...>) const {
    // A NULL for a plain (non-optional) parameter makes the result NULL without a call.
    if ((... || (!Param<std::decay_t<A>>::kOptional && a.isNull(I)))) return false;
    R r = f_(argOf<std::decay_t<A>>(a, I)...);
    if constexpr (Param<R>::kOptional) {
      if (!r) return false;
      write(out, *r);
    } else {
      write(out, r);
    }
    return true;
  }
  F f_;
  bool deterministic_;
};

template <typename F, typename R, typename... A>
std::shared_ptr<const ScalarFunction> makeLambda(F f, bool deterministic, R (F::*)(A...) const) {
  return std::make_shared<LambdaFunction<F, R, A...>>(std::move(f), deterministic);
}

template <typename T>
struct RowOf {  // one output column
  static constexpr size_t kSize = 1;
  template <typename Fn>
  static void each(const T& v, Fn&& fn) { fn(v); }
  static std::vector<types::LogicalType> types() {
    return {sqlTypeOf<typename Param<T>::Value>(true).withNullable(Param<T>::kOptional)};
  }
};
template <typename... C>
struct RowOf<std::tuple<C...>> {
  static constexpr size_t kSize = sizeof...(C);
  template <typename Fn>
  static void each(const std::tuple<C...>& v, Fn&& fn) { std::apply([&](const auto&... c) { (fn(c), ...); }, v); }
  static std::vector<types::LogicalType> types() {
    return {sqlTypeOf<typename Param<C>::Value>(true).withNullable(Param<C>::kOptional)...};
  }
};
template <typename V>
void append(TableFunctionOutput& out, const V& v) {
  if constexpr (Param<V>::kOptional) {
    if (!v) return out.appendNull();
    append(out, *v);
  } else if constexpr (std::is_same_v<V, bool>) {
    out.appendLong(v ? 1 : 0);
  } else if constexpr (std::is_integral_v<V>) {
    out.appendLong(static_cast<int64_t>(v));
  } else if constexpr (std::is_floating_point_v<V>) {
    out.appendDouble(static_cast<double>(v));
  } else {
    out.appendString(std::string_view(v));
  }
}

template <typename F, typename Row, typename... A>
class LambdaTableFunction final : public TableFunction {
 public:
  LambdaTableFunction(std::vector<std::string> names, F f) : names_(std::move(names)), f_(std::move(f)) {
    if (names_.size() != RowOf<Row>::kSize) refuseNames(names_.size(), RowOf<Row>::kSize);
  }
  types::RowType inferType(std::vector<types::LogicalType>& args) const override {
    const std::vector<types::LogicalType> params = {sqlTypeOf<typename Param<std::decay_t<A>>::Value>(true)...};
    if (args.size() != params.size()) refuseArguments(params, args);
    for (size_t k = 0; k < args.size(); ++k) {
      if (!acceptsArgument(params[k], args[k])) refuseArguments(params, args);
      args[k] = params[k].withNullable(args[k].nullable || args[k].id == types::TypeId::kNull);
    }
    return types::RowType{names_, RowOf<Row>::types()};
  }
  void eval(const FunctionArgs& a, TableFunctionOutput& out) const override {
    call(a, out, std::index_sequence_for<A...>{});
  }
  std::string signature() const override {
    return signatureOf({sqlTypeOf<typename Param<std::decay_t<A>>::Value>(true)...});
  }

 private:
  template <size_t... I>
  void call(const FunctionArgs& a, TableFunctionOutput& out, std::index_sequence<I...>) const {
    // A NULL for a plain (non-optional) parameter gives no rows.
    if ((... || (!Param<std::decay_t<A>>::kOptional && a.isNull(I)))) return;
    for (const Row& r : f_(argOf<std::decay_t<A>>(a, I)...)) {
      RowOf<Row>::each(r, [&](const auto& v) { append(out, v); });
      out.endRow();
    }
  }
  std::vector<std::string> names_;
  F f_;
};
template <typename F, typename Row, typename... A>
std::shared_ptr<const TableFunction> makeTableLambda(std::vector<std::string> names, F f,
                                                     std::vector<Row> (F::*)(A...) const) {
  return std::make_shared<LambdaTableFunction<F, Row, A...>>(std::move(names), std::move(f));
}
}  // namespace udf_internal

/// A scalar function from a C++ callable (a lambda or a class with one const operator()), its SQL
/// signature taken from the C++ one as Flink extracts it from an eval method: parameters and result of
/// types bool, int32_t, int64_t, float, double, std::string / std::string_view (STRING), or std::optional
/// of them for NULL (a NULL for a plain parameter gives NULL without calling `f`). E.g.
/// `makeScalarFunction([](std::string_view s) -> int64_t { return s.size(); })`.
template <typename F>
std::shared_ptr<const ScalarFunction> makeScalarFunction(F f, bool deterministic = true) {
  return udf_internal::makeLambda(std::move(f), deterministic, &F::operator());
}

/// A table function from a C++ callable returning `std::vector<Row>`, Row a std::tuple of column values
/// (or one value for one column) of the types makeScalarFunction takes; `names` are the output columns.
/// A NULL for a plain parameter gives no rows. E.g. `makeTableFunction({"word", "length"},
/// [](std::string_view s) -> std::vector<std::tuple<std::string, int32_t>> { ... })`. Throws UserError
/// when the number of names differs from the row's.
template <typename F>
std::shared_ptr<const TableFunction> makeTableFunction(std::vector<std::string> names, F f) {
  return udf_internal::makeTableLambda(std::move(names), std::move(f), &F::operator());
}

/// Makes `class_name` known to `CREATE FUNCTION ... AS 'class_name'` (Flink's class path), replacing an
/// earlier factory of that name. Thread-safe; usually called at start-up.
void registerFunctionClass(const std::string& class_name,
                           std::function<std::shared_ptr<const UserDefinedFunction>()> factory);
/// A new instance of the registered class; nullptr when the name is not registered. Thread-safe.
std::shared_ptr<const UserDefinedFunction> instantiateFunctionClass(const std::string& class_name);
/// The registered class names, sorted.
std::vector<std::string> registeredFunctionClasses();

}  // namespace sluice::table
