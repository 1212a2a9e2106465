// TypeSerializer round trips, malformed input, stable key hashes and record printing.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "api/datastream.h"
#include "test_util.h"
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

// A struct without SLUICE_TYPE: fine inside a chain, an error where it would cross the network.
struct Unregistered {
  int64_t x = 0;
};

// A type with a user-written serializer (one byte per value).
struct Small {
  int8_t v = 0;
};

}  // namespace
}  // namespace sluice::api

template <>
struct sluice::runtime::TypeSerializer<sluice::api::Small> {
  static void serialize(const sluice::api::Small& s, DataOutputView& out) { out.writeBytes(&s.v, 1); }
  static sluice::api::Small deserialize(DataInputView& in) {
    sluice::api::Small s;
    in.readBytes(&s.v, 1);
    return s;
  }
};

namespace sluice::api {
namespace {

TEST(NetworkSerializationTest, UnregisteredStructInsideAChainNeedsNoSerializer) {
  auto env = testing::makeEnv(2);
  auto out = env.fromSequence(1, 4)
                 .map([](int64_t v) { return Unregistered{v}; })
                 .map([](const Unregistered& u) { return u.x * 2; })
                 .executeAndCollect();
  EXPECT_EQ(testing::sorted(out), (std::vector<int64_t>{2, 4, 6, 8}));
}

TEST(NetworkSerializationTest, UnregisteredStructAcrossTheNetworkFailsAtSubmissionNamingSluiceType) {
  auto env = testing::makeEnv(2);
  env.fromSequence(1, 4)
      .map([](int64_t v) { return Unregistered{v}; })
      .name("to struct")
      .rebalance()
      .map([](const Unregistered& u) { return u.x; })
      .name("back")
      .collect();
  try {
    env.execute();
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("Unregistered"), std::string::npos) << msg;
    EXPECT_NE(msg.find("SLUICE_TYPE"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'to struct'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'back'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("REBALANCE"), std::string::npos) << msg;
  }
}

TEST(NetworkSerializationTest, DeclaredAndUserSerializedTypesCrossKeyByAndRebalance) {
  auto env = testing::makeEnv(3);
  // Flights 1..30: airline "A<i mod 3>", delay i, distance only for even i, stops i mod 2.
  // The source and the first map run at parallelism 1 so each key's flights reach the reduce in
  // increasing order: the running sums below depend on that order.
  auto sums = env.fromSequence(1, 30)
                  .setParallelism(1)
                  .map([](int64_t i) {
                    Flight f{"A" + std::to_string(i % 3), i, std::nullopt, {}};
                    if (i % 2 == 0) f.distance = static_cast<double>(i) / 2;
                    if (i % 2 == 1) f.stops.push_back("S" + std::to_string(i));
                    return f;
                  })
                  .setParallelism(1)
                  .keyBy([](const Flight& f) { return f.airline; })
                  .reduce([](const Flight& a, const Flight& b) {
                    return Flight{a.airline, a.delay + b.delay,
                                  a.distance.value_or(0) + b.distance.value_or(0), {}};
                  })
                  .map([](const Flight& f) { return Small{static_cast<int8_t>(f.delay % 100)}; })
                  .rebalance()
                  .map([](const Small& s) { return static_cast<int64_t>(s.v); })
                  .executeAndCollect();
  // Final running sums per airline (STREAMING emits every update; the largest per airline is the total):
  // A0: 3+6+...+30 = 165, A1: 1+4+...+28 = 145, A2: 2+5+...+29 = 155; each mod 100.
  std::vector<int64_t> v = testing::sorted(sums);
  ASSERT_EQ(v.size(), 30u);  // one update per flight
  std::vector<int64_t> expected;
  int64_t s0 = 0, s1 = 0, s2 = 0;
  for (int64_t i = 1; i <= 30; ++i) {
    int64_t& s = i % 3 == 0 ? s0 : (i % 3 == 1 ? s1 : s2);
    s += i;
    expected.push_back(s % 100);
  }
  EXPECT_EQ(v, testing::sorted(expected));
  EXPECT_EQ(s0 % 100, 65);
  EXPECT_EQ(s1 % 100, 45);
  EXPECT_EQ(s2 % 100, 55);
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
