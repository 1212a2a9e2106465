#include "table/sql/ast.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "common/error.h"

namespace sluice::table::sql {

std::string qualifiedNameToString(const QualifiedName& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    if (i) out += '.';
    out += name[i];
  }
  return out;
}

const char* binaryOpToString(BinaryOp op) {
  switch (op) {
    case BinaryOp::kPlus: return "+";
    case BinaryOp::kMinus: return "-";
    case BinaryOp::kTimes: return "*";
    case BinaryOp::kDivide: return "/";
    case BinaryOp::kMod: return "%";
    case BinaryOp::kConcat: return "||";
    case BinaryOp::kEquals: return "=";
    case BinaryOp::kNotEquals: return "<>";
    case BinaryOp::kLess: return "<";
    case BinaryOp::kLessOrEqual: return "<=";
    case BinaryOp::kGreater: return ">";
    case BinaryOp::kGreaterOrEqual: return ">=";
    case BinaryOp::kAnd: return "AND";
    case BinaryOp::kOr: return "OR";
  }
  return "?";
}

const char* intervalUnitToString(IntervalUnit unit) {
  switch (unit) {
    case IntervalUnit::kSecond: return "SECOND";
    case IntervalUnit::kMinute: return "MINUTE";
    case IntervalUnit::kHour: return "HOUR";
    case IntervalUnit::kDay: return "DAY";
    case IntervalUnit::kMonth: return "MONTH";
    case IntervalUnit::kYear: return "YEAR";
  }
  return "?";
}

ExprPtr Expr::clone() const {
  auto out = std::make_unique<Expr>();
  out->kind = kind;
  out->pos = pos;
  out->children.reserve(children.size());
  for (const auto& c : children) out->children.push_back(c ? c->clone() : nullptr);
  out->names = names;
  out->name = name;
  out->literal_kind = literal_kind;
  out->text = text;
  out->bool_value = bool_value;
  out->interval_unit = interval_unit;
  out->unary_op = unary_op;
  out->binary_op = binary_op;
  out->negated = negated;
  out->case_has_operand = case_has_operand;
  out->case_has_else = case_has_else;
  out->cast_type = cast_type;
  out->try_cast = try_cast;
  out->distinct = distinct;
  out->star = star;
  out->trim_mode = trim_mode;
  out->over = over;
  out->subquery = subquery;
  out->filter = filter;
  return out;
}

bool Expr::equals(const Expr& o) const {
  if (kind != o.kind || names != o.names || name != o.name || children.size() != o.children.size())
    return false;
  switch (kind) {
    case ExprKind::kLiteral:
      if (literal_kind != o.literal_kind || text != o.text || bool_value != o.bool_value ||
          interval_unit != o.interval_unit)
        return false;
      break;
    case ExprKind::kUnary:
      if (unary_op != o.unary_op) return false;
      break;
    case ExprKind::kBinary:
      if (binary_op != o.binary_op) return false;
      break;
    case ExprKind::kCase:
      if (case_has_operand != o.case_has_operand || case_has_else != o.case_has_else) return false;
      break;
    case ExprKind::kCast:
      if (!(cast_type == o.cast_type) || try_cast != o.try_cast) return false;
      break;
    case ExprKind::kCall:
      if (distinct != o.distinct || star != o.star || trim_mode != o.trim_mode) return false;
      break;
    case ExprKind::kOver:
      if ((over == nullptr) != (o.over == nullptr) || (over && over->toString() != o.over->toString())) return false;
      break;
    default:
      break;
  }
  if (negated != o.negated || subquery != o.subquery) return false;
  if ((filter == nullptr) != (o.filter == nullptr) || (filter && !filter->equals(*o.filter))) return false;
  for (size_t i = 0; i < children.size(); ++i) {
    const Expr* a = children[i].get();
    const Expr* b = o.children[i].get();
    if ((a == nullptr) != (b == nullptr)) return false;
    if (a && !a->equals(*b)) return false;
  }
  return true;
}

namespace {

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    out.push_back(c);
    if (c == '\'') out.push_back('\'');
  }
  return out + "'";
}

std::string childText(const Expr& e, size_t i) {
  return i < e.children.size() && e.children[i] ? e.children[i]->toString() : std::string("?");
}

std::string literalText(const Expr& e) {
  switch (e.literal_kind) {
    case LiteralKind::kInteger:
    case LiteralKind::kDecimal:
    case LiteralKind::kApproximate: return e.text;
    case LiteralKind::kString: return quote(e.text);
    case LiteralKind::kBoolean: return e.bool_value ? "TRUE" : "FALSE";
    case LiteralKind::kNull: return "NULL";
    case LiteralKind::kTimestamp: return "TIMESTAMP " + quote(e.text);
    case LiteralKind::kDate: return "DATE " + quote(e.text);
    case LiteralKind::kTime: return "TIME " + quote(e.text);
    case LiteralKind::kInterval:
      return fmt::format("INTERVAL {} {}", quote(e.text), intervalUnitToString(e.interval_unit));
  }
  return "?";
}

std::string callArgsText(const Expr& e) {
  if (e.star) return e.name + "(*)";
  std::string out = e.name + "(";
  if (e.distinct) out += "DISTINCT ";
  if (e.name == "TRIM") {
    static const char* const kModes[] = {"BOTH", "LEADING", "TRAILING"};
    out += kModes[static_cast<int>(e.trim_mode)];
    out += ' ';
    if (e.children.size() > 1) out += childText(e, 1) + " ";
    return out + "FROM " + childText(e, 0) + ")";
  }
  for (size_t i = 0; i < e.children.size(); ++i) {
    if (i) out += ", ";
    out += childText(e, i);
  }
  return out + ")";
}

std::string callText(const Expr& e) {
  std::string out = callArgsText(e);
  if (e.filter) out += " FILTER (WHERE " + e.filter->toString() + ")";
  return out;
}

}  // namespace

std::string Expr::toString() const {
  switch (kind) {
    case ExprKind::kIdentifier: return qualifiedNameToString(names);
    case ExprKind::kLiteral: return literalText(*this);
    case ExprKind::kUnary: {
      const char* op = unary_op == UnaryOp::kMinus ? "-" : unary_op == UnaryOp::kPlus ? "+" : "NOT ";
      return fmt::format("({}{})", op, childText(*this, 0));
    }
    case ExprKind::kBinary:
      return fmt::format("({} {} {})", childText(*this, 0), binaryOpToString(binary_op), childText(*this, 1));
    case ExprKind::kBetween:
      return fmt::format("({} {}BETWEEN {} AND {})", childText(*this, 0), negated ? "NOT " : "",
                         childText(*this, 1), childText(*this, 2));
    case ExprKind::kExists:
      return "EXISTS (subquery)";
    case ExprKind::kIn: {
      if (subquery) return fmt::format("({} {}IN (subquery))", childText(*this, 0), negated ? "NOT " : "");
      std::string items;
      for (size_t i = 1; i < children.size(); ++i) items += (i > 1 ? ", " : "") + childText(*this, i);
      return fmt::format("({} {}IN ({}))", childText(*this, 0), negated ? "NOT " : "", items);
    }
    case ExprKind::kLike: {
      std::string esc = children.size() > 2 ? " ESCAPE " + childText(*this, 2) : "";
      return fmt::format("({} {}LIKE {}{})", childText(*this, 0), negated ? "NOT " : "", childText(*this, 1), esc);
    }
    case ExprKind::kIsNull:
      return fmt::format("({} IS {}NULL)", childText(*this, 0), negated ? "NOT " : "");
    case ExprKind::kIsTrue:
      return fmt::format("({} IS {}TRUE)", childText(*this, 0), negated ? "NOT " : "");
    case ExprKind::kIsFalse:
      return fmt::format("({} IS {}FALSE)", childText(*this, 0), negated ? "NOT " : "");
    case ExprKind::kCase: {
      std::string out = "CASE";
      size_t i = 0;
      if (case_has_operand) out += " " + childText(*this, i++);
      size_t pairs_end = children.size();
      if (case_has_else && pairs_end > 0) --pairs_end;
      for (; i + 2 <= pairs_end; i += 2)
        out += fmt::format(" WHEN {} THEN {}", childText(*this, i), childText(*this, i + 1));
      if (case_has_else) out += " ELSE " + childText(*this, children.size() - 1);
      return out + " END";
    }
    case ExprKind::kCast:
      return fmt::format("{}({} AS {})", try_cast ? "TRY_CAST" : "CAST", childText(*this, 0), cast_type.toString());
    case ExprKind::kCall: return callText(*this);
    case ExprKind::kDescriptor: {
      std::string out = "DESCRIPTOR(";
      for (size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
      return out + ")";
    }
    case ExprKind::kTableArg: {
      std::string out = subquery ? "TABLE (subquery)" : "TABLE " + qualifiedNameToString(names);
      for (size_t i = 0; i < children.size(); ++i) out += (i ? ", " : " PARTITION BY (") + childText(*this, i);
      return children.empty() ? out : out + ")";
    }
    case ExprKind::kOver: return fmt::format("{} OVER {}", childText(*this, 0), over ? over->toString() : "?");
  }
  return "?";
}

ExprPtr makeIdentifier(std::vector<std::string> names, SourcePos pos) {
  auto e = std::make_unique<Expr>();
  e->kind = ExprKind::kIdentifier;
  e->names = std::move(names);
  e->pos = pos;
  return e;
}

ExprPtr makeLiteral(LiteralKind kind, std::string text, SourcePos pos) {
  auto e = std::make_unique<Expr>();
  e->kind = ExprKind::kLiteral;
  e->literal_kind = kind;
  e->text = std::move(text);
  e->pos = pos;
  return e;
}

ExprPtr makeCall(std::string name, std::vector<ExprPtr> args, SourcePos pos) {
  auto e = std::make_unique<Expr>();
  e->kind = ExprKind::kCall;
  e->name = std::move(name);
  e->children = std::move(args);
  e->pos = pos;
  return e;
}

namespace {
/// Trims spaces and removes a leading sign; true when it was '-'.
bool stripSign(std::string_view& s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  bool negative = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  return negative;
}
}  // namespace

int64_t intervalMillis(const Expr& lit) {
  auto bad = [&](const char* why) -> SqlError {
    return SqlError(fmt::format("SQL error at line {}, column {}: invalid interval literal '{}' ({})",
                                lit.pos.line, lit.pos.column, lit.text, why),
                    lit.pos.line, lit.pos.column);
  };
  SLUICE_CHECK(lit.kind == ExprKind::kLiteral && lit.literal_kind == LiteralKind::kInterval,
               "intervalMillis on a non-interval expression {}", lit.toString());
  int64_t unit_ms = 1000;
  switch (lit.interval_unit) {
    case IntervalUnit::kSecond: unit_ms = 1000; break;
    case IntervalUnit::kMinute: unit_ms = 60 * 1000; break;
    case IntervalUnit::kHour: unit_ms = 3600 * 1000; break;
    case IntervalUnit::kDay: unit_ms = 24LL * 3600 * 1000; break;
    case IntervalUnit::kMonth: case IntervalUnit::kYear:
      throw SqlError(fmt::format("SQL error at line {}, column {}: INTERVAL '{}' {} is a year-month interval, "
                                 "supported only added to or subtracted from a DATE or TIMESTAMP here",
                                 lit.pos.line, lit.pos.column, lit.text, intervalUnitToString(lit.interval_unit)),
                     lit.pos.line, lit.pos.column);
  }
  std::string_view s = lit.text;
  const bool negative = stripSign(s);
  if (s.empty()) throw bad("no digits");
  int64_t whole = 0;
  size_t i = 0;
  const int64_t limit = std::numeric_limits<int64_t>::max() / unit_ms;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    whole = whole * 10 + (s[i] - '0');
    if (whole > limit) throw bad("out of range");
  }
  if (i == 0) throw bad("not a number");
  int64_t ms = whole * unit_ms;
  if (i < s.size()) {
    if (s[i] != '.' || lit.interval_unit != IntervalUnit::kSecond)
      throw bad("expected an integer number");
    ++i;
    // Fractional seconds: keep millisecond precision, drop finer digits.
    int64_t scale = 100;
    for (; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') throw bad("not a number");
      ms += (s[i] - '0') * scale;
      scale /= 10;
    }
  }
  return negative ? -ms : ms;
}

bool isYearMonthInterval(const Expr& e) {
  return e.kind == ExprKind::kLiteral && e.literal_kind == LiteralKind::kInterval &&
         (e.interval_unit == IntervalUnit::kMonth || e.interval_unit == IntervalUnit::kYear);
}

int64_t intervalMonths(const Expr& lit) {
  SLUICE_CHECK(isYearMonthInterval(lit), "intervalMonths on {}", lit.toString());
  std::string_view s = lit.text;
  const bool negative = stripSign(s);
  int64_t v = 0;
  const bool ok = !s.empty() && s.size() <= 9 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (ok) v = std::stoll(std::string(s));
  if (!ok)
    throw SqlError(fmt::format("SQL error at line {}, column {}: invalid interval literal '{}' (expected a whole "
                               "number)",
                               lit.pos.line, lit.pos.column, lit.text),
                   lit.pos.line, lit.pos.column);
  if (lit.interval_unit == IntervalUnit::kYear) v *= 12;
  return negative ? -v : v;
}

std::unique_ptr<TableRef> TableRef::clone() const {
  auto out = std::make_unique<TableRef>();
  out->kind = kind;
  out->pos = pos;
  out->name = name;
  out->alias = alias;
  if (subquery) out->subquery = subquery->clone();
  if (call) out->call = call->clone();
  out->join_type = join_type;
  if (left) out->left = left->clone();
  if (right) out->right = right->clone();
  if (condition) out->condition = condition->clone();
  out->column_aliases = column_aliases;
  if (system_time) out->system_time = system_time->clone();
  out->system_time_pos = system_time_pos;
  return out;
}

SelectStmt SelectStmt::clone() const {
  SelectStmt out;
  out.pos = pos;
  out.distinct = distinct;
  for (const auto& item : select_list) {
    SelectItem c;
    c.pos = item.pos;
    if (item.expr) c.expr = item.expr->clone();
    c.alias = item.alias;
    c.is_star = item.is_star;
    c.star_qualifier = item.star_qualifier;
    out.select_list.push_back(std::move(c));
  }
  if (from) out.from = from->clone();
  if (where) out.where = where->clone();
  for (const auto& g : group_by) out.group_by.push_back(g->clone());
  if (having) out.having = having->clone();
  out.windows = windows;
  for (const auto& row : values) {
    std::vector<ExprPtr> r;
    for (const auto& e : row) r.push_back(e->clone());
    out.values.push_back(std::move(r));
  }
  out.set_op = set_op;
  return out;
}

std::unique_ptr<Query> Query::clone() const {
  auto out = std::make_unique<Query>();
  out->pos = pos;
  out->with = with;
  for (const auto& s : selects) out->selects.push_back(s.clone());
  for (const auto& o : order_by) out->order_by.push_back(o.clone());
  out->order_pos = order_pos;
  if (limit) out->limit = limit->clone();
  if (offset) out->offset = offset->clone();
  return out;
}

InsertStmt InsertStmt::clone() const {
  InsertStmt out;
  out.pos = pos;
  out.target = target;
  out.overwrite = overwrite;
  out.columns = columns;
  if (query) out.query = query->clone();
  return out;
}

ColumnDef ColumnDef::clone() const {
  ColumnDef d;
  d.pos = pos;
  d.name = name;
  d.kind = kind;
  d.type = type;
  if (expr) d.expr = expr->clone();
  d.metadata_key = metadata_key;
  d.metadata_virtual = metadata_virtual;
  return d;
}

CreateTableStmt CreateTableStmt::clone() const {
  CreateTableStmt out;
  out.name = name;
  out.temporary = temporary;
  out.if_not_exists = if_not_exists;
  for (const auto& c : columns) out.columns.push_back(c.clone());
  if (watermark) out.watermark = watermark->clone();
  out.primary_key = primary_key;
  out.primary_key_pos = primary_key_pos;
  out.comment = comment;
  out.partition_keys = partition_keys;
  out.partition_key_pos = partition_key_pos;
  out.options = options;
  out.like = like;
  out.as_query = as_query;
  out.as_pos = as_pos;
  return out;
}

}  // namespace sluice::table::sql
