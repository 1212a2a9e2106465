#include "connectors/nexmark/nexmark_generator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace sluice::connectors::nexmark {

namespace {

uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

int32_t mix32(uint64_t z) {
  z = (z ^ (z >> 33)) * 0x62a9d9ed799705f5ULL;
  return static_cast<int32_t>(static_cast<uint32_t>(((z ^ (z >> 28)) * 0xcb24d0a5c88c35b3ULL) >> 32));
}

constexpr int kMinStringLength = 3;
constexpr int kExtraSourceLength = 1024 * 1024;
constexpr int kHotRatio = 100;  // HOT_SELLER_RATIO, HOT_AUCTION_RATIO, HOT_BIDDER_RATIO
constexpr int kLead = 10;       // PERSON_ID_LEAD, AUCTION_ID_LEAD
constexpr int kChannels = 10000;
constexpr int64_t kFirstPersonId = 1000;
constexpr int64_t kFirstAuctionId = 1000;
constexpr int64_t kFirstCategoryId = 10;
constexpr int kCategories = 5;

constexpr std::array<std::string_view, 6> kStates = {"AZ", "CA", "ID", "OR", "WA", "WY"};
constexpr std::array<std::string_view, 10> kCities = {"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland",
                                                      "Bend",    "Redmond",     "Seattle",       "Kent",  "Cheyenne"};
constexpr std::array<std::string_view, 11> kFirstNames = {"Peter", "Paul",  "Luke",  "John",   "Saul",  "Vicky",
                                                          "Kate",  "Julie", "Sarah", "Deiter", "Walter"};
constexpr std::array<std::string_view, 9> kLastNames = {"Shultz", "Abrams", "Spencer", "White", "Bartels",
                                                        "Walton", "Smith",  "Jones",   "Noris"};
constexpr std::array<std::string_view, 4> kHotChannels = {"Google", "Facebook", "Baidu", "Apple"};

// StringsGenerator.nextString: 3 + U[0, max - 3) characters, each `special` with p 1/13 else a..z, trimmed
// of characters <= ' ' at both ends (Java's String.trim).
void appendRandomString(SplittableRandom& r, int max_length, char special, std::string& out) {
  int len = kMinStringLength + r.nextInt(max_length - kMinStringLength);
  const size_t start = out.size();
  while (len-- > 0) {
    if (r.nextInt(13) == 0) out.push_back(special);
    else out.push_back(static_cast<char>('a' + r.nextInt(26)));
  }
  size_t b = start, e = out.size();
  while (b < e && static_cast<unsigned char>(out[b]) <= ' ') ++b;
  while (e > b && static_cast<unsigned char>(out[e - 1]) <= ' ') --e;
  out.erase(e);
  out.erase(start, b - start);
}

struct StaticTables {
  std::string extra;
  std::array<std::string, 4> hot_urls;
  std::vector<std::string> channel_urls;
  std::array<std::string, 10000> card_groups;  // "%04d"
};

std::string baseUrl(SplittableRandom& r) {
  std::string url = "https://www.nexmark.com/";
  for (int i = 0; i < 3; ++i) {
    appendRandomString(r, 5, '_', url);
    url += '/';
  }
  return url + "item.htm?query=1";
}

// Java's Integer.reverse then Math.abs (which leaves Integer.MIN_VALUE negative).
int64_t absReverse(int32_t i) {
  uint32_t v = static_cast<uint32_t>(i), rev = 0;
  for (int b = 0; b < 32; ++b) rev |= ((v >> b) & 1u) << (31 - b);
  const auto s = static_cast<int32_t>(rev);
  return s == std::numeric_limits<int32_t>::min() ? s : std::abs(static_cast<int64_t>(s));
}

const StaticTables& tables() {
  static const StaticTables t = [] {
    StaticTables out;
    // The reference seeds these from the clock; fixed seeds keep every run's strings the same.
    SplittableRandom xr(0x6e65786d61726bLL);
    out.extra.reserve(kExtraSourceLength);
    int32_t rnd = 0;
    int n = 0;
    for (int k = 0; k < kExtraSourceLength; ++k) {
      if (n == 0) {
        rnd = xr.nextInt();
        n = 6;  // log_26(2^31)
      }
      out.extra.push_back(static_cast<char>('a' + rnd % 26));  // Java's %: negative for negative rnd
      rnd /= 26;
      --n;
    }
    SplittableRandom ur(0x75726c73LL);
    for (auto& u : out.hot_urls) u = baseUrl(ur);
    out.channel_urls.reserve(kChannels);
    for (int i = 0; i < kChannels; ++i) {
      std::string url = baseUrl(ur);
      if (ur.nextInt(10) > 0) url += "&channel_id=" + std::to_string(absReverse(i));
      out.channel_urls.push_back(std::move(url));
    }
    for (int i = 0; i < 10000; ++i) {
      char buf[8];
      buf[0] = static_cast<char>('0' + i / 1000);
      buf[1] = static_cast<char>('0' + i / 100 % 10);
      buf[2] = static_cast<char>('0' + i / 10 % 10);
      buf[3] = static_cast<char>('0' + i % 10);
      out.card_groups[static_cast<size_t>(i)].assign(buf, 4);
    }
    return out;
  }();
  return t;
}

const std::vector<std::string>& channelNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (int i = 0; i < kChannels; ++i) v.push_back("channel-" + std::to_string(i));
    return v;
  }();
  return names;
}

// LongGenerator.nextLong: U[0, n).
int64_t nextLong(SplittableRandom& r, int64_t n) {
  if (n < std::numeric_limits<int32_t>::max()) return r.nextInt(static_cast<int32_t>(n));
  const int64_t v = r.nextLong() % n;
  return v < 0 ? -v : v;
}

// PriceGenerator.nextPrice: Math.round(10^(6u) * 100).
int64_t nextPrice(SplittableRandom& r) {
  return static_cast<int64_t>(std::floor(std::pow(10.0, r.nextDouble() * 6.0) * 100.0 + 0.5));
}

}  // namespace

int32_t SplittableRandom::nextInt() { return mix32(nextSeed()); }

int32_t SplittableRandom::nextInt(int32_t bound) {
  int32_t r = mix32(nextSeed());
  const int32_t m = bound - 1;
  if ((bound & m) == 0) return r & m;
  // Rejects over-represented candidates; `u + m - r < 0` is Java's int overflow test.
  for (uint32_t u = static_cast<uint32_t>(r) >> 1;; u = static_cast<uint32_t>(mix32(nextSeed())) >> 1) {
    r = static_cast<int32_t>(u % static_cast<uint32_t>(bound));
    if (static_cast<int32_t>(u + static_cast<uint32_t>(m) - static_cast<uint32_t>(r)) >= 0) return r;
  }
}

int64_t SplittableRandom::nextLong() { return static_cast<int64_t>(mix64(nextSeed())); }

double SplittableRandom::nextDouble() {
  return static_cast<double>(static_cast<uint64_t>(nextLong()) >> 11) * 0x1.0p-53;
}

int64_t NexmarkConfig::maxEvents() const {
  if (events_num != 0) return events_num;
  const int64_t biggest = std::max({person_avg_size, auction_avg_size, bid_avg_size});
  return std::numeric_limits<int64_t>::max() / (static_cast<int64_t>(totalProportion()) * std::max<int64_t>(1, biggest));
}

std::vector<GeneratorShare> splitShares(const NexmarkConfig& config, int64_t base_time, int n) {
  n = std::max(1, n);
  const int64_t max_events = config.maxEvents();
  std::vector<GeneratorShare> out;
  const int64_t sub = max_events / n;
  const int64_t sub_stop = config.stop_at / n;
  int64_t first_id = 1;
  for (int i = 0; i < n; ++i) {
    GeneratorShare s;
    s.base_time = base_time;
    s.first_event_id = first_id;
    s.max_events = i == n - 1 ? max_events - sub * (n - 1) : sub;
    // The reader drops stop-at when the source's is negative (GeneratorConfig#reconfigure).
    s.stop_at = config.stop_at < 0 ? -1 : (i == n - 1 ? config.stop_at - sub_stop * (n - 1) : sub_stop);
    s.first_event_number = 1;
    s.generators = n;
    first_id += s.max_events;
    out.push_back(s);
  }
  return out;
}

NexmarkGenerator::NexmarkGenerator(const NexmarkConfig& config, const GeneratorShare& share, int64_t events_so_far)
    : config_(config), share_(share), count_(events_so_far) {
  inter_event_delay_us_ = 1000000.0 / config_.first_event_rate * share_.generators;
  limit_ = share_.stop_at < 0 ? share_.max_events : std::min(share_.stop_at, share_.max_events);
}

int64_t NexmarkGenerator::adjustedEventNumber(int64_t count) const {
  const int64_t g = config_.out_of_order_group_size;
  const int64_t n = share_.first_event_number + count;
  return (n / g) * g + (n * 953) % g;
}

int64_t NexmarkGenerator::timestampForEvent(int64_t n) const {
  return share_.base_time + static_cast<int64_t>(static_cast<double>(n) * inter_event_delay_us_) / 1000;
}

int64_t NexmarkGenerator::nextEventId() const { return share_.first_event_id + adjustedEventNumber(count_); }

int64_t NexmarkGenerator::nextEventTimestamp() const { return timestampForEvent(share_.first_event_number + count_); }

EventType NexmarkGenerator::typeOf(int64_t event_id) const {
  const int64_t rem = event_id % config_.totalProportion();
  if (rem < config_.person_proportion) return EventType::kPerson;
  if (rem < config_.person_proportion + config_.auction_proportion) return EventType::kAuction;
  return EventType::kBid;
}

int64_t NexmarkGenerator::lastBase0PersonId(int64_t event_id) const {
  const int64_t total = config_.totalProportion();
  const int64_t epoch = event_id / total;
  int64_t offset = event_id % total;
  if (offset >= config_.person_proportion) offset = config_.person_proportion - 1;
  return epoch * config_.person_proportion + offset;
}

int64_t NexmarkGenerator::lastBase0AuctionId(int64_t event_id) const {
  const int64_t total = config_.totalProportion();
  int64_t epoch = event_id / total;
  int64_t offset = event_id % total;
  if (offset < config_.person_proportion) {
    --epoch;
    offset = config_.auction_proportion - 1;
  } else if (offset >= config_.person_proportion + config_.auction_proportion) {
    offset = config_.auction_proportion - 1;
  } else {
    offset -= config_.person_proportion;
  }
  return epoch * config_.auction_proportion + offset;
}

int64_t NexmarkGenerator::nextBase0PersonId(int64_t event_id, SplittableRandom& r) const {
  const int64_t num_people = lastBase0PersonId(event_id) + 1;
  const int64_t active = std::min<int64_t>(num_people, config_.num_active_people);
  const int64_t n = nextLong(r, active + kLead);
  return num_people - active + n;
}

int64_t NexmarkGenerator::nextBase0AuctionId(int64_t event_id, SplittableRandom& r) const {
  const int64_t max_auction = lastBase0AuctionId(event_id);
  const int64_t min_auction = std::max<int64_t>(max_auction - config_.num_in_flight_auctions, 0);
  return min_auction + nextLong(r, max_auction - min_auction + 1 + kLead);
}

std::string_view NexmarkGenerator::nextExtra(SplittableRandom& r, int current_size, int average_size,
                                             bool build) const {
  if (!build || current_size > average_size) return {};
  const int desired = average_size - current_size;
  const int delta = static_cast<int>(std::floor(desired * 0.2 + 0.5));
  const int size = desired - delta + (delta == 0 ? 0 : r.nextInt(2 * delta));
  const std::string& src = tables().extra;
  if (size < kExtraSourceLength / 2) {
    const int offset = r.nextInt(kExtraSourceLength - size);
    return std::string_view(src).substr(static_cast<size_t>(offset), static_cast<size_t>(size));
  }
  // Longer than half the source: the reference spells out fresh characters; a prefix of the source
  // repeated stands in (sizes this large need avg-size options of over 512 KiB).
  return std::string_view(src).substr(0, static_cast<size_t>(std::min(size, kExtraSourceLength)));
}

EventType NexmarkGenerator::next(Person& person, Auction& auction, Bid& bid, const Needs& needs) {
  const int64_t event_id = nextEventId();
  const int64_t timestamp = timestampForEvent(adjustedEventNumber(count_));
  SplittableRandom r(static_cast<int64_t>(mix64(static_cast<uint64_t>(event_id) ^ 0x4e45584d41524bULL)));
  const EventType type = typeOf(event_id);
  const StaticTables& t = tables();
  const bool extra = needs.extra;
  switch (type) {
    case EventType::kPerson: {
      person.id = lastBase0PersonId(event_id) + kFirstPersonId;
      person.date_time = timestamp;
      if (!needs.person) break;
      name_.assign(kFirstNames[static_cast<size_t>(r.nextInt(static_cast<int32_t>(kFirstNames.size())))]);
      name_ += ' ';
      name_ += kLastNames[static_cast<size_t>(r.nextInt(static_cast<int32_t>(kLastNames.size())))];
      email_.clear();
      appendRandomString(r, 7, ' ', email_);
      email_ += '@';
      appendRandomString(r, 5, ' ', email_);
      email_ += ".com";
      credit_card_.clear();
      for (int i = 0; i < 4; ++i) {
        if (i > 0) credit_card_ += ' ';
        credit_card_ += t.card_groups[static_cast<size_t>(r.nextInt(10000))];
      }
      person.city = kCities[static_cast<size_t>(r.nextInt(static_cast<int32_t>(kCities.size())))];
      person.state = kStates[static_cast<size_t>(r.nextInt(static_cast<int32_t>(kStates.size())))];
      person.name = name_;
      person.email = email_;
      person.credit_card = credit_card_;
      person.date_time = timestamp;
      const int size = 8 + static_cast<int>(name_.size() + email_.size() + credit_card_.size() + person.city.size() +
                                            person.state.size());
      person.extra = nextExtra(r, size, config_.person_avg_size, extra);
      break;
    }
    case EventType::kAuction: {
      auction.id = lastBase0AuctionId(event_id) + kFirstAuctionId;
      auction.date_time = timestamp;
      if (!needs.auction) break;
      int64_t seller;
      if (r.nextInt(config_.hot_sellers_ratio) > 0)
        seller = (lastBase0PersonId(event_id) / kHotRatio) * kHotRatio;
      else
        seller = nextBase0PersonId(event_id, r);
      auction.seller = seller + kFirstPersonId;
      auction.category = kFirstCategoryId + r.nextInt(kCategories);
      auction.initial_bid = nextPrice(r);
      // AuctionGenerator.nextAuctionLengthMs: about the time until numInFlightAuctions more auctions.
      const int64_t current = adjustedEventNumber(count_);
      const int64_t events_for_auctions =
          (static_cast<int64_t>(config_.num_in_flight_auctions) * config_.totalProportion()) /
          config_.auction_proportion;
      const int64_t horizon = timestampForEvent(current + events_for_auctions) - timestamp;
      auction.expires = timestamp + 1 + nextLong(r, std::max<int64_t>(horizon * 2, 1));
      item_name_.clear();
      appendRandomString(r, 20, ' ', item_name_);
      description_.clear();
      appendRandomString(r, 100, ' ', description_);
      auction.reserve = auction.initial_bid + nextPrice(r);
      auction.item_name = item_name_;
      auction.description = description_;
      auction.date_time = timestamp;
      const int size = 8 + static_cast<int>(item_name_.size() + description_.size()) + 8 + 8 + 8 + 8 + 8;
      auction.extra = nextExtra(r, size, config_.auction_avg_size, extra);
      break;
    }
    case EventType::kBid: {
      bid.date_time = timestamp;
      if (!needs.bid) break;
      int64_t a;
      if (r.nextInt(config_.hot_auction_ratio) > 0)
        a = (lastBase0AuctionId(event_id) / kHotRatio) * kHotRatio;
      else
        a = nextBase0AuctionId(event_id, r);
      bid.auction = a + kFirstAuctionId;
      int64_t bidder;
      if (r.nextInt(config_.hot_bidders_ratio) > 0)
        bidder = (lastBase0PersonId(event_id) / kHotRatio) * kHotRatio + 1;
      else
        bidder = nextBase0PersonId(event_id, r);
      bidder += kFirstPersonId;
      bid.price = nextPrice(r);
      if (r.nextInt(2) > 0) {
        const auto i = static_cast<size_t>(r.nextInt(4));
        bid.channel = kHotChannels[i];
        bid.url = t.hot_urls[i];
      } else {
        const auto n = static_cast<size_t>(r.nextInt(kChannels));
        bid.channel = channelNames()[n];
        bid.url = t.channel_urls[n];
      }
      // BidGenerator.nextBid adds FIRST_PERSON_ID a second time; kept for the same bidders.
      bid.bidder = bidder + kFirstPersonId;
      bid.date_time = timestamp;
      bid.extra = nextExtra(r, 8 + 8 + 8 + 8, config_.bid_avg_size, extra);
      break;
    }
  }
  ++count_;
  return type;
}

std::string_view NexmarkGenerator::hotChannel(int i) { return kHotChannels[static_cast<size_t>(i)]; }
std::string_view NexmarkGenerator::hotUrl(int i) { return tables().hot_urls[static_cast<size_t>(i)]; }
std::string_view NexmarkGenerator::channelUrl(int n) { return tables().channel_urls[static_cast<size_t>(n)]; }
std::string_view NexmarkGenerator::extraSource() { return tables().extra; }

}  // namespace sluice::connectors::nexmark
