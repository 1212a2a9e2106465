#pragma once
/// Internal to the planner: the state and steps of SqlToRelConverter, split over
/// sql_to_rel.cc (FROM, SELECT, UNION, INSERT), sql_to_rel_expr.cc (expressions),
/// sql_to_rel_aggregate.cc (GROUP BY and window aggregation) and sql_to_rel_join.cc (joins).

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "table/catalog/catalog.h"
#include "table/catalog/table_factory.h"
#include "table/planner/sql_to_rel.h"
#include "table/sql/parser.h"

namespace sluice::table {

using types::LogicalType;
using types::RowType;
using types::TypeId;

/// One column visible to name resolution.
struct ScopeColumn {
  std::string qualifier;  ///< table name or alias
  std::string name;
  int index = -1;  ///< column of the input rel; -1 for window properties
  LogicalType type;
  bool rowtime = false;
  bool window_property = false;  ///< window_start / window_end / window_time of a window TVF
  /// A flattened field of the ROW column `name`: the field names below it (`name.a.b` or `qualifier.name.a.b`).
  std::vector<std::string> nested = {};
  bool row_value = false;  ///< the ROW column itself (index -1): naming it whole is refused
  /// 0 for the query's own columns, 1 for an enclosing query's (a correlated subquery): a name resolves at
  /// the smallest depth that has it, as SQL scoping does.
  int depth = 0;
};

struct Scope {
  std::vector<ScopeColumn> columns;
};

/// What a FROM clause produced.
struct FromResult {
  RelNodePtr rel;
  Scope scope;
  bool windowed = false;  ///< FROM TABLE(TUMBLE/HOP(...))
  WindowSpec window;
  sql::SourcePos window_pos;
};

/// STDDEV_POP, STDDEV_SAMP, VAR_POP, VAR_SAMP: planned as SUM(x * x), SUM(x), COUNT(x) and a formula over
/// them (Flink's AggregateReduceFunctionsRule).
inline bool isVarianceName(const std::string& n) {
  return n == "STDDEV_POP" || n == "STDDEV_SAMP" || n == "VAR_POP" || n == "VAR_SAMP";
}

/// The legacy group window functions of GROUP BY (Flink's GroupWindowAggregate).
inline bool isGroupWindowName(const std::string& n) { return n == "TUMBLE" || n == "HOP" || n == "SESSION"; }

inline bool isAggregateName(const std::string& n) {
  return n == "COUNT" || n == "SUM" || n == "MIN" || n == "MAX" || n == "AVG" || n == "FIRST_VALUE" ||
         n == "LAST_VALUE" || n == "LISTAGG" || isVarianceName(n);
}


// Replaces input refs of `e` by the expressions they point to (Calc fusion).
inline ExprPtr substitute(const ExprPtr& e, const std::vector<ExprPtr>& inner) {
  if (e->kind == ExprKind::kInputRef) return inner[static_cast<size_t>(e->input_index)];
  if (e->kind != ExprKind::kCall) return e;
  auto n = std::make_shared<Expr>(*e);
  for (auto& a : n->args) a = substitute(a, inner);
  return n;
}

inline void countRefs(const ExprPtr& e, std::vector<int>& counts) {
  if (e->kind == ExprKind::kInputRef) {
    ++counts[static_cast<size_t>(e->input_index)];
  } else if (e->kind == ExprKind::kCall) {
    for (const auto& a : e->args) countRefs(a, counts);
  }
}

// Fusing two Calcs inlines the lower projections into the upper ones; refuse when that would
// evaluate a non-trivial lower expression more than once (as Flink's FlinkRelUtil.isMergeable).
inline bool isMergeable(const RelNode& lower, const std::vector<ExprPtr>& projections, const ExprPtr& condition) {
  std::vector<int> counts(lower.projections.size(), 0);
  for (const auto& p : projections) countRefs(p, counts);
  if (condition) countRefs(condition, counts);
  for (size_t i = 0; i < counts.size(); ++i) {
    ExprKind k = lower.projections[i]->kind;
    if (counts[i] > 1 && k != ExprKind::kInputRef && k != ExprKind::kLiteral) return false;
  }
  return true;
}

inline bool isIdentity(const std::vector<ExprPtr>& projections, size_t input_width) {
  if (projections.size() != input_width) return false;
  for (size_t i = 0; i < projections.size(); ++i)
    if (projections[i]->kind != ExprKind::kInputRef || projections[i]->input_index != static_cast<int>(i)) return false;
  return true;
}

/// The AND parts of `e`, appended to `out` (joins; sql_to_rel_join.cc, sql_to_rel_temporal.cc).
inline void splitConjuncts(const ExprPtr& e, std::vector<ExprPtr>& out) {
  if (e->kind == ExprKind::kCall && e->op == ScalarOp::kAnd) {
    for (const auto& a : e->args) splitConjuncts(a, out);
    return;
  }
  out.push_back(e);
}

/// The conjunction of `conjuncts`; null when there is none.
inline ExprPtr andOf(const std::vector<ExprPtr>& conjuncts) {
  if (conjuncts.empty()) return nullptr;
  ExprPtr out = conjuncts[0];
  for (size_t i = 1; i < conjuncts.size(); ++i) out = makeCall(ScalarOp::kAnd, {out, conjuncts[i]});
  return out;
}

/// The smallest and largest input column `e` reads; {INT_MAX, -1} when none.
inline void refRange(const ExprPtr& e, int& lo, int& hi) {
  if (e->kind == ExprKind::kInputRef) {
    lo = std::min(lo, e->input_index);
    hi = std::max(hi, e->input_index);
  } else if (e->kind == ExprKind::kCall) {
    for (const auto& a : e->args) refRange(a, lo, hi);
  }
}

/// `e` with every input reference i >= from moved by `delta` (and those below `from` unchanged).
inline ExprPtr shiftRefs(const ExprPtr& e, int from, int delta) {
  if (e->kind == ExprKind::kInputRef) {
    if (e->input_index < from || delta == 0) return e;
    return makeInputRef(e->input_index + delta, e->type);
  }
  if (e->kind != ExprKind::kCall) return e;
  auto n = std::make_shared<Expr>(*e);
  for (auto& a : n->args) a = shiftRefs(a, from, delta);
  return n;
}

/// Both sides of a key pair hash and encode a value alike (runtime::hashKey, KeyCodec).
inline bool sameKeyForm(const LogicalType& a, const LogicalType& b) {
  if (a.isIntegral() && b.isIntegral()) return true;
  if (a.isString() && b.isString()) return true;
  return a.withNullable(true) == b.withNullable(true);
}

/// Column `index` of `rel` is a processing-time attribute: a PROCTIME() computed column passed on unchanged
/// (sql_to_rel_rank.cc).
bool isProctimeAttribute(const RelNode& rel, int index);
/// `e` holds an OVER window (sql_to_rel_rank.cc).
bool containsOverWindow(const sql::Expr& e);
/// The error for an OVER window where it cannot be planned (sql_to_rel_rank.cc).
std::string overNotHere(const sql::Expr& e);
/// Flink's RelWindowProperties: the columns of a node that are window_start / window_end / window_time of
/// one window (`window`; its time_index means nothing here). Several columns may carry one property.
struct WindowProperties {
  WindowSpec window;
  std::vector<int> starts, ends, times;
};
/// The window properties of `rel` (window_properties.cc, Flink's FlinkRelMdWindowProperties): from a window
/// TVF or a window aggregation, through Calcs, window joins, window Top-N and deduplication; nullopt when
/// none.
std::optional<WindowProperties> windowPropertiesOf(const RelNode& rel);
/// The unique keys of `rel`'s rows (Flink's FlinkRelMdUniqueKeys, for the join input specs): a table's
/// primary key, the group keys of an aggregation or ChangelogNormalize, kept through projections.
std::vector<std::vector<int>> uniqueKeysOf(const RelNode& rel);

struct SqlToRelConverter::Impl {
  const Catalog& catalog;
  const FactoryRegistry& factories;
  const Configuration& config;
  std::string_view script;
  int view_depth = 0;
  /// The WITH items in scope, outermost first (sql_to_rel_setop.cc).
  std::vector<const sql::WithItem*> with_items = {};

  [[noreturn]] void fail(sql::SourcePos pos, const std::string& message) const {
    sql::throwSqlError(message, script, pos, "SQL validation error");
  }

  // ---- aggregate calls (built-in and user-defined) -----------------------------------------

  /// The user-defined aggregate function `name` resolves to, in Flink's order (temporary system functions,
  /// then the built-ins, then temporary and catalog functions), or null (sql_to_rel_aggregate.cc).
  const CatalogFunction* userAggregate(const std::string& name) const;
  /// A call of a built-in aggregate (isAggregateName) or of a user-defined aggregate function.
  bool isAggregateCall(const sql::Expr& e) const {
    return e.kind == sql::ExprKind::kCall && (isAggregateName(e.name) || userAggregate(e.name) != nullptr);
  }
  /// The first aggregate call inside `e` (pre-order), or null.
  const sql::Expr* findAggregate(const sql::Expr& e) const {
    if (isAggregateCall(e)) return &e;
    for (const auto& c : e.children)
      if (c)
        if (const sql::Expr* a = findAggregate(*c)) return a;
    return nullptr;
  }
  bool containsAggregate(const sql::Expr& e) const { return findAggregate(e) != nullptr; }
  /// Appends the aggregate calls of `e` not in `out` yet (outermost only).
  void collectAggregates(const sql::Expr& e, std::vector<const sql::Expr*>& out) const {
    if (isAggregateCall(e)) {
      for (const sql::Expr* x : out)
        if (x->equals(e)) return;
      out.push_back(&e);
      return;
    }
    for (const auto& c : e.children)
      if (c) collectAggregates(*c, out);
  }
  /// The AggregateCall of the user-defined aggregate `fn` called as `a` (kind, function, types, distinct,
  /// SQL text); its arguments, converted over `scope` and cast to the parameter types, go to `args`, for
  /// the caller to place as columns into `user_args`. FILTER is the caller's. Fails at `a` with the
  /// function's expected signature.
  AggregateCall userAggregateCall(const sql::Expr& a, const CatalogFunction& fn, const Scope& scope,
                                  std::vector<ExprPtr>& args) const;

  /// `execution.runtime-mode` = BATCH: bounded insert-only sources, no watermarks, final results only.
  bool batch() const;
  /// BATCH: a node whose streaming operator emits a changelog gets `batch_final` (its final rows as +I at
  /// the end of input) and an insert-only changelog, so the nodes above it plan for insert-only input.
  void finalInBatch(RelNode& rel) const {
    if (!batch() || !rel.producesUpdates()) return;
    rel.batch_final = true;
    rel.changelog = ChangelogMode::kInsertOnly;
  }

  // ---- plan building helpers ---------------------------------------------------------------

  /// A Calc over `input`; fused into `input` when it is a Calc itself.
  RelNodePtr makeCalc(const RelNodePtr& input, ExprPtr condition, std::vector<ExprPtr> projections,
                      std::vector<std::string> names);

  /// Marks a Calc built for a scan's computed columns as part of the scan (copying a shared node).
  static RelNodePtr sourceBlock(RelNodePtr rel, int parallelism);

  // ---- expressions -------------------------------------------------------------------------

  /// Hook for aggregate contexts: may replace a whole AST node by an expression.
  using NodeResolver = std::function<std::optional<ExprPtr>(const sql::Expr&)>;

  ExprPtr resolveIdentifier(const sql::Expr& e, const Scope& scope) const;

  ExprPtr literal(const sql::Expr& e) const;

  static bool parseTimestampLiteral(const std::string& s, int64_t& ms, int& precision);

  ExprPtr call(const sql::Expr& at, ScalarOp op, std::vector<ExprPtr> args) const;

  ExprPtr convert(const sql::Expr& e, const Scope& scope, const NodeResolver* resolver = nullptr) const;

  // ---- FROM --------------------------------------------------------------------------------

  /// A table's schema resolved from its DDL: physical row, computed columns, watermark.
  struct TableSchema {
    ResolvedTable resolved;  ///< physical columns, options, primary key
    bool has_computed = false;
    std::vector<ExprPtr> projections;  ///< per output column (ROW columns flattened), over the scan row (when computed or watermarked)
    std::vector<std::string> names;
    int rowtime = -1;   ///< output column of WATERMARK FOR, or -1
    ExprPtr watermark;  ///< over the output columns
    /// Name resolution over the output columns (index = output column), ROW columns flattened.
    std::vector<ScopeColumn> scope;
    /// Tables with ROW columns: the field path of each physical scan column; the scan's physical row type.
    std::vector<std::vector<int>> nested_paths;
    RowType scan_physical;
  };

  /// Validates a CREATE TABLE statement's schema (Flink resolves it when the table is created).
  TableSchema resolveSchema(const sql::CreateTableStmt& def, const std::string& name,
                            const std::string& qualifier) const;

  FromResult convertTable(const CatalogTable& table, const std::string& qualifier, sql::SourcePos pos);

  FromResult convertNamed(const sql::QualifiedName& name, const std::optional<std::string>& alias, sql::SourcePos pos);

  static FromResult fromRel(const RelNodePtr& rel, const std::string& qualifier);

  FromResult convertWindowTvf(const sql::TableRef& ref);
  /// A window TVF read on its own (no window aggregation): a kWindowTableFunction over the TVF's input, its
  /// window_start / window_end / window_time columns (window_time the row time) behind the input's.
  FromResult windowTableFunction(const FromResult& from);

  FromResult convertFrom(const sql::TableRef& ref);

  /// A FROM clause with joins (sql_to_rel_join.cc): the Join nodes over its tables, with the scope of
  /// all their columns. `where_conjuncts`: the WHERE clause (its AND parts); the conjuncts the joins take
  /// are removed and the rest is returned in `where` (over the scope; null when none is left).
  FromResult convertJoinFrom(const sql::TableRef& from, const std::vector<const sql::Expr*>& where_conjuncts,
                             ExprPtr& where);
  /// A Join node of `type` on left_keys[i] = right_keys[i] (over each input) and the non-equi `rest` (over
  /// left ++ right columns, may be null); keys of different types are cast below. Fails at `pos`.
  /// With `interval` set: an IntervalJoin node instead, of insert-only inputs (else fails at `pos`), its
  /// time predicates `time_condition` (over left ++ right, for explain) and bounds (time indexes into the
  /// inputs); no keys are needed. With `temporal` (its time columns set; they index the inputs as given)
  /// the node is an event-time temporal join (kTemporalJoin) instead.
  RelNodePtr makeJoin(FlinkJoinType type, RelNodePtr left, RelNodePtr right, const std::vector<ExprPtr>& left_keys,
                      const std::vector<ExprPtr>& right_keys, ExprPtr rest, sql::SourcePos pos,
                      const IntervalJoinBounds* interval = nullptr, ExprPtr time_condition = nullptr,
                      const TemporalJoinSpec* temporal = nullptr);
  /// A window join (Flink's StreamPhysicalWindowJoinRule / WindowJoinUtil) of two leaves with window
  /// properties (window TVFs, window aggregations over them) when the equi keys pair a window_start and a
  /// window_end column of each side: those two pairs leave the keys, the rest stay keys and `rest` the
  /// residual condition; a kWindowJoin (under a Calc when keys needed casts). nullptr when neither pair is
  /// there (a regular join). Flink's errors for one pair only, for different windows and for processing time,
  /// at `pos`. `type` may be SEMI / ANTI (a correlated IN / EXISTS).
  RelNodePtr makeWindowJoin(FlinkJoinType type, sql::SourcePos pos, const WindowProperties& left_window,
                            const WindowProperties& right_window,
                            RelNodePtr left, RelNodePtr right, std::vector<ExprPtr> left_keys,
                            std::vector<ExprPtr> right_keys, const std::vector<ExprPtr>& rest);
  /// The bounds of an interval join of `left` and `right` from the conjuncts of its condition (over left ++
  /// right; Flink's IntervalJoinUtil.extractWindowBounds): one `=` or two range predicates (`<`, `<=`,
  /// `>`, `>=`, and BETWEEN, which is split into `>=` and `<=` in `conjuncts`) comparing one time
  /// attribute of each input, both row times or both processing times, plus or minus constant intervals.
  /// Marks those predicates in `is_time`. nullopt when the condition has no such bounds (a regular
  /// join). A comparison of a row time with a processing time attribute fails at its `positions` entry.
  std::optional<IntervalJoinBounds> intervalBounds(std::vector<ExprPtr>& conjuncts,
                                                   std::vector<sql::SourcePos>& positions, const RelNode& left,
                                                   const RelNode& right, std::vector<bool>& is_time) const;
  /// The right side of a lookup or temporal join, `t FOR SYSTEM_TIME AS OF period` (sql_to_rel_temporal.cc).
  struct SnapshotTable {
    bool lookup = false;  ///< a processing-time lookup join; else an event-time temporal join
    int period = -1;      ///< the FROM row's column the period reads (a time attribute of the left side)
    sql::SourcePos period_pos;
    std::string table_name;
    std::shared_ptr<TableSchema> schema;  ///< lookup: the dimension table's columns
    std::shared_ptr<const LookupTableLoader> loader;
  };
  /// The right side of `FROM t, LATERAL TABLE(f(t.x)) AS r(a, b)` (sql_to_rel_correlate.cc).
  struct LateralCall {
    std::string name;
    std::shared_ptr<const TableFunction> function;
    std::vector<ExprPtr> args;  ///< over the FROM row to its left, cast to the parameter types
    types::RowType output;      ///< the function's columns (before any alias)
    sql::SourcePos pos;
  };
  /// Resolves `ref` (kLateral) against the FROM row to its left: the function's columns as a scope (no
  /// rel: the Correlate is built with the join). Fails at the call.
  FromResult convertLateral(const sql::TableRef& ref, const Scope& left, LateralCall& call);
  /// The Correlate of `left` (columns [left_lo, left_hi) of the FROM row) with `call`; `conditions` (over
  /// left ++ function columns) filter an inner one; a LEFT one takes only ON TRUE. Fails at `pos`.
  RelNodePtr makeCorrelate(RelNodePtr left, const LateralCall& call, int left_lo, int left_hi, bool left_outer,
                           const std::vector<ExprPtr>& conditions, sql::SourcePos pos);
  struct JoinTree;  ///< sql_to_rel_join.cc
  /// Resolves `ref` (with `system_time`) against the FROM row to its left (`left`, with `attr` per column:
  /// 'r' a row time, 'p' a processing time, 0 neither): the table's scope, and its rel for a temporal join
  /// (a lookup table gets no scan). Fails at the period or the table.
  FromResult convertSnapshot(const sql::TableRef& ref, const Scope& left, const std::vector<char>& attr,
                             SnapshotTable& snap);
  /// The lookup join of `probe` with `snap` on `conjuncts` (over probe ++ dimension columns): equalities
  /// between a probe expression and a dimension column are the lookup keys, conjuncts on the dimension
  /// table alone its calc, the rest the join condition. Fails at `pos`.
  RelNodePtr makeLookupJoin(FlinkJoinType type, RelNodePtr probe, const SnapshotTable& snap,
                            const std::vector<ExprPtr>& conjuncts, sql::SourcePos pos);
  /// The event-time temporal join of `left` (row time column `left_time`) with the versioned `right` on
  /// `conjuncts` (over left ++ right columns): equalities between the sides are the keys and must cover the
  /// versioned side's primary key; it needs a primary key and a row time attribute. Fails at `pos`.
  RelNodePtr makeTemporalJoin(FlinkJoinType type, RelNodePtr left, RelNodePtr right, int left_time,
                              const std::vector<ExprPtr>& conjuncts, sql::SourcePos pos);
  /// `input` semi / anti joined with the subquery of `in` (x [NOT] IN (SELECT ...)), x over `scope`.
  /// STDDEV_* / VAR_* as three calls appended to `calls` over columns appended to `pre` (their indices).
  struct VarianceCalls {
    int sum_sq = -1, sum = -1, count = -1;
    bool sqrt = false, biased = false;
    LogicalType type;  ///< the call's type (AVG's of the argument)
  };
  VarianceCalls reduceVariance(const sql::Expr& a, const Scope& scope, std::vector<ExprPtr>& pre,
                               std::vector<std::string>& pre_names, std::vector<AggregateCall>& calls);
  static ExprPtr varianceFormula(ExprPtr sum_sq, ExprPtr sum, ExprPtr count, bool sqrt, bool biased,
                                 const LogicalType& type);
  /// A WHERE conjunct `x [NOT] IN (SELECT ...)`, `EXISTS (...)` or `NOT EXISTS (...)` as a semi / anti join
  /// of `input` with the subquery; a correlated subquery's conditions on the outer row become join keys
  /// and a residual join condition (sql_to_rel_join.cc); a correlated EXISTS needs an equality with the
  /// outer row and a plain SELECT ... FROM ... WHERE (no GROUP BY, DISTINCT, joins, set operations).
  RelNodePtr convertSubqueryPredicate(const RelNodePtr& input, const Scope& scope, const sql::Expr& pred);
  RelNodePtr convertInSubquery(const RelNodePtr& input, const Scope& scope, const sql::Expr& in);
  /// An uncorrelated [NOT] EXISTS: a semi (anti) join of `input` with the rows of `sub` that pass
  /// `condition` (over sub; may be null), both sides keyed on the constant TRUE, so one subtask joins them
  /// (as Flink's join without keys after SubQueryRemoveRule).
  RelNodePtr makeUncorrelatedExists(const RelNodePtr& input, const RelNodePtr& sub, ExprPtr condition, bool negated,
                                    sql::SourcePos pos);

  // ---- SELECT ------------------------------------------------------------------------------

  static std::string itemName(const sql::SelectItem& item, size_t position);

  void checkBoolean(const ExprPtr& e, const sql::Expr& at, const char* clause) const;

  RelNodePtr convertSelect(const sql::SelectStmt& s);

  /// The SELECT items (stars expanded) converted in `scope`, with their output names.
  void convertSelectList(const sql::SelectStmt& s, const Scope& scope, const NodeResolver* resolver,
                         std::vector<ExprPtr>& projections, std::vector<std::string>& names) const;

  void expandStar(const sql::SelectItem& item, const Scope& scope, std::vector<ExprPtr>& projections,
                  std::vector<std::string>& names) const;

  RelNodePtr convertAggregate(const sql::SelectStmt& s, FromResult& from, ExprPtr where);
  /// The window of GROUP BY TUMBLE(ts, size) / HOP(ts, slide, size) / SESSION(ts, gap) over `from`
  /// (ts a row time attribute, constant positive intervals); throws SqlError at the offending argument.
  WindowSpec groupWindowSpec(const sql::Expr& call, const FromResult& from) const;

  // ---- ranking (sql_to_rel_rank.cc) ----------------------------------------------------------

  static bool selectHasOver(const sql::SelectStmt& s);
  /// A SELECT with a ranking function: Calc over a pending Rank (its range comes from a filter above).
  RelNodePtr convertOverSelect(const sql::SelectStmt& s, FromResult& from, ExprPtr where);
  /// A SELECT with OVER aggregates (sql_to_rel_over.cc): Calc over OverAggregate over Calc.
  RelNodePtr convertOverAggregate(const sql::SelectStmt& s, FromResult& from, ExprPtr where);
  /// `calc` (with a condition) over a pending Rank: the Rank with the range its filter gives, maybe turned
  /// into a Deduplicate, under the rest of the Calc; `calc` itself when the filter gives no upper bound.
  RelNodePtr pushRankRange(const RelNodePtr& calc);
  /// The window Top-N (Flink's StreamPhysicalWindowRank) or, for the top row on one time attribute without
  /// the rank number, window deduplication (StreamPhysicalWindowDeduplicate) of `input` by `spec` (its range
  /// set), whose PARTITION BY holds the `start` / `end` columns of `input`'s `window` and the other `keys`.
  /// Fails at the ranking function: a processing-time window, a deduplication on processing time.
  RelNodePtr makeWindowRank(const RelNodePtr& input, RankSpec spec, const WindowSpec& window, int start, int end,
                            std::vector<int> keys) const;
  /// Fails at the ranking function of a Rank under `rel` still without a range.
  void checkRanks(const RelNodePtr& rel) const;
  /// The query's ORDER BY ... LIMIT / OFFSET over `rel` (SortLimit, Limit), or `rel`.
  RelNodePtr applyOrderByLimit(const sql::Query& q, RelNodePtr rel);
  /// BATCH: ORDER BY [LIMIT] [OFFSET] over `rel` as a sort at the end of input (`spec` holds the order).
  RelNodePtr batchSort(const sql::Query& q, const RelNodePtr& rel, RankSpec spec);
  RelNodePtr convertQueryRel(const sql::Query& q);

  // ---- VALUES, WITH, set operations (sql_to_rel_setop.cc) -------------------------------------

  /// A Values node of `rows` (typed expressions without input references, same width as `names`),
  /// evaluated now; column types unified across rows. Fails at `at[c]` for a column without a type.
  RelNodePtr makeValues(const std::vector<std::vector<ExprPtr>>& rows, std::vector<std::string> names,
                        const std::vector<sql::SourcePos>& at);
  RelNodePtr convertValues(const sql::SelectStmt& s);
  /// The FROM of a SELECT without FROM: one row, no visible column (Flink's Values of one ZERO row).
  FromResult oneRowFrom();
  /// The innermost WITH item named `name` in scope, and how many items it sees; null when none.
  const sql::WithItem* findWithItem(const sql::QualifiedName& name, size_t& visible) const;
  RelNodePtr convertWithItem(const sql::WithItem& item, size_t visible, sql::SourcePos pos);
  /// Renames the columns of `from` to `ref.column_aliases` (`AS t(a, b)`) when given.
  void applyColumnAliases(FromResult& from, const sql::TableRef& ref) const;
  /// Checks arity and casts each branch to the columns' least restrictive types (names of the first).
  std::vector<RelNodePtr> unifyBranches(std::vector<RelNodePtr> branches, const std::vector<sql::SourcePos>& at,
                                        const char* what);
  RelNodePtr makeUnionAll(std::vector<RelNodePtr> branches);
  /// GROUP BY the first `keys` columns of `input` with `calls`.
  RelNodePtr groupByAll(RelNodePtr input, size_t keys, std::vector<AggregateCall> calls);
  /// SELECT DISTINCT * over `input`.
  RelNodePtr distinctOver(RelNodePtr input);
  RelNodePtr convertSetOperation(const sql::SelectStmt& s);
  RelNodePtr makeSink(RelNodePtr input, const sql::InsertStmt& insert);
};

}  // namespace sluice::table
