#include "table/functions/user_function.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "common/error.h"
#include "table/functions/builtins.h"
#include "table/functions/evaluator_internal.h"
#include "table/functions/expression.h"

namespace sluice::table {

using types::LogicalType;
using types::TypeId;

void FunctionResult::setString(std::string_view v) { internal::setString(out_, row_, v); }

types::Column& TableFunctionOutput::next() {
  if (col_ >= cols_.size())
    throw UserError(fmt::format("a table function row has more than its {} columns", cols_.size()));
  return cols_[col_++];
}

void TableFunctionOutput::endRow() {
  if (col_ != cols_.size())
    throw UserError(fmt::format("a table function row has {} of its {} columns", col_, cols_.size()));
  col_ = 0;
  ++rows_;
}

namespace udf_internal {

bool acceptsArgument(const LogicalType& param, const LogicalType& arg) {
  if (arg.id == TypeId::kNull) return true;
  switch (param.id) {
    case TypeId::kBoolean: return arg.id == TypeId::kBoolean;
    case TypeId::kInt: case TypeId::kBigInt:
      return arg.isIntegral() && arg.integralBits() <= param.integralBits();
    case TypeId::kFloat: return arg.isIntegral() || arg.id == TypeId::kFloat;
    case TypeId::kDouble: return arg.isNumeric();
    case TypeId::kVarchar: return arg.isString();
    default: return arg.id == param.id;
  }
}

std::string signatureOf(const std::vector<LogicalType>& params) {
  std::string s = "(";
  for (size_t k = 0; k < params.size(); ++k) {
    if (k) s += ", ";
    s += params[k].withNullable(true).toString();
  }
  return s + ")";
}

void refuseArguments(const std::vector<LogicalType>& params, const std::vector<LogicalType>& args) {
  std::vector<LogicalType> given;
  for (const auto& a : args) given.push_back(a.id == TypeId::kNull ? a : a.withNullable(true));
  std::string got = "(";
  for (size_t k = 0; k < given.size(); ++k) {
    if (k) got += ", ";
    got += given[k].id == TypeId::kNull ? "NULL" : given[k].toString();
  }
  got += ")";
  throw UserError(fmt::format("Invalid input arguments {}. Expected signature: {}", got, signatureOf(params)));
}

void refuseNames(size_t names, size_t columns) {
  throw UserError(fmt::format("a table function with {} output columns was given {} names", columns, names));
}

}  // namespace udf_internal

void castUserFunctionArguments(std::vector<ExprPtr>& args, const std::vector<LogicalType>& types) {
  for (size_t k = 0; k < args.size(); ++k) {
    const LogicalType& want = types[k];
    const LogicalType& have = args[k]->type;
    if (have.id == TypeId::kNull) {
      args[k] = internal::typedNull(want);
    } else if (have.withNullable(true) != want.withNullable(true) && !(have.isString() && want.isString())) {
      // (Character strings of any length are read alike: no cast.)
      args[k] = makeCast(args[k], want.withNullable(have.nullable));
    }
  }
}

ExprPtr makeUserFunctionCall(const std::string& name, std::shared_ptr<const ScalarFunction> fn,
                             std::vector<ExprPtr> args) {
  SLUICE_CHECK(fn != nullptr, "no function object for {}", name);
  std::vector<LogicalType> types;
  for (const auto& a : args) types.push_back(a->type);
  LogicalType result;
  try {
    result = fn->inferType(types);
  } catch (const UserError& e) {
    throw UserError(fmt::format("Invalid function call {}: {}", name, e.what()));
  }
  SLUICE_CHECK(types.size() == args.size(), "{}: inferType changed the number of arguments", name);
  castUserFunctionArguments(args, types);
  auto e = std::make_shared<Expr>();
  e->kind = ExprKind::kCall;
  e->op = ScalarOp::kUserFunction;
  e->type = result;
  e->args = std::move(args);
  e->function = std::move(fn);
  e->function_name = name;
  return e;
}

namespace internal {

NodePtr makeUserFunctionNode(const Expr& call, std::vector<NodePtr> args, int reg) {
  std::shared_ptr<const ScalarFunction> fn = call.function;
  const std::string what = call.toString();
  return makeRowFunctionNode(
      call.type, std::move(args), /*strict=*/false, /*may_throw=*/true,
      [fn, what](const RowArgs& a, types::Column& out, size_t i) {
        FunctionArgs args(a.cols, a.consts, a.i);
        FunctionResult result(out, i);
        try {
          return fn->eval(args, result);
        } catch (const std::exception& e) {
          throw UserError(fmt::format("user-defined function {} failed: {}", what, e.what()));
        }
      },
      reg);
}

}  // namespace internal

namespace {
struct ClassRegistry {
  std::mutex mu;
  std::map<std::string, std::function<std::shared_ptr<const UserDefinedFunction>()>> factories;
};
ClassRegistry& classRegistry() {
  static ClassRegistry r;
  return r;
}
}  // namespace

void registerFunctionClass(const std::string& class_name,
                           std::function<std::shared_ptr<const UserDefinedFunction>()> factory) {
  ClassRegistry& r = classRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.factories[class_name] = std::move(factory);
}

std::shared_ptr<const UserDefinedFunction> instantiateFunctionClass(const std::string& class_name) {
  std::function<std::shared_ptr<const UserDefinedFunction>()> factory;
  {
    ClassRegistry& r = classRegistry();
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.factories.find(class_name);
    if (it == r.factories.end()) return nullptr;
    factory = it->second;
  }
  return factory();
}

std::vector<std::string> registeredFunctionClasses() {
  ClassRegistry& r = classRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> names;
  for (const auto& [name, f] : r.factories) names.push_back(name);
  return names;
}

}  // namespace sluice::table
