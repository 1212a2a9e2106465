#include "connectors/nexmark/nexmark_connector.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include <fmt/format.h>

#include "common/config.h"
#include "common/error.h"
#include "connectors/connector_options.h"
#include "connectors/operator_util.h"

namespace sluice::connectors::nexmark {

using types::LogicalType;
using types::TypeId;

namespace {

const ConfigOption<int64_t> kBaseTime(
    "sluice.test.nexmark.base-time", ConfigType::kLong, "-1",
    "Test only: the event-time origin (ms since the epoch) of nexmark sources, so two runs generate the same "
    "events; -1 (default): the wall clock when the table source is created, as the reference generator.");

// Column codes: 0 = event_type, then person fields 1..8, auction 9..18, bid 19..25.
constexpr int kPersonBase = 1;
constexpr int kAuctionBase = 9;
constexpr int kBidBase = 19;
constexpr int kPersonExtra = kPersonBase + 7;
constexpr int kAuctionExtra = kAuctionBase + 9;
constexpr int kBidExtra = kBidBase + 6;

enum class Kind { kLong, kString, kTimestamp };

struct FieldDef {
  const char* name;
  Kind kind;
};

// The reference's NEXMARK_SCHEMA.
const std::vector<FieldDef>& personFields() {
  static const std::vector<FieldDef> f = {{"id", Kind::kLong},        {"name", Kind::kString},
                                          {"emailAddress", Kind::kString}, {"creditCard", Kind::kString},
                                          {"city", Kind::kString},    {"state", Kind::kString},
                                          {"dateTime", Kind::kTimestamp}, {"extra", Kind::kString}};
  return f;
}
const std::vector<FieldDef>& auctionFields() {
  static const std::vector<FieldDef> f = {
      {"id", Kind::kLong},          {"itemName", Kind::kString},   {"description", Kind::kString},
      {"initialBid", Kind::kLong},  {"reserve", Kind::kLong},      {"dateTime", Kind::kTimestamp},
      {"expires", Kind::kTimestamp}, {"seller", Kind::kLong},      {"category", Kind::kLong},
      {"extra", Kind::kString}};
  return f;
}
const std::vector<FieldDef>& bidFields() {
  static const std::vector<FieldDef> f = {{"auction", Kind::kLong},  {"bidder", Kind::kLong},
                                          {"price", Kind::kLong},    {"channel", Kind::kString},
                                          {"url", Kind::kString},    {"dateTime", Kind::kTimestamp},
                                          {"extra", Kind::kString}};
  return f;
}

std::string schemaText() {
  auto row = [](const std::vector<FieldDef>& fields) {
    std::string s = "ROW<";
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i) s += ", ";
      s += fields[i].name;
      s += fields[i].kind == Kind::kLong ? " BIGINT" : fields[i].kind == Kind::kString ? " STRING" : " TIMESTAMP(3)";
    }
    return s + ">";
  };
  return "event_type INT, person " + row(personFields()) + ", auction " + row(auctionFields()) + ", bid " +
         row(bidFields());
}

bool typeFits(const LogicalType& t, Kind k) {
  switch (k) {
    case Kind::kLong: return t.id == TypeId::kBigInt;
    case Kind::kString: return t.id == TypeId::kVarchar;
    case Kind::kTimestamp: return t.id == TypeId::kTimestamp;
  }
  return false;
}

void checkSchema(const types::RowType& schema, const std::string& table) {
  auto bad = [&](const std::string& what) {
    throw UserError(fmt::format("The nexmark connector produces the columns ({}), but table '{}' {}.", schemaText(),
                                table, what));
  };
  const std::vector<std::string> names = {"event_type", "person", "auction", "bid"};
  if (schema.size() != names.size()) bad(fmt::format("has {} physical columns", schema.size()));
  for (size_t c = 0; c < names.size(); ++c) {
    const LogicalType& t = schema.types[c];
    if (schema.names[c] != names[c]) bad(fmt::format("has column '{}' in place of '{}'", schema.names[c], names[c]));
    if (c == 0) {
      if (!t.isIntegral()) bad(fmt::format("declares event_type as {}", t.toString()));
      continue;
    }
    const std::vector<FieldDef>& fields = c == 1 ? personFields() : c == 2 ? auctionFields() : bidFields();
    if (t.id != TypeId::kRow || !t.fields || t.fields->size() != fields.size())
      bad(fmt::format("declares {} as {}", names[c], t.toString()));
    for (size_t f = 0; f < fields.size(); ++f) {
      if (t.fields->names[f] != fields[f].name || !typeFits(t.fields->types[f], fields[f].kind))
        bad(fmt::format("declares field {} of {} as `{}` {}", f + 1, names[c], t.fields->names[f],
                        t.fields->types[f].toString()));
    }
  }
}

int codeOf(const std::vector<int>& path) {
  if (path.size() == 1 && path[0] == 0) return 0;
  if (path.size() != 2) return -1;
  const int f = path[1];
  switch (path[0]) {
    case 1: return f >= 0 && f < 8 ? kPersonBase + f : -1;
    case 2: return f >= 0 && f < 10 ? kAuctionBase + f : -1;
    case 3: return f >= 0 && f < 7 ? kBidBase + f : -1;
    default: return -1;
  }
}

int64_t wallClockMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int32_t intOption(const OptionMap& o, const std::string& key, int32_t fallback, const std::string& table,
                  int32_t min_value) {
  const int64_t v = longOption(o, key, fallback, table);
  if (v < min_value || v > std::numeric_limits<int32_t>::max())
    throw UserError(fmt::format("Invalid value {} for option '{}' of table '{}': expected an integer from {} to {}.",
                                v, key, table, min_value, std::numeric_limits<int32_t>::max()));
  return static_cast<int32_t>(v);
}

int32_t sizeOption(const OptionMap& o, const std::string& key, int32_t fallback, const std::string& table) {
  auto v = findOption(o, key);
  if (!v) return fallback;
  int64_t bytes = 0;
  try {
    bytes = parseMemorySize(key, *v);
  } catch (const UserError& e) {
    throw UserError(fmt::format("Table '{}': {}", table, e.what()));
  }
  if (bytes < 0 || bytes > std::numeric_limits<int32_t>::max())
    throw UserError(fmt::format("Invalid value '{}' for option '{}' of table '{}': expected a size up to 2 GiB.", *v,
                                key, table));
  return static_cast<int32_t>(bytes);
}

}  // namespace

NexmarkConfig parseNexmarkOptions(const std::map<std::string, std::string>& o, const std::string& t) {
  NexmarkConfig c;
  c.first_event_rate = intOption(o, "first-event.rate", c.first_event_rate, t, 1);
  c.next_event_rate = intOption(o, "next-event.rate", c.next_event_rate, t, 1);
  c.person_avg_size = sizeOption(o, "person.avg-size", c.person_avg_size, t);
  c.auction_avg_size = sizeOption(o, "auction.avg-size", c.auction_avg_size, t);
  c.bid_avg_size = sizeOption(o, "bid.avg-size", c.bid_avg_size, t);
  c.person_proportion = intOption(o, "person.proportion", c.person_proportion, t, 0);
  c.auction_proportion = intOption(o, "auction.proportion", c.auction_proportion, t, 0);
  c.bid_proportion = intOption(o, "bid.proportion", c.bid_proportion, t, 0);
  if (c.person_proportion < 1 || c.auction_proportion < 1)
    // Ids of bids and auctions refer to the last person and auction: the reference divides by both.
    throw UserError(fmt::format("Options 'person.proportion' and 'auction.proportion' of table '{}' must be at least "
                                "1, but were {} and {}.",
                                t, c.person_proportion, c.auction_proportion));
  if (static_cast<int64_t>(c.person_proportion) + c.auction_proportion + c.bid_proportion >
      std::numeric_limits<int32_t>::max())
    throw UserError(fmt::format("The proportions of table '{}' add up to more than 2147483647.", t));
  c.hot_auction_ratio = intOption(o, "bid.hot-ratio.auctions", c.hot_auction_ratio, t, 1);
  c.hot_bidders_ratio = intOption(o, "bid.hot-ratio.bidders", c.hot_bidders_ratio, t, 1);
  c.hot_sellers_ratio = intOption(o, "auction.hot-ratio.sellers", c.hot_sellers_ratio, t, 1);
  c.events_num = longOption(o, "events.num", 0, t);
  if (c.events_num < 0)
    throw UserError(fmt::format("Option 'events.num' of table '{}' must not be negative, but was {}.", t, c.events_num));
  c.keep_alive = boolOption(o, "keep-alive", false, t);
  c.stop_at = longOption(o, "stop-at", -1, t);
  c.max_emit_speed = boolOption(o, "max-emit-speed", true, t);
  c.rate_limited = boolOption(o, "rate.limited", false, t);
  if (auto shape = findOption(o, "rate.shape")) {
    std::string u = *shape;
    std::transform(u.begin(), u.end(), u.begin(), [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
    if (u != "SQUARE" && u != "SINE")
      throw UserError(fmt::format("Could not parse value '{}' for key 'rate.shape' of table '{}': expected SQUARE or "
                                  "SINE.",
                                  *shape, t));
    c.rate_shape = u;
  }
  c.rate_period_s = durationOption(o, "rate.period", 600'000, t) / 1000;
  return c;
}

types::RowType NexmarkSpec::producedType() const {
  types::RowType out;
  for (const auto& p : paths) {
    const LogicalType& top = schema.types[static_cast<size_t>(p[0])];
    if (p.size() == 1) {
      out.names.push_back(schema.names[static_cast<size_t>(p[0])]);
      out.types.push_back(top);
      continue;
    }
    out.names.push_back(schema.names[static_cast<size_t>(p[0])] + "." + top.fields->names[static_cast<size_t>(p[1])]);
    out.types.push_back(top.fields->types[static_cast<size_t>(p[1])].withNullable(true));
  }
  return out;
}

std::string NexmarkSplit::splitId() const { return fmt::format("nexmark-{}-of-{}", index, count); }

std::vector<NexmarkSplit> NexmarkSource::splits(int parallelism) const {
  std::vector<NexmarkSplit> out;
  const std::vector<GeneratorShare> shares = splitShares(spec_->config, spec_->base_time, parallelism);
  for (size_t i = 0; i < shares.size(); ++i) {
    NexmarkSplit s;
    s.index = static_cast<int>(i);
    s.count = static_cast<int>(shares.size());
    s.base_time = shares[i].base_time;
    s.first_event_id = shares[i].first_event_id;
    s.max_events = shares[i].max_events;
    s.stop_at = shares[i].stop_at;
    s.first_event_number = shares[i].first_event_number;
    out.push_back(s);
  }
  return out;
}

std::unique_ptr<runtime::SplitEnumerator<NexmarkSplit>> NexmarkSource::createEnumerator(int parallelism) const {
  std::vector<std::vector<NexmarkSplit>> by_subtask;
  for (const NexmarkSplit& s : splits(parallelism)) by_subtask.push_back({s});
  return std::make_unique<SubtaskSplitEnumerator<NexmarkSplit>>(std::move(by_subtask));
}

std::unique_ptr<runtime::SplitEnumerator<NexmarkSplit>> NexmarkSource::restoreEnumerator(
    int parallelism, int checkpointed_parallelism) const {
  std::vector<std::vector<NexmarkSplit>> by_subtask;
  for (const NexmarkSplit& s : splits(checkpointed_parallelism)) by_subtask.push_back({s});
  return std::make_unique<SubtaskSplitEnumerator<NexmarkSplit>>(std::move(by_subtask), parallelism);
}

std::unique_ptr<runtime::SourceReader<types::RowBatch, NexmarkSplit>> NexmarkSource::createReader(
    const runtime::SourceReaderContext& ctx) const {
  return std::make_unique<NexmarkSourceReader>(spec_, ctx);
}

bool NexmarkSource::isBounded() const {
  return (spec_->config.events_num > 0 || spec_->config.stop_at >= 0) && !spec_->config.keep_alive;
}

NexmarkSourceReader::NexmarkSourceReader(std::shared_ptr<const NexmarkSpec> spec,
                                         const runtime::SourceReaderContext& ctx)
    : spec_(std::move(spec)) {
  runtime::OperatorContext octx;
  octx.config = ctx.config;
  batch_size_ = batchSizeOf(octx);
  produced_type_ = spec_->producedType();
  // Ids and times need no random draws: a record whose other fields are not read is not generated.
  needs_ = NexmarkGenerator::Needs{false, false, false, false};
  const NexmarkConfig& c = spec_->config;
  for (const auto& p : spec_->paths) {
    const int code = codeOf(p);
    codes_.push_back(code);
    needs_.extra = needs_.extra || code == kPersonExtra || code == kAuctionExtra || code == kBidExtra;
    if (code > kPersonBase && code < kAuctionBase && code != kPersonBase + 6) needs_.person = true;
    if (code > kAuctionBase && code < kBidBase && code != kAuctionBase + 5) needs_.auction = true;
    if (code >= kBidBase && code != kBidBase + 5) needs_.bid = true;
    // Strings of a batch go into one arena: reserving it avoids copies as it grows (about the bytes of
    // the field per record, times the share of its record kind, plus 20 %).
    size_t per_record = 24;
    if (code == kPersonExtra) per_record = static_cast<size_t>(c.person_avg_size);
    else if (code == kAuctionExtra) per_record = static_cast<size_t>(c.auction_avg_size);
    else if (code == kBidExtra) per_record = static_cast<size_t>(c.bid_avg_size);
    else if (code == kBidBase + 4) per_record = 80;
    else if (code == kAuctionBase + 2) per_record = 60;
    const size_t share = code <= 0 ? 0
                         : code < kAuctionBase ? static_cast<size_t>(c.person_proportion)
                         : code < kBidBase ? static_cast<size_t>(c.auction_proportion)
                                           : static_cast<size_t>(c.bid_proportion);
    const size_t bytes = produced_type_.types[codes_.size() - 1].isString() ? per_record * share * 6 / 5 : 0;
    arena_bytes_.push_back(bytes / static_cast<size_t>(std::max(1, c.totalProportion())) + 1);
  }
}

void NexmarkSourceReader::addSplit(NexmarkSplit split) {
  if (generator_) {
    queued_.push_back(std::move(split));
    return;
  }
  startSplit(split);
}

void NexmarkSourceReader::startSplit(const NexmarkSplit& split) {
  current_ = split;
  GeneratorShare share;
  share.base_time = split.base_time;
  share.first_event_id = split.first_event_id;
  share.max_events = split.max_events;
  share.stop_at = split.stop_at;
  share.first_event_number = split.first_event_number;
  share.generators = split.count;
  generator_.emplace(spec_->config, share, std::max<int64_t>(0, split.emitted));
}

std::vector<NexmarkSplit> NexmarkSourceReader::snapshotState(int64_t) {
  std::vector<NexmarkSplit> out;
  if (generator_ && generator_->hasNext()) {
    out.push_back(current_);
    out.back().emitted = generator_->eventsSoFar();
  }
  for (const NexmarkSplit& q : queued_) out.push_back(q);
  return out;
}

runtime::InputStatus NexmarkSourceReader::pollNext(runtime::ReaderOutput<types::RowBatch>& output) {
  while (generator_ && !generator_->hasNext()) {
    if (queued_.empty()) {
      if (spec_->config.keep_alive) return runtime::InputStatus::kNothingAvailable;
      generator_.reset();
      return runtime::InputStatus::kEndOfInput;
    }
    startSplit(queued_.front());
    queued_.pop_front();
  }
  if (!generator_) return runtime::InputStatus::kEndOfInput;
  NexmarkGenerator& gen = *generator_;
  size_t rows = batch_size_;
  if (!spec_->config.max_emit_speed) {
    // An event is due once the wall clock is as far past the split's start as its event time is past
    // the base time (the reference sleeps until then).
    const int64_t now = wallClockMillis();
    if (current_.wallclock_base < 0) current_.wallclock_base = now;
    const int64_t due_until = current_.base_time + (now - current_.wallclock_base);
    if (gen.nextEventTimestamp() > due_until) return runtime::InputStatus::kNothingAvailable;
    rows = 1;
  }
  types::RowBatch batch(produced_type_);
  batch.reserve(rows);
  for (size_t c = 0; c < codes_.size(); ++c)
    if (produced_type_.types[c].isString()) batch.column(c).arena().reserve(arena_bytes_[c] * rows);
  const size_t ncols = codes_.size();
  Person person{};
  Auction auction{};
  Bid bid{};
  size_t n = 0;
  while (n < rows && gen.hasNext()) {
    const EventType type = gen.next(person, auction, bid, needs_);
    for (size_t c = 0; c < ncols; ++c) {
      types::Column& col = batch.column(c);
      const int code = codes_[c];
      if (code == 0) {
        col.appendLong(static_cast<int64_t>(type));
        continue;
      }
      switch (type) {
        case EventType::kPerson:
          switch (code) {
            case kPersonBase + 0: col.appendLong(person.id); break;
            case kPersonBase + 1: col.appendString(person.name); break;
            case kPersonBase + 2: col.appendString(person.email); break;
            case kPersonBase + 3: col.appendString(person.credit_card); break;
            case kPersonBase + 4: col.appendString(person.city); break;
            case kPersonBase + 5: col.appendString(person.state); break;
            case kPersonBase + 6: col.appendLong(person.date_time); break;
            case kPersonBase + 7: col.appendString(person.extra); break;
            default: col.appendNull(); break;
          }
          break;
        case EventType::kAuction:
          switch (code) {
            case kAuctionBase + 0: col.appendLong(auction.id); break;
            case kAuctionBase + 1: col.appendString(auction.item_name); break;
            case kAuctionBase + 2: col.appendString(auction.description); break;
            case kAuctionBase + 3: col.appendLong(auction.initial_bid); break;
            case kAuctionBase + 4: col.appendLong(auction.reserve); break;
            case kAuctionBase + 5: col.appendLong(auction.date_time); break;
            case kAuctionBase + 6: col.appendLong(auction.expires); break;
            case kAuctionBase + 7: col.appendLong(auction.seller); break;
            case kAuctionBase + 8: col.appendLong(auction.category); break;
            case kAuctionBase + 9: col.appendString(auction.extra); break;
            default: col.appendNull(); break;
          }
          break;
        case EventType::kBid:
          switch (code) {
            case kBidBase + 0: col.appendLong(bid.auction); break;
            case kBidBase + 1: col.appendLong(bid.bidder); break;
            case kBidBase + 2: col.appendLong(bid.price); break;
            case kBidBase + 3: col.appendString(bid.channel); break;
            case kBidBase + 4: col.appendString(bid.url); break;
            case kBidBase + 5: col.appendLong(bid.date_time); break;
            case kBidBase + 6: col.appendString(bid.extra); break;
            default: col.appendNull(); break;
          }
          break;
      }
    }
    ++n;
  }
  batch.kinds().insert(batch.kinds().end(), n, types::RowKind::kInsert);
  if (n > 0) output.collect(std::move(batch));
  return runtime::InputStatus::kMoreAvailable;
}

std::shared_ptr<const runtime::StreamOperatorFactory> NexmarkTableSource::operatorFactory() const {
  auto spec = spec_;
  return runtime::makeOperatorFactory(
      [spec] {
        return std::make_unique<runtime::RowSourceReaderOperator<NexmarkSplit>>(std::make_shared<NexmarkSource>(spec));
      },
      true);
}

bool NexmarkTableSource::isBounded() const { return NexmarkSource(spec_).isBounded(); }

std::string NexmarkTableSource::summary() const {
  return spec_->config.events_num > 0
             ? fmt::format("nexmark first-event.rate={}, events.num={}", spec_->config.first_event_rate,
                           spec_->config.events_num)
             : fmt::format("nexmark first-event.rate={}", spec_->config.first_event_rate);
}

bool NexmarkTableSource::applyNestedProjection(const std::vector<std::vector<int>>& paths) {
  SLUICE_CHECK(!paths.empty(), "empty nested projection for nexmark table '{}'", spec_->table_name);
  for (const auto& p : paths)
    SLUICE_CHECK(codeOf(p) >= 0, "nested projection path is no field of the nexmark schema (table '{}')",
                 spec_->table_name);
  // The spec is shared read-only with operator factories made earlier: project a copy.
  auto spec = std::make_shared<NexmarkSpec>(*spec_);
  spec->paths = paths;
  spec_ = std::move(spec);
  return true;
}

std::set<std::string> NexmarkTableFactory::supportedOptions() const {
  return {"first-event.rate",     "next-event.rate",        "events.num",
          "max-emit-speed",       "person.proportion",      "auction.proportion",
          "bid.proportion",       "person.avg-size",        "auction.avg-size",
          "bid.avg-size",         "bid.hot-ratio.auctions", "bid.hot-ratio.bidders",
          "auction.hot-ratio.sellers", "keep-alive",        "stop-at",
          "rate.shape",           "rate.period",            "rate.limited"};
}

std::unique_ptr<table::ScanTableSource> NexmarkTableFactory::createSource(const table::ResolvedTable& table,
                                                                          const Configuration& config) const {
  checkSchema(table.physical_type, table.name);
  auto spec = std::make_shared<NexmarkSpec>();
  spec->table_name = table.name;
  spec->config = parseNexmarkOptions(table.options, table.name);
  spec->schema = table.physical_type;
  const int64_t base = config.get(kBaseTime);
  spec->base_time = base >= 0 ? base : wallClockMillis();
  for (int c = 0; c < 4; ++c) {
    if (c == 0) {
      spec->paths.push_back({0});
      continue;
    }
    for (size_t f = 0; f < table.physical_type.types[static_cast<size_t>(c)].fields->size(); ++f)
      spec->paths.push_back({c, static_cast<int>(f)});
  }
  // One generator per subtask of the default parallelism, as the reference (no scan.parallelism option).
  return std::make_unique<NexmarkTableSource>(std::move(spec), std::nullopt);
}

}  // namespace sluice::connectors::nexmark
