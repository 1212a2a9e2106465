#include "table/planner/sql_to_rel.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "common/config.h"
#include "table/functions/time_zone.h"
#include "common/error.h"
#include "table/functions/aggregate_function.h"
#include "table/planner/sql_to_rel_internal.h"
#include "table/planner/type_coercion.h"
#include "types/value_format.h"

namespace sluice::table {

namespace {

ExprPtr castTo(ExprPtr e, const LogicalType& t) {
  if (e->type == t) return e;
  return makeCast(std::move(e), t);
}

}  // namespace

/// Calcite's AggregateReduceFunctionsRule.reduceStddev, over the aggregate's output:
/// (SUM(x*x) - SUM(x) * SUM(x) / COUNT(x)) / (biased ? COUNT(x) : CASE COUNT(x) WHEN 1 THEN NULL ELSE COUNT(x) - 1),
/// POWER(..., 0.5) for STDDEV, cast to the call's type (the argument's, as AVG: integer arithmetic for integers).
ExprPtr SqlToRelConverter::Impl::varianceFormula(ExprPtr sum_sq, ExprPtr sum, ExprPtr count, bool sqrt, bool biased,
                                                 const LogicalType& type) {
  const LogicalType t = type.withNullable(true);
  ExprPtr sum_cast = castTo(sum, t);
  ExprPtr avg_sum_squared = makeCall(ScalarOp::kDivide, {makeCall(ScalarOp::kTimes, {sum_cast, sum_cast}), count});
  ExprPtr diff = makeCall(ScalarOp::kMinus, {sum_sq, avg_sum_squared});
  ExprPtr null_count = makeCast(makeNullLiteral(), LogicalType::bigint(true));
  // No rows: NULL (the sums are NULL; the CASE keeps the division from seeing 0).
  ExprPtr denominator =
      biased ? makeCall(ScalarOp::kCase,
                        {makeCall(ScalarOp::kEquals, {count, makeLiteral(int64_t{0}, LogicalType::bigint(false))}),
                         null_count, count})
             : makeCall(ScalarOp::kCase,
                        {makeCall(ScalarOp::kLessThanOrEqual, {count, makeLiteral(int64_t{1}, LogicalType::bigint(false))}),
                         null_count,
                         makeCall(ScalarOp::kMinus, {count, makeLiteral(int64_t{1}, LogicalType::bigint(false))})});
  ExprPtr div = makeCall(ScalarOp::kDivide, {diff, denominator});
  if (sqrt) div = makeCall(ScalarOp::kPower, {div, makeLiteral(0.5, LogicalType::doubleType(false))});
  return castTo(div, type.withNullable(true));
}

SqlToRelConverter::Impl::VarianceCalls SqlToRelConverter::Impl::reduceVariance(
    const sql::Expr& a, const Scope& scope, std::vector<ExprPtr>& pre, std::vector<std::string>& pre_names,
    std::vector<AggregateCall>& calls) {
  if (a.star) fail(a.pos, fmt::format("{}(*) is not allowed", a.name));
  if (a.distinct) fail(a.pos, fmt::format("{}(DISTINCT ...) is not supported yet", a.name));
  if (a.children.size() != 1)
    fail(a.pos, fmt::format("Invalid number of arguments to function '{}'. Was expecting 1 arguments", a.name));
  if (const sql::Expr* inner = findAggregate(*a.children[0])) fail(inner->pos, "Aggregate function calls cannot be nested");
  ExprPtr arg = convert(*a.children[0], scope);
  if (!arg->type.isNumeric())
    fail(a.pos, fmt::format("Cannot apply '{}' to arguments of type '{}({})'. Supported form(s): '{}(<NUMERIC>)'", a.name,
                            a.name, arg->type.toString(), a.name));
  if (arg->type.id == TypeId::kDecimal)
    fail(a.pos, fmt::format("{} over DECIMAL is not supported yet; cast the argument to DOUBLE", a.name));
  VarianceCalls out;
  out.sqrt = a.name.rfind("STDDEV", 0) == 0;
  out.biased = a.name.size() > 4 && a.name.substr(a.name.size() - 4) == "_POP";
  out.type = AggregateCall::resultType(AggKind::kAvg, arg->type);
  ExprPtr filter;
  if (a.filter) {
    if (const sql::Expr* inner = findAggregate(*a.filter)) fail(inner->pos, "Aggregate functions are not allowed in FILTER");
    filter = convert(*a.filter, scope);
    checkBoolean(filter, *a.filter, "FILTER");
  }
  auto column = [&](ExprPtr e) {
    pre.push_back(std::move(e));
    pre_names.push_back("$f" + std::to_string(pre.size() - 1));
    return static_cast<int>(pre.size() - 1);
  };
  const int x = column(castTo(arg, out.type.withNullable(arg->type.nullable)));
  const int x2 = column(makeCall(ScalarOp::kTimes, {pre[static_cast<size_t>(x)], pre[static_cast<size_t>(x)]}));
  const int f = filter ? column(filter) : -1;
  auto add = [&](AggKind kind, int col) {
    AggregateCall c;
    c.kind = kind;
    c.arg_index = col;
    c.arg_type = pre[static_cast<size_t>(col)]->type;
    c.filter_arg = f;
    c.result_type = AggregateCall::resultType(kind, c.arg_type);
    c.name = fmt::format("{}({})", kind == AggKind::kCount ? "COUNT" : "SUM", pre_names[static_cast<size_t>(col)]);
    calls.push_back(c);
    return static_cast<int>(calls.size() - 1);
  };
  out.sum_sq = add(AggKind::kSum, x2);
  out.sum = add(AggKind::kSum, x);
  out.count = add(AggKind::kCount, x);
  return out;
}

namespace {

// PROCTIME() as the planner writes it: the session time zone travels with the call.
ExprPtr proctimeCall(const Configuration& config) {
  const std::string zone = config.get(options::kLocalTimeZone);
  return makeCall(ScalarOp::kProctime,
                  {makeLiteral(zone, LogicalType::charType(static_cast<int32_t>(std::max<size_t>(1, zone.size())), false))});
}

// window_time / *_ROWTIME from the window_end column: end - 1 ms, and over a TIMESTAMP_LTZ time attribute
// the instant of that wall-clock time in the window's zone (AggsHandlerCodeGenerator's
// TimeWindowUtil.toEpochMills, the same rule as CAST(TIMESTAMP AS TIMESTAMP_LTZ)).
ExprPtr windowTimeOf(ExprPtr end_ref, const WindowSpec& window) {
  ExprPtr last = makeCall(ScalarOp::kMinus, {std::move(end_ref), makeIntervalLiteral(1)});
  if (window.time_zone.empty()) return last;
  return makeCast(last, LogicalType::timestampLtz(3, false), window.time_zone);
}

}  // namespace

const CatalogFunction* SqlToRelConverter::Impl::userAggregate(const std::string& name) const {
  const CatalogFunction* f = catalog.findFunction(name, /*system=*/true);
  if (f == nullptr && !isAggregateName(name) && !scalarFunctionByName(name)) f = catalog.findFunction(name, false);
  if (f == nullptr || dynamic_cast<const AggregateFunction*>(f->function.get()) == nullptr) return nullptr;
  return f;
}

AggregateCall SqlToRelConverter::Impl::userAggregateCall(const sql::Expr& a, const CatalogFunction& udf,
                                                         const Scope& scope, std::vector<ExprPtr>& args) const {
  auto fn = std::dynamic_pointer_cast<const AggregateFunction>(udf.function);
  SLUICE_CHECK(fn != nullptr, "{} is no aggregate function", udf.name);
  if (a.star) fail(a.pos, fmt::format("{}(*) is not allowed", udf.name));
  std::string text = udf.name + "(" + (a.distinct ? "DISTINCT " : "");
  for (size_t i = 0; i < a.children.size(); ++i) {
    const sql::Expr& c = *a.children[i];
    if (const sql::Expr* inner = findAggregate(c)) fail(inner->pos, "Aggregate function calls cannot be nested");
    args.push_back(convert(c, scope));
    text += (i > 0 ? ", " : "") + c.toString();
  }
  text += ")";
  std::vector<LogicalType> types;
  for (const auto& arg : args) types.push_back(arg->type);
  LogicalType result;
  try {
    result = fn->inferType(types);
  } catch (const SqlError&) {
    throw;
  } catch (const UserError& err) {
    fail(a.pos, fmt::format("Invalid function call {}: {}", udf.name, err.what()));
  }
  SLUICE_CHECK(types.size() == args.size(), "{}: inferType changed the number of arguments", udf.name);
  castUserFunctionArguments(args, types);
  if (a.distinct && args.size() != 1)
    fail(a.pos, fmt::format("{}(DISTINCT ...) over {} arguments is not supported yet; DISTINCT takes one",
                            udf.name, args.size()));
  AggregateCall call;
  call.kind = AggKind::kUser;
  call.function = std::move(fn);
  call.function_name = udf.name;
  call.distinct = a.distinct;
  call.arg_type = args.empty() ? LogicalType::bigint(false) : args[0]->type;
  call.result_type = result;
  call.call_text = std::move(text);
  return call;
}

WindowSpec SqlToRelConverter::Impl::groupWindowSpec(const sql::Expr& c, const FromResult& from) const {
  const size_t want = c.name == "HOP" ? 3 : 2;
  if (c.children.size() != want)
    fail(c.pos, fmt::format("Invalid number of arguments to function '{}'. Was expecting {} arguments", c.name, want));
  const sql::Expr& time = *c.children[0];
  if (time.kind != sql::ExprKind::kIdentifier)
    fail(time.pos, fmt::format("The first argument of {} must be a time attribute column", c.name));
  ExprPtr ref = resolveIdentifier(time, from.scope);
  const bool proctime = ref->kind == ExprKind::kInputRef && !from.rel->rowtime[static_cast<size_t>(ref->input_index)] &&
                        isProctimeAttribute(*from.rel, ref->input_index);
  if (ref->kind != ExprKind::kInputRef || (!from.rel->rowtime[static_cast<size_t>(ref->input_index)] && !proctime))
    fail(time.pos, fmt::format("Window aggregate can only be defined over a time attribute column, but {} encountered.",
                               ref->type.toString()));
  if (proctime && batch()) fail(time.pos, "Window can not be defined over a proctime attribute column for batch mode");
  if (proctime && c.name == "SESSION")
    fail(time.pos, "SESSION windows on a processing-time attribute are not supported yet");
  auto interval = [&](size_t i) {
    const sql::Expr& e = *c.children[i];
    if (e.kind != sql::ExprKind::kLiteral || e.literal_kind != sql::LiteralKind::kInterval)
      fail(e.pos, fmt::format("{} expects an INTERVAL literal here", c.name));
    const int64_t ms = sql::intervalMillis(e);
    if (ms <= 0) fail(e.pos, fmt::format("{} requires a positive interval", c.name));
    return ms;
  };
  WindowSpec w;
  w.time_index = ref->input_index;
  w.proctime = proctime;
  // FLIP-162: a TIMESTAMP_LTZ time attribute aligns the windows on the session zone's wall clock.
  if (ref->type.id == TypeId::kTimestampLtz) w.time_zone = config.get(options::kLocalTimeZone);
  if (c.name == "TUMBLE") {
    w.kind = WindowSpec::Kind::kTumble;
    w.size_ms = w.slide_ms = interval(1);
  } else if (c.name == "HOP") {
    // HOP(ts, slide, size), as the HOP window TVF's order.
    w.kind = WindowSpec::Kind::kHop;
    w.slide_ms = interval(1);
    w.size_ms = interval(2);
    if (w.size_ms % w.slide_ms != 0)
      fail(c.pos, fmt::format("HOP window requires size must be an integral multiple of slide, but got size {} ms "
                              "and slide {} ms.",
                              w.size_ms, w.slide_ms));
  } else {
    w.kind = WindowSpec::Kind::kSession;
    w.size_ms = interval(1);
  }
  return w;
}

RelNodePtr SqlToRelConverter::Impl::convertAggregate(const sql::SelectStmt& s, FromResult& from, ExprPtr where) {
  // 1. Group keys and aggregate calls, in the order written.
  std::vector<const sql::Expr*> group_exprs;
  std::vector<sql::SourcePos> group_pos;
  bool has_window_start = false, has_window_end = false, has_window_time = false;
  // A legacy group window, GROUP BY TUMBLE(ts, size) / HOP(ts, slide, size) / SESSION(ts, gap) (Flink's
  // GroupWindowAggregate): planned as the window aggregate of the matching window TVF.
  const sql::Expr* group_window = nullptr;
  for (const auto& g : s.group_by) {
    if (!from.windowed && g->kind == sql::ExprKind::kCall && isGroupWindowName(g->name)) {
      if (group_window != nullptr) fail(g->pos, "Only a single window group function may be used in GROUP BY");
      group_window = g.get();
      continue;
    }
    if (g->kind == sql::ExprKind::kIdentifier && from.windowed) {
      const std::string& n = g->names.back();
      if (n == "window_start") {
        has_window_start = true;
        continue;
      }
      if (n == "window_end") {
        has_window_end = true;
        continue;
      }
      if (n == "window_time") {
        // window_end - 1 ms (a processing-time attribute on processing time): it follows from window_end.
        has_window_time = true;
        continue;
      }
    }
    if (const sql::Expr* a = findAggregate(*g)) fail(a->pos, "Aggregate functions are not allowed in GROUP BY");
    group_exprs.push_back(g.get());
  }
  if (from.windowed && (!has_window_start || !has_window_end))
    fail(s.pos, "A window aggregation over a window table function must GROUP BY both window_start and window_end");
  const bool windowed = from.windowed || group_window != nullptr;
  WindowSpec window = group_window ? groupWindowSpec(*group_window, from) : from.window;
  const sql::SourcePos window_pos = group_window ? group_window->pos : from.window_pos;
  if (s.distinct) {
    if (!s.group_by.empty() || windowed) fail(s.pos, "SELECT DISTINCT with GROUP BY is not supported yet");
    for (const auto& item : s.select_list) {
      if (item.is_star) fail(item.pos, "SELECT DISTINCT * is not supported yet");
      if (containsAggregate(*item.expr))
        fail(item.pos, "SELECT DISTINCT with aggregate functions is not supported yet");
      group_exprs.push_back(item.expr.get());
    }
  }
  std::vector<const sql::Expr*> agg_exprs;
  for (const auto& item : s.select_list) {
    if (item.is_star) fail(item.pos, "SELECT * is not allowed in an aggregation");
    collectAggregates(*item.expr, agg_exprs);
  }
  if (s.having) collectAggregates(*s.having, agg_exprs);

  // 2. Pre-aggregation projection: [group keys..., aggregate arguments..., (row time)].
  std::vector<ExprPtr> pre;
  std::vector<std::string> pre_names;
  for (const sql::Expr* g : group_exprs) {
    pre.push_back(convert(*g, from.scope));
    pre_names.push_back(g->kind == sql::ExprKind::kIdentifier ? g->names.back()
                                                              : "$f" + std::to_string(pre.size() - 1));
  }
  // WindowUtil.validGroupKeyPartitionKey: a window aggregation over SESSION groups by its partition keys.
  std::vector<int> session_keys;
  if (group_window != nullptr && window.kind == WindowSpec::Kind::kSession) {
    // A legacy SESSION window keeps sessions per group key.
    for (size_t i = 0; i < group_exprs.size(); ++i)
      if (pre[i]->kind != ExprKind::kInputRef)
        fail(group_exprs[i]->pos, "GROUP BY an expression next to a SESSION group window is not supported yet");
    for (size_t i = 0; i < group_exprs.size(); ++i) {
      window.partition_keys.push_back(pre[i]->input_index);
      session_keys.push_back(static_cast<int>(i));
    }
  } else if (from.windowed && from.window.kind == WindowSpec::Kind::kSession) {
    std::vector<int> grouped;
    for (size_t i = 0; i < group_exprs.size(); ++i)
      grouped.push_back(pre[i]->kind == ExprKind::kInputRef ? pre[i]->input_index : -1);
    const std::set<int> have(grouped.begin(), grouped.end());
    const std::set<int> want(from.window.partition_keys.begin(), from.window.partition_keys.end());
    if (have != want)
      fail(from.window_pos,
           want.empty() ? "A window aggregation over SESSION without PARTITION BY groups by window_start and "
                          "window_end only; grouping by other columns needs them as SESSION(TABLE t PARTITION BY "
                          "(...), ...) (a session window table function apart from its aggregation is not "
                          "supported yet)"
                        : "A window aggregation over SESSION must group by exactly its PARTITION BY columns besides "
                          "window_start and window_end (a session window table function apart from its "
                          "aggregation is not supported yet)");
    for (int k : from.window.partition_keys)
      session_keys.push_back(static_cast<int>(std::find(grouped.begin(), grouped.end(), k) - grouped.begin()));
  }
  std::vector<AggregateCall> calls;
  // Per aggregate expression: its call, or for STDDEV / VAR the calls SUM(x * x), SUM(x), COUNT(x).
  std::vector<int> call_of(agg_exprs.size(), -1);
  std::vector<std::optional<VarianceCalls>> reduced(agg_exprs.size());
  // FILTER (WHERE c): Calcite's filterArg, the condition as a BOOLEAN column of the projection below.
  auto addFilter = [&](const sql::Expr& a, AggregateCall& call) {
    if (!a.filter) return;
    if (const sql::Expr* inner = findAggregate(*a.filter)) fail(inner->pos, "Aggregate functions are not allowed in FILTER");
    ExprPtr cond = convert(*a.filter, from.scope);
    checkBoolean(cond, *a.filter, "FILTER");
    if (cond->type.id == TypeId::kNull) cond = makeLiteral(int64_t{0}, LogicalType::boolean(false));
    call.filter_arg = static_cast<int>(pre.size());
    pre.push_back(cond);
    pre_names.push_back("$f" + std::to_string(pre.size() - 1));
  };
  // The user-defined calls that need retract over an updating input: (call, its SQL position).
  std::vector<std::pair<size_t, sql::SourcePos>> user_calls;
  for (size_t ai = 0; ai < agg_exprs.size(); ++ai) {
    const sql::Expr* a = agg_exprs[ai];
    if (const CatalogFunction* udaf = userAggregate(a->name)) {
      call_of[ai] = static_cast<int>(calls.size());
      std::vector<ExprPtr> args;
      AggregateCall call = userAggregateCall(*a, *udaf, from.scope, args);
      for (auto& arg : args) {
        call.user_args.push_back(static_cast<int>(pre.size()));
        pre.push_back(std::move(arg));
        pre_names.push_back("$f" + std::to_string(pre.size() - 1));
      }
      addFilter(*a, call);
      // Sessions merge as rows bridge them (MergingWindowProcessFunction calls the function's merge); Flink
      // also asks merge of HOP and CUMULATE (slice-shared assigners: a window is merged from its slices,
      // StreamExecWindowAggregate), though this engine accumulates their windows directly.
      if (windowed && window.kind != WindowSpec::Kind::kTumble && !call.function->hasMerge()) {
        const char* kind = window.kind == WindowSpec::Kind::kSession ? "SESSION" :
                           window.kind == WindowSpec::Kind::kHop     ? "HOP" : "CUMULATE";
        fail(a->pos, fmt::format("Function {} does not implement merge, which a {} window needs ({})", udaf->name,
                                 kind,
                                 window.kind == WindowSpec::Kind::kSession ? "its sessions merge"
                                                                           : "a window is merged from its slices"));
      }
      call.name = a->toString();
      user_calls.emplace_back(calls.size(), a->pos);
      calls.push_back(std::move(call));
      continue;
    }
    if (isVarianceName(a->name)) {
      reduced[ai] = reduceVariance(*a, from.scope, pre, pre_names, calls);
      continue;
    }
    call_of[ai] = static_cast<int>(calls.size());
    AggregateCall call;
    call.distinct = a->distinct;
    if (a->name == "COUNT")
      call.kind = a->star ? AggKind::kCountStar : AggKind::kCount;
    else if (a->name == "SUM")
      call.kind = AggKind::kSum;
    else if (a->name == "MIN")
      call.kind = AggKind::kMin;
    else if (a->name == "MAX")
      call.kind = AggKind::kMax;
    else if (a->name == "FIRST_VALUE")
      call.kind = AggKind::kFirstValue;
    else if (a->name == "LAST_VALUE")
      call.kind = AggKind::kLastValue;
    else if (a->name == "LISTAGG")
      call.kind = AggKind::kListAgg;
    else
      call.kind = AggKind::kAvg;
    if (a->star && a->name != "COUNT") fail(a->pos, fmt::format("{}(*) is not allowed", a->name));
    const bool ordered =
        call.kind == AggKind::kFirstValue || call.kind == AggKind::kLastValue || call.kind == AggKind::kListAgg;
    if (ordered && a->distinct) fail(a->pos, fmt::format("{}(DISTINCT ...) is not supported yet", a->name));
    if (call.kind == AggKind::kListAgg && a->children.size() == 2) {
      // LISTAGG(expr, separator): the separator is a string literal (Flink's ListAggWsWithRetractAggFunction
      // takes any expression; a constant is what scripts use).
      const sql::Expr& sep = *a->children[1];
      if (sep.kind != sql::ExprKind::kLiteral || sep.literal_kind != sql::LiteralKind::kString)
        fail(sep.pos, "The separator of LISTAGG must be a string literal");
      call.separator = sep.text;
    }
    if (!a->star) {
      const size_t max_args = call.kind == AggKind::kListAgg ? 2 : 1;
      if (a->children.empty() || a->children.size() > max_args)
        fail(a->pos, fmt::format("Invalid number of arguments to function '{}'. Was expecting {} arguments", a->name,
                                 max_args == 2 ? "1 or 2" : "1"));
      if (const sql::Expr* inner = findAggregate(*a->children[0]))
        fail(inner->pos, "Aggregate function calls cannot be nested");
      ExprPtr arg = convert(*a->children[0], from.scope);
      if (arg->type.id == TypeId::kNull) fail(a->children[0]->pos, fmt::format("Illegal use of 'NULL' in {}", a->name));
      call.arg_index = static_cast<int>(pre.size());
      call.arg_type = arg->type;
      pre.push_back(arg);
      pre_names.push_back("$f" + std::to_string(pre.size() - 1));
    } else {
      call.arg_type = LogicalType::bigint(false);
    }
    addFilter(*a, call);
    try {
      call.result_type = AggregateCall::resultType(call.kind, call.arg_type);
    } catch (const SqlError&) {
      throw;
    } catch (const UserError& err) {
      fail(a->pos, err.what());
    }
    call.name = a->toString();
    calls.push_back(call);
  }
  int time_index = -1;
  if (windowed) {
    time_index = static_cast<int>(pre.size());
    pre.push_back(makeInputRef(window.time_index, from.rel->row_type.types[static_cast<size_t>(window.time_index)]));
    pre_names.push_back(from.rel->row_type.names[static_cast<size_t>(window.time_index)]);
  }
  RelNodePtr pre_rel = makeCalc(from.rel, where, pre, pre_names);
  if (!windowed && pre_rel->producesUpdates()) {
    // GroupAggFunction retracts the old rows of an updating input (Flink: "... does not implement retract").
    for (const auto& [i, pos] : user_calls)
      if (!calls[i].function->hasRetract())
        fail(pos, fmt::format("Function {} does not implement retract, which an aggregation over an updating "
                              "input (it consumes update and delete changes) needs",
                              calls[i].function_name));
  }

  // 3. The aggregate.
  auto agg = std::make_shared<RelNode>();
  agg->inputs = {pre_rel};
  for (size_t i = 0; i < group_exprs.size(); ++i) {
    agg->group_keys.push_back(static_cast<int>(i));
    agg->row_type.names.push_back(pre_names[i]);
    agg->row_type.types.push_back(pre[i]->type);
  }
  for (size_t i = 0; i < calls.size(); ++i) {
    agg->row_type.names.push_back("EXPR$" + std::to_string(i));
    agg->row_type.types.push_back(calls[i].result_type);
  }
  agg->aggregates = calls;
  if (windowed) {
    if (pre_rel->producesUpdates())
      fail(window_pos,
           "Window aggregation does not support update or delete input (it consumes an updating changelog)");
    agg->kind = RelKind::kWindowAggregate;
    agg->window = window;
    agg->group_window = group_window != nullptr;
    agg->window.time_index = time_index;
    agg->window.partition_keys = session_keys;
    agg->row_type.names.push_back("window_start");
    agg->row_type.types.push_back(LogicalType::timestamp(3, false));
    agg->row_type.names.push_back("window_end");
    agg->row_type.types.push_back(LogicalType::timestamp(3, false));
    agg->changelog = ChangelogMode::kInsertOnly;
  } else {
    agg->kind = RelKind::kGroupAggregate;
    agg->changelog = ChangelogMode::kAll;
    finalInBatch(*agg);
  }
  agg->rowtime.assign(agg->row_type.size(), false);
  if (group_exprs.empty()) agg->parallelism = 1;

  // 4. Post-aggregation projection and HAVING, over the aggregate's output.
  const size_t num_keys = group_exprs.size();
  std::vector<int> group_input_index(group_exprs.size(), -1);
  for (size_t i = 0; i < group_exprs.size(); ++i)
    if (pre[i]->kind == ExprKind::kInputRef) group_input_index[i] = pre[i]->input_index;
  Scope empty_scope;
  NodeResolver resolver = [&](const sql::Expr& e) -> std::optional<ExprPtr> {
    for (size_t i = 0; i < group_exprs.size(); ++i) {
      if (group_exprs[i]->equals(e)) return makeInputRef(static_cast<int>(i), agg->row_type.types[i]);
    }
    if (isAggregateCall(e)) {
      for (size_t i = 0; i < agg_exprs.size(); ++i) {
        if (!agg_exprs[i]->equals(e)) continue;
        auto ref = [&](int call) {
          return makeInputRef(static_cast<int>(num_keys) + call, agg->row_type.types[num_keys + static_cast<size_t>(call)]);
        };
        if (!reduced[i]) return ref(call_of[i]);
        return varianceFormula(ref(reduced[i]->sum_sq), ref(reduced[i]->sum), ref(reduced[i]->count),
                               reduced[i]->sqrt, reduced[i]->biased, reduced[i]->type);
      }
    }
    if (group_window != nullptr && e.kind == sql::ExprKind::kCall) {
      // TUMBLE_START / _END / _ROWTIME (and HOP_*, SESSION_*) over the GROUP BY window's arguments.
      const std::string& n = e.name;
      if (isGroupWindowName(n)) fail(e.pos, fmt::format("Window function {} can only be used in GROUP BY", n));
      const size_t us = n.find('_');
      const std::string fn = us == std::string::npos ? "" : n.substr(0, us);
      const std::string prop = us == std::string::npos ? "" : n.substr(us + 1);
      if (isGroupWindowName(fn) && (prop == "START" || prop == "END" || prop == "ROWTIME" || prop == "PROCTIME")) {
        bool same = fn == group_window->name && e.children.size() == group_window->children.size();
        for (size_t i = 0; same && i < e.children.size(); ++i) same = e.children[i]->equals(*group_window->children[i]);
        if (!same)
          fail(e.pos, fmt::format("{} must be called with the arguments of the GROUP BY window {}", n,
                                  group_window->toString()));
        // *_PROCTIME: a processing-time attribute of the output, the clock as the row leaves (Flink's
        // proctime('w$) property).
        if (prop == "PROCTIME") return proctimeCall(config);
        if (prop == "ROWTIME" && window.proctime)
          fail(e.pos, fmt::format("{} is only defined on an event-time window; {} is over a processing-time "
                                  "attribute (use {}_PROCTIME)",
                                  n, group_window->toString(), fn));
        const int end = static_cast<int>(agg->row_type.size()) - 1;
        if (prop == "START") return makeInputRef(end - 1, LogicalType::timestamp(3, false));
        ExprPtr end_ref = makeInputRef(end, LogicalType::timestamp(3, false));
        if (prop == "END") return end_ref;
        // *_ROWTIME: the window's last millisecond (end - 1 ms), a row time attribute of the output.
        return windowTimeOf(end_ref, window);
      }
    }
    if (e.kind == sql::ExprKind::kIdentifier) {
      const std::string& n = e.names.back();
      if (from.windowed && n == "window_time" && has_window_time) {
        // Flink's window_time: the window's last millisecond, a row time attribute of the output, so a
        // window TVF can follow (cascading windows); the clock when the row leaves on processing time.
        if (window.proctime) return proctimeCall(config);
        return windowTimeOf(makeInputRef(static_cast<int>(agg->row_type.size()) - 1, LogicalType::timestamp(3, false)),
                            window);
      }
      if (from.windowed && (n == "window_start" || n == "window_end")) {
        int idx = static_cast<int>(agg->row_type.size()) - (n == "window_start" ? 2 : 1);
        return makeInputRef(idx, LogicalType::timestamp(3, false));
      }
      ExprPtr ref = resolveIdentifier(e, from.scope);
      for (size_t i = 0; i < group_exprs.size(); ++i)
        if (group_input_index[i] == ref->input_index) return makeInputRef(static_cast<int>(i), agg->row_type.types[i]);
      fail(e.pos, fmt::format("Expression '{}' is not being grouped", sql::qualifiedNameToString(e.names)));
    }
    return std::nullopt;
  };
  ExprPtr having;
  if (s.having) {
    having = convert(*s.having, empty_scope, &resolver);
    checkBoolean(having, *s.having, "HAVING");
  }
  std::vector<ExprPtr> post;
  std::vector<std::string> post_names;
  for (size_t i = 0; i < s.select_list.size(); ++i) {
    post.push_back(convert(*s.select_list[i].expr, empty_scope, &resolver));
    post_names.push_back(itemName(s.select_list[i], i));
  }
  RelNodePtr out = makeCalc(agg, having, post, post_names);
  if (group_window != nullptr || (has_window_time && !window.proctime)) {
    // *_ROWTIME and window_time are row time attributes of the output (Flink's rowtime('w$) property).
    auto copy = std::make_shared<RelNode>(*out);
    for (size_t i = 0; i < s.select_list.size(); ++i) {
      const sql::Expr& e = *s.select_list[i].expr;
      if (group_window != nullptr && e.kind == sql::ExprKind::kCall && e.name.size() > 8 &&
          e.name.substr(e.name.size() - 8) == "_ROWTIME")
        copy->rowtime[i] = true;
      if (group_window == nullptr && e.kind == sql::ExprKind::kIdentifier && e.names.back() == "window_time")
        copy->rowtime[i] = true;
    }
    out = copy;
  }
  return out;
}

}  // namespace sluice::table
