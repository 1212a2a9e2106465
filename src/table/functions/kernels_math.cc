// Row kernels: the generic row-at-a-time node, math functions (Java's Math / BigDecimal semantics as
// Flink's SqlFunctionUtils uses them), RAND (java.util.Random's generator, so a seed gives the
// sequence Flink gives), GREATEST / LEAST / IS DISTINCT FROM.
#include <charconv>
#include <cmath>
#include <random>
#include <string>

#include <fmt/format.h>

#include "common/error.h"
#include "table/functions/builtins.h"
#include "table/functions/decimal_math.h"
#include "table/functions/type_rules.h"
#include "types/value_format.h"

namespace sluice::table::internal {

using types::Column;
using types::LogicalType;
using types::TypeId;

namespace {

class RowFunctionNode final : public Node {
 public:
  RowFunctionNode(LogicalType t, std::vector<NodePtr> args, bool strict, bool may_throw, RowFn fn, int reg)
      : Node(t, reg, may_throw || anyThrows(args)), args_(std::move(args)), strict_(strict), fn_(std::move(fn)) {
    for (const auto& a : args_) consts_.push_back(a->isConst() ? 1 : 0);
  }

  const Column& eval(EvalContext& ctx, const uint8_t* active) const override {
    const size_t n = ctx.rows;
    std::vector<const Column*> cols;
    cols.reserve(args_.size());
    for (const auto& a : args_) cols.push_back(&a->eval(ctx, active));
    Column& out = prepare(ctx);
    uint8_t* ov = out.validity().data();
    RowArgs row{cols, consts_, 0};
    for (size_t i = 0; i < n; ++i) {
      ov[i] = 0;
      if (active && !active[i]) continue;
      row.i = i;
      bool ok = true;
      if (strict_)
        for (size_t k = 0; k < cols.size() && ok; ++k) ok = row.valid(k);
      if (ok) ov[i] = fn_(row, out, i) ? 1 : 0;
    }
    return out;
  }

 private:
  static bool anyThrows(const std::vector<NodePtr>& args) {
    for (const auto& a : args)
      if (a->mayThrow()) return true;
    return false;
  }
  std::vector<NodePtr> args_;
  std::vector<uint8_t> consts_;
  bool strict_;
  RowFn fn_;
};

/// java.util.Random: a 48-bit linear congruential generator (its documented algorithm).
struct JavaRandom {
  static constexpr uint64_t kMask = (uint64_t{1} << 48) - 1;
  uint64_t seed = 0;
  static uint64_t scramble(int64_t s) { return (static_cast<uint64_t>(s) ^ 0x5DEECE66DULL) & kMask; }
  int32_t next(int bits) {
    seed = (seed * 0x5DEECE66DULL + 0xBULL) & kMask;
    return static_cast<int32_t>(static_cast<uint32_t>(seed >> (48 - bits)));
  }
  double nextDouble() { return static_cast<double>((static_cast<int64_t>(next(26)) << 27) + next(27)) * 0x1.0p-53; }
  int32_t nextInt(int32_t bound) {
    int32_t r = next(31);
    const int32_t m = bound - 1;
    if ((bound & m) == 0) return static_cast<int32_t>((static_cast<int64_t>(bound) * r) >> 31);
    for (int32_t u = r; static_cast<int64_t>(u) - (r = u % bound) + m > INT32_MAX; u = next(31)) {
    }
    return r;
  }
};

/// RAND / RAND_INTEGER. The generator lives in a register of the caller's scratch, so it continues
/// from batch to batch and each subtask (each Calc operator) has its own, as Flink's per-instance
/// java.util.Random field.
class RandNode final : public Node {
 public:
  RandNode(ScalarOp op, LogicalType t, std::vector<NodePtr> args, int reg, int state_reg)
      : Node(t, reg, op == ScalarOp::kRandInteger), op_(op), args_(std::move(args)), state_reg_(state_reg) {}

  const Column& eval(EvalContext& ctx, const uint8_t* active) const override {
    const size_t n = ctx.rows;
    const bool integer = op_ == ScalarOp::kRandInteger;
    const bool seeded = args_.size() == (integer ? 2u : 1u);
    const Column* bound = integer ? &args_.back()->eval(ctx, active) : nullptr;
    const bool bc = integer && args_.back()->isConst();
    Column& state = (*ctx.regs)[static_cast<size_t>(state_reg_)];
    if (state.type().id != TypeId::kBigInt || state.size() != 1) {
      int64_t seed = 0;
      if (seeded) {
        seed = args_[0]->eval(ctx, nullptr).getLong(0);
      } else {
        std::random_device rd;
        seed = (static_cast<int64_t>(rd()) << 32) ^ rd();
      }
      state = Column(LogicalType::bigint());
      state.appendLong(static_cast<int64_t>(JavaRandom::scramble(seed)));
    }
    JavaRandom rnd{static_cast<uint64_t>(state.longs()[0])};
    Column& out = prepare(ctx);
    uint8_t* ov = out.validity().data();
    for (size_t i = 0; i < n; ++i) {
      if (!integer) {
        out.doubles()[i] = rnd.nextDouble();
        ov[i] = 1;
        continue;
      }
      const size_t j = at(bc, i);
      ov[i] = bound->validity()[j];
      if (!ov[i] || (active && !active[i])) continue;
      const int64_t b = bound->getLong(j);
      if (b <= 0) throw UserError(fmt::format("RAND_INTEGER: the bound must be positive, but is {}", b));
      out.longs()[i] = rnd.nextInt(static_cast<int32_t>(b));
    }
    state.longs()[0] = static_cast<int64_t>(rnd.seed);
    return out;
  }

 private:
  ScalarOp op_;
  std::vector<NodePtr> args_;
  int state_reg_;
};

/// BigDecimal.valueOf(d).setScale(digits, RoundingMode.DOWN).doubleValue(): cuts the shortest decimal
/// text of `d` after `digits` fraction digits.
double truncateDouble(double d, int64_t digits) {
  if (!std::isfinite(d) || d == 0) return d;
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string text(buf, res.ptr);
  const size_t e = text.find('e');
  const int exp10 = std::stoi(text.substr(e + 1));
  std::string mant = text.substr(0, e);
  const bool neg = mant[0] == '-';
  std::string digs;
  for (char c : mant)
    if (c >= '0' && c <= '9') digs += c;
  // value = digs * 10^(exp10 - (len - 1)); keep the digits left of position `digits` after the point.
  const int64_t keep = exp10 + 1 + digits;
  if (keep <= 0) return neg ? -0.0 : 0.0;
  if (keep >= static_cast<int64_t>(digs.size())) return d;
  digs.resize(static_cast<size_t>(keep));
  const std::string back = fmt::format("{}{}e{}", neg ? "-" : "", digs, exp10 + 1 - keep);
  double r = 0;
  std::from_chars(back.data(), back.data() + back.size(), r);
  return r;
}

double doubleMath(ScalarOp op, const RowArgs& a) {
  const double x = a.d(0);
  switch (op) {
    case ScalarOp::kPower: return std::pow(x, a.d(1));
    case ScalarOp::kSqrt: return std::sqrt(x);
    case ScalarOp::kLn: return std::log(x);
    case ScalarOp::kLog: return a.size() == 1 ? std::log(x) : std::log(a.d(1)) / std::log(x);
    case ScalarOp::kLog10: return std::log10(x);
    case ScalarOp::kLog2: return std::log(x) / std::log(2.0);
    case ScalarOp::kExp: return std::exp(x);
    case ScalarOp::kSin: return std::sin(x);
    case ScalarOp::kCos: return std::cos(x);
    case ScalarOp::kTan: return std::tan(x);
    case ScalarOp::kCot: return 1.0 / std::tan(x);
    case ScalarOp::kAsin: return std::asin(x);
    case ScalarOp::kAcos: return std::acos(x);
    case ScalarOp::kAtan: return std::atan(x);
    case ScalarOp::kAtan2: return std::atan2(x, a.d(1));
    case ScalarOp::kSinh: return std::sinh(x);
    case ScalarOp::kCosh: return std::cosh(x);
    case ScalarOp::kTanh: return std::tanh(x);
    case ScalarOp::kDegrees: return x * 57.29577951308232;      // Java's Math.toDegrees factor
    case ScalarOp::kRadians: return x * 0.017453292519943295;   // Java's Math.toRadians factor
    default: throw InternalError("not a DOUBLE math function");
  }
}

/// CEIL / FLOOR of a DECIMAL unscaled value at `scale`, giving scale 0.
int64_t decimalCeilFloor(int64_t v, int scale, bool ceil) {
  if (scale <= 0) return v;
  const int64_t f = pow10Wide(scale) > INT64_MAX ? INT64_MAX : static_cast<int64_t>(pow10Wide(scale));
  int64_t q = v / f;
  const int64_t r = v % f;
  if (r != 0 && (ceil ? v > 0 : v < 0)) q += ceil ? 1 : -1;
  return q;
}

/// TRUNCATE of an unscaled DECIMAL to `digits` fraction digits, expressed at `out_scale`.
bool decimalTruncate(int64_t v, int scale, int64_t digits, int out_scale, int64_t& out) {
  const int target = static_cast<int>(std::clamp<int64_t>(digits, -38, 38));
  Int128 w = v;
  if (target < scale) {
    const int k = scale - target;
    w = k > 38 ? 0 : w / pow10Wide(k);  // C++ division truncates toward zero: RoundingMode.DOWN
    Int128 back = 0;
    if (!rescale(w, target, out_scale, back)) return false;
    w = back;
  } else if (!rescale(w, scale, out_scale, w)) {
    return false;
  }
  if (w > INT64_MAX || w < INT64_MIN) return false;
  out = static_cast<int64_t>(w);
  return true;
}

RowFn roundingKernel(ScalarOp op, const LogicalType& in, const LogicalType& out_type) {
  return [op, in, out_type](const RowArgs& a, Column& out, size_t i) {
    const int64_t digits = a.size() > 1 ? a.l(1) : 0;
    if (in.isApproximate()) {
      const double x = a.d(0);
      double r = x;
      if (op == ScalarOp::kCeil) r = std::ceil(x);
      else if (op == ScalarOp::kFloor) r = std::floor(x);
      else if (op == ScalarOp::kSign) r = std::isnan(x) || x == 0 ? x : (x > 0 ? 1.0 : -1.0);  // Math.signum
      else r = truncateDouble(x, digits);
      out.doubles()[i] = types::roundToType(in, r);
      return true;
    }
    const int64_t x = a.l(0);
    if (in.id == TypeId::kDecimal) {
      if (op == ScalarOp::kSign) {
        out.longs()[i] = x == 0 ? 0 : (x > 0 ? 1 : -1) * static_cast<int64_t>(pow10Wide(in.scale));
        return true;
      }
      if (op != ScalarOp::kTruncate) {
        out.longs()[i] = decimalCeilFloor(x, in.scale, op == ScalarOp::kCeil);
        return true;
      }
      int64_t v = 0;
      if (!decimalTruncate(x, in.scale, digits, out_type.scale, v)) return false;
      out.longs()[i] = v;
      return true;
    }
    int64_t r = x;
    if (op == ScalarOp::kSign) r = x == 0 ? 0 : (x > 0 ? 1 : -1);
    else if (op == ScalarOp::kTruncate && digits < 0) r = digits < -18 ? 0 : x / pow10(static_cast<int>(-digits)) * pow10(static_cast<int>(-digits));
    out.longs()[i] = types::wrapToType(out_type, r);
    return true;
  };
}

/// -1, 0, 1 comparing row ia of a with row ib of b (same physical type).
int compareAt(const Column& a, size_t ia, const Column& b, size_t ib) {
  const LogicalType& t = a.type();
  if (t.isString()) {
    const int c = a.getString(ia).compare(b.getString(ib));
    return c < 0 ? -1 : c > 0;
  }
  if (t.isApproximate()) {
    const double x = a.getDouble(ia), y = b.getDouble(ib);
    return x < y ? -1 : x > y;
  }
  const int64_t x = a.getLong(ia), y = b.getLong(ib);
  return x < y ? -1 : x > y;
}

void copyAt(const Column& from, size_t j, Column& out, size_t i) {
  const LogicalType& t = out.type();
  if (t.isString()) setString(out, i, from.getString(j));
  else if (t.isApproximate()) out.doubles()[i] = from.getDouble(j);
  else out.longs()[i] = from.getLong(j);
}

}  // namespace

NodePtr makeRowFunctionNode(const LogicalType& type, std::vector<NodePtr> args, bool strict, bool may_throw, RowFn fn,
                            int reg) {
  return std::make_unique<RowFunctionNode>(type, std::move(args), strict, may_throw, std::move(fn), reg);
}

NodePtr makeMathNode(ScalarOp op, const LogicalType& type, std::vector<NodePtr> args, int reg, int state_reg) {
  switch (op) {
    case ScalarOp::kRand: case ScalarOp::kRandInteger:
      return std::make_unique<RandNode>(op, type, std::move(args), reg, state_reg);
    case ScalarOp::kPi: case ScalarOp::kE: {
      Column c(type);
      c.appendDouble(op == ScalarOp::kPi ? M_PI : M_E);
      return makeConstNode(std::move(c));
    }
    case ScalarOp::kCeil: case ScalarOp::kFloor: case ScalarOp::kSign: case ScalarOp::kTruncate: {
      const LogicalType in = args[0]->type();
      return makeRowFunctionNode(type, std::move(args), true, false, roundingKernel(op, in, type), reg);
    }
    default:
      return makeRowFunctionNode(type, std::move(args), true, false,
                                 [op](const RowArgs& a, Column& out, size_t i) {
                                   out.doubles()[i] = doubleMath(op, a);
                                   return true;
                                 },
                                 reg);
  }
}

NodePtr makeCompareListNode(ScalarOp op, const LogicalType& type, std::vector<NodePtr> args, int reg) {
  if (op == ScalarOp::kIsDistinctFrom || op == ScalarOp::kIsNotDistinctFrom) {
    const bool distinct = op == ScalarOp::kIsDistinctFrom;
    return makeRowFunctionNode(type, std::move(args), false, false,
                               [distinct](const RowArgs& a, Column& out, size_t i) {
                                 const bool va = a.valid(0), vb = a.valid(1);
                                 bool differ = va != vb;
                                 if (va && vb) differ = compareAt(*a.cols[0], a.row(0), *a.cols[1], a.row(1)) != 0;
                                 out.longs()[i] = differ == distinct;
                                 return true;
                               },
                               reg);
  }
  const int want = op == ScalarOp::kGreatest ? 1 : -1;
  return makeRowFunctionNode(type, std::move(args), true, false,
                             [want](const RowArgs& a, Column& out, size_t i) {
                               size_t best = 0;
                               for (size_t k = 1; k < a.size(); ++k)
                                 if (compareAt(*a.cols[k], a.row(k), *a.cols[best], a.row(best)) == want) best = k;
                               copyAt(*a.cols[best], a.row(best), out, i);
                               return true;
                             },
                             reg);
}

}  // namespace sluice::table::internal
