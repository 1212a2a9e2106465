// TypeSerializer round trips, malformed input, stable key hashes and record printing.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "api/datastream.h"
#include "runtime/serialization/key_hash.h"

namespace sluice::api {
namespace {

struct Flight {
  std::string airline;
  int64_t delay = 0;
  std::optional<double> distance;
  std::vector<std::string> stops;
};
SLUICE_TYPE(Flight, airline, delay, distance, stops)

bool operator==(const Flight& a, const Flight& b) {
  return a.airline == b.airline && a.delay == b.delay && a.distance == b.distance && a.stops == b.stops;
}

template <typename T>
T roundTrip(const T& v) {
  std::string bytes;
  runtime::DataOutputView out(bytes);
  TypeSerializer<T>::serialize(v, out);
  runtime::DataInputView in(bytes);
  T back = TypeSerializer<T>::deserialize(in);
  EXPECT_TRUE(in.atEnd());
  return back;
}

TEST(SerializerTest, BuiltInTypesRoundTrip) {
  EXPECT_EQ(roundTrip<int64_t>(-5), -5);
  EXPECT_EQ(roundTrip<int32_t>(INT32_MIN), INT32_MIN);
  EXPECT_EQ(roundTrip<bool>(true), true);
  EXPECT_EQ(roundTrip<double>(-0.25), -0.25);
  EXPECT_EQ(roundTrip<std::string>(""), "");
  EXPECT_EQ(roundTrip<std::string>(std::string(300, 'x')), std::string(300, 'x'));  // 2-byte varint length
  using T = std::tuple<int, std::string, std::pair<bool, double>>;
  EXPECT_EQ(roundTrip(T{1, "a", {true, 2.5}}), (T{1, "a", {true, 2.5}}));
  EXPECT_EQ(roundTrip(std::optional<std::string>()), std::nullopt);
  EXPECT_EQ(roundTrip(std::optional<std::string>("x")), std::optional<std::string>("x"));
  EXPECT_EQ(roundTrip(std::vector<int64_t>{1, 2, 3}), (std::vector<int64_t>{1, 2, 3}));
}

TEST(SerializerTest, DeclaredStructRoundTrips) {
  const Flight f{"AA", 17, 2342.5, {"ORD", "DFW"}};
  EXPECT_EQ(roundTrip(f), f);
  EXPECT_EQ(roundTrip(Flight{"", -3, std::nullopt, {}}), (Flight{"", -3, std::nullopt, {}}));
}

TEST(SerializerTest, BatchRoundTripKeepsTimestamps) {
  runtime::TypedObjectBatch<Flight> batch;
  batch.add(Flight{"AA", 1, std::nullopt, {}}, 1000);
  batch.add(Flight{"UA", 2, 3.0, {"SFO"}});
  std::string bytes;
  runtime::DataOutputView out(bytes);
  runtime::serializeBatch(batch, out);
  runtime::DataInputView in(bytes);
  auto back = runtime::deserializeBatch<Flight>(in);
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ(back->value(0), batch.value(0));
  EXPECT_EQ(back->value(1), batch.value(1));
  EXPECT_EQ(back->timestamp(0), 1000);
  EXPECT_EQ(back->timestamp(1), runtime::kNoTimestamp);
}

TEST(SerializerTest, TruncatedOrMalformedBytesThrowInputError) {
  std::string bytes;
  runtime::DataOutputView out(bytes);
  TypeSerializer<Flight>::serialize(Flight{"AAAA", 1, 2.0, {"X"}}, out);
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    runtime::DataInputView in(std::string_view(bytes).substr(0, cut));
    EXPECT_THROW(TypeSerializer<Flight>::deserialize(in), InputError) << "cut at " << cut;
  }
  // A string claiming 2^60 bytes.
  std::string huge;
  runtime::DataOutputView h(huge);
  h.writeVarUint(uint64_t{1} << 60);
  runtime::DataInputView in(huge);
  EXPECT_THROW(TypeSerializer<std::string>::deserialize(in), InputError);
}

TEST(KeyHashTest, StableAndConsistentWithSqlKeys) {
  // Numbers hash by value whatever their width; bool like 0/1.
  EXPECT_EQ(runtime::keyHash(int32_t{7}), runtime::keyHash(int64_t{7}));
  EXPECT_EQ(runtime::keyHash(true), runtime::keyHash(int64_t{1}));
  // -0.0 and 0.0 are one key.
  EXPECT_EQ(runtime::keyHash(-0.0), runtime::keyHash(0.0));
  // A tuple combines its fields in order: hashCombine(hashCombine(seed, h(a)), h(b)).
  const uint64_t a = hashBytes("AA");
  const uint64_t b = mix64(static_cast<uint64_t>(int64_t{3}));
  EXPECT_EQ(runtime::keyHash(std::make_tuple(std::string("AA"), int64_t{3})),
            hashCombine(hashCombine(runtime::kKeyHashSeed, a), b));
  EXPECT_EQ(runtime::keyHash(std::make_pair(std::string("AA"), int64_t{3})),
            runtime::keyHash(std::make_tuple(std::string("AA"), int64_t{3})));
  EXPECT_NE(runtime::keyHash(std::make_pair(int64_t{1}, int64_t{2})), runtime::keyHash(std::make_pair(int64_t{2}, int64_t{1})));
  // A scalar key is a one-field key: hashCombine(seed, mix64(v)), the value SQL's hashKey gives one BIGINT column.
  EXPECT_EQ(runtime::keyHash(int64_t{42}), hashCombine(runtime::kKeyHashSeed, mix64(42)));
  EXPECT_EQ(runtime::keyHash(std::string("x")), runtime::keyHash(std::string_view("x")));
}

TEST(RecordFormatTest, FlinkLikeToString) {
  EXPECT_EQ(runtime::recordToString(std::make_pair(std::string("AA"), int64_t{3})), "(AA,3)");
  EXPECT_EQ(runtime::recordToString(std::make_tuple(1, 2.0, true)), "(1,2.0,true)");
  EXPECT_EQ(runtime::recordToString(std::vector<int>{1, 2}), "[1, 2]");
  EXPECT_EQ(runtime::recordToString(std::optional<int>()), "null");
  EXPECT_EQ(runtime::recordToString(Flight{"AA", 5, std::nullopt, {"X"}}),
            "Flight{airline=AA, delay=5, distance=null, stops=[X]}");
}

}  // namespace
}  // namespace sluice::api
