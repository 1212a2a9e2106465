#include "table/planner/sql_to_rel.h"

#include <algorithm>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "common/config.h"
#include "common/error.h"
#include "table/catalog/catalog.h"
#include "table/catalog/table_factory.h"
#include "table/planner/type_coercion.h"
#include "table/sql/parser.h"
#include "types/value_format.h"

namespace sluice::table {

using types::LogicalType;
using types::RowType;
using types::TypeId;

namespace {

/// One column visible to name resolution.
struct ScopeColumn {
  std::string qualifier;  ///< table name or alias
  std::string name;
  int index = -1;         ///< column of the input rel; -1 for window properties
  LogicalType type;
  bool rowtime = false;
  bool window_property = false;  ///< window_start / window_end / window_time of a window TVF
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

bool isAggregateName(const std::string& n) {
  return n == "COUNT" || n == "SUM" || n == "MIN" || n == "MAX" || n == "AVG";
}

/// The first aggregate call inside `e` (pre-order), or null.
const sql::Expr* findAggregate(const sql::Expr& e) {
  if (e.kind == sql::ExprKind::kCall && isAggregateName(e.name)) return &e;
  for (const auto& c : e.children)
    if (c)
      if (const sql::Expr* a = findAggregate(*c)) return a;
  return nullptr;
}

bool containsAggregate(const sql::Expr& e) { return findAggregate(e) != nullptr; }

void collectAggregates(const sql::Expr& e, std::vector<const sql::Expr*>& out) {
  if (e.kind == sql::ExprKind::kCall && isAggregateName(e.name)) {
    for (const sql::Expr* x : out)
      if (x->equals(e)) return;
    out.push_back(&e);
    return;
  }
  for (const auto& c : e.children)
    if (c) collectAggregates(*c, out);
}

// Replaces input refs of `e` by the expressions they point to (Calc fusion).
ExprPtr substitute(const ExprPtr& e, const std::vector<ExprPtr>& inner) {
  if (e->kind == ExprKind::kInputRef) return inner[static_cast<size_t>(e->input_index)];
  if (e->kind != ExprKind::kCall) return e;
  auto n = std::make_shared<Expr>(*e);
  for (auto& a : n->args) a = substitute(a, inner);
  return n;
}

void countRefs(const ExprPtr& e, std::vector<int>& counts) {
  if (e->kind == ExprKind::kInputRef) {
    ++counts[static_cast<size_t>(e->input_index)];
  } else if (e->kind == ExprKind::kCall) {
    for (const auto& a : e->args) countRefs(a, counts);
  }
}

// Fusing two Calcs inlines the lower projections into the upper ones; refuse when that would
// evaluate a non-trivial lower expression more than once (as Flink's FlinkRelUtil.isMergeable).
bool isMergeable(const RelNode& lower, const std::vector<ExprPtr>& projections, const ExprPtr& condition) {
  std::vector<int> counts(lower.projections.size(), 0);
  for (const auto& p : projections) countRefs(p, counts);
  if (condition) countRefs(condition, counts);
  for (size_t i = 0; i < counts.size(); ++i) {
    ExprKind k = lower.projections[i]->kind;
    if (counts[i] > 1 && k != ExprKind::kInputRef && k != ExprKind::kLiteral) return false;
  }
  return true;
}

bool isIdentity(const std::vector<ExprPtr>& projections, size_t input_width) {
  if (projections.size() != input_width) return false;
  for (size_t i = 0; i < projections.size(); ++i)
    if (projections[i]->kind != ExprKind::kInputRef || projections[i]->input_index != static_cast<int>(i)) return false;
  return true;
}

}  // namespace

struct SqlToRelConverter::Impl {
  const Catalog& catalog;
  const FactoryRegistry& factories;
  const Configuration& config;
  std::string_view script;
  int view_depth = 0;

  [[noreturn]] void fail(sql::SourcePos pos, const std::string& message) const {
    sql::throwSqlError(message, script, pos, "SQL validation error");
  }

  // ---- plan building helpers ---------------------------------------------------------------

  /// A Calc over `input`; fused into `input` when it is a Calc itself.
  RelNodePtr makeCalc(const RelNodePtr& input, ExprPtr condition, std::vector<ExprPtr> projections,
                      std::vector<std::string> names) {
    RelNodePtr in = input;
    // A Calc over a scan is pushed into it (projection/filter push-down): it runs in the source
    // block, at the source's parallelism, before any exchange.
    bool fused_into_source_block = input->in_source_block;
    if (in->kind == RelKind::kCalc && isMergeable(*in, projections, condition)) {
      for (auto& p : projections) p = substitute(p, in->projections);
      if (condition) condition = substitute(condition, in->projections);
      if (in->condition) {
        condition = condition ? makeCall(ScalarOp::kAnd, {in->condition, condition}) : in->condition;
      }
      in = in->inputs[0];
    }
    if (!condition && isIdentity(projections, in->row_type.size())) {
      // A pure rename: keep the input, relabel.
      auto copy = std::make_shared<RelNode>(*in);
      copy->row_type.names = std::move(names);
      return copy;
    }
    auto rel = std::make_shared<RelNode>();
    rel->kind = RelKind::kCalc;
    rel->inputs = {in};
    rel->condition = std::move(condition);
    rel->parallelism = -1;
    for (size_t i = 0; i < projections.size(); ++i) {
      rel->row_type.names.push_back(names[i]);
      rel->row_type.types.push_back(projections[i]->type);
      bool rt = projections[i]->kind == ExprKind::kInputRef && in->rowtime[static_cast<size_t>(projections[i]->input_index)];
      rel->rowtime.push_back(rt);
    }
    rel->projections = std::move(projections);
    rel->produces_updates = in->produces_updates;
    if (fused_into_source_block) {
      rel->in_source_block = true;
      rel->parallelism = in->parallelism;
    }
    return rel;
  }

  /// Marks a Calc built for a scan's computed columns as part of the scan (copying a shared node).
  static RelNodePtr sourceBlock(RelNodePtr rel, int parallelism) {
    if (rel->kind != RelKind::kCalc || rel->in_source_block) return rel;
    auto copy = std::make_shared<RelNode>(*rel);
    copy->in_source_block = true;
    copy->parallelism = parallelism;
    return copy;
  }

  // ---- expressions -------------------------------------------------------------------------

  /// Hook for aggregate contexts: may replace a whole AST node by an expression.
  using NodeResolver = std::function<std::optional<ExprPtr>(const sql::Expr&)>;

  ExprPtr resolveIdentifier(const sql::Expr& e, const Scope& scope) const {
    const auto& parts = e.names;
    const ScopeColumn* found = nullptr;
    for (const auto& c : scope.columns) {
      bool match = parts.size() == 1 ? c.name == parts[0]
                                     : (parts.size() == 2 && c.qualifier == parts[0] && c.name == parts[1]);
      if (!match) continue;
      if (found != nullptr && parts.size() == 1) fail(e.pos, fmt::format("Column '{}' is ambiguous", parts[0]));
      found = &c;
    }
    if (found == nullptr) {
      std::vector<std::string> names;
      for (const auto& c : scope.columns) names.push_back(c.name);
      std::string close = closestConfigKey(parts.back(), names);
      std::string text = sql::qualifiedNameToString(parts);
      if (parts.size() == 2) {
        bool known_table = std::any_of(scope.columns.begin(), scope.columns.end(),
                                       [&](const ScopeColumn& c) { return c.qualifier == parts[0]; });
        if (!known_table) fail(e.pos, fmt::format("Table '{}' not found", parts[0]));
      }
      fail(e.pos, close.empty() ? fmt::format("Column '{}' not found in any table", text)
                                : fmt::format("Column '{}' not found in any table; did you mean '{}'?", text, close));
    }
    if (found->window_property)
      fail(e.pos, fmt::format("'{}' can only be used in a window aggregation grouped by window_start and window_end",
                              found->name));
    return makeInputRef(found->index, found->type);
  }

  ExprPtr literal(const sql::Expr& e) const {
    switch (e.literal_kind) {
      case sql::LiteralKind::kInteger: {
        errno = 0;
        char* end = nullptr;
        unsigned long long v = std::strtoull(e.text.c_str(), &end, 10);
        if (errno != 0 || v > static_cast<unsigned long long>(INT64_MAX)) {
          // Beyond BIGINT: Flink types it DECIMAL(p, 0); we keep integers within 64 bits.
          fail(e.pos, fmt::format("Numeric literal '{}' out of range", e.text));
        }
        if (v <= static_cast<unsigned long long>(INT32_MAX)) return makeLiteral(static_cast<int64_t>(v), LogicalType::integer(false));
        return makeLiteral(static_cast<int64_t>(v), LogicalType::bigint(false));
      }
      case sql::LiteralKind::kDecimal: {
        std::string digits;
        int scale = 0;
        bool after = false;
        for (char c : e.text) {
          if (c == '.') { after = true; continue; }
          digits += c;
          if (after) ++scale;
        }
        size_t nz = digits.find_first_not_of('0');
        std::string sig = nz == std::string::npos ? "0" : digits.substr(nz);
        int precision = std::max<int>(static_cast<int>(sig.size()), scale);
        if (precision == 0) precision = 1;
        if (sig.size() > 18) fail(e.pos, fmt::format("Decimal literal '{}' has more than 18 digits", e.text));
        return makeLiteral(static_cast<int64_t>(std::stoll(sig)), LogicalType::decimal(precision, scale, false));
      }
      case sql::LiteralKind::kApproximate:
        return makeLiteral(std::stod(e.text), LogicalType::doubleType(false));
      case sql::LiteralKind::kString:
        return makeLiteral(e.text, LogicalType::charType(static_cast<int32_t>(std::max<size_t>(1, e.text.size())), false));
      case sql::LiteralKind::kBoolean:
        return makeLiteral(static_cast<int64_t>(e.bool_value ? 1 : 0), LogicalType::boolean(false));
      case sql::LiteralKind::kNull:
        return makeLiteral(std::monostate{}, LogicalType::null());
      case sql::LiteralKind::kTimestamp: {
        int64_t ms = 0;
        int precision = 0;
        if (!parseTimestampLiteral(e.text, ms, precision))
          fail(e.pos, fmt::format("Illegal TIMESTAMP literal '{}': not in format 'yyyy-MM-dd HH:mm:ss[.fff]'", e.text));
        return makeLiteral(ms, LogicalType::timestamp(precision, false));
      }
      case sql::LiteralKind::kInterval:
        return makeLiteral(sql::intervalMillis(e), LogicalType::intervalDayTime(false));
    }
    fail(e.pos, "unsupported literal");
  }

  static bool parseTimestampLiteral(const std::string& s, int64_t& ms, int& precision) {
    types::DateTimeParts p{};
    unsigned y = 0;
    int n = 0;
    if (std::sscanf(s.c_str(), "%4u-%2u-%2u %2u:%2u:%2u%n", &y, &p.month, &p.day, &p.hour, &p.minute, &p.second, &n) != 6)
      return false;
    p.year = y;
    precision = 0;
    size_t i = static_cast<size_t>(n);
    if (i < s.size() && s[i] == '.') {
      ++i;
      unsigned frac = 0;
      int digits = 0;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
        if (digits < 3) frac = frac * 10 + static_cast<unsigned>(s[i] - '0');
        ++digits;
        ++i;
      }
      for (int d = digits; d < 3; ++d) frac *= 10;
      p.millis = frac;
      precision = digits;
    }
    if (i != s.size() || p.month < 1 || p.month > 12 || p.day < 1 || p.day > 31 || p.hour > 23 || p.minute > 59 ||
        p.second > 59)
      return false;
    ms = types::joinTimestamp(p);
    return true;
  }

  ExprPtr call(const sql::Expr& at, ScalarOp op, std::vector<ExprPtr> args) const {
    try {
      return makeCall(op, std::move(args));
    } catch (const SqlError&) {
      throw;
    } catch (const UserError& err) {
      fail(at.pos, err.what());
    }
  }

  ExprPtr convert(const sql::Expr& e, const Scope& scope, const NodeResolver* resolver = nullptr) const {
    if (resolver) {
      if (auto r = (*resolver)(e)) return *r;
    }
    auto sub = [&](size_t i) { return convert(*e.children[i], scope, resolver); };
    switch (e.kind) {
      case sql::ExprKind::kIdentifier: return resolveIdentifier(e, scope);
      case sql::ExprKind::kLiteral: return literal(e);
      case sql::ExprKind::kUnary: {
        if (e.unary_op == sql::UnaryOp::kPlus) return sub(0);
        if (e.unary_op == sql::UnaryOp::kNot) return call(e, ScalarOp::kNot, {sub(0)});
        const sql::Expr& operand = *e.children[0];
        if (operand.kind == sql::ExprKind::kLiteral && operand.literal_kind == sql::LiteralKind::kInteger) {
          if (operand.text == "9223372036854775808") return makeLiteral(INT64_MIN, LogicalType::bigint(false));
          if (operand.text == "2147483648") return makeLiteral(static_cast<int64_t>(INT32_MIN), LogicalType::integer(false));
        }
        ExprPtr v = sub(0);
        if (v->kind == ExprKind::kLiteral && v->type.id != TypeId::kDouble && v->type.id != TypeId::kNull &&
            std::holds_alternative<int64_t>(v->literal))
          return makeLiteral(-std::get<int64_t>(v->literal), v->type);
        if (v->kind == ExprKind::kLiteral && std::holds_alternative<double>(v->literal))
          return makeLiteral(-std::get<double>(v->literal), v->type);
        return call(e, ScalarOp::kNegate, {v});
      }
      case sql::ExprKind::kBinary: {
        static const std::pair<sql::BinaryOp, ScalarOp> kOps[] = {
            {sql::BinaryOp::kPlus, ScalarOp::kPlus},          {sql::BinaryOp::kMinus, ScalarOp::kMinus},
            {sql::BinaryOp::kTimes, ScalarOp::kTimes},        {sql::BinaryOp::kDivide, ScalarOp::kDivide},
            {sql::BinaryOp::kMod, ScalarOp::kMod},            {sql::BinaryOp::kConcat, ScalarOp::kConcat},
            {sql::BinaryOp::kEquals, ScalarOp::kEquals},      {sql::BinaryOp::kNotEquals, ScalarOp::kNotEquals},
            {sql::BinaryOp::kLess, ScalarOp::kLessThan},      {sql::BinaryOp::kLessOrEqual, ScalarOp::kLessThanOrEqual},
            {sql::BinaryOp::kGreater, ScalarOp::kGreaterThan}, {sql::BinaryOp::kGreaterOrEqual, ScalarOp::kGreaterThanOrEqual},
            {sql::BinaryOp::kAnd, ScalarOp::kAnd},            {sql::BinaryOp::kOr, ScalarOp::kOr},
        };
        for (const auto& [b, s] : kOps)
          if (b == e.binary_op) return call(e, s, {sub(0), sub(1)});
        fail(e.pos, "unsupported operator");
      }
      case sql::ExprKind::kBetween:
        return call(e, e.negated ? ScalarOp::kNotBetween : ScalarOp::kBetween, {sub(0), sub(1), sub(2)});
      case sql::ExprKind::kIn: {
        std::vector<ExprPtr> args;
        for (size_t i = 0; i < e.children.size(); ++i) args.push_back(sub(i));
        return call(e, e.negated ? ScalarOp::kNotIn : ScalarOp::kIn, std::move(args));
      }
      case sql::ExprKind::kLike: {
        std::vector<ExprPtr> args;
        for (size_t i = 0; i < e.children.size(); ++i) args.push_back(sub(i));
        return call(e, e.negated ? ScalarOp::kNotLike : ScalarOp::kLike, std::move(args));
      }
      case sql::ExprKind::kIsNull: return call(e, e.negated ? ScalarOp::kIsNotNull : ScalarOp::kIsNull, {sub(0)});
      case sql::ExprKind::kIsTrue: {
        ExprPtr r = call(e, ScalarOp::kIsTrue, {sub(0)});
        return e.negated ? call(e, ScalarOp::kNot, {r}) : r;
      }
      case sql::ExprKind::kIsFalse: {
        ExprPtr r = call(e, ScalarOp::kIsFalse, {sub(0)});
        return e.negated ? call(e, ScalarOp::kNot, {r}) : r;
      }
      case sql::ExprKind::kCase: {
        std::vector<ExprPtr> args;
        size_t i = 0;
        ExprPtr operand;
        if (e.case_has_operand) operand = sub(i++);
        size_t end = e.children.size() - (e.case_has_else ? 1 : 0);
        for (; i + 1 < end + 1 && i < end; i += 2) {
          ExprPtr when = sub(i);
          if (operand) when = call(*e.children[i], ScalarOp::kEquals, {operand, when});
          args.push_back(when);
          args.push_back(sub(i + 1));
        }
        if (e.case_has_else) args.push_back(sub(e.children.size() - 1));
        return call(e, ScalarOp::kCase, std::move(args));
      }
      case sql::ExprKind::kCast: {
        ExprPtr v = sub(0);
        try {
          LogicalType target = e.cast_type.withNullable(e.cast_type.nullable && v->type.nullable ? true : e.cast_type.nullable);
          return e.try_cast ? makeTryCast(v, target) : makeCast(v, target);
        } catch (const SqlError&) {
          throw;
        } catch (const UserError& err) {
          fail(e.pos, err.what());
        }
      }
      case sql::ExprKind::kCall: {
        if (isAggregateName(e.name))
          fail(e.pos, fmt::format("Aggregate function {} is not allowed here", e.name));
        if (e.name == "TUMBLE" || e.name == "HOP" || e.name == "CUMULATE")
          fail(e.pos, fmt::format("Window function {} can only be used in FROM TABLE(...)", e.name));
        std::optional<ScalarOp> op = scalarFunctionByName(e.name);
        if (!op) fail(e.pos, fmt::format("No match found for function signature {}(...)", e.name));
        std::vector<ExprPtr> args;
        for (size_t i = 0; i < e.children.size(); ++i) args.push_back(sub(i));
        if (*op == ScalarOp::kTrim) {
          // TRIM(mode chars FROM s): the evaluator takes (s, chars, mode as INT literal 0/1/2).
          if (args.size() == 1) args.push_back(makeLiteral(std::string(" "), LogicalType::charType(1, false)));
          args.push_back(makeLiteral(static_cast<int64_t>(e.trim_mode), LogicalType::integer(false)));
        }
        return call(e, *op, std::move(args));
      }
      case sql::ExprKind::kDescriptor:
      case sql::ExprKind::kTableArg:
        fail(e.pos, "DESCRIPTOR and TABLE arguments are only allowed in window functions");
    }
    fail(e.pos, "unsupported expression");
  }

  // ---- FROM --------------------------------------------------------------------------------

  /// A table's schema resolved from its DDL: physical row, computed columns, watermark.
  struct TableSchema {
    ResolvedTable resolved;           ///< physical columns, options, primary key
    bool has_computed = false;
    std::vector<ExprPtr> projections;  ///< per declared column, over the physical row (when computed or watermarked)
    std::vector<std::string> names;
    int rowtime = -1;                  ///< declared column of WATERMARK FOR, or -1
    ExprPtr watermark;                 ///< over the declared columns
  };

  /// Validates a CREATE TABLE statement's schema (Flink resolves it when the table is created).
  TableSchema resolveSchema(const sql::CreateTableStmt& def, const std::string& name, const std::string& qualifier) const {
    TableSchema out;
    ResolvedTable& resolved = out.resolved;
    resolved.name = name;
    for (const auto& o : def.options) resolved.options[o.key] = o.value;
    std::vector<int> physical_of_column(def.columns.size(), -1);
    for (size_t i = 0; i < def.columns.size(); ++i) {
      const auto& c = def.columns[i];
      if (c.kind == sql::ColumnKind::kMetadata)
        fail(c.pos, fmt::format("Metadata column '{}' is not supported by this connector yet", c.name));
      for (size_t j = 0; j < i; ++j)
        if (def.columns[j].name == c.name) fail(c.pos, fmt::format("Column '{}' is defined twice", c.name));
      if (c.kind == sql::ColumnKind::kPhysical) {
        physical_of_column[i] = static_cast<int>(resolved.physical_type.size());
        resolved.physical_type.names.push_back(c.name);
        resolved.physical_type.types.push_back(c.type);
      }
    }
    for (const auto& k : def.primary_key) {
      int idx = resolved.physical_type.indexOf(k);
      if (idx < 0) fail(def.primary_key_pos, fmt::format("Primary key column '{}' is not a physical column", k));
      resolved.primary_key.push_back(idx);
      resolved.physical_type.types[static_cast<size_t>(idx)].nullable = false;
    }
    out.has_computed = physical_of_column.size() != resolved.physical_type.size();
    Scope physical_scope;
    for (size_t i = 0; i < resolved.physical_type.size(); ++i)
      physical_scope.columns.push_back({qualifier, resolved.physical_type.names[i], static_cast<int>(i),
                                        resolved.physical_type.types[i], false, false});
    if (out.has_computed || def.watermark) {
      for (size_t i = 0; i < def.columns.size(); ++i) {
        const auto& c = def.columns[i];
        out.names.push_back(c.name);
        if (c.kind == sql::ColumnKind::kPhysical) {
          out.projections.push_back(makeInputRef(physical_of_column[i], c.type));
        } else {
          if (const sql::Expr* a = findAggregate(*c.expr)) fail(a->pos, "Aggregate functions are not allowed in computed columns");
          out.projections.push_back(convert(*c.expr, physical_scope));
        }
      }
    }
    if (def.watermark) {
      const auto& wm = *def.watermark;
      for (size_t i = 0; i < def.columns.size(); ++i)
        if (def.columns[i].name == wm.column) out.rowtime = static_cast<int>(i);
      if (out.rowtime < 0)
        fail(wm.pos, fmt::format("The rowtime attribute field '{}' is not defined in the table schema", wm.column));
      const LogicalType& rt_type = out.projections[static_cast<size_t>(out.rowtime)]->type;
      if (rt_type.id != TypeId::kTimestamp || rt_type.precision > 3)
        fail(wm.pos, fmt::format("Invalid data type of time field for watermark definition. The field must be of type "
                                 "TIMESTAMP(p) or TIMESTAMP_LTZ(p), the supported precision 'p' is from 0 to 3, but "
                                 "the time field type is {}", rt_type.toString()));
      Scope table_scope;
      for (size_t i = 0; i < def.columns.size(); ++i)
        table_scope.columns.push_back({qualifier, def.columns[i].name, static_cast<int>(i),
                                       out.projections[i]->type, false, false});
      out.watermark = convert(*wm.expr, table_scope);
      if (out.watermark->type.id != TypeId::kTimestamp)
        fail(wm.expr->pos, fmt::format("Watermark strategy {} must be of type TIMESTAMP but is of type '{}'",
                                       wm.expr->toString(), out.watermark->type.toString()));
    }
    return out;
  }

  FromResult convertTable(const CatalogTable& table, const std::string& qualifier, sql::SourcePos pos) {
    const sql::CreateTableStmt& def = *table.definition;
    TableSchema schema = resolveSchema(def, table.name, qualifier);
    const ResolvedTable& resolved = schema.resolved;
    std::shared_ptr<ScanTableSource> source;
    try {
      const DynamicTableFactory& f = factories.find(resolved);
      source = f.createSource(resolved, config);
    } catch (const SqlError&) {
      throw;
    } catch (const UserError& err) {
      fail(pos, fmt::format("Unable to create a source for reading table 'default_catalog.default_database.{}'.\n\n{}",
                            table.name, err.what()));
    }
    auto scan = std::make_shared<RelNode>();
    scan->kind = RelKind::kTableSourceScan;
    scan->row_type = resolved.physical_type;
    scan->rowtime.assign(scan->row_type.size(), false);
    scan->table_name = table.name;
    scan->source = source;
    scan->parallelism = source->parallelism().value_or(-1);
    scan->in_source_block = true;

    RelNodePtr rel = scan;
    const std::vector<ExprPtr>& projections = schema.projections;
    const std::vector<std::string>& names = schema.names;
    const bool has_computed = schema.has_computed;
    if (def.watermark) {
      const int rt = schema.rowtime;
      const ExprPtr& wm_expr = schema.watermark;
      // Computed columns first, then the watermark expression over them (two Calcs unless fusing
      // would evaluate a computed column twice).
      rel = sourceBlock(makeCalc(rel, nullptr, projections, names), scan->parallelism);
      std::vector<ExprPtr> with_wm;
      for (size_t i = 0; i < projections.size(); ++i) with_wm.push_back(makeInputRef(static_cast<int>(i), projections[i]->type));
      with_wm.push_back(wm_expr);
      std::vector<std::string> wm_names = names;
      wm_names.push_back("$watermark");
      rel = sourceBlock(makeCalc(rel, nullptr, with_wm, wm_names), scan->parallelism);
      auto assigner = std::make_shared<RelNode>();
      assigner->kind = RelKind::kWatermarkAssigner;
      assigner->inputs = {rel};
      // The operator drops the watermark column again: its output is the table's columns.
      assigner->row_type.names = names;
      for (const auto& p : projections) assigner->row_type.types.push_back(p->type);
      assigner->rowtime.assign(names.size(), false);
      assigner->rowtime[static_cast<size_t>(rt)] = true;
      assigner->rowtime_index = rt;
      assigner->watermark_index = static_cast<int>(with_wm.size() - 1);
      assigner->watermark_expr = wm_expr;
      assigner->parallelism = scan->parallelism;
      assigner->in_source_block = true;
      rel = assigner;
    } else if (has_computed) {
      rel = sourceBlock(makeCalc(rel, nullptr, projections, names), scan->parallelism);
    }
    FromResult out;
    out.rel = rel;
    for (size_t i = 0; i < rel->row_type.size(); ++i)
      out.scope.columns.push_back({qualifier, rel->row_type.names[i], static_cast<int>(i), rel->row_type.types[i],
                                   static_cast<bool>(rel->rowtime[i]), false});
    return out;
  }

  FromResult convertNamed(const sql::QualifiedName& name, const std::optional<std::string>& alias, sql::SourcePos pos) {
    std::string qualifier = alias ? *alias : name.back();
    if (const CatalogTable* t = catalog.findTable(name)) return convertTable(*t, qualifier, pos);
    if (const CatalogView* v = catalog.findView(name)) {
      if (++view_depth > 64) fail(pos, "Views nest too deeply");
      RelNodePtr rel = convertQueryRel(*v->definition->query);
      --view_depth;
      if (!v->definition->column_names.empty()) {
        if (v->definition->column_names.size() != rel->row_type.size())
          fail(pos, fmt::format("View '{}' declares {} columns but its query has {}", v->name,
                                v->definition->column_names.size(), rel->row_type.size()));
        auto copy = std::make_shared<RelNode>(*rel);
        copy->row_type.names = v->definition->column_names;
        rel = copy;
      }
      return fromRel(rel, qualifier);
    }
    std::vector<std::string> names = catalog.names();
    std::string close = closestConfigKey(Catalog::normalize(name), names);
    fail(pos, fmt::format("Object '{}' not found{}", sql::qualifiedNameToString(name),
                          close.empty() ? "" : fmt::format("; did you mean '{}'?", close)));
  }

  static FromResult fromRel(const RelNodePtr& rel, const std::string& qualifier) {
    FromResult out;
    out.rel = rel;
    for (size_t i = 0; i < rel->row_type.size(); ++i)
      out.scope.columns.push_back({qualifier, rel->row_type.names[i], static_cast<int>(i), rel->row_type.types[i],
                                   rel->rowtime[i], false});
    return out;
  }

  FromResult convertWindowTvf(const sql::TableRef& ref) {
    const sql::Expr& c = *ref.call;
    if (c.name != "TUMBLE" && c.name != "HOP")
      fail(c.pos, fmt::format("Table function {} is not supported; supported window functions are TUMBLE and HOP", c.name));
    size_t want = c.name == "TUMBLE" ? 3 : 4;
    if (c.children.size() != want && c.children.size() != want + 1)
      fail(c.pos, fmt::format("Invalid number of arguments to function '{}'. Was expecting {} arguments", c.name, want));
    if (c.children[0]->kind != sql::ExprKind::kTableArg)
      fail(c.children[0]->pos, fmt::format("The first argument of {} must be TABLE t", c.name));
    if (c.children[1]->kind != sql::ExprKind::kDescriptor || c.children[1]->names.size() != 1)
      fail(c.children[1]->pos, fmt::format("The second argument of {} must be DESCRIPTOR(time_column)", c.name));
    FromResult in = convertNamed(c.children[0]->names, std::nullopt, c.children[0]->pos);
    const std::string& col = c.children[1]->names[0];
    const ScopeColumn* tc = nullptr;
    for (const auto& sc : in.scope.columns)
      if (sc.name == col) tc = &sc;
    if (tc == nullptr) fail(c.children[1]->pos, fmt::format("Column '{}' not found in table '{}'", col,
                                                             sql::qualifiedNameToString(c.children[0]->names)));
    if (!tc->rowtime)
      fail(c.children[1]->pos, fmt::format("The window function requires the timecol is a time attribute type, but is {}.",
                                           tc->type.toString()));
    auto interval = [&](size_t i) {
      const sql::Expr& e = *c.children[i];
      if (e.kind != sql::ExprKind::kLiteral || e.literal_kind != sql::LiteralKind::kInterval)
        fail(e.pos, fmt::format("{} expects an INTERVAL literal here", c.name));
      int64_t ms = sql::intervalMillis(e);
      if (ms <= 0) fail(e.pos, fmt::format("{} requires a positive interval", c.name));
      return ms;
    };
    FromResult out = in;
    out.windowed = true;
    out.window_pos = c.pos;
    out.window.time_index = tc->index;
    if (c.name == "TUMBLE") {
      out.window.kind = WindowSpec::Kind::kTumble;
      out.window.size_ms = interval(2);
      out.window.slide_ms = out.window.size_ms;
      if (c.children.size() == 4) out.window.offset_ms = sql::intervalMillis(*c.children[3]);
    } else {
      out.window.kind = WindowSpec::Kind::kHop;
      out.window.slide_ms = interval(2);
      out.window.size_ms = interval(3);
      if (c.children.size() == 5) out.window.offset_ms = sql::intervalMillis(*c.children[4]);
      if (out.window.size_ms % out.window.slide_ms != 0)
        fail(c.pos, "HOP table function based aggregate requires size must be an integral multiple of slide, "
                    "but got size " + std::to_string(out.window.size_ms) + " ms and slide " +
                    std::to_string(out.window.slide_ms) + " ms.");
    }
    std::string q = ref.alias ? *ref.alias : c.children[0]->names.back();
    for (auto& sc : out.scope.columns) sc.qualifier = q;
    for (const char* n : {"window_start", "window_end", "window_time"})
      out.scope.columns.push_back({q, n, -1, LogicalType::timestamp(3, false), false, true});
    return out;
  }

  FromResult convertFrom(const sql::TableRef& ref) {
    switch (ref.kind) {
      case sql::TableRefKind::kNamed: return convertNamed(ref.name, ref.alias, ref.pos);
      case sql::TableRefKind::kSubquery: {
        RelNodePtr rel = convertQueryRel(*ref.subquery);
        return fromRel(rel, ref.alias ? *ref.alias : "");
      }
      case sql::TableRefKind::kTableFunction: return convertWindowTvf(ref);
      case sql::TableRefKind::kJoin: fail(ref.pos, "JOIN is not supported yet");
    }
    fail(ref.pos, "unsupported FROM clause");
  }

  // ---- SELECT ------------------------------------------------------------------------------

  static std::string itemName(const sql::SelectItem& item, size_t position) {
    if (item.alias) return *item.alias;
    if (item.expr && item.expr->kind == sql::ExprKind::kIdentifier) return item.expr->names.back();
    return "EXPR$" + std::to_string(position);
  }

  void checkBoolean(const ExprPtr& e, const sql::Expr& at, const char* clause) const {
    if (e->type.id != TypeId::kBoolean && e->type.id != TypeId::kNull)
      fail(at.pos, fmt::format("{} clause must be a condition, but is of type {}", clause, e->type.toString()));
  }

  RelNodePtr convertSelect(const sql::SelectStmt& s) {
    if (!s.from) fail(s.pos, "SELECT without FROM is not supported yet");
    FromResult from = convertFrom(*s.from);
    ExprPtr where;
    if (s.where) {
      if (const sql::Expr* a = findAggregate(*s.where)) fail(a->pos, "Aggregate functions are not allowed in WHERE");
      where = convert(*s.where, from.scope);
      checkBoolean(where, *s.where, "WHERE");
    }
    bool has_agg = !s.group_by.empty() || s.distinct || (s.having != nullptr);
    for (const auto& item : s.select_list)
      if (item.expr && containsAggregate(*item.expr)) has_agg = true;
    if (from.windowed && !has_agg)
      fail(from.window_pos, "Window table functions are only supported with a GROUP BY window_start, window_end aggregation yet");
    if (!has_agg) {
      std::vector<ExprPtr> projections;
      std::vector<std::string> names;
      for (size_t i = 0; i < s.select_list.size(); ++i) {
        const auto& item = s.select_list[i];
        if (item.is_star) {
          expandStar(item, from.scope, projections, names);
          continue;
        }
        projections.push_back(convert(*item.expr, from.scope));
        names.push_back(itemName(item, i));
      }
      return makeCalc(from.rel, where, projections, names);
    }
    return convertAggregate(s, from, where);
  }

  void expandStar(const sql::SelectItem& item, const Scope& scope, std::vector<ExprPtr>& projections,
                  std::vector<std::string>& names) const {
    bool any = false;
    for (const auto& c : scope.columns) {
      if (c.window_property) continue;
      if (!item.star_qualifier.empty() && c.qualifier != item.star_qualifier.back()) continue;
      projections.push_back(makeInputRef(c.index, c.type));
      names.push_back(c.name);
      any = true;
    }
    if (!any) fail(item.pos, fmt::format("Unknown table '{}'", sql::qualifiedNameToString(item.star_qualifier)));
  }

  RelNodePtr convertAggregate(const sql::SelectStmt& s, FromResult& from, ExprPtr where);
  RelNodePtr convertQueryRel(const sql::Query& q);
  RelNodePtr makeSink(RelNodePtr input, const sql::InsertStmt& insert);
};

}  // namespace sluice::table

namespace sluice::table {

RelNodePtr SqlToRelConverter::Impl::convertAggregate(const sql::SelectStmt& s, FromResult& from, ExprPtr where) {
  // 1. Group keys and aggregate calls, in the order written.
  std::vector<const sql::Expr*> group_exprs;
  std::vector<sql::SourcePos> group_pos;
  bool has_window_start = false, has_window_end = false;
  for (const auto& g : s.group_by) {
    if (g->kind == sql::ExprKind::kIdentifier && from.windowed) {
      const std::string& n = g->names.back();
      if (n == "window_start") { has_window_start = true; continue; }
      if (n == "window_end") { has_window_end = true; continue; }
      if (n == "window_time") fail(g->pos, "GROUP BY window_time is not supported yet");
    }
    if (const sql::Expr* a = findAggregate(*g)) fail(a->pos, "Aggregate functions are not allowed in GROUP BY");
    group_exprs.push_back(g.get());
  }
  if (from.windowed && (!has_window_start || !has_window_end))
    fail(s.pos, "A window aggregation over a window table function must GROUP BY both window_start and window_end");
  if (s.distinct) {
    if (!s.group_by.empty() || from.windowed) fail(s.pos, "SELECT DISTINCT with GROUP BY is not supported yet");
    for (const auto& item : s.select_list) {
      if (item.is_star) fail(item.pos, "SELECT DISTINCT * is not supported yet");
      if (containsAggregate(*item.expr)) fail(item.pos, "SELECT DISTINCT with aggregate functions is not supported yet");
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
    pre_names.push_back(g->kind == sql::ExprKind::kIdentifier ? g->names.back() : "$f" + std::to_string(pre.size() - 1));
  }
  std::vector<AggregateCall> calls;
  for (const sql::Expr* a : agg_exprs) {
    AggregateCall call;
    call.distinct = a->distinct;
    if (a->name == "COUNT") call.kind = a->star ? AggKind::kCountStar : AggKind::kCount;
    else if (a->name == "SUM") call.kind = AggKind::kSum;
    else if (a->name == "MIN") call.kind = AggKind::kMin;
    else if (a->name == "MAX") call.kind = AggKind::kMax;
    else call.kind = AggKind::kAvg;
    if (a->star && a->name != "COUNT") fail(a->pos, fmt::format("{}(*) is not allowed", a->name));
    if (!a->star) {
      if (a->children.size() != 1)
        fail(a->pos, fmt::format("Invalid number of arguments to function '{}'. Was expecting 1 arguments", a->name));
      if (const sql::Expr* inner = findAggregate(*a->children[0])) fail(inner->pos, "Aggregate function calls cannot be nested");
      ExprPtr arg = convert(*a->children[0], from.scope);
      if (arg->type.id == TypeId::kNull) fail(a->children[0]->pos, fmt::format("Illegal use of 'NULL' in {}", a->name));
      call.arg_index = static_cast<int>(pre.size());
      call.arg_type = arg->type;
      pre.push_back(arg);
      pre_names.push_back("$f" + std::to_string(pre.size() - 1));
    } else {
      call.arg_type = LogicalType::bigint(false);
    }
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
  if (from.windowed) {
    time_index = static_cast<int>(pre.size());
    pre.push_back(makeInputRef(from.window.time_index, from.rel->row_type.types[static_cast<size_t>(from.window.time_index)]));
    pre_names.push_back(from.rel->row_type.names[static_cast<size_t>(from.window.time_index)]);
  }
  RelNodePtr pre_rel = makeCalc(from.rel, where, pre, pre_names);

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
  if (from.windowed) {
    if (pre_rel->produces_updates)
      fail(from.window_pos, "Window aggregation does not support update or delete input (it consumes an updating changelog)");
    agg->kind = RelKind::kWindowAggregate;
    agg->window = from.window;
    agg->window.time_index = time_index;
    agg->row_type.names.push_back("window_start");
    agg->row_type.types.push_back(LogicalType::timestamp(3, false));
    agg->row_type.names.push_back("window_end");
    agg->row_type.types.push_back(LogicalType::timestamp(3, false));
    agg->produces_updates = false;
  } else {
    agg->kind = RelKind::kGroupAggregate;
    agg->produces_updates = true;
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
    if (e.kind == sql::ExprKind::kCall && isAggregateName(e.name)) {
      for (size_t i = 0; i < agg_exprs.size(); ++i)
        if (agg_exprs[i]->equals(e))
          return makeInputRef(static_cast<int>(num_keys + i), agg->row_type.types[num_keys + i]);
    }
    if (e.kind == sql::ExprKind::kIdentifier) {
      const std::string& n = e.names.back();
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
  return makeCalc(agg, having, post, post_names);
}

RelNodePtr SqlToRelConverter::Impl::convertQueryRel(const sql::Query& q) {
  std::vector<RelNodePtr> branches;
  for (const auto& sel : q.selects) branches.push_back(convertSelect(sel));
  if (branches.size() == 1) return branches[0];
  // UNION ALL: same arity; column types unified to the least restrictive type (casts where needed).
  const RelNodePtr& first = branches[0];
  std::vector<LogicalType> common = first->row_type.types;
  for (size_t b = 1; b < branches.size(); ++b) {
    if (branches[b]->row_type.size() != common.size())
      fail(q.selects[b].pos, fmt::format("Column count mismatch in UNION ALL: {} vs {}", common.size(),
                                         branches[b]->row_type.size()));
    for (size_t c = 0; c < common.size(); ++c) {
      std::optional<LogicalType> t = leastRestrictive(common[c], branches[b]->row_type.types[c]);
      if (!t) fail(q.selects[b].pos, fmt::format("Type mismatch in UNION ALL column {} ('{}'): {} vs {}", c + 1,
                                                 first->row_type.names[c], common[c].toString(),
                                                 branches[b]->row_type.types[c].toString()));
      common[c] = *t;
    }
  }
  auto u = std::make_shared<RelNode>();
  u->kind = RelKind::kUnion;
  u->row_type.names = first->row_type.names;
  u->row_type.types = common;
  u->rowtime.assign(common.size(), false);
  for (size_t b = 0; b < branches.size(); ++b) {
    RelNodePtr br = branches[b];
    bool needs_cast = false;
    std::vector<ExprPtr> casts;
    for (size_t c = 0; c < common.size(); ++c) {
      ExprPtr ref = makeInputRef(static_cast<int>(c), br->row_type.types[c]);
      if (!(br->row_type.types[c] == common[c])) {
        needs_cast = true;
        ref = makeCast(ref, common[c]);
      }
      casts.push_back(ref);
    }
    if (needs_cast) br = makeCalc(br, nullptr, casts, first->row_type.names);
    u->produces_updates = u->produces_updates || br->produces_updates;
    u->inputs.push_back(br);
  }
  return u;
}

RelNodePtr SqlToRelConverter::Impl::makeSink(RelNodePtr input, const sql::InsertStmt& insert) {
  const CatalogTable* table = catalog.findTable(insert.target);
  if (table == nullptr) {
    if (catalog.findView(insert.target)) fail(insert.pos, "Cannot INSERT INTO a view");
    std::string close = closestConfigKey(Catalog::normalize(insert.target), catalog.names());
    fail(insert.pos, fmt::format("Object '{}' not found{}", sql::qualifiedNameToString(insert.target),
                                 close.empty() ? "" : fmt::format("; did you mean '{}'?", close)));
  }
  const sql::CreateTableStmt& def = *table->definition;
  ResolvedTable resolved;
  resolved.name = table->name;
  for (const auto& o : def.options) resolved.options[o.key] = o.value;
  for (const auto& c : def.columns) {
    if (c.kind != sql::ColumnKind::kPhysical) continue;
    resolved.physical_type.names.push_back(c.name);
    resolved.physical_type.types.push_back(c.type);
  }
  for (const auto& k : def.primary_key) resolved.primary_key.push_back(resolved.physical_type.indexOf(k));
  const RowType& sink_type = resolved.physical_type;

  // Map query columns to sink columns (explicit column list or all physical columns in order).
  std::vector<int> source_of(sink_type.size(), -1);
  if (insert.columns.empty()) {
    for (size_t i = 0; i < sink_type.size(); ++i) source_of[i] = static_cast<int>(i);
  } else {
    for (size_t i = 0; i < insert.columns.size(); ++i) {
      int idx = sink_type.indexOf(insert.columns[i]);
      if (idx < 0) fail(insert.pos, fmt::format("Unknown target column '{}'", insert.columns[i]));
      source_of[static_cast<size_t>(idx)] = static_cast<int>(i);
    }
  }
  size_t expected = insert.columns.empty() ? sink_type.size() : insert.columns.size();
  auto schemaText = [](const RowType& t) {
    std::string out = "[";
    for (size_t i = 0; i < t.size(); ++i) out += (i ? ", " : "") + t.names[i] + ": " + t.types[i].toString();
    return out + "]";
  };
  if (input->row_type.size() != expected)
    fail(insert.pos, fmt::format("Column types of query result and sink for 'default_catalog.default_database.{}' do not "
                                 "match.\nCause: Different number of columns.\n\nQuery schema: {}\nSink schema:  {}",
                                 table->name, schemaText(input->row_type), schemaText(sink_type)));
  std::vector<ExprPtr> projections;
  bool identity = true;
  for (size_t i = 0; i < sink_type.size(); ++i) {
    const LogicalType& target = sink_type.types[i];
    if (source_of[i] < 0) {
      if (!target.nullable) fail(insert.pos, fmt::format("Column '{}' is NOT NULL and has no value", sink_type.names[i]));
      projections.push_back(makeCast(makeLiteral(std::monostate{}, LogicalType::null()), target));
      identity = false;
      continue;
    }
    const LogicalType& from = input->row_type.types[static_cast<size_t>(source_of[i])];
    ExprPtr ref = makeInputRef(source_of[i], from);
    if (static_cast<size_t>(source_of[i]) != i) identity = false;
    if (!from.sameRoot(target)) {
      if (!canAssign(from, target))
        fail(insert.pos, fmt::format("Column types of query result and sink for 'default_catalog.default_database.{}' do "
                                     "not match.\nCause: Incompatible types for sink column '{}' at position {}.\n\n"
                                     "Query schema: {}\nSink schema:  {}",
                                     table->name, sink_type.names[i], i, schemaText(input->row_type), schemaText(sink_type)));
      ref = makeCast(ref, target.withNullable(from.nullable));
      identity = false;
    }
    projections.push_back(ref);
  }
  if (!identity) input = makeCalc(input, nullptr, projections, sink_type.names);

  std::shared_ptr<DynamicTableSink> sink;
  try {
    const DynamicTableFactory& f = factories.find(resolved);
    sink = f.createSink(resolved, config);
  } catch (const SqlError&) {
    throw;
  } catch (const UserError& err) {
    fail(insert.pos, fmt::format("Unable to create a sink for writing table 'default_catalog.default_database.{}'.\n\n{}",
                                 table->name, err.what()));
  }
  if (input->produces_updates && !sink->acceptsUpdates()) {
    const RelNode* producer = input.get();
    while (producer->kind != RelKind::kGroupAggregate && !producer->inputs.empty()) producer = producer->inputs[0].get();
    fail(insert.pos, fmt::format("Table sink 'default_catalog.default_database.{}' doesn't support consuming update "
                                 "changes which is produced by node {}",
                                 table->name, producer->describe()));
  }
  auto rel = std::make_shared<RelNode>();
  rel->kind = RelKind::kSink;
  rel->inputs = {input};
  rel->row_type = input->row_type;
  rel->row_type.names = sink_type.names;
  rel->rowtime.assign(rel->row_type.size(), false);
  rel->produces_updates = input->produces_updates;
  rel->sink = sink;
  rel->sink_name = table->name;
  rel->parallelism = sink->parallelism().value_or(-1);
  return rel;
}

SqlToRelConverter::SqlToRelConverter(const Catalog& catalog, const FactoryRegistry& factories,
                                     const Configuration& config, std::string_view script)
    : catalog_(catalog), factories_(factories), config_(config), script_(script) {}

void SqlToRelConverter::validateCreateTable(const sql::CreateTableStmt& def) {
  Impl impl{catalog_, factories_, config_, script_};
  impl.resolveSchema(def, Catalog::normalize(def.name), def.name.back());
}

RelNodePtr SqlToRelConverter::convertQuery(const sql::Query& query) {
  Impl impl{catalog_, factories_, config_, script_};
  return impl.convertQueryRel(query);
}

RelNodePtr SqlToRelConverter::convertInsert(const sql::InsertStmt& insert) {
  Impl impl{catalog_, factories_, config_, script_};
  return impl.makeSink(impl.convertQueryRel(*insert.query), insert);
}

RelNodePtr SqlToRelConverter::convertQueryForCollect(const sql::Query& query) {
  Impl impl{catalog_, factories_, config_, script_};
  RelNodePtr input = impl.convertQueryRel(query);
  auto rel = std::make_shared<RelNode>();
  rel->kind = RelKind::kSink;
  rel->inputs = {input};
  rel->row_type = input->row_type;
  rel->rowtime.assign(rel->row_type.size(), false);
  rel->produces_updates = input->produces_updates;
  rel->sink_name = "collect";
  rel->parallelism = 1;
  return rel;
}

}  // namespace sluice::table
