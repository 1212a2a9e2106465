#pragma once
/// The Nexmark event generator (the nexmark/nexmark repository's NexmarkGenerator, GeneratorConfig and
/// Person/Auction/Bid generators), value for value, except for the random source: the reference draws from
/// one unseeded java.util.SplittableRandom per generator, this one from a SplittableRandom seeded by the
/// event id, so every run, and every parallelism, produces the same events (only the timestamps depend on
/// the generator that emits an event). Rules kept:
///  - events come in epochs of person + auction + bid proportion (1:3:46) ids; `id % total` picks the type;
///  - ids: person `lastBase0PersonId + 1000`, auction `lastBase0AuctionId + 1000`; a bid's auction is hot
///    (`lastAuction / 100 * 100`) with probability 1 - 1/hot-ratio.auctions, else one of the last 100
///    auctions + 10 leads; its bidder hot (`lastPerson / 100 * 100 + 1`) with 1 - 1/hot-ratio.bidders, else
///    one of the last 1000 people + 10 leads; an auction's seller hot (`lastPerson / 100 * 100`) with
///    1 - 1/hot-ratio.sellers; the reference adds 1000 to a bid's bidder twice, and so does this one;
///  - price `round(10^(6 u) * 100)`; channel one of Google/Facebook/Baidu/Apple with a fixed URL (p 1/2), else
///    `channel-<n>` of 10000, whose URL carries `&channel_id=<|Integer.reverse(n)|>` for 9 in 10;
///  - `extra` pads a record to its average size +-20 % with a slice of one fixed 1 MiB random string;
///  - timestamps: event number n of a generator is at `baseTime + (long)(n * 1e6 / first-event.rate *
///    generators) / 1000` ms, each generator on its own timeline; an auction expires 1 + U[0, 2 * horizon) ms
///    later, horizon = the time until the 1666th next event (100 in-flight auctions).
/// Pure computation; an instance is used by one thread.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::connectors::nexmark {

/// java.util.SplittableRandom's generator (seed += golden gamma, mix64/mix32) with its nextInt(bound),
/// nextLong and nextDouble, bit for bit.
class SplittableRandom {
 public:
  explicit SplittableRandom(int64_t seed) : seed_(static_cast<uint64_t>(seed)) {}
  int32_t nextInt();
  /// Uniform in [0, bound); bound > 0.
  int32_t nextInt(int32_t bound);
  int64_t nextLong();
  /// Uniform in [0, 1), 53 bits.
  double nextDouble();

 private:
  uint64_t nextSeed() { return seed_ += 0x9e3779b97f4a7c15ULL; }
  uint64_t seed_;
};

/// The connector's options (Flink's NexmarkSourceOptions / NexmarkConfiguration), with their defaults.
struct NexmarkConfig {
  int32_t first_event_rate = 10000;
  int32_t next_event_rate = 10000;  ///< accepted; the reference's generator uses first-event.rate only
  int32_t person_avg_size = 200;    ///< bytes
  int32_t auction_avg_size = 500;
  int32_t bid_avg_size = 100;
  int32_t person_proportion = 1;
  int32_t auction_proportion = 3;
  int32_t bid_proportion = 46;
  int32_t hot_auction_ratio = 2;
  int32_t hot_bidders_ratio = 4;
  int32_t hot_sellers_ratio = 4;
  int64_t events_num = 0;  ///< 0: unbounded
  bool keep_alive = false;
  int64_t stop_at = -1;
  bool max_emit_speed = true;
  std::string rate_shape = "SQUARE";  ///< accepted (SQUARE, SINE); no effect, as in the reference
  int64_t rate_period_s = 600;        ///< accepted; no effect
  bool rate_limited = false;          ///< accepted; no effect
  int32_t num_in_flight_auctions = 100;
  int32_t num_active_people = 1000;
  int64_t out_of_order_group_size = 1;

  int32_t totalProportion() const { return person_proportion + auction_proportion + bid_proportion; }
  /// Events of the whole source: events.num, or the reference's cap when unbounded.
  int64_t maxEvents() const;
};

/// One generator's share (GeneratorConfig after split(n)): generator `index` of `count`.
struct GeneratorShare {
  int64_t base_time = 0;           ///< ms since the epoch (the reference: the factory's wall clock)
  int64_t first_event_id = 1;      ///< this share's ids start at first_event_id + first_event_number
  int64_t max_events = 0;          ///< events of this share
  int64_t stop_at = -1;            ///< -1: none
  int64_t first_event_number = 1;  ///< the reference starts at 1
  int32_t generators = 1;          ///< the number of shares (scales the inter-event delay)
};

/// The shares of `n` generators (GeneratorConfig.split): max_events / n each, the last one the rest; ids
/// contiguous per share.
std::vector<GeneratorShare> splitShares(const NexmarkConfig& config, int64_t base_time, int n);

/// Event kinds, as `event_type`.
enum class EventType : int32_t { kPerson = 0, kAuction = 1, kBid = 2 };

/// The fields of the three records, as numbered in the Nexmark table's ROW columns (person 0..7,
/// auction 0..9, bid 0..6).
struct Person {
  int64_t id;
  std::string_view name, email, credit_card, city, state;
  int64_t date_time;
  std::string_view extra;
};
struct Auction {
  int64_t id;
  std::string_view item_name, description;
  int64_t initial_bid, reserve, date_time, expires, seller, category;
  std::string_view extra;
};
struct Bid {
  int64_t auction, bidder, price;
  std::string_view channel, url;
  int64_t date_time;
  std::string_view extra;
};

/// The generator of one share. The views in the returned records stay valid until the next call.
class NexmarkGenerator {
 public:
  NexmarkGenerator(const NexmarkConfig& config, const GeneratorShare& share, int64_t events_so_far = 0);

  /// False once the share's events (or its stop-at) are exhausted.
  bool hasNext() const { return count_ < limit_; }
  int64_t eventsSoFar() const { return count_; }
  /// Id (the seed) and event time of the next event.
  int64_t nextEventId() const;
  int64_t nextEventTimestamp() const;
  /// Event time (ms) of event number `n` of this share.
  int64_t timestampForEvent(int64_t n) const;
  /// The type of event `event_id`.
  EventType typeOf(int64_t event_id) const;

  /// What a caller reads of the records: a record whose `body` is false gets only its id (person, auction)
  /// and date_time, and `extra` false skips the padding. The fields that are produced have the same values
  /// either way (each event has its own random source, and extra is drawn last).
  struct Needs {
    bool person = true, auction = true, bid = true;
    bool extra = true;
  };
  /// Generates the next event into the record of its type (the other two are untouched) and returns the
  /// type. Requires hasNext().
  EventType next(Person& person, Auction& auction, Bid& bid, const Needs& needs);
  EventType next(Person& person, Auction& auction, Bid& bid) { return next(person, auction, bid, Needs{}); }

  /// The reference's static tables (exposed for tests).
  static std::string_view hotChannel(int i);
  static std::string_view hotUrl(int i);
  static std::string_view channelUrl(int n);
  static std::string_view extraSource();  ///< the 1 MiB padding source

  int64_t lastBase0PersonId(int64_t event_id) const;
  int64_t lastBase0AuctionId(int64_t event_id) const;

 private:
  int64_t nextBase0PersonId(int64_t event_id, SplittableRandom& r) const;
  int64_t nextBase0AuctionId(int64_t event_id, SplittableRandom& r) const;
  int64_t adjustedEventNumber(int64_t count) const;
  std::string_view nextExtra(SplittableRandom& r, int current_size, int average_size, bool build) const;

  NexmarkConfig config_;
  GeneratorShare share_;
  double inter_event_delay_us_;
  int64_t count_;
  int64_t limit_;
  std::string email_, item_name_, description_;
  std::string name_, credit_card_;
};

}  // namespace sluice::connectors::nexmark
