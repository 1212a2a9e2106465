#include "types/row_batch.h"

#include <fmt/format.h>
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

// A batch of zero rows (an empty flush) has columns without storage: deserializing its INT, DOUBLE, DECIMAL and
// TIMESTAMP columns copies no bytes (under UBSan, a memcpy to a null pointer was a finding even for 0 bytes).
TEST(RowBatchTest, SerializationRoundTripOfZeroRows) {
  const RowBatch empty(schema());
  std::string bytes;
  empty.serialize(bytes);
  ASSERT_EQ(bytes.size(), 8u + 5u * 10u);  // u32 rows, u32 columns, then a 10-byte type per column
  std::string_view in(bytes);
  RowBatch r = RowBatch::deserialize(in);
  EXPECT_TRUE(in.empty());
  EXPECT_EQ(r.numRows(), 0u);
  ASSERT_EQ(r.numColumns(), 5u);
  for (size_t c = 0; c < 5; ++c) {
    EXPECT_EQ(r.column(c).type(), empty.column(c).type());
    EXPECT_EQ(r.column(c).size(), 0u);
  }
  // The same bytes followed by the next record: only the batch's own bytes are consumed.
  std::string two = bytes + "next";
  std::string_view rest(two);
  EXPECT_EQ(RowBatch::deserialize(rest).numColumns(), 5u);
  EXPECT_EQ(rest, "next");
}

// The InputError deserialize throws for `bytes` ("(accepted)" when it throws none).
std::string corruptionOf(const std::string& bytes) {
  std::string_view in(bytes);
  try {
    RowBatch::deserialize(in);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(RowBatchTest, TruncatedBytesAreADataErrorNotACrash) {
  std::string bytes;
  sample().serialize(bytes);
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    const std::string e = corruptionOf(bytes.substr(0, cut));
    EXPECT_EQ(e.rfind("corrupt RowBatch bytes at offset ", 0), 0u) << "cut at " << cut << ": " << e;
  }
}

TEST(RowBatchTest, InvalidFieldsNameTheirOffset) {
  std::string bytes;
  sample().serialize(bytes);
  // Layout: u32 rows (offset 0), u32 columns (4), column 0's type id (8), nullable (9), precision (10), scale
  // (14), then its 3 validity bytes and values; the last 3 bytes are the row kinds.
  std::string bad = bytes;
  bad[8] = 42;
  EXPECT_EQ(corruptionOf(bad), "corrupt RowBatch bytes at offset 8: unknown type id 42");
  bad = bytes;
  bad[9] = 2;
  EXPECT_EQ(corruptionOf(bad), "corrupt RowBatch bytes at offset 9: nullable flag 2 (0 or 1)");
  bad = bytes;
  bad[bytes.size() - 2] = 9;
  EXPECT_EQ(corruptionOf(bad),
            fmt::format("corrupt RowBatch bytes at offset {}: row kind 9 of row 1 (0 to 3)", bytes.size() - 2));
  bad = bytes;
  bad[0] = bad[1] = bad[2] = bad[3] = '\xff';  // 4294967295 rows
  EXPECT_NE(corruptionOf(bad).find("4294967295 rows and 5 columns do not fit"), std::string::npos);
  // Column 3 is DECIMAL(10, 2). A column is its 10-byte type, 3 validity bytes and its values: the string
  // column 0 ("AA", null, "") 10 + 3 + 3 * 4 + 2 = 27 bytes from offset 8, INT column 1 10 + 3 + 3 * 8 = 37,
  // DOUBLE column 2 37: column 3 starts at 8 + 27 + 37 + 37 = 109, its precision at 111, its scale at 115.
  ASSERT_EQ(bytes[109], static_cast<char>(TypeId::kDecimal));
  bad = bytes;
  bad[111] = 39;  // DECIMAL(39, 2): above Flink's maximum precision 38 (little endian: the low byte first)
  EXPECT_EQ(corruptionOf(bad),
            "corrupt RowBatch bytes at offset 115: type id 5 with precision 39 and scale 2 is no type the engine "
            "writes");
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
