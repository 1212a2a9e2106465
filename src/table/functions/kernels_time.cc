// TO_TIMESTAMP, DATE_FORMAT and the EXTRACT-style functions (HOUR, MINUTE, ...).
#include <memory>
#include <string>

#include "common/error.h"
#include "table/functions/datetime_pattern.h"
#include "table/functions/evaluator_internal.h"
#include "types/value_format.h"

namespace sluice::table::internal {

using types::Column;
using types::LogicalType;
using types::TypeId;

namespace {

class TimeFunctionNode final : public Node {
 public:
  TimeFunctionNode(ScalarOp op, LogicalType t, std::vector<NodePtr> args, int reg)
      : Node(t, reg, anyThrows(args)), op_(op), args_(std::move(args)) {
    // A constant format is compiled once.
    if (args_.size() == 2 && args_[1]->isConst()) {
      EvalContext ctx;
      ctx.rows = 1;
      const Column& f = args_[1]->eval(ctx, nullptr);
      if (!f.isNull(0)) pattern_ = std::make_unique<DateTimePattern>(f.getString(0));
    }
  }

  const Column& eval(EvalContext& ctx, const uint8_t* active) const override {
    const size_t n = ctx.rows;
    const Column& v = args_[0]->eval(ctx, active);
    const Column* f = args_.size() == 2 ? &args_[1]->eval(ctx, active) : nullptr;
    Column& out = prepare(ctx);
    const bool vc = args_[0]->isConst(), fc = f && args_[1]->isConst();
    uint8_t* ov = out.validity().data();
    if (f) andValidity(ov, v, vc, *f, fc, n);
    else copyValidity(ov, v, vc, n);
    switch (op_) {
      case ScalarOp::kToTimestamp: toTimestamp(v, vc, f, fc, out, n); break;
      case ScalarOp::kDateFormat: dateFormat(v, vc, f, fc, out, n); break;
      default: extract(v, vc, out, n); break;
    }
    return out;
  }

 private:
  static bool anyThrows(const std::vector<NodePtr>& a) {
    for (const auto& x : a) if (x->mayThrow()) return true;
    return false;
  }

  /// The pattern of row i: the constant one, or compiled for this row. Null on a bad pattern.
  const DateTimePattern* patternFor(const Column* f, bool fc, size_t i, std::unique_ptr<DateTimePattern>& scratch) const {
    if (pattern_) return pattern_.get();
    scratch = std::make_unique<DateTimePattern>(f->getString(at(fc, i)));
    return scratch.get();
  }

  void toTimestamp(const Column& v, bool vc, const Column* f, bool fc, Column& out, size_t n) const {
    uint8_t* ov = out.validity().data();
    int64_t* o = out.longs().data();
    std::unique_ptr<DateTimePattern> scratch;
    for (size_t i = 0; i < n; ++i) {
      if (!ov[i]) continue;
      const std::string_view s = v.getString(at(vc, i));
      int64_t ms = 0;
      // Flink's TO_TIMESTAMP gives NULL for text that does not parse.
      const bool ok = f ? patternFor(f, fc, i, scratch)->parse(s, ms) : types::parseTimestamp(s, ms);
      if (ok) o[i] = ms;
      else ov[i] = 0;
    }
  }

  void dateFormat(const Column& v, bool vc, const Column* f, bool fc, Column& out, size_t n) const {
    uint8_t* ov = out.validity().data();
    const bool from_string = args_[0]->type().isString();
    std::unique_ptr<DateTimePattern> scratch;
    std::string buf;
    for (size_t i = 0; i < n; ++i) {
      if (!ov[i]) continue;
      int64_t ms = 0;
      if (from_string) {
        if (!types::parseTimestamp(v.getString(at(vc, i)), ms)) { ov[i] = 0; continue; }
      } else {
        ms = v.getLong(at(vc, i));
      }
      buf.clear();
      patternFor(f, fc, i, scratch)->format(ms, buf);
      setString(out, i, buf);
    }
  }

  void extract(const Column& v, bool vc, Column& out, size_t n) const {
    int64_t* o = out.longs().data();
    const int64_t* x = v.longs().data();
    const uint8_t* ov = out.validity().data();
    if (op_ == ScalarOp::kHour || op_ == ScalarOp::kMinute || op_ == ScalarOp::kSecond) {
      // Time-of-day fields need no calendar: floor modulo of the day.
      const int64_t unit = op_ == ScalarOp::kHour ? 3600000 : op_ == ScalarOp::kMinute ? 60000 : 1000;
      const int64_t range = op_ == ScalarOp::kHour ? 24 : 60;
      for (size_t i = 0; i < n; ++i) {
        const int64_t ms = x[at(vc, i)];
        const int64_t in_day = ((ms % 86400000) + 86400000) % 86400000;
        o[i] = ov[i] ? in_day / unit % range : 0;
      }
      return;
    }
    const int64_t mul = args_[0]->type().id == TypeId::kDate ? 86400000 : 1;  // DATE: days
    for (size_t i = 0; i < n; ++i) {
      if (!ov[i]) continue;
      const types::DateTimeParts p = types::splitTimestamp(x[at(vc, i)] * mul);
      o[i] = op_ == ScalarOp::kYear ? p.year : op_ == ScalarOp::kMonth ? p.month : p.day;
    }
  }

  ScalarOp op_;
  std::vector<NodePtr> args_;
  std::unique_ptr<DateTimePattern> pattern_;
};

}  // namespace

NodePtr makeTimeFunctionNode(ScalarOp op, const LogicalType& type, std::vector<NodePtr> args, int reg) {
  return std::make_unique<TimeFunctionNode>(op, type, std::move(args), reg);
}

}  // namespace sluice::table::internal
