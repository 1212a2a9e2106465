#include "connectors/datagen_connector.h"

#include <cstdlib>
#include <ctime>
#include <set>

#include <gtest/gtest.h>

#include "common/config.h"
#include "common/error.h"
#include "test_util.h"

namespace sluice::connectors {
namespace {

using testing::CollectingOutput;
using testing::runSource;
using types::LogicalType;
using types::RowType;

table::ResolvedTable genTable(RowType type, std::map<std::string, std::string> options) {
  table::ResolvedTable t;
  t.name = "gen";
  t.physical_type = std::move(type);
  t.options = std::move(options);
  t.options["connector"] = "datagen";
  return t;
}

TEST(DataGenTest, SequenceIsSplitAcrossSubtasks) {
  // 'rows-per-second' high enough that the test never waits long for the throttle.
  auto t = genTable(RowType{{"id", "s"}, {LogicalType::bigint(), LogicalType::string()}},
                    {{"fields.id.kind", "sequence"}, {"fields.id.start", "5"}, {"fields.id.end", "1004"},
                     {"rows-per-second", "100000000"}});
  Configuration conf;
  auto src = DataGenTableFactory().createSource(t, conf);
  EXPECT_TRUE(src->isBounded());
  for (int p = 1; p <= 4; ++p) {
    std::multiset<int64_t> all;
    for (int i = 0; i < p; ++i) {
      CollectingOutput out;
      runSource(*src, i, p, out);
      for (const auto& b : out.batches) {
        for (size_t r = 0; r < b.numRows(); ++r) {
          int64_t v = b.column(0).getLong(r);
          // Flink's SequenceGenerator: subtask i emits start + i, start + i + p, ...
          EXPECT_EQ((v - 5) % p, i);
          all.insert(v);
          EXPECT_EQ(b.column(1).getString(r).size(), 100u);  // default random STRING length
        }
      }
    }
    // 5..1004 is 1000 values, each exactly once.
    ASSERT_EQ(all.size(), 1000u) << p;
    EXPECT_EQ(*all.begin(), 5);
    EXPECT_EQ(*all.rbegin(), 1004);
    EXPECT_EQ(std::set<int64_t>(all.begin(), all.end()).size(), 1000u);
  }
}

TEST(DataGenTest, NumberOfRowsIsDividedAndRandomRespectsBounds) {
  auto t = genTable(
      RowType{{"a", "d", "m", "f", "c"},
              {LogicalType::integer(), LogicalType::doubleType(), LogicalType::decimal(5, 2), LogicalType::boolean(),
               LogicalType::charType(3)}},
      {{"number-of-rows", "10"}, {"rows-per-second", "100000000"}, {"fields.a.min", "-3"}, {"fields.a.max", "3"},
       {"fields.d.min", "1"}, {"fields.d.max", "2"}, {"fields.m.min", "0"}, {"fields.m.max", "1.5"}});
  Configuration conf;
  auto src = DataGenTableFactory().createSource(t, conf);
  // 10 rows over 3 subtasks: 4, 3, 3.
  const size_t expected[] = {4, 3, 3};
  for (int i = 0; i < 3; ++i) {
    CollectingOutput out;
    runSource(*src, i, 3, out);
    EXPECT_EQ(out.rows(), expected[i]);
    for (const auto& b : out.batches) {
      for (size_t r = 0; r < b.numRows(); ++r) {
        EXPECT_GE(b.column(0).getLong(r), -3);
        EXPECT_LE(b.column(0).getLong(r), 3);
        EXPECT_GE(b.column(1).getDouble(r), 1.0);
        EXPECT_LT(b.column(1).getDouble(r), 2.0);
        EXPECT_GE(b.column(2).getLong(r), 0);
        EXPECT_LE(b.column(2).getLong(r), 150);  // 1.5 at scale 2
        EXPECT_EQ(b.column(4).getString(r).size(), 3u);  // CHAR(3)
      }
    }
  }
}

TEST(DataGenTest, SameSubtaskGivesSameValues) {
  auto t = genTable(RowType{{"a"}, {LogicalType::bigint()}}, {{"number-of-rows", "50"}, {"rows-per-second", "100000000"}});
  Configuration conf;
  auto src = DataGenTableFactory().createSource(t, conf);
  CollectingOutput a, b;
  runSource(*src, 1, 2, a);
  runSource(*src, 1, 2, b);
  // Batches are cut by the throttle's timing; compare the concatenated values.
  auto values = [](const CollectingOutput& o) {
    std::vector<int64_t> v;
    for (const auto& batch : o.batches) v.insert(v.end(), batch.column(0).longs().begin(), batch.column(0).longs().end());
    return v;
  };
  ASSERT_EQ(a.rows(), 25u);
  EXPECT_EQ(values(a), values(b));
}

TEST(DataGenTest, NullRateOne) {
  auto t = genTable(RowType{{"a"}, {LogicalType::integer()}},
                    {{"number-of-rows", "5"}, {"fields.a.null-rate", "1"}, {"rows-per-second", "100000000"}});
  Configuration conf;
  CollectingOutput out;
  runSource(*DataGenTableFactory().createSource(t, conf), 0, 1, out);
  ASSERT_EQ(out.rows(), 5u);
  for (size_t r = 0; r < 5; ++r) EXPECT_TRUE(out.batches[0].column(0).isNull(r));
}

TEST(DataGenTest, RateLimitReturnsNothingAvailable) {
  auto t = genTable(RowType{{"a"}, {LogicalType::integer()}}, {{"rows-per-second", "1"}});
  Configuration conf;
  auto src = DataGenTableFactory().createSource(t, conf);
  EXPECT_FALSE(src->isBounded());
  auto op = src->operatorFactory()->createOperator();
  CollectingOutput out;
  op->open(runtime::OperatorContext{}, &out);
  auto* s = dynamic_cast<runtime::SourceOperator*>(op.get());
  // One row is due at once, the next only after a second: the second call has nothing.
  EXPECT_EQ(s->emitNext(), runtime::InputStatus::kMoreAvailable);
  EXPECT_EQ(s->emitNext(), runtime::InputStatus::kNothingAvailable);
  EXPECT_EQ(out.rows(), 1u);
}

TEST(DataGenTest, SequenceOfStringsAndDecimals) {
  auto t = genTable(RowType{{"s", "m", "d"}, {LogicalType::string(), LogicalType::decimal(6, 2), LogicalType::doubleType()}},
                    {{"fields.s.kind", "sequence"}, {"fields.s.start", "-1"}, {"fields.s.end", "1"},
                     {"fields.m.kind", "sequence"}, {"fields.m.start", "7"}, {"fields.m.end", "100"},
                     {"fields.d.kind", "sequence"}, {"fields.d.start", "0"}, {"fields.d.end", "9"},
                     {"rows-per-second", "100000000"}});
  Configuration conf;
  CollectingOutput out;
  runSource(*DataGenTableFactory().createSource(t, conf), 0, 1, out);
  // The shortest sequence (-1..1, 3 values) ends the source.
  ASSERT_EQ(out.rows(), 3u);
  const auto& b = out.batches[0];
  EXPECT_EQ(b.column(0).getString(0), "-1");
  EXPECT_EQ(b.column(0).getString(2), "1");
  EXPECT_EQ(b.column(1).getLong(1), 800);  // 8.00 at scale 2
  EXPECT_EQ(b.column(2).getDouble(2), 2.0);
}

// Local calendar day and millisecond of the day of the current instant, from libc (the oracle).
std::pair<int64_t, int64_t> libcLocalNow() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  std::tm tm{};
  localtime_r(&ts.tv_sec, &tm);
  const int64_t local_s = static_cast<int64_t>(ts.tv_sec) + tm.tm_gmtoff;
  const int64_t day = local_s >= 0 ? local_s / 86400 : -((-local_s + 86399) / 86400);
  return {day, (local_s - day * 86400) * 1000 + ts.tv_nsec / 1'000'000};
}

TEST(DataGenTest, DateAndTimeAreTheLocalClock) {
  // UTC+14 most of the day falls on another calendar day than UTC: a generator that ignored the zone fails.
  const char* old_tz = std::getenv("TZ");
  const std::string saved = old_tz ? old_tz : "";
  setenv("TZ", "Pacific/Kiritimati", 1);
  tzset();
  auto t = genTable(RowType{{"d", "t", "n"}, {LogicalType::date(), LogicalType::time(3), LogicalType::date()}},
                    {{"number-of-rows", "20"}, {"rows-per-second", "100000000"}, {"fields.n.null-rate", "1"}});
  Configuration conf;
  auto src = DataGenTableFactory().createSource(t, conf);
  const auto before = libcLocalNow();
  CollectingOutput out;
  runSource(*src, 0, 1, out);
  const auto after = libcLocalNow();
  if (old_tz) setenv("TZ", saved.c_str(), 1); else unsetenv("TZ");
  tzset();
  ASSERT_EQ(out.rows(), 20u);
  for (const auto& b : out.batches) {
    for (size_t r = 0; r < b.numRows(); ++r) {
      // The date is today.
      EXPECT_GE(b.column(0).getLong(r), before.first);
      EXPECT_LE(b.column(0).getLong(r), after.first);
      const int64_t ms = b.column(1).getLong(r);
      if (before.first == after.first) {
        EXPECT_GE(ms, before.second);
        EXPECT_LE(ms, after.second);
      }
      EXPECT_GE(ms, 0);
      EXPECT_LT(ms, 86'400'000);
      EXPECT_TRUE(b.column(2).isNull(r));
    }
  }
}

TEST(DataGenTest, BadOptions) {
  Configuration conf;
  DataGenTableFactory f;
  RowType one{{"a"}, {LogicalType::integer()}};
  EXPECT_THROW(f.createSource(genTable(one, {{"fields.a.kind", "sequence"}}), conf), UserError);
  EXPECT_THROW(f.createSource(genTable(one, {{"fields.a.kind", "zigzag"}}), conf), UserError);
  EXPECT_THROW(f.createSource(genTable(one, {{"fields.a.min", "5"}, {"fields.a.max", "1"}}), conf), UserError);
  EXPECT_THROW(f.createSource(genTable(one, {{"fields.b.min", "5"}}), conf), UserError);
  EXPECT_THROW(f.createSource(genTable(one, {{"scan.parallelism", "-1"}}), conf), UserError);
  EXPECT_EQ(f.createSource(genTable(one, {{"scan.parallelism", "2"}}), conf)->parallelism(), 2);
  // Flink's SequenceGeneratorVisitor has no DATE, TIME or timestamp sequence.
  for (const LogicalType& type : {LogicalType::date(), LogicalType::time(0), LogicalType::timestamp(3)}) {
    try {
      f.createSource(genTable(RowType{{"a"}, {type}},
                              {{"fields.a.kind", "sequence"}, {"fields.a.start", "1"}, {"fields.a.end", "5"}}),
                     conf);
      ADD_FAILURE() << type.toString();
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("does not support type " + type.toString()), std::string::npos) << e.what();
    }
    // Without start and end: still the type is the reason, not the missing options.
    try {
      f.createSource(genTable(RowType{{"a"}, {type}}, {{"fields.a.kind", "sequence"}}), conf);
      ADD_FAILURE() << type.toString();
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("does not support type " + type.toString()), std::string::npos) << e.what();
    }
  }
}

// Flink's validateUnconsumedKeys: an option the column's generator does not read is refused, by name.
TEST(DataGenTest, OptionsAColumnsGeneratorDoesNotReadAreRefused) {
  Configuration conf;
  DataGenTableFactory f;
  const RowType cols{{"d", "i", "s", "k"},
                     {LogicalType::date(), LogicalType::integer(), LogicalType::string(), LogicalType::bigint()}};
  const std::vector<std::pair<std::string, std::string>> misplaced = {
      {"fields.d.min", "2020-01-01"}, {"fields.d.max-past", "1 d"}, {"fields.i.length", "3"},
      {"fields.s.min", "1"}, {"fields.s.max-past", "1 d"}};
  for (const auto& [key, value] : misplaced) {
    try {
      f.createSource(genTable(cols, {{"number-of-rows", "1"}, {key, value}}), conf);
      ADD_FAILURE() << key;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("Unsupported options:\n\n" + key + "\n"), std::string::npos) << e.what();
    }
  }
  // A sequence reads start and end, not min and max.
  try {
    f.createSource(genTable(cols, {{"fields.k.kind", "sequence"}, {"fields.k.start", "1"}, {"fields.k.end", "3"},
                                   {"fields.k.max", "9"}}),
                   conf);
    ADD_FAILURE() << "fields.k.max on a sequence";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("Unsupported options:\n\nfields.k.max\n"), std::string::npos) << e.what();
  }
  // What each generator does read is accepted.
  EXPECT_NO_THROW(f.createSource(genTable(cols, {{"number-of-rows", "1"}, {"fields.d.null-rate", "0.5"},
                                                 {"fields.i.min", "1"}, {"fields.i.max", "2"},
                                                 {"fields.s.length", "3"}, {"fields.s.var-len", "true"},
                                                 {"fields.k.kind", "random"}}),
                                 conf));
}

}  // namespace
}  // namespace sluice::connectors
