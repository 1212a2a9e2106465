#include "types/row_batch.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace sluice::types {
namespace {

RowType schema() {
  RowType t;
  t.names = {"k", "v", "d", "amount", "ts"};
  t.types = {LogicalType::string(), LogicalType::integer(), LogicalType::doubleType(), LogicalType::decimal(10, 2),
             LogicalType::timestamp(3)};
  return t;
}

RowBatch sample() {
  RowBatch b(schema());
  b.column(0).appendString("AA");
  b.column(1).appendLong(7);
  b.column(2).appendDouble(1.5);
  b.column(3).appendLong(12345);  // 123.45
  b.column(4).appendLong(1420070400000);
  b.kinds().push_back(RowKind::kInsert);
  b.column(0).appendNull();
  b.column(1).appendNull();
  b.column(2).appendDouble(-0.25);
  b.column(3).appendNull();
  b.column(4).appendLong(0);
  b.kinds().push_back(RowKind::kUpdateBefore);
  b.column(0).appendString("");
  b.column(1).appendLong(-1);
  b.column(2).appendNull();
  b.column(3).appendLong(-5);
  b.column(4).appendNull();
  b.kinds().push_back(RowKind::kDelete);
  return b;
}

TEST(RowBatchTest, AppendAndRead) {
  RowBatch b = sample();
  ASSERT_EQ(b.numRows(), 3u);
  EXPECT_EQ(b.column(0).getString(0), "AA");
  EXPECT_TRUE(b.column(0).isNull(1));
  EXPECT_FALSE(b.column(0).isNull(2));
  EXPECT_EQ(b.column(0).getString(2), "");
  EXPECT_EQ(b.column(1).getLong(2), -1);
  EXPECT_EQ(b.kind(1), RowKind::kUpdateBefore);
}

TEST(RowBatchTest, SelectKeepsOrderAndKinds) {
  RowBatch b = sample();
  RowBatch s = b.select({2, 0});
  ASSERT_EQ(s.numRows(), 2u);
  EXPECT_EQ(s.kind(0), RowKind::kDelete);
  EXPECT_EQ(s.kind(1), RowKind::kInsert);
  EXPECT_EQ(s.column(0).getString(1), "AA");
  EXPECT_EQ(s.column(3).getLong(0), -5);
}

TEST(RowBatchTest, SerializationRoundTrip) {
  RowBatch b = sample();
  std::string bytes;
  b.serialize(bytes);
  std::string_view in(bytes);
  RowBatch r = RowBatch::deserialize(in);
  EXPECT_TRUE(in.empty());
  ASSERT_EQ(r.numRows(), 3u);
  ASSERT_EQ(r.numColumns(), 5u);
  for (size_t c = 0; c < 5; ++c) EXPECT_EQ(r.column(c).type(), b.column(c).type());
  for (size_t row = 0; row < 3; ++row) {
    EXPECT_EQ(r.kind(row), b.kind(row));
    for (size_t c = 0; c < 5; ++c) EXPECT_EQ(r.column(c).isNull(row), b.column(c).isNull(row));
  }
  EXPECT_EQ(r.column(0).getString(0), "AA");
  EXPECT_EQ(r.column(2).getDouble(1), -0.25);
  EXPECT_EQ(r.column(3).getLong(0), 12345);
  EXPECT_EQ(r.column(4).getLong(0), 1420070400000);
}

TEST(RowBatchTest, TruncatedBytesAreAnErrorNotACrash) {
  RowBatch b = sample();
  std::string bytes;
  b.serialize(bytes);
  for (size_t cut = 0; cut < bytes.size(); cut += 7) {
    std::string_view in(bytes.data(), cut);
    EXPECT_THROW(RowBatch::deserialize(in), InternalError) << "cut at " << cut;
  }
}

TEST(LogicalTypeTest, FlinkSummaryStrings) {
  EXPECT_EQ(LogicalType::integer(false).toString(), "INT NOT NULL");
  EXPECT_EQ(LogicalType::string().toString(), "STRING");
  EXPECT_EQ(LogicalType::varchar(5).toString(), "VARCHAR(5)");
  EXPECT_EQ(LogicalType::decimal(10, 2).toString(), "DECIMAL(10, 2)");
  EXPECT_EQ(LogicalType::timestamp(3).toString(), "TIMESTAMP(3)");
}

}  // namespace
}  // namespace sluice::types
