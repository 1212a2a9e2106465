#include "table/functions/evaluator.h"

#include <algorithm>

#include "common/error.h"
#include "table/functions/builtins.h"
#include "table/functions/user_function.h"
#include "table/functions/evaluator_internal.h"

namespace sluice::table {

using types::Column;
using types::LogicalType;
using types::TypeId;

namespace internal {

Column& Node::prepare(EvalContext& ctx) const {
  Column& out = (*ctx.regs)[static_cast<size_t>(reg_)];
  if (out.type() == type_) out.clear();
  else out = Column(type_);
  const size_t n = ctx.rows;
  out.validity().resize(n);
  if (type_.isString()) out.strings().resize(n);
  else if (type_.isApproximate()) out.doubles().resize(n);
  else out.longs().resize(n);
  return out;
}

void andValidity(uint8_t* out, const Column& a, bool a_const, const Column& b, bool b_const, size_t n) {
  const uint8_t* va = a.validity().data();
  const uint8_t* vb = b.validity().data();
  if (a_const && b_const) {
    std::memset(out, va[0] & vb[0], n);
  } else if (a_const) {
    if (va[0]) std::memcpy(out, vb, n);
    else std::memset(out, 0, n);
  } else if (b_const) {
    if (vb[0]) std::memcpy(out, va, n);
    else std::memset(out, 0, n);
  } else {
    for (size_t i = 0; i < n; ++i) out[i] = va[i] & vb[i];
  }
}

void copyValidity(uint8_t* out, const Column& a, bool a_const, size_t n) {
  if (a_const) std::memset(out, a.validity()[0], n);
  else std::memcpy(out, a.validity().data(), n);
}

namespace {

class InputRefNode final : public Node {
 public:
  InputRefNode(LogicalType t, int index) : Node(t, -1, false), index_(index) {}
  const Column& eval(EvalContext& ctx, const uint8_t*) const override {
    SLUICE_CHECK(static_cast<size_t>(index_) < ctx.batch->numColumns(), "input ref ${} beyond {} columns", index_,
                 ctx.batch->numColumns());
    return ctx.batch->column(static_cast<size_t>(index_));
  }
  int inputIndex() const override { return index_; }

 private:
  int index_;
};

class ConstNode final : public Node {
 public:
  explicit ConstNode(Column value) : Node(value.type(), -1, false), value_(std::move(value)) {}
  const Column& eval(EvalContext&, const uint8_t*) const override { return value_; }
  bool isConst() const override { return true; }

 private:
  Column value_;
};

Column literalColumn(const Expr& e) {
  Column c(e.type);
  if (std::holds_alternative<std::monostate>(e.literal)) {
    c.appendNull();
  } else if (e.type.isString()) {
    SLUICE_CHECK(std::holds_alternative<std::string>(e.literal), "string literal of type {} holds no string", e.type.toString());
    c.appendString(std::get<std::string>(e.literal));
  } else if (e.type.isApproximate()) {
    if (std::holds_alternative<double>(e.literal)) c.appendDouble(types::roundToType(e.type, std::get<double>(e.literal)));
    else c.appendDouble(types::roundToType(e.type, static_cast<double>(std::get<int64_t>(e.literal))));
  } else {
    SLUICE_CHECK(std::holds_alternative<int64_t>(e.literal), "literal of type {} holds no integer", e.type.toString());
    c.appendLong(std::get<int64_t>(e.literal));
  }
  return c;
}

// Three-valued logic on BOOLEAN columns (1/0 with validity).
enum class LogicOp { kAnd, kOr };

template <LogicOp kOp, bool kAConst, bool kBConst>
void logicLoop(const Column& a, const Column& b, Column& out, size_t n) {
  const uint8_t* va = a.validity().data();
  const uint8_t* vb = b.validity().data();
  const int64_t* xa = a.longs().data();
  const int64_t* xb = b.longs().data();
  int64_t* o = out.longs().data();
  uint8_t* ov = out.validity().data();
  for (size_t i = 0; i < n; ++i) {
    const size_t ia = kAConst ? 0 : i, ib = kBConst ? 0 : i;
    const uint8_t at = va[ia] & (xa[ia] != 0), af = va[ia] & (xa[ia] == 0);
    const uint8_t bt = vb[ib] & (xb[ib] != 0), bf = vb[ib] & (xb[ib] == 0);
    if (kOp == LogicOp::kAnd) {
      // FALSE wins over NULL: FALSE AND NULL = FALSE.
      const uint8_t t = at & bt;
      o[i] = t;
      ov[i] = t | af | bf;
    } else {
      // TRUE wins over NULL: TRUE OR NULL = TRUE.
      const uint8_t t = at | bt;
      o[i] = t;
      ov[i] = t | (af & bf);
    }
  }
}

class LogicNode final : public Node {
 public:
  LogicNode(LogicOp op, NodePtr a, NodePtr b, int reg)
      : Node(LogicalType::boolean(a->type().nullable || b->type().nullable), reg, a->mayThrow() || b->mayThrow()),
        op_(op), a_(std::move(a)), b_(std::move(b)) {}

  const Column& eval(EvalContext& ctx, const uint8_t* active) const override {
    const size_t n = ctx.rows;
    const Column& a = a_->eval(ctx, active);
    const bool ac = a_->isConst();
    const uint8_t* active_b = active;
    std::vector<uint8_t> mask;
    if (b_->mayThrow()) {
      // Lazy right side: skip rows the left side already decides (FALSE for AND, TRUE for OR).
      mask.resize(n);
      const uint8_t* va = a.validity().data();
      const int64_t* xa = a.longs().data();
      for (size_t i = 0; i < n; ++i) {
        const size_t ia = ac ? 0 : i;
        const bool decided = va[ia] && ((op_ == LogicOp::kAnd) == (xa[ia] == 0));
        mask[i] = static_cast<uint8_t>((!active || active[i]) && !decided);
      }
      active_b = mask.data();
    }
    const Column& b = b_->eval(ctx, active_b);
    Column& out = prepare(ctx);
    const bool bc = b_->isConst();
    if (op_ == LogicOp::kAnd) dispatch<LogicOp::kAnd>(a, ac, b, bc, out, n);
    else dispatch<LogicOp::kOr>(a, ac, b, bc, out, n);
    return out;
  }

 private:
  template <LogicOp kOp>
  static void dispatch(const Column& a, bool ac, const Column& b, bool bc, Column& out, size_t n) {
    if (ac && bc) logicLoop<kOp, true, true>(a, b, out, n);
    else if (ac) logicLoop<kOp, true, false>(a, b, out, n);
    else if (bc) logicLoop<kOp, false, true>(a, b, out, n);
    else logicLoop<kOp, false, false>(a, b, out, n);
  }

  LogicOp op_;
  NodePtr a_, b_;
};

/// NOT, IS [NOT] NULL, IS TRUE, IS FALSE.
class UnaryBoolNode final : public Node {
 public:
  UnaryBoolNode(ScalarOp op, LogicalType t, NodePtr a, int reg) : Node(t, reg, a->mayThrow()), op_(op), a_(std::move(a)) {}

  const Column& eval(EvalContext& ctx, const uint8_t* active) const override {
    const size_t n = ctx.rows;
    const Column& a = a_->eval(ctx, active);
    Column& out = prepare(ctx);
    const bool ac = a_->isConst();
    const uint8_t* va = a.validity().data();
    int64_t* o = out.longs().data();
    uint8_t* ov = out.validity().data();
    switch (op_) {
      case ScalarOp::kNot: {
        const int64_t* x = a.longs().data();
        for (size_t i = 0; i < n; ++i) o[i] = x[at(ac, i)] == 0;
        copyValidity(ov, a, ac, n);
        for (size_t i = 0; i < n; ++i) o[i] &= ov[i];
        break;
      }
      case ScalarOp::kIsNull:
        for (size_t i = 0; i < n; ++i) o[i] = va[at(ac, i)] == 0;
        std::memset(ov, 1, n);
        break;
      case ScalarOp::kIsNotNull:
        for (size_t i = 0; i < n; ++i) o[i] = va[at(ac, i)] != 0;
        std::memset(ov, 1, n);
        break;
      case ScalarOp::kIsTrue: {
        const int64_t* x = a.longs().data();
        for (size_t i = 0; i < n; ++i) o[i] = va[at(ac, i)] & (x[at(ac, i)] != 0);
        std::memset(ov, 1, n);
        break;
      }
      case ScalarOp::kIsFalse: {
        const int64_t* x = a.longs().data();
        for (size_t i = 0; i < n; ++i) o[i] = va[at(ac, i)] & (x[at(ac, i)] == 0);
        std::memset(ov, 1, n);
        break;
      }
      default:
        SLUICE_CHECK(false, "not a unary boolean op: {}", scalarOpName(op_));
    }
    return out;
  }

 private:
  ScalarOp op_;
  NodePtr a_;
};

/// Copies rows i with take[i] from `v` into `out` (same physical type).
void copyTaken(const Column& v, bool vc, const uint8_t* take, Column& out, size_t n) {
  const uint8_t* vv = v.validity().data();
  uint8_t* ov = out.validity().data();
  const LogicalType& t = out.type();
  if (t.isString()) {
    for (size_t i = 0; i < n; ++i) {
      if (!take[i]) continue;
      const size_t j = at(vc, i);
      ov[i] = vv[j];
      if (vv[j]) setString(out, i, v.getString(j));
    }
  } else if (t.isApproximate()) {
    const double* x = v.doubles().data();
    double* o = out.doubles().data();
    for (size_t i = 0; i < n; ++i) {
      const size_t j = at(vc, i);
      if (take[i]) { o[i] = x[j]; ov[i] = vv[j]; }
    }
  } else {
    const int64_t* x = v.longs().data();
    int64_t* o = out.longs().data();
    for (size_t i = 0; i < n; ++i) {
      const size_t j = at(vc, i);
      if (take[i]) { o[i] = x[j]; ov[i] = vv[j]; }
    }
  }
}

std::vector<uint8_t> initialMask(const uint8_t* active, size_t n) {
  std::vector<uint8_t> m(n, 1);
  if (active) std::memcpy(m.data(), active, n);
  return m;
}

class CaseNode final : public Node {
 public:
  CaseNode(LogicalType t, std::vector<NodePtr> conds, std::vector<NodePtr> thens, NodePtr otherwise, int reg)
      : Node(t, reg, anyThrows(conds, thens, otherwise)), conds_(std::move(conds)), thens_(std::move(thens)),
        else_(std::move(otherwise)) {}

  const Column& eval(EvalContext& ctx, const uint8_t* active) const override {
    const size_t n = ctx.rows;
    std::vector<uint8_t> remaining = initialMask(active, n);
    // Branch values are all computed before `out` is prepared; each lives in its own register.
    std::vector<std::pair<const Column*, bool>> values;
    std::vector<std::vector<uint8_t>> takes;
    for (size_t k = 0; k < conds_.size(); ++k) {
      const Column& c = conds_[k]->eval(ctx, remaining.data());
      const bool cc = conds_[k]->isConst();
      const uint8_t* cv = c.validity().data();
      const int64_t* cx = c.longs().data();
      std::vector<uint8_t> take(n);
      size_t count = 0;
      for (size_t i = 0; i < n; ++i) {
        const size_t j = at(cc, i);
        take[i] = remaining[i] & cv[j] & (cx[j] != 0);
        remaining[i] &= static_cast<uint8_t>(!take[i]);
        count += take[i];
      }
      if (count == 0) continue;
      values.emplace_back(&thens_[k]->eval(ctx, thens_[k]->mayThrow() ? take.data() : active), thens_[k]->isConst());
      takes.push_back(std::move(take));
    }
    const Column* else_value = nullptr;
    if (else_ && std::find(remaining.begin(), remaining.end(), 1) != remaining.end())
      else_value = &else_->eval(ctx, else_->mayThrow() ? remaining.data() : active);
    Column& out = prepare(ctx);
    for (size_t k = 0; k < values.size(); ++k) copyTaken(*values[k].first, values[k].second, takes[k].data(), out, n);
    if (else_value) copyTaken(*else_value, else_->isConst(), remaining.data(), out, n);
    return out;
  }

 private:
  static bool anyThrows(const std::vector<NodePtr>& a, const std::vector<NodePtr>& b, const NodePtr& c) {
    for (const auto& x : a) if (x->mayThrow()) return true;
    for (const auto& x : b) if (x->mayThrow()) return true;
    return c && c->mayThrow();
  }

  std::vector<NodePtr> conds_, thens_;
  NodePtr else_;
};

class CoalesceNode final : public Node {
 public:
  CoalesceNode(LogicalType t, std::vector<NodePtr> args, int reg) : Node(t, reg, anyThrows(args)), args_(std::move(args)) {}

  const Column& eval(EvalContext& ctx, const uint8_t* active) const override {
    const size_t n = ctx.rows;
    std::vector<uint8_t> remaining = initialMask(active, n);
    std::vector<std::pair<const Column*, bool>> values;
    std::vector<std::vector<uint8_t>> takes;
    for (const auto& arg : args_) {
      const Column& v = arg->eval(ctx, arg->mayThrow() ? remaining.data() : active);
      const bool vc = arg->isConst();
      std::vector<uint8_t> take(n);
      size_t left = 0;
      const uint8_t* vv = v.validity().data();
      for (size_t i = 0; i < n; ++i) {
        take[i] = remaining[i] & vv[at(vc, i)];
        remaining[i] &= static_cast<uint8_t>(!take[i]);
        left += remaining[i];
      }
      values.emplace_back(&v, vc);
      takes.push_back(std::move(take));
      if (left == 0) break;
    }
    Column& out = prepare(ctx);
    for (size_t k = 0; k < values.size(); ++k) copyTaken(*values[k].first, values[k].second, takes[k].data(), out, n);
    return out;
  }

 private:
  static bool anyThrows(const std::vector<NodePtr>& a) {
    for (const auto& x : a) if (x->mayThrow()) return true;
    return false;
  }
  std::vector<NodePtr> args_;
};

void flattenConcat(const ExprPtr& e, std::vector<ExprPtr>& parts) {
  for (const auto& a : e->args) {
    if (a->kind == ExprKind::kCall && a->op == ScalarOp::kConcat) flattenConcat(a, parts);
    else parts.push_back(a);
  }
}

/// True when the value can differ from row to row: it reads a column or calls RAND.
bool variesByRow(const Expr& e) {
  if (e.kind == ExprKind::kInputRef) return true;
  if (e.kind == ExprKind::kCall && isNonDeterministic(e.op)) return true;
  if (e.kind == ExprKind::kCall && e.op == ScalarOp::kUserFunction && !e.function->isDeterministic()) return true;
  for (const auto& a : e.args)
    if (variesByRow(*a)) return true;
  return false;
}

bool needsConversion(const LogicalType& from, const LogicalType& to) {
  if (from.id == to.id) return to.id == TypeId::kDecimal && from.scale != to.scale;
  if (from.isString() && to.isString()) return false;
  if (from.isIntegral() && to.isIntegral()) return to.integralBits() < from.integralBits();  // narrowing wraps
  if (from.id == TypeId::kFloat && to.id == TypeId::kDouble) return false;  // every FLOAT is a DOUBLE
  if (from.isIntegral() && to.id == TypeId::kDecimal) return to.scale != 0;
  return true;
}

Column broadcast(const Column& c, size_t n) {
  Column out(c.type());
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.appendFrom(c, 0);
  return out;
}

}  // namespace

NodePtr makeConstNode(Column value) { return std::make_unique<ConstNode>(std::move(value)); }

NodePtr makeNullConst(const LogicalType& type) {
  Column c(type.withNullable(true));
  c.appendNull();
  return makeConstNode(std::move(c));
}

NodePtr Compiler::compile(const ExprPtr& e) {
  switch (e->kind) {
    case ExprKind::kInputRef: return std::make_unique<InputRefNode>(e->type, e->input_index);
    case ExprKind::kLiteral: return makeConstNode(literalColumn(*e));
    case ExprKind::kCall: {
      NodePtr n = compileCall(e);
      return variesByRow(*e) ? std::move(n) : fold(std::move(n));
    }
  }
  SLUICE_CHECK(false, "unknown expression kind");
  return nullptr;
}

NodePtr Compiler::compileAs(const ExprPtr& e, const LogicalType& target) {
  NodePtr n = compile(e);
  if (n->type().id == TypeId::kNull) return makeNullConst(target);
  if (!needsConversion(n->type(), target)) return n;
  const bool is_const = n->isConst();
  const LogicalType cast_type = target.withNullable(n->type().nullable);
  NodePtr cast = makeCastNode(cast_type, std::move(n), /*implicit=*/true, false, newReg());
  return is_const ? fold(std::move(cast)) : std::move(cast);
}

NodePtr Compiler::fold(NodePtr node) {
  if (node->isConst() || node->reg() < 0) return node;
  // Called only for nodes that read no input column: evaluate once on a one-row batch. Errors (1 / 0
  // in a branch that is never taken) are left to run time, where lazy evaluation may skip them.
  EvalContext ctx;
  types::RowBatch empty;
  std::vector<Column> regs(static_cast<size_t>(num_regs_));
  ctx.batch = &empty;
  ctx.rows = 1;
  ctx.regs = &regs;
  try {
    const Column& c = node->eval(ctx, nullptr);
    return makeConstNode(c);
  } catch (const UserError&) {
    return node;
  }
}

NodePtr Compiler::compileCall(const ExprPtr& e) {
  const std::vector<ExprPtr>& args = e->args;
  const LogicalType& t = e->type;
  switch (e->op) {
    case ScalarOp::kPlus: case ScalarOp::kMinus: case ScalarOp::kTimes: case ScalarOp::kDivide: case ScalarOp::kMod: {
      if (t.isApproximate()) {
        // Both sides become the result type first (Java: float + (float) int).
        NodePtr a = compileAs(args[0], t.withNullable(true));
        NodePtr b = compileAs(args[1], t.withNullable(true));
        return makeArithmeticNode(e->op, t, std::move(a), std::move(b), newReg());
      }
      NodePtr a = compile(args[0]);
      NodePtr b = compile(args[1]);
      return makeArithmeticNode(e->op, t, std::move(a), std::move(b), newReg());
    }
    case ScalarOp::kNegate: case ScalarOp::kAbs:
      return makeNegateNode(e->op == ScalarOp::kAbs, t, compile(args[0]), newReg());
    case ScalarOp::kEquals: case ScalarOp::kNotEquals: case ScalarOp::kLessThan: case ScalarOp::kLessThanOrEqual:
    case ScalarOp::kGreaterThan: case ScalarOp::kGreaterThanOrEqual: {
      const LogicalType& ta = args[0]->type;
      const LogicalType& tb = args[1]->type;
      if (ta.isApproximate() || tb.isApproximate()) {
        // Compared in the common type: FLOAT with an integer or FLOAT compares as FLOAT, else DOUBLE.
        const std::optional<LogicalType> common = findCommonType({ta, tb});
        const LogicalType ct = common && common->isApproximate() ? common->withNullable(true) : LogicalType::doubleType();
        return makeCompareNode(e->op, compileAs(args[0], ct), compileAs(args[1], ct), newReg());
      }
      NodePtr a = compile(args[0]);
      NodePtr b = compile(args[1]);
      if (a->type().id == TypeId::kNull) a = makeNullConst(b->type());
      if (b->type().id == TypeId::kNull) b = makeNullConst(a->type());
      return makeCompareNode(e->op, std::move(a), std::move(b), newReg());
    }
    case ScalarOp::kBetween:
      return compileCall(makeCall(ScalarOp::kAnd, {makeCall(ScalarOp::kGreaterThanOrEqual, {args[0], args[1]}),
                                                   makeCall(ScalarOp::kLessThanOrEqual, {args[0], args[2]})}));
    case ScalarOp::kNotBetween:
      return compileCall(makeCall(ScalarOp::kNot, {makeCall(ScalarOp::kBetween, {args[0], args[1], args[2]})}));
    case ScalarOp::kIn: {
      bool all_literals = true;
      for (size_t i = 1; i < args.size(); ++i) all_literals = all_literals && args[i]->kind == ExprKind::kLiteral;
      if (!all_literals) {
        std::vector<ExprPtr> ors;
        for (size_t i = 1; i < args.size(); ++i) ors.push_back(makeCall(ScalarOp::kEquals, {args[0], args[i]}));
        if (ors.size() == 1) return compileCall(ors[0]);
        return compileCall(makeCall(ScalarOp::kOr, std::move(ors)));
      }
      std::vector<LogicalType> ts;
      for (const auto& a : args) ts.push_back(a->type);
      std::optional<LogicalType> common = findCommonType(ts);
      SLUICE_CHECK(common.has_value(), "IN without a common type");
      NodePtr value = compileAs(args[0], *common);
      std::vector<NodePtr> cands;
      for (size_t i = 1; i < args.size(); ++i) cands.push_back(compileAs(args[i], *common));
      return makeInConstNode(std::move(value), std::move(cands), newReg());
    }
    case ScalarOp::kNotIn:
      return compileCall(makeCall(ScalarOp::kNot, {makeCall(ScalarOp::kIn, args)}));
    case ScalarOp::kAnd: case ScalarOp::kOr: {
      const LogicOp op = e->op == ScalarOp::kAnd ? LogicOp::kAnd : LogicOp::kOr;
      NodePtr acc = compile(args[0]);
      for (size_t i = 1; i < args.size(); ++i) acc = std::make_unique<LogicNode>(op, std::move(acc), compile(args[i]), newReg());
      return acc;
    }
    case ScalarOp::kNot: case ScalarOp::kIsNull: case ScalarOp::kIsNotNull: case ScalarOp::kIsTrue: case ScalarOp::kIsFalse:
      return std::make_unique<UnaryBoolNode>(e->op, t, compile(args[0]), newReg());
    case ScalarOp::kLike: case ScalarOp::kNotLike: {
      char escape = 0;
      const bool has_escape = args.size() == 3;
      if (has_escape) escape = std::get<std::string>(args[2]->literal)[0];
      NodePtr like = makeLikeNode(compile(args[0]), compile(args[1]), escape, has_escape, newReg());
      if (e->op == ScalarOp::kLike) return like;
      return std::make_unique<UnaryBoolNode>(ScalarOp::kNot, t, std::move(like), newReg());
    }
    case ScalarOp::kCase: {
      std::vector<NodePtr> conds, thens;
      for (size_t i = 0; i + 1 < args.size(); i += 2) {
        conds.push_back(compile(args[i]));
        thens.push_back(compileAs(args[i + 1], t));
      }
      NodePtr otherwise = args.size() % 2 == 1 ? compileAs(args.back(), t) : nullptr;
      return std::make_unique<CaseNode>(t, std::move(conds), std::move(thens), std::move(otherwise), newReg());
    }
    case ScalarOp::kCoalesce: {
      std::vector<NodePtr> nodes;
      for (const auto& a : args) nodes.push_back(compileAs(a, t));
      return std::make_unique<CoalesceNode>(t, std::move(nodes), newReg());
    }
    case ScalarOp::kCast: case ScalarOp::kTryCast: {
      NodePtr v = compile(args[0]);
      if (v->type().id == TypeId::kNull) return makeNullConst(t);
      // A cast to or from TIMESTAMP_LTZ carries the session zone as its second argument (makeCast).
      const std::string zone = args.size() == 2 ? std::get<std::string>(args[1]->literal) : std::string();
      return makeCastNode(t, std::move(v), false, e->op == ScalarOp::kTryCast, newReg(), zone);
    }
    case ScalarOp::kRound: {
      NodePtr digits = args.size() == 2 ? compile(args[1]) : nullptr;
      return makeRoundNode(t, compile(args[0]), std::move(digits), newReg());
    }
    case ScalarOp::kConcat: case ScalarOp::kUpper: case ScalarOp::kLower: case ScalarOp::kTrim: case ScalarOp::kLtrim:
    case ScalarOp::kRtrim: case ScalarOp::kCharLength: case ScalarOp::kSubstring: case ScalarOp::kLpad:
    case ScalarOp::kRpad: {
      std::vector<NodePtr> nodes;
      ScalarOp op = e->op;
      size_t n = args.size();
      if (op == ScalarOp::kTrim && n == 3) {
        const int64_t mode = std::get<int64_t>(args[2]->literal);
        op = mode == 1 ? ScalarOp::kLtrim : mode == 2 ? ScalarOp::kRtrim : ScalarOp::kTrim;
        n = 2;
      }
      if (op == ScalarOp::kConcat) {
        // a || b || c parses as ||(||(a, b), c): concatenate all parts in one pass instead.
        std::vector<ExprPtr> parts;
        flattenConcat(e, parts);
        for (const auto& p : parts) nodes.push_back(compile(p));
        return makeStringFunctionNode(op, t, std::move(nodes), newReg());
      }
      for (size_t i = 0; i < n; ++i) nodes.push_back(compile(args[i]));
      return makeStringFunctionNode(op, t, std::move(nodes), newReg());
    }
    case ScalarOp::kToTimestamp: case ScalarOp::kDateFormat: case ScalarOp::kHour: case ScalarOp::kMinute:
    case ScalarOp::kSecond: case ScalarOp::kYear: case ScalarOp::kMonth: case ScalarOp::kDayOfMonth: {
      std::vector<NodePtr> nodes;
      for (const auto& a : args) nodes.push_back(compile(a));
      return makeTimeFunctionNode(e->op, t, std::move(nodes), newReg());
    }
    case ScalarOp::kUserFunction: {
      std::vector<NodePtr> nodes;
      for (const auto& a : args) nodes.push_back(compile(a));
      return makeUserFunctionNode(*e, std::move(nodes), newReg());
    }
    default:
      return compileBuiltin(e);
  }
  SLUICE_CHECK(false, "unsupported scalar op {}", scalarOpName(e->op));
  return nullptr;
}

}  // namespace internal

ExprEvaluator::ExprEvaluator(ExprPtr expr) : expr_(std::move(expr)) {
  SLUICE_CHECK(expr_ != nullptr, "null expression");
  internal::Compiler compiler;
  root_ = compiler.compile(expr_);
  num_regs_ = compiler.numRegs();
}

ExprEvaluator::~ExprEvaluator() = default;
ExprEvaluator::ExprEvaluator(ExprEvaluator&&) noexcept = default;
ExprEvaluator& ExprEvaluator::operator=(ExprEvaluator&&) noexcept = default;

int ExprEvaluator::inputIndex() const { return root_->inputIndex(); }

EvalScratch::EvalScratch() = default;
EvalScratch::~EvalScratch() = default;
EvalScratch::EvalScratch(EvalScratch&&) noexcept = default;
EvalScratch& EvalScratch::operator=(EvalScratch&&) noexcept = default;

Column ExprEvaluator::evaluate(const types::RowBatch& batch, EvalScratch* scratch) const {
  EvalScratch local;
  std::vector<Column>& regs = (scratch ? scratch : &local)->regs_;
  if (regs.size() < static_cast<size_t>(num_regs_)) regs.resize(static_cast<size_t>(num_regs_));
  internal::EvalContext ctx;
  ctx.batch = &batch;
  ctx.rows = batch.numRows();
  ctx.regs = &regs;
  const Column& c = root_->eval(ctx, nullptr);
  if (root_->isConst()) {
    Column out = internal::broadcast(c, ctx.rows);
    return out;
  }
  if (root_->reg() >= 0) return std::move(regs[static_cast<size_t>(root_->reg())]);
  return c;  // input reference: copy
}

void ExprEvaluator::evaluateFilter(const types::RowBatch& batch, std::vector<uint32_t>& selected, EvalScratch* scratch) const {
  SLUICE_CHECK(type().id == TypeId::kBoolean || type().id == TypeId::kNull, "filter of type {}", type().toString());
  EvalScratch local;
  std::vector<Column>& regs = (scratch ? scratch : &local)->regs_;
  if (regs.size() < static_cast<size_t>(num_regs_)) regs.resize(static_cast<size_t>(num_regs_));
  internal::EvalContext ctx;
  ctx.batch = &batch;
  ctx.rows = batch.numRows();
  ctx.regs = &regs;
  const Column& c = root_->eval(ctx, nullptr);
  const size_t n = ctx.rows;
  selected.resize(n);
  if (root_->isConst()) {
    const bool keep = c.validity()[0] && c.longs()[0] != 0;
    if (!keep) { selected.clear(); return; }
    for (size_t i = 0; i < n; ++i) selected[i] = static_cast<uint32_t>(i);
    return;
  }
  const uint8_t* v = c.validity().data();
  const int64_t* x = c.longs().data();
  uint32_t* out = selected.data();
  size_t k = 0;
  for (size_t i = 0; i < n; ++i) {
    out[k] = static_cast<uint32_t>(i);
    k += v[i] & (x[i] != 0);
  }
  selected.resize(k);
}

Column gatherColumn(const Column& c, const std::vector<uint32_t>& rows) {
  Column out(c.type());
  const size_t n = rows.size();
  out.validity().resize(n);
  const uint8_t* v = c.validity().data();
  uint8_t* ov = out.validity().data();
  for (size_t i = 0; i < n; ++i) ov[i] = v[rows[i]];
  if (c.type().isString()) {
    out.strings().resize(n);
    size_t bytes = 0;
    for (uint32_t r : rows) bytes += c.strings()[r].length;
    out.arena().reserve(bytes);
    for (size_t i = 0; i < n; ++i) internal::setString(out, i, c.getString(rows[i]));
  } else if (c.type().isApproximate()) {
    out.doubles().resize(n);
    const double* x = c.doubles().data();
    double* o = out.doubles().data();
    for (size_t i = 0; i < n; ++i) o[i] = x[rows[i]];
  } else {
    out.longs().resize(n);
    const int64_t* x = c.longs().data();
    int64_t* o = out.longs().data();
    for (size_t i = 0; i < n; ++i) o[i] = x[rows[i]];
  }
  return out;
}

}  // namespace sluice::table
