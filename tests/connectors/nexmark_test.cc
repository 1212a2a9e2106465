#include "connectors/nexmark/nexmark_connector.h"

#include <map>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include "common/config.h"
#include "common/error.h"
#include "test_util.h"

namespace sluice::connectors::nexmark {
namespace {

using testing::CollectingOutput;
using testing::runSource;
using types::LogicalType;
using types::RowType;

TEST(NexmarkRandomTest, MatchesJavaSplittableRandom) {
  // Printed by OpenJDK 17 for new SplittableRandom(42): nextInt(), nextInt(13), nextInt(1000), nextLong(),
  // nextDouble(), nextInt(1 << 20), nextInt(2147483647).
  SplittableRandom r(42);
  EXPECT_EQ(r.nextInt(), -491277234);
  EXPECT_EQ(r.nextInt(13), 1);
  EXPECT_EQ(r.nextInt(1000), 481);
  EXPECT_EQ(r.nextLong(), 6349198060258255764LL);
  EXPECT_DOUBLE_EQ(r.nextDouble(), 0.03803016854024621);
  EXPECT_EQ(r.nextInt(1 << 20), 688463);
  EXPECT_EQ(r.nextInt(2147483647), 95458856);
}

TEST(NexmarkTablesTest, ChannelUrls) {
  for (int i = 0; i < 4; ++i) {
    const std::string_view url = NexmarkGenerator::hotUrl(i);
    EXPECT_EQ(url.substr(0, 24), "https://www.nexmark.com/");
    EXPECT_EQ(url.substr(url.size() - 16), "item.htm?query=1");
  }
  // Math.abs(Integer.reverse(n)) as OpenJDK prints it: 1 -> -2147483648 (abs of MIN_VALUE), 2 -> 1073741824,
  // 12345 -> 1676935168.
  const std::map<int, std::string> ids = {{1, "-2147483648"}, {2, "1073741824"}, {12345, "1676935168"}};
  int with_id = 0;
  for (int n = 0; n < 10000; ++n) {
    const std::string url(NexmarkGenerator::channelUrl(n));
    const size_t at = url.find("&channel_id=");
    if (at == std::string::npos) continue;
    ++with_id;
    auto it = ids.find(n);
    if (it != ids.end()) {
      EXPECT_EQ(url.substr(at + 12), it->second) << n;
    }
  }
  // 9 in 10 carry the parameter.
  EXPECT_GT(with_id, 8800);
  EXPECT_LT(with_id, 9200);
}

NexmarkConfig smallConfig(int64_t events, int rate) {
  NexmarkConfig c;
  c.events_num = events;
  c.first_event_rate = rate;
  return c;
}

TEST(NexmarkGeneratorTest, ProportionsAndIds) {
  const NexmarkConfig c = smallConfig(5000, 1000);
  auto shares = splitShares(c, 0, 1);
  ASSERT_EQ(shares.size(), 1u);
  NexmarkGenerator g(c, shares[0]);
  Person p{};
  Auction a{};
  Bid b{};
  std::map<EventType, int> counts;
  std::vector<int64_t> person_ids, auction_ids;
  int hot_bidders = 0;
  int64_t event_id = 2;  // ids start at firstEventId + firstEventNumber = 1 + 1
  while (g.hasNext()) {
    ASSERT_EQ(g.nextEventId(), event_id);
    const EventType t = g.next(p, a, b);
    ++counts[t];
    // Type by id % 50: 0 person, 1..3 auction, 4..49 bid.
    const int64_t rem = event_id % 50;
    ASSERT_EQ(t, rem == 0 ? EventType::kPerson : rem <= 3 ? EventType::kAuction : EventType::kBid) << event_id;
    const int64_t epoch = event_id / 50;
    if (t == EventType::kPerson) person_ids.push_back(p.id);
    if (t == EventType::kAuction) {
      auction_ids.push_back(a.id);
      EXPECT_GE(a.category, 10);
      EXPECT_LE(a.category, 14);
      EXPECT_GT(a.expires, a.date_time);
    }
    if (t == EventType::kBid) {
      // The last person is epoch; the bidder has 1000 added twice (BidGenerator's quirk).
      const int64_t hot = (epoch / 100) * 100 + 1 + 2000;
      if (b.bidder == hot) {
        ++hot_bidders;
      } else {
        const int64_t people = epoch + 1;
        const int64_t active = std::min<int64_t>(people, 1000);
        EXPECT_GE(b.bidder - 2000, people - active);
        EXPECT_LT(b.bidder - 2000, people + 10);
      }
      // The last auction of the epoch is 3 * epoch + 2.
      const int64_t last_auction = 3 * epoch + 2;
      const bool hot_auction = b.auction == (last_auction / 100) * 100 + 1000;
      if (!hot_auction) {
        EXPECT_GE(b.auction - 1000, std::max<int64_t>(last_auction - 100, 0));
        EXPECT_LE(b.auction - 1000, last_auction + 10);
      }
      EXPECT_GE(b.price, 100);
      EXPECT_LE(b.price, 100000000);
    }
    ++event_id;
  }
  // 5000 consecutive ids are 100 epochs of 1 + 3 + 46.
  EXPECT_EQ(counts[EventType::kPerson], 100);
  EXPECT_EQ(counts[EventType::kAuction], 300);
  EXPECT_EQ(counts[EventType::kBid], 4600);
  for (size_t i = 0; i < person_ids.size(); ++i) EXPECT_EQ(person_ids[i], 1001 + static_cast<int64_t>(i));
  // Id 1 (auction 1000) is never generated: auctions count up from 1001.
  for (size_t i = 0; i < auction_ids.size(); ++i) EXPECT_EQ(auction_ids[i], 1001 + static_cast<int64_t>(i));
  // Hot bidders with probability 1 - 1/4 (plus the few random picks that land on it).
  EXPECT_GT(hot_bidders, 4600 * 70 / 100);
  EXPECT_LT(hot_bidders, 4600 * 80 / 100);
}

TEST(NexmarkGeneratorTest, TimestampsPerGenerator) {
  // rate 1000 and 2 generators: 1e6 / 1000 * 2 = 2000 us between the events of one generator, so event k
  // (0-based) of either generator is at base + (1 + k) * 2 ms.
  const NexmarkConfig c = smallConfig(1000, 1000);
  const int64_t base = 1'700'000'000'000;
  auto shares = splitShares(c, base, 2);
  ASSERT_EQ(shares.size(), 2u);
  for (int s = 0; s < 2; ++s) {
    NexmarkGenerator g(c, shares[static_cast<size_t>(s)]);
    Person p{};
    Auction a{};
    Bid b{};
    for (int64_t k = 0; g.hasNext(); ++k) {
      const EventType t = g.next(p, a, b);
      const int64_t ts = t == EventType::kPerson ? p.date_time : t == EventType::kAuction ? a.date_time : b.date_time;
      ASSERT_EQ(ts, base + (1 + k) * 2) << "share " << s << " event " << k;
    }
    EXPECT_EQ(g.eventsSoFar(), 500);
  }
  // rate 3 at 1 generator: 333333.33.. us; event number 3 is at (long)(1e6) / 1000 = 1000 ms (truncated).
  NexmarkGenerator g3(smallConfig(10, 3), splitShares(smallConfig(10, 3), 0, 1)[0]);
  EXPECT_EQ(g3.timestampForEvent(3), 1000);
  EXPECT_EQ(g3.timestampForEvent(1), 333);
}

TEST(NexmarkGeneratorTest, ExtraPadsToTheAverageSize) {
  const NexmarkConfig c = smallConfig(50000, 10000000);
  NexmarkGenerator g(c, splitShares(c, 0, 1)[0]);
  Person p{};
  Auction a{};
  Bid b{};
  double person_bytes = 0, auction_bytes = 0, bid_bytes = 0;
  int persons = 0, auctions = 0, bids = 0;
  while (g.hasNext()) {
    switch (g.next(p, a, b)) {
      case EventType::kPerson:
        // The reference's size: 8 for the id plus the strings.
        person_bytes += 8 + p.name.size() + p.email.size() + p.credit_card.size() + p.city.size() + p.state.size() +
                        p.extra.size();
        ++persons;
        break;
      case EventType::kAuction:
        auction_bytes += 8 + a.item_name.size() + a.description.size() + 40 + a.extra.size();
        ++auctions;
        break;
      case EventType::kBid:
        {
          // A slice of the padding source.
          const std::string_view src = NexmarkGenerator::extraSource();
          EXPECT_TRUE(b.extra.data() >= src.data() && b.extra.data() + b.extra.size() <= src.data() + src.size());
        }
        bid_bytes += 32 + b.extra.size();
        ++bids;
        break;
    }
  }
  // extra is U[d - 0.2 d, d + 0.2 d) of the missing d bytes: the mean is the target less half a byte.
  EXPECT_NEAR(person_bytes / persons, 200, 3);
  EXPECT_NEAR(auction_bytes / auctions, 500, 5);
  EXPECT_NEAR(bid_bytes / bids, 100, 1);
}

table::ResolvedTable nexmarkTable(std::map<std::string, std::string> options) {
  table::ResolvedTable t;
  t.name = "datagen";
  auto row = [](std::vector<std::pair<std::string, LogicalType>> fields) {
    RowType r;
    for (auto& f : fields) {
      r.names.push_back(f.first);
      r.types.push_back(f.second);
    }
    return LogicalType::row(r);
  };
  const LogicalType L = LogicalType::bigint(), S = LogicalType::string(), T = LogicalType::timestamp(3);
  t.physical_type.names = {"event_type", "person", "auction", "bid"};
  t.physical_type.types = {
      LogicalType::integer(),
      row({{"id", L}, {"name", S}, {"emailAddress", S}, {"creditCard", S}, {"city", S}, {"state", S},
           {"dateTime", T}, {"extra", S}}),
      row({{"id", L}, {"itemName", S}, {"description", S}, {"initialBid", L}, {"reserve", L}, {"dateTime", T},
           {"expires", T}, {"seller", L}, {"category", L}, {"extra", S}}),
      row({{"auction", L}, {"bidder", L}, {"price", L}, {"channel", S}, {"url", S}, {"dateTime", T}, {"extra", S}})};
  t.options = std::move(options);
  t.options["connector"] = "nexmark";
  return t;
}

// Every bid field but the time (which depends on the generator's timeline), as text.
using BidKey = std::tuple<int64_t, int64_t, int64_t, std::string, std::string, std::string>;

std::multiset<BidKey> bidsOf(const table::ScanTableSource& src, int p, int64_t* events) {
  std::multiset<BidKey> out;
  *events = 0;
  for (int i = 0; i < p; ++i) {
    CollectingOutput o;
    runSource(src, i, p, o);
    for (const auto& batch : o.batches) {
      *events += static_cast<int64_t>(batch.numRows());
      for (size_t r = 0; r < batch.numRows(); ++r) {
        if (batch.column(0).getLong(r) != 2) continue;
        out.emplace(batch.column(1).getLong(r), batch.column(2).getLong(r), batch.column(3).getLong(r),
                    std::string(batch.column(4).getString(r)), std::string(batch.column(5).getString(r)),
                    std::string(batch.column(6).getString(r)));
      }
    }
  }
  return out;
}

TEST(NexmarkSourceTest, SplitsUnionEqualsOneGenerator) {
  Configuration conf;
  auto src = NexmarkTableFactory().createSource(nexmarkTable({{"events.num", "10001"}}), conf);
  EXPECT_TRUE(src->isBounded());
  // event_type, then bid.auction, bidder, price, channel, url, extra.
  ASSERT_TRUE(src->applyNestedProjection({{0}, {3, 0}, {3, 1}, {3, 2}, {3, 3}, {3, 4}, {3, 6}}));
  int64_t n1 = 0, n2 = 0, n3 = 0;
  const auto p1 = bidsOf(*src, 1, &n1);
  const auto p2 = bidsOf(*src, 2, &n2);
  const auto p3 = bidsOf(*src, 3, &n3);
  EXPECT_EQ(n1, 10001);
  EXPECT_EQ(n2, 10001);
  EXPECT_EQ(n3, 10001);
  EXPECT_FALSE(p1.empty());
  EXPECT_TRUE(p1 == p2);
  EXPECT_TRUE(p1 == p3);
}

TEST(NexmarkSourceTest, ProjectionDoesNotChangeValues) {
  Configuration conf;
  auto all = NexmarkTableFactory().createSource(nexmarkTable({{"events.num", "3000"}}), conf);
  auto some = NexmarkTableFactory().createSource(nexmarkTable({{"events.num", "3000"}}), conf);
  ASSERT_TRUE(all->applyNestedProjection({{0}, {3, 0}, {3, 1}, {3, 2}, {3, 3}, {3, 4}, {3, 6}}));
  ASSERT_TRUE(some->applyNestedProjection({{0}, {3, 2}}));
  CollectingOutput a, s;
  runSource(*all, 0, 1, a);
  runSource(*some, 0, 1, s);
  std::vector<int64_t> pa, ps;
  for (const auto& b : a.batches)
    for (size_t r = 0; r < b.numRows(); ++r)
      if (b.column(0).getLong(r) == 2) pa.push_back(b.column(3).getLong(r));
  for (const auto& b : s.batches)
    for (size_t r = 0; r < b.numRows(); ++r) {
      if (b.column(0).getLong(r) == 2) ps.push_back(b.column(1).getLong(r));
      else EXPECT_TRUE(b.column(1).isNull(r));  // a person or auction row has no bid
    }
  EXPECT_EQ(pa, ps);
}

TEST(NexmarkSourceTest, OptionErrorsNameTheKey) {
  Configuration conf;
  auto expectError = [&](std::map<std::string, std::string> o, const std::string& needle) {
    try {
      NexmarkTableFactory().createSource(nexmarkTable(std::move(o)), conf);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expectError({{"events.num", "ten"}}, "events.num");
  expectError({{"events.num", "-1"}}, "events.num");
  expectError({{"first-event.rate", "0"}}, "first-event.rate");
  expectError({{"max-emit-speed", "maybe"}}, "max-emit-speed");
  expectError({{"bid.avg-size", "lots"}}, "bid.avg-size");
  expectError({{"rate.shape", "TRIANGLE"}}, "rate.shape");
  expectError({{"person.proportion", "0"}}, "person.proportion");
  // Flink's option validation rejects an unknown key before the factory runs.
  table::FactoryRegistry registry;
  registry.add(std::make_shared<NexmarkTableFactory>());
  try {
    registry.find(nexmarkTable({{"events.number", "5"}}));
    ADD_FAILURE() << "unknown option accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("events.number"), std::string::npos) << e.what();
  }
}

TEST(NexmarkSourceTest, WrongSchemaNamesTheColumn) {
  Configuration conf;
  auto t = nexmarkTable({});
  t.physical_type.names[3] = "bids";
  try {
    NexmarkTableFactory().createSource(t, conf);
    ADD_FAILURE() << "schema accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'bids'"), std::string::npos) << e.what();
  }
}

TEST(NexmarkSourceTest, RestoredSplitContinuesAtItsPosition) {
  NexmarkConfig c = smallConfig(100, 1000);
  auto spec = std::make_shared<NexmarkSpec>();
  spec->config = c;
  spec->schema = nexmarkTable({}).physical_type;
  spec->paths = {{0}, {3, 2}};
  NexmarkSource source(spec);
  auto splits = source.splits(1);
  ASSERT_EQ(splits.size(), 1u);
  // One uninterrupted run, and one split restored at position 40.
  auto collect = [&](NexmarkSplit split) {
    runtime::SourceReaderContext ctx{0, 1, nullptr};
    auto reader = source.createReader(ctx);
    reader->addSplit(split);
    std::vector<int64_t> vals;
    struct Out final : runtime::ReaderOutput<types::RowBatch> {
      std::vector<int64_t>* v;
      void collect(types::RowBatch b) override {
        for (size_t r = 0; r < b.numRows(); ++r) v->push_back(b.column(0).getLong(r) * 1000000000 + b.column(1).getLong(r));
      }
      void collect(types::RowBatch b, int64_t) override { collect(std::move(b)); }
    } out;
    out.v = &vals;
    while (reader->pollNext(out) != runtime::InputStatus::kEndOfInput) {
    }
    return vals;
  };
  const auto whole = collect(splits[0]);
  ASSERT_EQ(whole.size(), 100u);
  NexmarkSplit at40 = splits[0];
  at40.emitted = 40;
  const auto rest = collect(at40);
  EXPECT_EQ(rest, std::vector<int64_t>(whole.begin() + 40, whole.end()));
}

}  // namespace
}  // namespace sluice::connectors::nexmark
