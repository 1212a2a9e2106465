#include "table/runtime/accumulators_internal.h"

#include <algorithm>
#include <cstring>
#include <map>

#include "common/error.h"
#include "table/functions/aggregate_function.h"

namespace sluice::table::agg {

using types::Column;
using types::LogicalType;
using types::RowBatch;
using types::TypeId;

Phys physOf(const LogicalType& t) {
  if (t.isString()) return Phys::kString;
  if (t.isApproximate()) return Phys::kDouble;
  return Phys::kLong;
}

namespace {

double bitsToDouble(int64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

int64_t doubleToBits(double d) {
  int64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  return bits;
}

// Java's Double.compare order: -0.0 < 0.0 and NaN above +Infinity, all NaNs equal. It is a strict weak
// order (unlike operator<), so doubles can key a std::map; MIN/MAX over DOUBLE follow Double.compareTo.
struct JavaDoubleLess {
  bool operator()(double a, double b) const {
    if (a < b) return true;
    if (a > b) return false;
    const int64_t ba = a != a ? INT64_C(0x7ff8000000000000) : doubleToBits(a);
    const int64_t bb = b != b ? INT64_C(0x7ff8000000000000) : doubleToBits(b);
    return ba < bb;
  }
};

template <typename T, typename Less>
class ValueCounterImpl final : public ValueCounter {
 public:
  int64_t add(const Column& column, size_t row, int64_t delta) override {
    auto [it, inserted] = map_.try_emplace(get(column, row), 0);
    (void)inserted;
    it->second += delta;
    const int64_t count = it->second;
    if (count == 0) map_.erase(it);
    return count;
  }

  bool extreme(bool max, AggValue& out) const override {
    // Negative counts only come from retractions of values never accumulated; they are skipped.
    if (max) {
      for (auto it = map_.rbegin(); it != map_.rend(); ++it) {
        if (it->second > 0) return set(it->first, out);
      }
    } else {
      for (auto it = map_.begin(); it != map_.end(); ++it) {
        if (it->second > 0) return set(it->first, out);
      }
    }
    return false;
  }

  void keepOnlyExtreme(bool max) override {
    if (map_.size() <= 1) return;
    if (max) map_.erase(map_.begin(), std::prev(map_.end()));
    else map_.erase(std::next(map_.begin()), map_.end());
  }

  void mergeFrom(const ValueCounter& other, std::vector<AggValue>* appeared) override {
    const auto& from = dynamic_cast<const ValueCounterImpl&>(other);
    for (const auto& [v, count] : from.map_) {
      auto [it, inserted] = map_.try_emplace(v, 0);
      const int64_t before = it->second;
      it->second += count;
      if (appeared != nullptr && before <= 0 && it->second > 0) set(v, appeared->emplace_back());
      if (it->second == 0) map_.erase(it);
      (void)inserted;
    }
  }

  size_t size() const override { return map_.size(); }

  Phys phys() const override {
    if constexpr (std::is_same_v<T, int64_t>) return Phys::kLong;
    else if constexpr (std::is_same_v<T, double>) return Phys::kDouble;
    else return Phys::kString;
  }

  void serialize(runtime::DataOutputView& out) const override {
    out.writeVarUint(map_.size());
    for (const auto& [v, count] : map_) {
      runtime::TypeSerializer<T>::serialize(v, out);
      runtime::TypeSerializer<int64_t>::serialize(count, out);
    }
  }

  void deserializeEntries(runtime::DataInputView& in) {
    // Each entry takes at least 8 count bytes and one value byte.
    const size_t n = in.readLength(9);
    for (size_t i = 0; i < n; ++i) {
      T v = runtime::TypeSerializer<T>::deserialize(in);
      const int64_t count = runtime::TypeSerializer<int64_t>::deserialize(in);
      if (count == 0) throw InputError(fmt::format("value counter entry {} has count 0", i));
      if (!map_.emplace(std::move(v), count).second) {
        throw InputError(fmt::format("value counter entry {} repeats a value", i));
      }
    }
  }

 private:
  static T get(const Column& c, size_t row) {
    if constexpr (std::is_same_v<T, int64_t>) return c.getLong(row);
    else if constexpr (std::is_same_v<T, double>) return c.getDouble(row);
    else return std::string(c.getString(row));
  }
  static bool set(const T& v, AggValue& out) {
    out.is_null = false;
    if constexpr (std::is_same_v<T, int64_t>) out.l = v;
    else if constexpr (std::is_same_v<T, double>) out.d = v;
    else out.s = v;
    return true;
  }

  std::map<T, int64_t, Less> map_;
};

using LongCounter = ValueCounterImpl<int64_t, std::less<int64_t>>;
using DoubleCounter = ValueCounterImpl<double, JavaDoubleLess>;
using StringCounter = ValueCounterImpl<std::string, std::less<>>;

// Values in arrival order (FIRST_VALUE, LAST_VALUE, LISTAGG). Doubles compare by bits, as Java's
// Double.equals does when List.remove looks a value up.
template <typename T>
class ValueListImpl final : public ValueCounter {
 public:
  int64_t add(const Column& column, size_t row, int64_t delta) override {
    T v = get(column, row);
    if (delta > 0) {
      for (int64_t i = 0; i < delta; ++i) list_.push_back(v);
      return 1;
    }
    for (int64_t i = 0; i < -delta; ++i) {
      auto it = std::find_if(list_.begin(), list_.end(), [&](const T& x) { return same(x, v); });
      if (it != list_.end()) list_.erase(it);
    }
    return 0;
  }

  bool extreme(bool last, AggValue& out) const override {
    if (list_.empty()) return false;
    set(last ? list_.back() : list_.front(), out);
    return true;
  }

  void keepOnlyExtreme(bool last) override {
    if (list_.size() <= 1) return;
    T keep = last ? std::move(list_.back()) : std::move(list_.front());
    list_.clear();
    list_.push_back(std::move(keep));
  }

  void mergeFrom(const ValueCounter& other, std::vector<AggValue>* appeared) override {
    (void)appeared;  // a list is never a distinct view
    const auto& from = dynamic_cast<const ValueListImpl&>(other);
    list_.insert(list_.end(), from.list_.begin(), from.list_.end());
  }

  size_t size() const override { return list_.size(); }
  bool isList() const override { return true; }

  Phys phys() const override {
    if constexpr (std::is_same_v<T, int64_t>) return Phys::kLong;
    else if constexpr (std::is_same_v<T, double>) return Phys::kDouble;
    else return Phys::kString;
  }

  bool join(std::string_view separator, std::string& out) const override {
    if constexpr (std::is_same_v<T, std::string>) {
      if (list_.empty()) return false;
      out.clear();
      for (size_t i = 0; i < list_.size(); ++i) {
        if (i > 0) out += separator;
        out += list_[i];
      }
      return true;
    } else {
      (void)separator;
      (void)out;
      return false;
    }
  }

  void serialize(runtime::DataOutputView& out) const override {
    out.writeVarUint(list_.size());
    for (const T& v : list_) runtime::TypeSerializer<T>::serialize(v, out);
  }

  void deserializeEntries(runtime::DataInputView& in) {
    const size_t n = in.readLength(1);
    for (size_t i = 0; i < n; ++i) list_.push_back(runtime::TypeSerializer<T>::deserialize(in));
  }

 private:
  static T get(const Column& c, size_t row) {
    if constexpr (std::is_same_v<T, int64_t>) return c.getLong(row);
    else if constexpr (std::is_same_v<T, double>) return c.getDouble(row);
    else return std::string(c.getString(row));
  }
  static bool same(const T& a, const T& b) {
    if constexpr (std::is_same_v<T, double>) return doubleToBits(a) == doubleToBits(b);
    else return a == b;
  }
  static void set(const T& v, AggValue& out) {
    out.is_null = false;
    if constexpr (std::is_same_v<T, int64_t>) out.l = v;
    else if constexpr (std::is_same_v<T, double>) out.d = v;
    else out.s = v;
  }

  std::vector<T> list_;
};

template <typename Counter>
std::unique_ptr<ValueCounter> readCounter(runtime::DataInputView& in) {
  auto c = std::make_unique<Counter>();
  c->deserializeEntries(in);
  return c;
}

/// The u8 a counter's class is written with: its Phys, plus this bit for a list.
constexpr uint8_t kListFlag = 0x10;

// Java int / long arithmetic wraps on overflow; SUM(INT) keeps an INT sum (IntSumAggFunction) and
// SUM(BIGINT) / AVG(INT|BIGINT) keep a BIGINT sum (LongSumAggFunction, AvgAggFunction.getSumType).
int64_t wrapAdd64(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

int64_t pow10(int32_t n) {
  int64_t r = 1;
  for (int32_t i = 0; i < n; ++i) r *= 10;
  return r;
}

const char* physName(Phys p) {
  switch (p) {
    case Phys::kLong: return "LONG";
    case Phys::kDouble: return "DOUBLE";
    case Phys::kString: return "STRING";
  }
  return "UNKNOWN";
}

}  // namespace

std::unique_ptr<ValueCounter> ValueCounter::make(Phys p, bool list) {
  switch (p) {
    case Phys::kLong:
      return list ? std::unique_ptr<ValueCounter>(std::make_unique<ValueListImpl<int64_t>>())
                  : std::make_unique<LongCounter>();
    case Phys::kDouble:
      return list ? std::unique_ptr<ValueCounter>(std::make_unique<ValueListImpl<double>>())
                  : std::make_unique<DoubleCounter>();
    case Phys::kString:
      return list ? std::unique_ptr<ValueCounter>(std::make_unique<ValueListImpl<std::string>>())
                  : std::make_unique<StringCounter>();
  }
  return nullptr;
}

std::unique_ptr<ValueCounter> ValueCounter::deserialize(Phys p, runtime::DataInputView& in, bool list) {
  switch (p) {
    case Phys::kLong: return list ? readCounter<ValueListImpl<int64_t>>(in) : readCounter<LongCounter>(in);
    case Phys::kDouble: return list ? readCounter<ValueListImpl<double>>(in) : readCounter<DoubleCounter>(in);
    case Phys::kString: return list ? readCounter<ValueListImpl<std::string>>(in) : readCounter<StringCounter>(in);
  }
  throw InputError(fmt::format("unknown value counter class {}", static_cast<int>(p)));
}

UserAccumulator::UserAccumulator() = default;
UserAccumulator::UserAccumulator(UserAccumulator&&) noexcept = default;
UserAccumulator& UserAccumulator::operator=(UserAccumulator&&) noexcept = default;
UserAccumulator::~UserAccumulator() = default;

namespace {
constexpr uint8_t kAccumulatorsVersion = 1;
/// The version of accumulators with user-defined aggregates (version 1 and a trailing user section), so
/// the bytes of queries without them stay what they were.
constexpr uint8_t kAccumulatorsVersionWithUser = 2;
}  // namespace

void AccumulatorsSerializer::serialize(const Accumulators& acc, runtime::DataOutputView& out) {
  const bool with_user = !acc.user.empty();
  out.writeBytes(with_user ? &kAccumulatorsVersionWithUser : &kAccumulatorsVersion, 1);
  runtime::TypeSerializer<int64_t>::serialize(acc.record_count, out);
  out.writeVarUint(acc.slots.size());
  for (const AggSlot& slot : acc.slots) {
    runtime::TypeSerializer<int64_t>::serialize(slot.count, out);
    runtime::TypeSerializer<int64_t>::serialize(slot.value, out);
  }
  out.writeVarUint(acc.counters.size());
  for (const auto& counter : acc.counters) {
    const auto p = static_cast<uint8_t>(static_cast<uint8_t>(counter->phys()) | (counter->isList() ? kListFlag : 0));
    out.writeBytes(&p, 1);
    counter->serialize(out);
  }
  if (!with_user) return;
  out.writeVarUint(acc.user.size());
  std::string bytes;
  for (const UserAccumulator& u : acc.user) {
    const std::string* form = &u.bytes;
    if (u.acc) {
      bytes.clear();
      u.function->serialize(*u.acc, bytes);
      form = &bytes;
    }
    out.writeVarUint(form->size());
    out.writeBytes(form->data(), form->size());
  }
}

Accumulators AccumulatorsSerializer::copy(const Accumulators& acc) {
  Accumulators out;
  out.record_count = acc.record_count;
  out.slots = acc.slots;
  out.counters.reserve(acc.counters.size());
  for (const auto& c : acc.counters) {
    if (!c) {
      out.counters.emplace_back();
      continue;
    }
    // Through the counter's own form: the counter classes are internal to accumulators.cc's helpers.
    std::string bytes;
    runtime::DataOutputView w(bytes);
    c->serialize(w);
    runtime::DataInputView r(bytes);
    out.counters.push_back(ValueCounter::deserialize(c->phys(), r, c->isList()));
  }
  out.user.reserve(acc.user.size());
  for (const UserAccumulator& u : acc.user) {
    UserAccumulator& c = out.user.emplace_back();
    if (u.acc) {
      c.function = u.function;
      c.acc = u.function->copy(*u.acc);
    } else {
      c.bytes = u.bytes;
    }
  }
  return out;
}

Accumulators AccumulatorsSerializer::deserialize(runtime::DataInputView& in) {
  uint8_t version;
  in.readBytes(&version, 1);
  if (version != kAccumulatorsVersion && version != kAccumulatorsVersionWithUser) {
    throw InputError(fmt::format("accumulators of unknown version {} (expected {} or {})", version,
                                 kAccumulatorsVersion, kAccumulatorsVersionWithUser));
  }
  Accumulators acc;
  acc.record_count = runtime::TypeSerializer<int64_t>::deserialize(in);
  const size_t num_slots = in.readLength(16);
  acc.slots.resize(num_slots);
  for (AggSlot& slot : acc.slots) {
    slot.count = runtime::TypeSerializer<int64_t>::deserialize(in);
    slot.value = runtime::TypeSerializer<int64_t>::deserialize(in);
  }
  const size_t num_counters = in.readLength(2);
  acc.counters.reserve(num_counters);
  for (size_t i = 0; i < num_counters; ++i) {
    uint8_t p;
    in.readBytes(&p, 1);
    const bool list = (p & kListFlag) != 0;
    const uint8_t phys = static_cast<uint8_t>(p & ~kListFlag);
    if (phys > static_cast<uint8_t>(Phys::kString)) throw InputError(fmt::format("unknown value counter class {}", p));
    acc.counters.push_back(ValueCounter::deserialize(static_cast<Phys>(phys), in, list));
  }
  if (version == kAccumulatorsVersionWithUser) {
    const size_t num_user = in.readLength(1);
    acc.user.resize(num_user);
    for (UserAccumulator& u : acc.user) {
      const size_t n = in.readLength(1);
      u.bytes.resize(n);
      in.readBytes(u.bytes.data(), n);
    }
  }
  return acc;
}

AggsHandler::AggsHandler(const types::RowType& input, const std::vector<AggregateCall>& calls,
                         bool with_retraction)
    : with_retraction_(with_retraction) {
  for (size_t i = 0; i < calls.size(); ++i) {
    const AggregateCall& c = calls[i];
    Desc d;
    d.kind = c.kind;
    d.arg = c.kind == AggKind::kCountStar ? -1 : c.arg_index;
    d.name = c.name.empty() ? fmt::format("aggregate #{}", i + 1) : c.name;
    if (c.filter_arg >= 0) {
      SLUICE_USER_CHECK(static_cast<size_t>(c.filter_arg) < input.size() &&
                            input.types[static_cast<size_t>(c.filter_arg)].id == TypeId::kBoolean,
                        "{}: the FILTER column {} must be a BOOLEAN column of the input", d.name, c.filter_arg);
      d.filter = c.filter_arg;
    }
    if (c.kind == AggKind::kUser) {
      addUserCall(c, input, std::move(d));
      continue;
    }
    LogicalType arg_type = LogicalType::bigint(false);
    if (c.kind != AggKind::kCountStar) {
      SLUICE_USER_CHECK(c.arg_index >= 0 && static_cast<size_t>(c.arg_index) < input.size(),
                        "{}: argument column {} out of range (input has {} columns)", d.name, c.arg_index,
                        input.size());
      arg_type = input.types[c.arg_index];
    }
    d.arg_phys = physOf(arg_type);
    d.arg_id = arg_type.id;
    d.arg_type = arg_type;
    d.arg_scale = arg_type.scale;
    const LogicalType result = AggregateCall::resultType(c.kind, arg_type);
    if (c.result_type.id != TypeId::kNull) {
      SLUICE_CHECK(c.result_type.sameRoot(result), "{}: planner result type {} differs from Flink's {}", d.name,
                   c.result_type.toString(), result.toString());
    }
    d.result_phys = physOf(result);
    d.separator = c.separator;
    // DISTINCT only changes COUNT/SUM/AVG; MIN/MAX of distinct values equal MIN/MAX of all values.
    d.distinct = c.distinct && (c.kind == AggKind::kCount || c.kind == AggKind::kSum || c.kind == AggKind::kAvg);
    const bool minmax = c.kind == AggKind::kMin || c.kind == AggKind::kMax;
    const bool ordered = c.kind == AggKind::kFirstValue || c.kind == AggKind::kLastValue || c.kind == AggKind::kListAgg;
    if (d.distinct || ordered || (minmax && (with_retraction || d.arg_phys == Phys::kString))) {
      d.counter = static_cast<int>(counter_shapes_.size());
      counter_shapes_.push_back({d.arg_phys, ordered && !d.distinct});
    }
    descs_.push_back(std::move(d));
    result_types_.push_back(result);
  }
}

void AggsHandler::addUserCall(const AggregateCall& c, const types::RowType& input, Desc d) {
  SLUICE_CHECK(c.function != nullptr, "{}: a user-defined aggregate call without its function", d.name);
  std::vector<LogicalType> given;
  for (int k : c.user_args) {
    SLUICE_USER_CHECK(k >= 0 && static_cast<size_t>(k) < input.size(),
                      "{}: argument column {} out of range (input has {} columns)", d.name, k, input.size());
    given.push_back(input.types[static_cast<size_t>(k)]);
  }
  std::vector<LogicalType> wanted = given;
  LogicalType result;
  try {
    result = c.function->inferType(wanted);
  } catch (const UserError& e) {
    throw UserError(fmt::format("Invalid function call {}: {}", c.function_name.empty() ? d.name : c.function_name,
                                e.what()));
  }
  SLUICE_CHECK(wanted.size() == given.size(), "{}: inferType changed the number of arguments", d.name);
  for (size_t k = 0; k < given.size(); ++k) {
    // The planner casts the arguments below the aggregate; a column read in another representation
    // would be misread.
    SLUICE_CHECK(physOf(wanted[k]) == physOf(given[k]), "{}: argument {} is {}, the function reads {}", d.name, k + 1,
                 given[k].toString(), wanted[k].toString());
  }
  if (c.result_type.id != TypeId::kNull) {
    SLUICE_CHECK(c.result_type.sameRoot(result), "{}: planner result type {} differs from the function's {}", d.name,
                 c.result_type.toString(), result.toString());
  }
  d.arg = c.user_args.empty() ? -1 : c.user_args[0];
  d.arg_type = given.empty() ? LogicalType::bigint(false) : given[0];
  d.arg_phys = physOf(d.arg_type);
  d.arg_id = d.arg_type.id;
  d.arg_scale = d.arg_type.scale;
  d.result_phys = physOf(result);
  d.result_type = result;
  d.function = c.function;
  d.user_args = c.user_args;
  d.user_consts.assign(c.user_args.size(), 0);
  d.call_text = c.call_text.empty() ? d.name : c.call_text;
  d.distinct = c.distinct;
  if (d.distinct) {
    // DistinctAggCodeGen's view over the one argument: a value reaches the function when it appears and
    // leaves it (retract) when its last row does.
    SLUICE_USER_CHECK(c.user_args.size() == 1, "{}: DISTINCT takes exactly one argument", d.name);
    d.counter = static_cast<int>(counter_shapes_.size());
    counter_shapes_.push_back({d.arg_phys, false});
  }
  d.user = static_cast<int>(num_user_++);
  user_results_.emplace_back(result);
  user_cols_.reserve(std::max(user_cols_.capacity(), c.user_args.size()));
  descs_.push_back(std::move(d));
  result_types_.push_back(result);
}

namespace {

// A failure inside a user-defined aggregate fails the job naming the call (as a scalar function's).
template <typename Fn>
auto callUser(const std::string& what, Fn&& fn) {
  try {
    return fn();
  } catch (const std::exception& e) {
    throw UserError(fmt::format("user-defined aggregate function {} failed: {}", what, e.what()));
  }
}

}  // namespace

AggregateAccumulator& AggsHandler::userAccumulator(Accumulators& acc, const Desc& d) const {
  UserAccumulator& u = acc.user[static_cast<size_t>(d.user)];
  if (!u.acc) {
    // Restored bytes (or a RocksDB read): the function reads its own form back.
    u.acc = callUser(d.call_text, [&] { return d.function->deserialize(u.bytes); });
    u.function = d.function;
    u.bytes.clear();
    u.bytes.shrink_to_fit();
  }
  return *u.acc;
}

void AggsHandler::applyUser(const Desc& d, Accumulators& acc, const RowBatch& batch, size_t row, int64_t delta) const {
  AggregateAccumulator& a = userAccumulator(acc, d);
  user_cols_.clear();
  for (int k : d.user_args) user_cols_.push_back(&batch.column(static_cast<size_t>(k)));
  const FunctionArgs args(user_cols_, d.user_consts, row);
  callUser(d.call_text, [&] {
    for (int64_t i = 0; i < (delta > 0 ? delta : -delta); ++i) {
      if (delta > 0) d.function->accumulate(a, args);
      else d.function->retract(a, args);
    }
  });
}

void AggsHandler::accumulateUserValue(const Desc& d, Accumulators& acc, const AggValue& v) const {
  Column col(d.arg_type);
  switch (d.arg_phys) {
    case Phys::kLong: col.appendLong(v.l); break;
    case Phys::kDouble: col.appendDouble(v.d); break;
    case Phys::kString: col.appendString(v.s); break;
  }
  AggregateAccumulator& a = userAccumulator(acc, d);
  const std::vector<const Column*> cols = {&col};
  const FunctionArgs args(cols, d.user_consts, 0);
  callUser(d.call_text, [&] { d.function->accumulate(a, args); });
}

void AggsHandler::init(Accumulators& acc) const {
  acc.record_count = 0;
  acc.slots.assign(descs_.size(), AggSlot{});
  acc.counters.clear();
  acc.counters.reserve(counter_shapes_.size());
  for (const CounterShape& c : counter_shapes_) acc.counters.push_back(ValueCounter::make(c.phys, c.list));
  acc.user.clear();
  acc.user.resize(num_user_);
  for (const Desc& d : descs_) {
    if (d.kind != AggKind::kUser) continue;
    UserAccumulator& u = acc.user[static_cast<size_t>(d.user)];
    u.acc = callUser(d.call_text, [&] { return d.function->createAccumulator(); });
    SLUICE_USER_CHECK(u.acc != nullptr, "user-defined aggregate function {}: createAccumulator returned null",
                      d.call_text);
    u.function = d.function;
  }
}

void AggsHandler::checkLayout(Accumulators& acc) const {
  if (acc.slots.size() != descs_.size()) {
    throw InputError(fmt::format("accumulators hold {} aggregates, the query has {}", acc.slots.size(), descs_.size()));
  }
  if (acc.counters.size() != counter_shapes_.size()) {
    throw InputError(fmt::format("accumulators hold {} value maps, the query needs {}", acc.counters.size(),
                                 counter_shapes_.size()));
  }
  for (size_t i = 0; i < counter_shapes_.size(); ++i) {
    if (acc.counters[i]->phys() != counter_shapes_[i].phys) {
      throw InputError(fmt::format("value map {} holds {} values, the query needs {}", i,
                                   physName(acc.counters[i]->phys()), physName(counter_shapes_[i].phys)));
    }
    if (acc.counters[i]->isList() != counter_shapes_[i].list) {
      throw InputError(fmt::format("value map {} is {}, the query needs {}", i,
                                   acc.counters[i]->isList() ? "a list" : "a map",
                                   counter_shapes_[i].list ? "a list" : "a map"));
    }
  }
  if (acc.user.size() != num_user_) {
    throw InputError(fmt::format("accumulators hold {} user-defined aggregates, the query has {}", acc.user.size(),
                                 num_user_));
  }
  // Restored user accumulators are read back now, so bytes of another function fail the restore.
  for (const Desc& d : descs_) {
    if (d.kind != AggKind::kUser) continue;
    UserAccumulator& u = acc.user[static_cast<size_t>(d.user)];
    if (u.acc) continue;
    try {
      u.acc = d.function->deserialize(u.bytes);
    } catch (const std::exception& e) {
      throw InputError(fmt::format("the accumulator of {} does not decode: {}", d.call_text, e.what()));
    }
    u.function = d.function;
    u.bytes.clear();
  }
}

void AggsHandler::accumulate(Accumulators& acc, const RowBatch& batch, size_t row) const {
  update(acc, batch, row, 1);
}

void AggsHandler::retract(Accumulators& acc, const RowBatch& batch, size_t row) const {
  SLUICE_CHECK(with_retraction_, "retract() on an aggregate handler built without retraction");
  update(acc, batch, row, -1);
}

void AggsHandler::update(Accumulators& acc, const RowBatch& batch, size_t row, int64_t delta) const {
  acc.record_count += delta;
  for (size_t i = 0; i < descs_.size(); ++i) {
    const Desc& d = descs_[i];
    AggSlot& slot = acc.slots[i];
    if (d.filter >= 0) {
      // FILTER (WHERE c): a row whose c is FALSE or NULL does not reach this call.
      const Column& f = batch.column(static_cast<size_t>(d.filter));
      if (f.isNull(row) || f.getLong(row) == 0) continue;
    }
    if (d.kind == AggKind::kCountStar) {
      slot.count += delta;
      continue;
    }
    if (d.kind == AggKind::kUser) {
      if (d.distinct) {
        // The distinct view (NULLs stay out of it) forwards a value when it appears or disappears.
        const Column& col = batch.column(static_cast<size_t>(d.arg));
        if (col.isNull(row)) continue;
        const int64_t n = acc.counters[static_cast<size_t>(d.counter)]->add(col, row, delta);
        if (delta > 0 ? n != 1 : n != 0) continue;
      }
      applyUser(d, acc, batch, row, delta);
      continue;
    }
    const Column& col = batch.column(static_cast<size_t>(d.arg));
    // Every built-in aggregate but COUNT(*) skips NULL arguments.
    if (col.isNull(row)) continue;
    ValueCounter* counter = d.counter >= 0 ? acc.counters[static_cast<size_t>(d.counter)].get() : nullptr;
    if (d.distinct) {
      // The distinct view forwards a value to the inner aggregate only when it appears (count 0 -> 1)
      // or disappears (1 -> 0).
      const int64_t n = counter->add(col, row, delta);
      if (delta > 0 ? n != 1 : n != 0) continue;
      applyValue(d, slot, nullptr, col, row, delta);
    } else {
      applyValue(d, slot, counter, col, row, delta);
    }
  }
}

void AggsHandler::applyValue(const Desc& d, AggSlot& slot, ValueCounter* counter, const Column& col, size_t row,
                             int64_t delta) const {
  switch (d.kind) {
    case AggKind::kCountStar:
    case AggKind::kCount:
      slot.count += delta;
      return;
    case AggKind::kSum:
    case AggKind::kAvg:
      slot.count += delta;
      addToSum(d, slot.value, d.arg_phys == Phys::kDouble ? doubleToBits(col.getDouble(row)) : col.getLong(row),
               delta < 0);
      return;
    case AggKind::kFirstValue:
    case AggKind::kLastValue:
    case AggKind::kListAgg:
      counter->add(col, row, delta);
      // Insert-only FIRST_VALUE / LAST_VALUE need one value (FirstValueAggFunction / LastValueAggFunction).
      if (!with_retraction_ && d.kind != AggKind::kListAgg) counter->keepOnlyExtreme(d.kind == AggKind::kLastValue);
      return;
    case AggKind::kUser:
      throw InternalError(fmt::format("{}: a user-defined aggregate reached the built-in path", d.name));
    case AggKind::kMin:
    case AggKind::kMax: {
      const bool max = d.kind == AggKind::kMax;
      if (counter != nullptr) {
        counter->add(col, row, delta);
        if (!with_retraction_) counter->keepOnlyExtreme(max);
        return;
      }
      // Insert-only MIN/MAX over a fixed-width type (MinAggFunction / MaxAggFunction).
      keepExtreme(d, slot, d.arg_phys == Phys::kDouble ? doubleToBits(col.getDouble(row)) : col.getLong(row));
      ++slot.count;
      return;
    }
  }
}

void AggsHandler::keepExtreme(const Desc& d, AggSlot& slot, int64_t v) {
  const bool max = d.kind == AggKind::kMax;
  if (d.arg_phys == Phys::kDouble) {
    const double x = bitsToDouble(v);
    const double cur = bitsToDouble(slot.value);
    if (slot.count == 0 || (max ? JavaDoubleLess()(cur, x) : JavaDoubleLess()(x, cur))) slot.value = v;
  } else if (slot.count == 0 || (max ? v > slot.value : v < slot.value)) {
    slot.value = v;
  }
}

void AggsHandler::addToSum(const Desc& d, int64_t& sum, int64_t v, bool negate) const {
  if (d.arg_phys == Phys::kDouble) {
    const double x = bitsToDouble(v);
    double r = bitsToDouble(sum) + (negate ? -x : x);
    // FloatSumAggFunction adds in float; AVG(FLOAT) keeps a DOUBLE sum (FloatAvgAggFunction.getSumType).
    if (d.kind == AggKind::kSum && d.arg_id == TypeId::kFloat) r = static_cast<double>(static_cast<float>(r));
    sum = doubleToBits(r);
  } else if (d.arg_id == TypeId::kDecimal) {
    // Values live in 64 bits (logical_type.h); overflow is an error, not a wrap.
    int64_t r;
    const bool overflow = negate ? __builtin_sub_overflow(sum, v, &r) : __builtin_add_overflow(sum, v, &r);
    SLUICE_USER_CHECK(!overflow, "{}: DECIMAL sum overflows 64-bit storage", d.name);
    sum = r;
  } else if (d.kind == AggKind::kSum && d.arg_id != TypeId::kBigInt) {
    // SUM(TINYINT/SMALLINT/INT) keeps its sum in the argument type and wraps like Java.
    sum = types::wrapToType(d.arg_type, wrapAdd64(sum, negate ? wrapAdd64(0, -v) : v));
  } else {
    sum = wrapAdd64(sum, negate ? static_cast<int64_t>(0 - static_cast<uint64_t>(v)) : v);
  }
}

void AggsHandler::merge(Accumulators& into, const Accumulators& from) const {
  into.record_count += from.record_count;
  std::vector<AggValue> appeared;
  for (size_t i = 0; i < descs_.size(); ++i) {
    const Desc& d = descs_[i];
    AggSlot& slot = into.slots[i];
    const AggSlot& other = from.slots[i];
    ValueCounter* counter = d.counter >= 0 ? into.counters[static_cast<size_t>(d.counter)].get() : nullptr;
    const ValueCounter* other_counter = d.counter >= 0 ? from.counters[static_cast<size_t>(d.counter)].get() : nullptr;
    if (d.kind == AggKind::kUser) {
      if (d.distinct) {
        // Only the values new to `into` reach the function, as rows of them would.
        appeared.clear();
        counter->mergeFrom(*other_counter, &appeared);
        for (const AggValue& v : appeared) accumulateUserValue(d, into, v);
        continue;
      }
      AggregateAccumulator& a = userAccumulator(into, d);
      const UserAccumulator& o = from.user[static_cast<size_t>(d.user)];
      std::unique_ptr<AggregateAccumulator> restored;
      if (!o.acc) restored = callUser(d.call_text, [&] { return d.function->deserialize(o.bytes); });
      const AggregateAccumulator& other_acc = o.acc ? *o.acc : *restored;
      callUser(d.call_text, [&] { d.function->merge(a, other_acc); });
      continue;
    }
    if (d.distinct) {
      // Only the values new to `into` reach the inner COUNT / SUM / AVG, as a row of them would.
      appeared.clear();
      counter->mergeFrom(*other_counter, &appeared);
      for (const AggValue& v : appeared) {
        ++slot.count;
        if (d.kind != AggKind::kCount) addToSum(d, slot.value, d.arg_phys == Phys::kDouble ? doubleToBits(v.d) : v.l, false);
      }
      continue;
    }
    switch (d.kind) {
      case AggKind::kCountStar:
      case AggKind::kCount:
        slot.count += other.count;
        break;
      case AggKind::kSum:
      case AggKind::kAvg:
        slot.count += other.count;
        addToSum(d, slot.value, other.value, false);
        break;
      case AggKind::kMin:
      case AggKind::kMax:
        if (counter != nullptr) {
          counter->mergeFrom(*other_counter, nullptr);
          if (!with_retraction_) counter->keepOnlyExtreme(d.kind == AggKind::kMax);
        } else if (other.count > 0) {
          keepExtreme(d, slot, other.value);
          slot.count += other.count;
        }
        break;
      case AggKind::kFirstValue:
      case AggKind::kLastValue:
      case AggKind::kListAgg:
        counter->mergeFrom(*other_counter, nullptr);
        if (!with_retraction_ && d.kind != AggKind::kListAgg) counter->keepOnlyExtreme(d.kind == AggKind::kLastValue);
        break;
      case AggKind::kUser:
        break;  // above
    }
  }
}

void AggsHandler::getValue(const Accumulators& acc, std::vector<AggValue>& out) const {
  out.resize(descs_.size());
  for (size_t i = 0; i < descs_.size(); ++i) {
    const Desc& d = descs_[i];
    const AggSlot& slot = acc.slots[i];
    AggValue& v = out[i];
    v.is_null = false;
    switch (d.kind) {
      case AggKind::kCountStar:
      case AggKind::kCount:
        v.l = slot.count;
        break;
      case AggKind::kSum:
        // SumWithRetractAggFunction: NULL when no non-NULL value is left (count == 0);
        // SumAggFunction: NULL until the first non-NULL value. Both are `count == 0`.
        if (slot.count == 0) {
          v.is_null = true;
        } else if (d.result_phys == Phys::kDouble) {
          v.d = bitsToDouble(slot.value);
        } else {
          v.l = slot.value;
        }
        break;
      case AggKind::kAvg:
        // AvgAggFunction.getValueExpression: count == 0 ? NULL : CAST(sum / count AS result type).
        if (slot.count == 0) {
          v.is_null = true;
        } else if (d.arg_phys == Phys::kDouble) {
          v.d = types::roundToType(d.arg_type, bitsToDouble(slot.value) / static_cast<double>(slot.count));
        } else if (d.arg_id == TypeId::kDecimal) {
          // DECIMAL(38, s) sum / BIGINT count, cast to DECIMAL(38, max(6, s)) rounding HALF_UP
          // (DecimalData's cast uses RoundingMode.HALF_UP).
          const int32_t scale = d.arg_scale < 6 ? 6 : d.arg_scale;
          const __int128 num = static_cast<__int128>(slot.value) * pow10(scale - d.arg_scale);
          const __int128 den = slot.count;
          __int128 q = num / den;
          const __int128 rem = num % den;
          const __int128 abs_rem = rem < 0 ? -rem : rem;
          const __int128 abs_den = den < 0 ? -den : den;
          if (2 * abs_rem >= abs_den) q += ((num < 0) != (den < 0)) ? -1 : 1;
          SLUICE_USER_CHECK(q >= INT64_MIN && q <= INT64_MAX, "{}: DECIMAL average overflows 64-bit storage",
                            d.name);
          v.l = static_cast<int64_t>(q);
        } else {
          // Java long division truncates toward zero, like C++; AVG(INT) casts the BIGINT quotient to INT.
          int64_t q = (slot.count == -1) ? wrapAdd64(0, -slot.value) : slot.value / slot.count;
          q = types::wrapToType(d.arg_type, q);
          v.l = q;
        }
        break;
      case AggKind::kFirstValue:
      case AggKind::kLastValue:
        if (!acc.counters[static_cast<size_t>(d.counter)]->extreme(d.kind == AggKind::kLastValue, v)) v.is_null = true;
        break;
      case AggKind::kListAgg:
        if (!acc.counters[static_cast<size_t>(d.counter)]->join(d.separator, v.s)) v.is_null = true;
        break;
      case AggKind::kUser:
        userValue(d, acc, v);
        break;
      case AggKind::kMin:
      case AggKind::kMax:
        if (d.counter >= 0) {
          if (!acc.counters[static_cast<size_t>(d.counter)]->extreme(d.kind == AggKind::kMax, v)) v.is_null = true;
        } else if (slot.count <= 0) {
          v.is_null = true;
        } else if (d.arg_phys == Phys::kDouble) {
          v.d = bitsToDouble(slot.value);
        } else {
          v.l = slot.value;
        }
        break;
    }
  }
}

void AggsHandler::userValue(const Desc& d, const Accumulators& acc, AggValue& v) const {
  const UserAccumulator& u = acc.user[static_cast<size_t>(d.user)];
  std::unique_ptr<AggregateAccumulator> restored;
  if (!u.acc) restored = callUser(d.call_text, [&] { return d.function->deserialize(u.bytes); });
  const AggregateAccumulator& a = u.acc ? *u.acc : *restored;
  Column& out = user_results_[static_cast<size_t>(d.user)];
  out.clear();
  out.appendNull();  // the slot FunctionResult writes
  FunctionResult result(out, 0);
  v.is_null = !callUser(d.call_text, [&] { return d.function->getValue(a, result); });
  if (v.is_null && !d.result_type.nullable)
    throw UserError(fmt::format("user-defined aggregate function {} returned NULL for its NOT NULL result type",
                                d.call_text));
  if (v.is_null) return;
  switch (d.result_phys) {
    case Phys::kLong: v.l = out.longs()[0]; break;
    case Phys::kDouble: v.d = out.doubles()[0]; break;
    case Phys::kString: v.s.assign(out.arena(), out.strings()[0].offset, out.strings()[0].length); break;
  }
}

bool AggsHandler::equal(const std::vector<AggValue>& a, const std::vector<AggValue>& b) const {
  for (size_t i = 0; i < descs_.size(); ++i) {
    if (a[i].is_null != b[i].is_null) return false;
    if (a[i].is_null) continue;
    switch (descs_[i].result_phys) {
      case Phys::kLong:
        if (a[i].l != b[i].l) return false;
        break;
      case Phys::kDouble:
        if (a[i].d != b[i].d) return false;
        break;
      case Phys::kString:
        if (a[i].s != b[i].s) return false;
        break;
    }
  }
  return true;
}

void AggsHandler::appendValues(const std::vector<AggValue>& values, RowBatch& out, size_t first_column) const {
  for (size_t i = 0; i < descs_.size(); ++i) {
    Column& col = out.column(first_column + i);
    const AggValue& v = values[i];
    if (v.is_null) {
      col.appendNull();
      continue;
    }
    switch (descs_[i].result_phys) {
      case Phys::kLong: col.appendLong(v.l); break;
      case Phys::kDouble: col.appendDouble(v.d); break;
      case Phys::kString: col.appendString(v.s); break;
    }
  }
}

types::RowType keysAndAggregatesType(const types::RowType& input_type, const std::vector<int>& group_keys,
                                     const std::vector<AggregateCall>& calls, bool with_retraction) {
  KeyCodec codec(input_type, group_keys);  // validates the key indexes
  AggsHandler handler(input_type, calls, with_retraction);
  types::RowType out;
  for (int k : group_keys) {
    const auto i = static_cast<size_t>(k);
    out.names.push_back(i < input_type.names.size() ? input_type.names[i] : std::string());
    out.types.push_back(input_type.types[i]);
  }
  for (size_t i = 0; i < calls.size(); ++i) {
    out.names.push_back(calls[i].name.empty() ? fmt::format("EXPR${}", i) : calls[i].name);
    out.types.push_back(handler.resultTypes()[i]);
  }
  return out;
}

}  // namespace sluice::table::agg
