// makeAggregateFunction: the SQL signature taken from the C++ callables (widening, refusals with the
// expected signature, the result's nullability), NULL arguments skipping plain parameters, retract and
// merge present or absent, and the accumulator's snapshot form (round trip, copies independent, malformed
// bytes refused). Expected values worked out by hand.

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "runtime/serialization/type_traits.h"
#include "table/functions/aggregate_function.h"
#include "types/row_batch.h"

namespace sluice::table {

struct Weighted {
  double sum = 0;
  int64_t weight = 0;
};
SLUICE_TYPE(Weighted, sum, weight)

namespace {

using types::Column;
using types::LogicalType;

// wavg(v DOUBLE, w BIGINT) = SUM(v * w) / SUM(w), NULL while SUM(w) is 0; retract and merge.
std::shared_ptr<const AggregateFunction> weightedAvg() {
  return makeAggregateFunction<Weighted>(
      [](Weighted& a, double v, int64_t w) {
        a.sum += v * static_cast<double>(w);
        a.weight += w;
      },
      [](const Weighted& a) -> std::optional<double> {
        if (a.weight == 0) return std::nullopt;
        return a.sum / static_cast<double>(a.weight);
      },
      [](Weighted& a, double v, int64_t w) {
        a.sum -= v * static_cast<double>(w);
        a.weight -= w;
      },
      [](Weighted& a, const Weighted& b) {
        a.sum += b.sum;
        a.weight += b.weight;
      });
}

// Rows of (DOUBLE, BIGINT) columns to call a function with.
struct Rows {
  Column v{LogicalType::doubleType()};
  Column w{LogicalType::bigint()};
  std::vector<const Column*> cols{&v, &w};
  std::vector<uint8_t> consts{0, 0};
  void add(std::optional<double> x, std::optional<int64_t> y) {
    if (x) v.appendDouble(*x);
    else v.appendNull();
    if (y) w.appendLong(*y);
    else w.appendNull();
  }
  FunctionArgs at(size_t row) const { return FunctionArgs(cols, consts, row); }
};

// The result of getValue as text: "null" or the value.
std::string valueOf(const AggregateFunction& f, const AggregateAccumulator& acc, const LogicalType& type) {
  Column out(type);
  out.appendNull();
  FunctionResult r(out, 0);
  if (!f.getValue(acc, r)) return "null";
  if (type.isApproximate()) return std::to_string(out.doubles()[0]);
  if (type.isString()) return std::string(out.arena(), out.strings()[0].offset, out.strings()[0].length);
  return std::to_string(out.longs()[0]);
}

TEST(AggregateFunctionTest, SignatureComesFromTheCallables) {
  auto f = weightedAvg();
  EXPECT_EQ(f->signature(), "(DOUBLE, BIGINT)");
  // INT widens to DOUBLE and to BIGINT; the arguments are asked to be cast to the parameter types,
  // nullability kept; an optional result is nullable.
  std::vector<LogicalType> args = {LogicalType::integer(false), LogicalType::integer(true)};
  const LogicalType result = f->inferType(args);
  EXPECT_EQ(result, LogicalType::doubleType(true));
  EXPECT_EQ(args[0], LogicalType::doubleType(false));
  EXPECT_EQ(args[1], LogicalType::bigint(true));
  // DOUBLE does not narrow to BIGINT; the number of arguments is checked.
  std::vector<LogicalType> bad = {LogicalType::doubleType(), LogicalType::doubleType()};
  try {
    f->inferType(bad);
    FAIL() << "expected a refusal";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "Invalid input arguments (DOUBLE, DOUBLE). Expected signature: (DOUBLE, BIGINT)");
  }
  std::vector<LogicalType> one = {LogicalType::doubleType()};
  EXPECT_THROW(f->inferType(one), UserError);
  // A plain result type is NOT NULL.
  auto count = makeAggregateFunction<int64_t>([](int64_t& n, std::string_view) { ++n; },
                                              [](const int64_t& n) { return n; });
  std::vector<LogicalType> s = {LogicalType::charType(3, true)};
  EXPECT_EQ(count->inferType(s), LogicalType::bigint(false));
  EXPECT_EQ(count->signature(), "(STRING)");
}

TEST(AggregateFunctionTest, AccumulateRetractMergeAndNulls) {
  auto f = weightedAvg();
  const LogicalType type = LogicalType::doubleType();
  Rows rows;
  rows.add(2.0, 1);            // 0
  rows.add(4.0, 3);            // 1
  rows.add(std::nullopt, 5);   // 2: v NULL -> skipped
  rows.add(8.0, std::nullopt); // 3: w NULL -> skipped
  auto acc = f->createAccumulator();
  EXPECT_EQ(valueOf(*f, *acc, type), "null");  // no weight yet
  for (size_t r = 0; r < 4; ++r) f->accumulate(*acc, rows.at(r));
  // (2*1 + 4*3) / (1 + 3) = 14 / 4 = 3.5; the NULL rows changed nothing.
  EXPECT_EQ(valueOf(*f, *acc, type), std::to_string(3.5));
  f->retract(*acc, rows.at(0));  // 12 / 3 = 4
  f->retract(*acc, rows.at(2));  // skipped like its accumulate
  EXPECT_EQ(valueOf(*f, *acc, type), std::to_string(4.0));
  auto other = f->createAccumulator();
  f->accumulate(*other, rows.at(0));  // 2 / 1
  f->merge(*acc, *other);             // (12 + 2) / (3 + 1) = 3.5
  EXPECT_EQ(valueOf(*f, *acc, type), std::to_string(3.5));
  EXPECT_TRUE(f->hasRetract());
  EXPECT_TRUE(f->hasMerge());
}

TEST(AggregateFunctionTest, OptionalParametersSeeNulls) {
  // count_nulls(x): how many NULLs it was given.
  auto f = makeAggregateFunction<int64_t>([](int64_t& n, std::optional<double> x) { n += x ? 0 : 1; },
                                          [](const int64_t& n) { return n; });
  Rows rows;
  rows.add(std::nullopt, 0);
  rows.add(1.0, 0);
  rows.add(std::nullopt, 0);
  std::vector<const Column*> cols = {&rows.v};
  std::vector<uint8_t> consts = {0};
  auto acc = f->createAccumulator();
  for (size_t r = 0; r < 3; ++r) f->accumulate(*acc, FunctionArgs(cols, consts, r));
  EXPECT_EQ(valueOf(*f, *acc, LogicalType::bigint()), "2");
}

TEST(AggregateFunctionTest, WithoutRetractOrMergeTheyAreRefused) {
  auto f = makeAggregateFunction<int64_t>([](int64_t& n, double) { ++n; }, [](const int64_t& n) { return n; });
  EXPECT_FALSE(f->hasRetract());
  EXPECT_FALSE(f->hasMerge());
  Rows rows;
  rows.add(1.0, 1);
  std::vector<const Column*> cols = {&rows.v};
  std::vector<uint8_t> consts = {0};
  auto acc = f->createAccumulator();
  auto other = f->createAccumulator();
  EXPECT_THROW(f->retract(*acc, FunctionArgs(cols, consts, 0)), UserError);
  EXPECT_THROW(f->merge(*acc, *other), UserError);
  // Merge alone (retract nullptr).
  auto m = makeAggregateFunction<int64_t>([](int64_t& n, double) { ++n; }, [](const int64_t& n) { return n; },
                                          nullptr, [](int64_t& n, const int64_t& o) { n += o; });
  EXPECT_FALSE(m->hasRetract());
  EXPECT_TRUE(m->hasMerge());
}

TEST(AggregateFunctionTest, TheInitialAccumulatorIsGiven) {
  // MIN over DOUBLE starting from a sentinel, as an explicit initial value.
  auto f = makeAggregateFunction<double>([](double& m, double v) { m = v < m ? v : m; },
                                         [](const double& m) { return m; }, nullptr, nullptr, 100.0);
  auto acc = f->createAccumulator();
  EXPECT_EQ(valueOf(*f, *acc, LogicalType::doubleType()), std::to_string(100.0));
}

TEST(AggregateFunctionTest, SnapshotFormRoundTripsAndCopiesAreIndependent) {
  // A string-collecting accumulator: joined by ','.
  auto f = makeAggregateFunction<std::vector<std::string>>(
      [](std::vector<std::string>& a, std::string_view s) { a.emplace_back(s); },
      [](const std::vector<std::string>& a) {
        std::string out;
        for (size_t i = 0; i < a.size(); ++i) out += (i ? "," : "") + a[i];
        return out;
      });
  Column s(LogicalType::string());
  s.appendString("x");
  s.appendString("yy");
  std::vector<const Column*> cols = {&s};
  std::vector<uint8_t> consts = {0};
  auto acc = f->createAccumulator();
  f->accumulate(*acc, FunctionArgs(cols, consts, 0));
  f->accumulate(*acc, FunctionArgs(cols, consts, 1));
  std::string bytes;
  f->serialize(*acc, bytes);
  // TypeSerializer's form of a vector of strings: count 2, then "x" (length 1) and "yy" (length 2).
  EXPECT_EQ(bytes, std::string("\x02\x01x\x02yy", 6));
  auto back = f->deserialize(bytes);
  EXPECT_EQ(valueOf(*f, *back, LogicalType::string()), "x,yy");
  auto copy = f->copy(*acc);
  f->accumulate(*acc, FunctionArgs(cols, consts, 0));
  EXPECT_EQ(valueOf(*f, *acc, LogicalType::string()), "x,yy,x");
  EXPECT_EQ(valueOf(*f, *copy, LogicalType::string()), "x,yy");
  // Every truncation and trailing bytes are InputErrors.
  for (size_t n = 0; n < bytes.size(); ++n) {
    SCOPED_TRACE("first " + std::to_string(n) + " bytes");
    EXPECT_THROW(f->deserialize(std::string_view(bytes).substr(0, n)), InputError);
  }
  EXPECT_THROW(f->deserialize(bytes + "z"), InputError);
  // An accumulator of another function is refused, not misread.
  auto other = weightedAvg()->createAccumulator();
  EXPECT_THROW(f->serialize(*other, bytes), UserError);
}

}  // namespace
}  // namespace sluice::table
