#include "connectors/print_connector.h"

#include <sstream>

#include <gtest/gtest.h>

#include "common/config.h"
#include "common/error.h"
#include "connectors/builtin.h"
#include "test_util.h"

namespace sluice::connectors {
namespace {

using types::LogicalType;
using types::RowType;

TEST(PrintSinkTest, Prefixes) {
  EXPECT_EQ(printLinePrefix("id", 0, 1), "id> ");
  EXPECT_EQ(printLinePrefix("id", 2, 4), "id:3> ");
  EXPECT_EQ(printLinePrefix("", 2, 4), "3> ");
  EXPECT_EQ(printLinePrefix("", 0, 1), "");
}

types::RowBatch sample() {
  types::RowBatch b(RowType{{"s", "n", "m"}, {LogicalType::string(), LogicalType::integer(), LogicalType::decimal(10, 7)}});
  b.column(0).appendString("a");
  b.column(1).appendLong(1);
  b.column(2).appendLong(0);
  b.kinds().push_back(types::RowKind::kInsert);
  b.column(0).appendNull();
  b.column(1).appendLong(-2);
  b.column(2).appendLong(37500000);
  b.kinds().push_back(types::RowKind::kUpdateAfter);
  return b;
}

std::string printWith(std::map<std::string, std::string> options, int subtask, int parallelism) {
  table::ResolvedTable t;
  t.name = "out";
  t.options = std::move(options);
  t.options["connector"] = "print";
  table::FactoryRegistry registry;
  registerBuiltinConnectors(registry);
  Configuration conf;
  auto sink = registry.find(t).createSink(t, conf);
  EXPECT_TRUE(sink->acceptsUpdates());
  std::ostringstream captured;
  setPrintStream(&captured);
  auto op = sink->operatorFactory()->createOperator();
  runtime::OperatorContext ctx;
  ctx.subtask_index = subtask;
  ctx.parallelism = parallelism;
  op->open(ctx, nullptr);
  op->processBatch(sample());
  op->close();
  setPrintStream(nullptr);
  return captured.str();
}

TEST(PrintSinkTest, LinesInFlinkFormat) {
  // DECIMAL(10, 7) 0 prints as Java's BigDecimal "0E-7"; 37500000 at scale 7 is 3.7500000.
  EXPECT_EQ(printWith({{"print-identifier", "sink"}}, 0, 1), "sink> +I[a, 1, 0E-7]\nsink> +U[null, -2, 3.7500000]\n");
  EXPECT_EQ(printWith({{"print-identifier", "sink"}}, 1, 2), "sink:2> +I[a, 1, 0E-7]\nsink:2> +U[null, -2, 3.7500000]\n");
  EXPECT_EQ(printWith({}, 0, 3), "1> +I[a, 1, 0E-7]\n1> +U[null, -2, 3.7500000]\n");
  EXPECT_EQ(printWith({{"standard-error", "true"}}, 0, 1), "+I[a, 1, 0E-7]\n+U[null, -2, 3.7500000]\n");
}

TEST(PrintSinkTest, BadOptions) {
  table::ResolvedTable t;
  t.name = "out";
  t.options = {{"connector", "print"}, {"standard-error", "nope"}};
  Configuration conf;
  EXPECT_THROW(PrintTableFactory().createSink(t, conf), UserError);
  EXPECT_THROW(PrintTableFactory().createSource(t, conf), UserError);
  t.options = {{"connector", "print"}, {"sink.parallelism", "2"}};
  EXPECT_EQ(PrintTableFactory().createSink(t, conf)->parallelism(), 2);
}

TEST(BlackHoleSinkTest, CountsRows) {
  table::ResolvedTable t;
  t.name = "b";
  t.options = {{"connector", "blackhole"}};
  Configuration conf;
  auto sink = BlackHoleTableFactory().createSink(t, conf);
  auto op = sink->operatorFactory()->createOperator();
  op->open(runtime::OperatorContext{}, nullptr);
  op->processBatch(sample());
  op->processBatch(sample());
  EXPECT_EQ(dynamic_cast<BlackHoleSinkOperator*>(op.get())->rowsReceived(), 4);  // 2 batches of 2 rows
}

}  // namespace
}  // namespace sluice::connectors
