// Arithmetic, comparison, IN and ROUND kernels.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <string>

#include <fmt/format.h>

#include "common/error.h"
#include "table/functions/decimal_math.h"
#include "table/functions/evaluator_internal.h"
#include "types/value_format.h"

namespace sluice::table::internal {

using types::Column;
using types::LogicalType;
using types::TypeId;

namespace {

// Java int arithmetic wraps at 32 bits; long at 64 bits.
inline int64_t wrap32(int64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v))); }
inline int64_t addWrap(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
inline int64_t subWrap(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b)); }
inline int64_t mulWrap(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }

template <typename T, typename R, bool kAC, bool kBC, typename F>
void loop2(const T* a, const T* b, R* o, size_t n, F f) {
  for (size_t i = 0; i < n; ++i) o[i] = f(a[kAC ? 0 : i], b[kBC ? 0 : i]);
}

/// Runs f over the rows with the constant-ness of each side fixed at compile time.
template <typename T, typename R, typename F>
void binary(const T* a, bool ac, const T* b, bool bc, R* o, size_t n, F f) {
  if (ac && bc) loop2<T, R, true, true>(a, b, o, n, f);
  else if (ac) loop2<T, R, true, false>(a, b, o, n, f);
  else if (bc) loop2<T, R, false, true>(a, b, o, n, f);
  else loop2<T, R, false, false>(a, b, o, n, f);
}

[[noreturn]] void divisionByZero() { throw UserError("Division by zero"); }

/// Throws when a live row divides by zero.
void checkDivisor(const Column& b, bool bc, const uint8_t* valid, const uint8_t* active, size_t n) {
  const int64_t* x = b.longs().data();
  for (size_t i = 0; i < n; ++i)
    if (x[at(bc, i)] == 0 && live(valid, active, i)) divisionByZero();
}

class ArithmeticNode final : public Node {
 public:
  ArithmeticNode(ScalarOp op, LogicalType t, NodePtr a, NodePtr b, int reg)
      : Node(t, reg, a->mayThrow() || b->mayThrow() || op == ScalarOp::kDivide || op == ScalarOp::kMod ||
                          t.id == TypeId::kDecimal),
        op_(op), a_(std::move(a)), b_(std::move(b)) {}

  const Column& eval(EvalContext& ctx, const uint8_t* active) const override {
    const size_t n = ctx.rows;
    const Column& a = a_->eval(ctx, active);
    const Column& b = b_->eval(ctx, active);
    Column& out = prepare(ctx);
    const bool ac = a_->isConst(), bc = b_->isConst();
    andValidity(out.validity().data(), a, ac, b, bc, n);
    switch (type_.id) {
      case TypeId::kDouble: evalDouble(a, ac, b, bc, out, n); break;
      case TypeId::kFloat: {
        // Float operands held as doubles: the double result of + - * / is exact enough that one
        // rounding to float gives Java's float arithmetic.
        evalDouble(a, ac, b, bc, out, n);
        double* o = out.doubles().data();
        for (size_t i = 0; i < n; ++i) o[i] = types::roundToType(type_, o[i]);
        break;
      }
      case TypeId::kDecimal: evalDecimal(a, ac, b, bc, out, n, active); break;
      case TypeId::kTinyInt: case TypeId::kSmallInt: case TypeId::kInt: {
        // Computed in 64 bits, then narrowed like Java's (byte) / (short) / (int).
        evalInt(a, ac, b, bc, out, n, active, true);
        if (type_.id != TypeId::kInt) {
          int64_t* o = out.longs().data();
          for (size_t i = 0; i < n; ++i) o[i] = types::wrapToType(type_, o[i]);
        }
        break;
      }
      case TypeId::kDate: case TypeId::kTime: evalDateTime(a, ac, b, bc, out, n); break;
      default: evalInt(a, ac, b, bc, out, n, active, false); break;
    }
    return out;
  }

 private:
  void evalDouble(const Column& a, bool ac, const Column& b, bool bc, Column& out, size_t n) const {
    const double* x = a.doubles().data();
    const double* y = b.doubles().data();
    double* o = out.doubles().data();
    switch (op_) {
      case ScalarOp::kPlus: binary(x, ac, y, bc, o, n, std::plus<double>()); break;
      case ScalarOp::kMinus: binary(x, ac, y, bc, o, n, std::minus<double>()); break;
      case ScalarOp::kTimes: binary(x, ac, y, bc, o, n, std::multiplies<double>()); break;
      case ScalarOp::kDivide: binary(x, ac, y, bc, o, n, std::divides<double>()); break;  // IEEE: Infinity / NaN
      default: binary(x, ac, y, bc, o, n, [](double p, double q) { return std::fmod(p, q); }); break;
    }
  }

  /// DATE +/- INTERVAL DAY TO SECOND adds the interval's whole days (Java's (int)(ms / 86400000), toward
  /// zero, as Flink's generated code for DATE +/- INTERVAL); TIME +/- INTERVAL wraps around midnight.
  void evalDateTime(const Column& a, bool ac, const Column& b, bool bc, Column& out, size_t n) const {
    constexpr int64_t kDay = 86400000;
    const bool date_left = a_->type().id == type_.id;
    const Column& dt = date_left ? a : b;
    const Column& iv = date_left ? b : a;
    const bool dc = date_left ? ac : bc, ic = date_left ? bc : ac;
    const int64_t sign = op_ == ScalarOp::kMinus ? -1 : 1;
    int64_t* o = out.longs().data();
    for (size_t i = 0; i < n; ++i) {
      const int64_t d = dt.longs()[at(dc, i)];
      const int64_t ms = iv.longs()[at(ic, i)];
      if (type_.id == TypeId::kDate) o[i] = d + sign * (ms / kDay);
      else o[i] = (((d + sign * (ms % kDay)) % kDay) + kDay) % kDay;
    }
  }

  void evalInt(const Column& a, bool ac, const Column& b, bool bc, Column& out, size_t n, const uint8_t* active,
               bool int32) const {
    const int64_t* x = a.longs().data();
    const int64_t* y = b.longs().data();
    int64_t* o = out.longs().data();
    switch (op_) {
      case ScalarOp::kPlus:
        if (int32) binary(x, ac, y, bc, o, n, [](int64_t p, int64_t q) { return wrap32(addWrap(p, q)); });
        else binary(x, ac, y, bc, o, n, addWrap);
        break;
      case ScalarOp::kMinus:
        if (int32) binary(x, ac, y, bc, o, n, [](int64_t p, int64_t q) { return wrap32(subWrap(p, q)); });
        else binary(x, ac, y, bc, o, n, subWrap);
        break;
      case ScalarOp::kTimes:
        if (int32) binary(x, ac, y, bc, o, n, [](int64_t p, int64_t q) { return wrap32(mulWrap(p, q)); });
        else binary(x, ac, y, bc, o, n, mulWrap);
        break;
      case ScalarOp::kDivide:
        checkDivisor(b, bc, out.validity().data(), active, n);
        // Integer '/' truncates like Java; MIN / -1 wraps; NULL or inactive rows divide by 1.
        if (int32) binary(x, ac, y, bc, o, n, [](int64_t p, int64_t q) { return wrap32(q == -1 ? subWrap(0, p) : p / (q == 0 ? 1 : q)); });
        else binary(x, ac, y, bc, o, n, [](int64_t p, int64_t q) { return q == -1 ? subWrap(0, p) : p / (q == 0 ? 1 : q); });
        break;
      default:  // MOD: sign of the dividend (Java %)
        checkDivisor(b, bc, out.validity().data(), active, n);
        binary(x, ac, y, bc, o, n, [](int64_t p, int64_t q) { return q == -1 || q == 0 ? int64_t{0} : p % q; });
        break;
    }
  }

  void evalDecimal(const Column& a, bool ac, const Column& b, bool bc, Column& out, size_t n, const uint8_t* active) const {
    const int sa = a_->type().scale, sb = b_->type().scale;
    const int s = type_.scale, p = type_.precision;
    const int64_t* x = a.longs().data();
    const int64_t* y = b.longs().data();
    int64_t* o = out.longs().data();
    uint8_t* ov = out.validity().data();
    const int common = std::max(sa, sb);
    const Int128 fa = pow10Wide(common - sa), fb = pow10Wide(common - sb);
    for (size_t i = 0; i < n; ++i) {
      if (!ov[i]) continue;
      const Int128 u = x[at(ac, i)], v = y[at(bc, i)];
      Int128 exact = 0;
      int exact_scale = common;
      bool ok = true;
      switch (op_) {
        case ScalarOp::kPlus: exact = u * fa + v * fb; break;
        case ScalarOp::kMinus: exact = u * fa - v * fb; break;
        case ScalarOp::kTimes: exact = u * v; exact_scale = sa + sb; break;
        case ScalarOp::kDivide: {
          if (v == 0) {
            if (!active || active[i]) divisionByZero();
            ov[i] = 0;
            continue;
          }
          // u / 10^sa / (v / 10^sb) at scale s = u * 10^(s - sa + sb) / v.
          Int128 num;
          ok = rescale(u, sa, s + sb, num);
          if (ok) exact = divideHalfUp(num < 0 ? -num : num, v < 0 ? -v : v) * (((num < 0) != (v < 0)) ? -1 : 1);
          exact_scale = s;
          break;
        }
        default: {  // MOD
          if (v == 0) {
            if (!active || active[i]) divisionByZero();
            ov[i] = 0;
            continue;
          }
          exact = (u * fa) % (v * fb);
          break;
        }
      }
      Int128 scaled = 0;
      if (ok) ok = rescale(exact, exact_scale, s, scaled);
      int64_t r = 0;
      const FitResult fit = ok ? fitDecimal(scaled, p, r) : FitResult::kInt64Overflow;
      if (fit == FitResult::kOk) {
        o[i] = r;
      } else if (fit == FitResult::kPrecisionOverflow) {
        ov[i] = 0;  // Flink: a DECIMAL result beyond its precision is NULL
      } else {
        if (!active || active[i])
          throw UserError(fmt::format("DECIMAL overflow in '{}': the result does not fit in {} (64-bit storage)",
                                      scalarOpName(op_), type_.withNullable(true).toString()));
        ov[i] = 0;
      }
    }
  }

  ScalarOp op_;
  NodePtr a_, b_;
};

class NegateNode final : public Node {
 public:
  NegateNode(bool abs, LogicalType t, NodePtr a, int reg) : Node(t, reg, a->mayThrow()), abs_(abs), a_(std::move(a)) {}

  const Column& eval(EvalContext& ctx, const uint8_t* active) const override {
    const size_t n = ctx.rows;
    const Column& a = a_->eval(ctx, active);
    Column& out = prepare(ctx);
    const bool ac = a_->isConst();
    copyValidity(out.validity().data(), a, ac, n);
    if (type_.isApproximate()) {
      const double* x = a.doubles().data();
      double* o = out.doubles().data();
      for (size_t i = 0; i < n; ++i) o[i] = abs_ ? std::fabs(x[at(ac, i)]) : -x[at(ac, i)];
      return out;
    }
    const int64_t* x = a.longs().data();
    int64_t* o = out.longs().data();
    for (size_t i = 0; i < n; ++i) {
      const int64_t v = x[at(ac, i)];
      const int64_t r = abs_ && v >= 0 ? v : subWrap(0, v);  // Math.abs(MIN_VALUE) == MIN_VALUE
      o[i] = types::wrapToType(type_, r);
    }
    return out;
  }

 private:
  bool abs_;
  NodePtr a_;
};

template <typename T>
void compareTyped(const T* a, bool ac, const T* b, bool bc, int64_t* o, size_t n, ScalarOp op) {
  switch (op) {
    case ScalarOp::kEquals: binary(a, ac, b, bc, o, n, [](T p, T q) -> int64_t { return p == q; }); break;
    case ScalarOp::kNotEquals: binary(a, ac, b, bc, o, n, [](T p, T q) -> int64_t { return p != q; }); break;
    case ScalarOp::kLessThan: binary(a, ac, b, bc, o, n, [](T p, T q) -> int64_t { return p < q; }); break;
    case ScalarOp::kLessThanOrEqual: binary(a, ac, b, bc, o, n, [](T p, T q) -> int64_t { return p <= q; }); break;
    case ScalarOp::kGreaterThan: binary(a, ac, b, bc, o, n, [](T p, T q) -> int64_t { return p > q; }); break;
    default: binary(a, ac, b, bc, o, n, [](T p, T q) -> int64_t { return p >= q; }); break;
  }
}

inline bool applyCompare(ScalarOp op, int c) {
  switch (op) {
    case ScalarOp::kEquals: return c == 0;
    case ScalarOp::kNotEquals: return c != 0;
    case ScalarOp::kLessThan: return c < 0;
    case ScalarOp::kLessThanOrEqual: return c <= 0;
    case ScalarOp::kGreaterThan: return c > 0;
    default: return c >= 0;
  }
}

class CompareNode final : public Node {
 public:
  CompareNode(ScalarOp op, NodePtr a, NodePtr b, int reg)
      : Node(LogicalType::boolean(a->type().nullable || b->type().nullable), reg, a->mayThrow() || b->mayThrow()),
        op_(op), a_(std::move(a)), b_(std::move(b)) {}

  const Column& eval(EvalContext& ctx, const uint8_t* active) const override {
    const size_t n = ctx.rows;
    const Column& a = a_->eval(ctx, active);
    const Column& b = b_->eval(ctx, active);
    Column& out = prepare(ctx);
    const bool ac = a_->isConst(), bc = b_->isConst();
    andValidity(out.validity().data(), a, ac, b, bc, n);
    int64_t* o = out.longs().data();
    const LogicalType& ta = a_->type();
    const LogicalType& tb = b_->type();
    if (ta.isApproximate()) {
      compareTyped<double>(a.doubles().data(), ac, b.doubles().data(), bc, o, n, op_);
    } else if (ta.isString()) {
      for (size_t i = 0; i < n; ++i) {
        const std::string_view x = a.getString(at(ac, i)), y = b.getString(at(bc, i));
        const int c = x.compare(y);  // byte order of UTF-8 = code point order (BinaryStringData.compareTo)
        o[i] = applyCompare(op_, c);
      }
    } else if (ta.scale != tb.scale) {
      const int common = std::max(ta.scale, tb.scale);
      const Int128 fa = pow10Wide(common - ta.scale), fb = pow10Wide(common - tb.scale);
      const int64_t* x = a.longs().data();
      const int64_t* y = b.longs().data();
      for (size_t i = 0; i < n; ++i) {
        const Int128 u = Int128{x[at(ac, i)]} * fa, v = Int128{y[at(bc, i)]} * fb;
        o[i] = applyCompare(op_, u < v ? -1 : (u > v ? 1 : 0));
      }
    } else {
      compareTyped<int64_t>(a.longs().data(), ac, b.longs().data(), bc, o, n, op_);
    }
    return out;
  }

 private:
  ScalarOp op_;
  NodePtr a_, b_;
};

class InConstNode final : public Node {
 public:
  InConstNode(NodePtr value, std::vector<NodePtr> cands, int reg)
      : Node(LogicalType::boolean(true), reg, value->mayThrow()), value_(std::move(value)) {
    EvalContext ctx;
    ctx.rows = 1;
    for (const auto& c : cands) {
      SLUICE_CHECK(c->isConst(), "IN candidate is not constant");
      const Column& col = c->eval(ctx, nullptr);
      if (col.isNull(0)) { has_null_ = true; continue; }
      if (value_->type().isString()) strings_.emplace_back(col.getString(0));
      else if (value_->type().isApproximate()) doubles_.push_back(col.getDouble(0));
      else longs_.push_back(col.getLong(0));
    }
    std::sort(longs_.begin(), longs_.end());
    std::sort(strings_.begin(), strings_.end());
    type_.nullable = value_->type().nullable || has_null_;
  }

  const Column& eval(EvalContext& ctx, const uint8_t* active) const override {
    const size_t n = ctx.rows;
    const Column& v = value_->eval(ctx, active);
    Column& out = prepare(ctx);
    const bool vc = value_->isConst();
    const uint8_t* vv = v.validity().data();
    int64_t* o = out.longs().data();
    uint8_t* ov = out.validity().data();
    const LogicalType& t = value_->type();
    for (size_t i = 0; i < n; ++i) {
      const size_t j = at(vc, i);
      bool found;
      if (t.isString()) found = std::binary_search(strings_.begin(), strings_.end(), v.getString(j), std::less<>());
      else if (t.isApproximate()) found = std::find(doubles_.begin(), doubles_.end(), v.getDouble(j)) != doubles_.end();
      else if (longs_.size() <= 8) found = std::find(longs_.begin(), longs_.end(), v.getLong(j)) != longs_.end();
      else found = std::binary_search(longs_.begin(), longs_.end(), v.getLong(j));
      o[i] = found;
      // x IN (1, NULL) is TRUE when x = 1, else NULL.
      ov[i] = vv[j] && (found || !has_null_);
      if (!ov[i]) o[i] = 0;
    }
    return out;
  }

 private:
  NodePtr value_;
  std::vector<int64_t> longs_;
  std::vector<double> doubles_;
  std::vector<std::string> strings_;
  bool has_null_ = false;
};

/// Java's BigDecimal.valueOf(d).setScale(digits, HALF_UP).doubleValue().
double roundDouble(double d, int64_t digits) {
  if (!std::isfinite(d) || digits > 300 || digits < -300) return d;
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), d);
  std::string text(buf, res.ptr);
  text += fmt::format("e{}", digits);
  int64_t unscaled = 0;
  if (!types::parseDecimal(text, 0, unscaled)) return d;  // too large to have a fraction left
  const std::string back = fmt::format("{}e{}", unscaled, -digits);
  double r = 0;
  std::from_chars(back.data(), back.data() + back.size(), r);
  return r;
}

class RoundNode final : public Node {
 public:
  RoundNode(LogicalType t, NodePtr value, NodePtr digits, int reg)
      : Node(t, reg, value->mayThrow() || (digits && digits->mayThrow())), value_(std::move(value)), digits_(std::move(digits)) {}

  const Column& eval(EvalContext& ctx, const uint8_t* active) const override {
    const size_t n = ctx.rows;
    const Column& v = value_->eval(ctx, active);
    const Column* d = digits_ ? &digits_->eval(ctx, active) : nullptr;
    Column& out = prepare(ctx);
    const bool vc = value_->isConst(), dc = !digits_ || digits_->isConst();
    if (d) andValidity(out.validity().data(), v, vc, *d, dc, n);
    else copyValidity(out.validity().data(), v, vc, n);
    uint8_t* ov = out.validity().data();
    const LogicalType& vt = value_->type();
    for (size_t i = 0; i < n; ++i) {
      if (!ov[i]) continue;
      const int64_t r = d ? d->getLong(at(dc, i)) : 0;
      const size_t j = at(vc, i);
      if (vt.isApproximate()) {
        // SqlFunctionUtils.sround(float) rounds BigDecimal.valueOf(value) and narrows back.
        out.doubles()[i] = types::roundToType(vt, roundDouble(v.getDouble(j), r));
      } else if (vt.id == TypeId::kDecimal) {
        Int128 rounded = 0, scaled = 0;
        const int target = static_cast<int>(std::clamp<int64_t>(r, -38, 38));
        // Round at `target` digits, then express at the result scale.
        const bool ok = target >= vt.scale ? rescale(v.getLong(j), vt.scale, type_.scale, scaled)
                                     : (rescale(v.getLong(j), vt.scale, target, rounded) &&
                                        rescale(rounded, target, type_.scale, scaled));
        int64_t fit = 0;
        if (ok && fitDecimal(scaled, type_.precision, fit) == FitResult::kOk) out.longs()[i] = fit;
        else ov[i] = 0;
      } else {
        const int64_t x = v.getLong(j);
        int64_t res = x;
        if (r < 0) {
          if (r < -18) {
            res = 0;
          } else {
            const Int128 f = pow10Wide(static_cast<int>(-r));
            res = static_cast<int64_t>(divideHalfUp(x, f) * f);
          }
        }
        out.longs()[i] = types::wrapToType(type_, res);
      }
    }
    return out;
  }

 private:
  NodePtr value_, digits_;
};

}  // namespace

NodePtr makeArithmeticNode(ScalarOp op, const LogicalType& type, NodePtr a, NodePtr b, int reg) {
  return std::make_unique<ArithmeticNode>(op, type, std::move(a), std::move(b), reg);
}

NodePtr makeNegateNode(bool abs, const LogicalType& type, NodePtr a, int reg) {
  return std::make_unique<NegateNode>(abs, type, std::move(a), reg);
}

NodePtr makeCompareNode(ScalarOp op, NodePtr a, NodePtr b, int reg) {
  return std::make_unique<CompareNode>(op, std::move(a), std::move(b), reg);
}

NodePtr makeInConstNode(NodePtr value, std::vector<NodePtr> candidates, int reg) {
  return std::make_unique<InConstNode>(std::move(value), std::move(candidates), reg);
}

NodePtr makeRoundNode(const LogicalType& type, NodePtr value, NodePtr digits, int reg) {
  return std::make_unique<RoundNode>(type, std::move(value), std::move(digits), reg);
}

}  // namespace sluice::table::internal
