#include "connectors/datagen_connector.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "connectors/connector_options.h"
#include "connectors/operator_util.h"
#include "table/functions/time_zone.h"

namespace sluice::connectors {

using types::LogicalType;
using types::TypeId;

namespace {

/// Whether the sequence generator takes `type` (Flink's SequenceGeneratorVisitor: numbers and strings).
bool sequenceSupports(const LogicalType& type) {
  return type.isIntegral() || type.id == TypeId::kFloat || type.id == TypeId::kDouble ||
         type.id == TypeId::kDecimal || type.id == TypeId::kVarchar || type.id == TypeId::kChar;
}

/// The option suffixes (after "fields.<column>.") the generator of `f` reads.
std::vector<std::string> optionsRead(const DataGenFieldSpec& f) {
  std::vector<std::string> read = {"kind", "null-rate"};
  if (f.kind == DataGenFieldSpec::Kind::kSequence) {
    read.insert(read.end(), {"start", "end"});
    return read;
  }
  switch (f.type.id) {
    case TypeId::kTinyInt: case TypeId::kSmallInt: case TypeId::kInt: case TypeId::kBigInt:
    case TypeId::kFloat: case TypeId::kDouble: case TypeId::kDecimal:
      read.insert(read.end(), {"min", "max"});
      break;
    case TypeId::kVarchar: case TypeId::kChar:
      read.insert(read.end(), {"length", "var-len"});
      break;
    case TypeId::kTimestamp: case TypeId::kTimestampLtz:
      read.push_back("max-past");
      break;
    default:
      break;
  }
  return read;
}

int64_t nowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t wallClockMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t pow10(int32_t n) {
  int64_t v = 1;
  for (int32_t i = 0; i < n && i < 18; ++i) v *= 10;
  return v;
}

// Share of `total` for subtask i of p: total / p, plus one for the first total % p subtasks.
int64_t shareOf(int64_t total, int i, int p) { return total / p + (total % p > i ? 1 : 0); }

}  // namespace

std::vector<DataGenSplit> DataGenSource::splits(int parallelism) const {
  const int p = std::max(1, parallelism);
  std::vector<DataGenSplit> out;
  for (int i = 0; i < p; ++i) {
    DataGenSplit s;
    s.index = i;
    s.count = p;
    s.rows = spec_->number_of_rows ? shareOf(*spec_->number_of_rows, i, p) : -1;
    s.rate = std::max<int64_t>(1, shareOf(spec_->rows_per_second, i, p));
    out.push_back(s);
  }
  return out;
}

std::unique_ptr<runtime::SplitEnumerator<DataGenSplit>> DataGenSource::createEnumerator(int parallelism) const {
  std::vector<std::vector<DataGenSplit>> by_subtask;
  for (const DataGenSplit& s : splits(parallelism)) by_subtask.push_back({s});
  return std::make_unique<SubtaskSplitEnumerator<DataGenSplit>>(std::move(by_subtask));
}

std::unique_ptr<runtime::SplitEnumerator<DataGenSplit>> DataGenSource::restoreEnumerator(
    int parallelism, int checkpointed_parallelism) const {
  std::vector<std::vector<DataGenSplit>> by_subtask;
  for (const DataGenSplit& s : splits(checkpointed_parallelism)) by_subtask.push_back({s});
  return std::make_unique<SubtaskSplitEnumerator<DataGenSplit>>(std::move(by_subtask), parallelism);
}

std::string DataGenSplit::splitId() const { return fmt::format("datagen-{}-of-{}", index, count); }

std::unique_ptr<runtime::SourceReader<types::RowBatch, DataGenSplit>> DataGenSource::createReader(
    const runtime::SourceReaderContext& ctx) const {
  return std::make_unique<DataGenSourceReader>(spec_, ctx);
}

DataGenSourceReader::DataGenSourceReader(std::shared_ptr<const DataGenSpec> spec,
                                         const runtime::SourceReaderContext& ctx)
    : spec_(std::move(spec)) {
  runtime::OperatorContext octx;
  octx.config = ctx.config;
  batch_size_ = batchSizeOf(octx);
  produced_type_ = spec_->producedType();
  emitted_fields_ = spec_->projection;
  if (emitted_fields_.empty())
    for (size_t f = 0; f < spec_->fields.size(); ++f) emitted_fields_.push_back(static_cast<int>(f));
  for (int f : emitted_fields_) {
    const TypeId id = spec_->fields[static_cast<size_t>(f)].type.id;
    needs_local_clock_ = needs_local_clock_ || id == TypeId::kDate || id == TypeId::kTime;
  }
  // The rate clock starts with the subtask (operator open), as before the split arrives.
  start_ns_ = nowNanos();
}

void DataGenSourceReader::addSplit(DataGenSplit split) {
  if (active_) {
    queued_.push_back(std::move(split));
    return;
  }
  startSplit(split);
}

std::vector<DataGenSplit> DataGenSourceReader::snapshotState(int64_t) {
  std::vector<DataGenSplit> out;
  out.reserve(queued_.size() + 1);
  if (active_ && (limit_ < 0 || emitted_ < limit_)) {
    out.push_back(current_);
    out.back().emitted = emitted_;
  }
  for (const DataGenSplit& q : queued_) out.push_back(q);
  return out;
}

void DataGenSourceReader::startSplit(const DataGenSplit& split) {
  if (started_any_) start_ns_ = nowNanos();
  started_any_ = true;
  current_ = split;
  const int64_t done = std::max<int64_t>(0, split.emitted);
  const int p = std::max(1, split.count);
  const int i = split.index;
  stride_ = p;
  rate_ = std::max<int64_t>(1, split.rate);
  limit_ = split.rows;
  state_.clear();
  state_.resize(spec_->fields.size());
  for (size_t f = 0; f < spec_->fields.size(); ++f) {
    const DataGenFieldSpec& fs = spec_->fields[f];
    FieldState& st = state_[f];
    // A restored split reseeds from its position (0 for a fresh split: the seeds of every run).
    st.rng.seed(0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(i + 1) ^ (0xBF58476D1CE4E5B9ULL * (f + 1)) ^
                (0x94D049BB133111EBULL * static_cast<uint64_t>(done)));
    if (fs.kind == DataGenFieldSpec::Kind::kSequence) {
      // Flink's SequenceGenerator: congruence start + i, step p.
      const __int128 total = static_cast<__int128>(fs.end) - fs.start + 1;
      const __int128 count = total / p + (total % p > i ? 1 : 0);
      const int64_t total_share = static_cast<int64_t>(std::min<__int128>(count, std::numeric_limits<int64_t>::max()));
      limit_ = limit_ < 0 ? total_share : std::min(limit_, total_share);
      st.next = static_cast<int64_t>(fs.start + i + static_cast<__int128>(done) * p);
      st.remaining = std::max<int64_t>(0, total_share - done);
    }
  }
  emitted_ = done;
  base_emitted_ = done;
  active_ = true;
}

runtime::InputStatus DataGenSourceReader::pollNext(runtime::ReaderOutput<types::RowBatch>& output) {
  if (!active_) return runtime::InputStatus::kEndOfInput;
  if (limit_ >= 0 && emitted_ >= limit_) {
    active_ = false;
    if (queued_.empty()) return runtime::InputStatus::kEndOfInput;
    startSplit(queued_.front());
    queued_.pop_front();
    return runtime::InputStatus::kMoreAvailable;
  }
  const int64_t elapsed = nowNanos() - start_ns_;
  const int64_t due_total =
      static_cast<int64_t>(static_cast<__int128>(elapsed) * rate_ / 1'000'000'000 + 1);  // first row at once
  int64_t due = due_total - (emitted_ - base_emitted_);
  if (limit_ >= 0) due = std::min(due, limit_ - emitted_);
  // Not due yet: the task waits for its mails (about 1 ms, counted as idle time) and polls again.
  if (due <= 0) return runtime::InputStatus::kNothingAvailable;
  const size_t rows = static_cast<size_t>(std::min<int64_t>(due, static_cast<int64_t>(batch_size_)));
  types::RowBatch batch(produced_type_);
  batch.reserve(rows);
  generate(batch, rows);
  emitted_ += static_cast<int64_t>(rows);
  output.collect(std::move(batch));
  return runtime::InputStatus::kMoreAvailable;
}

void DataGenSourceReader::generate(types::RowBatch& batch, size_t rows) {
  const int64_t now_ms = wallClockMillis();
  // DATE and TIME are the machine's local date and time of day (Flink: LocalDate.now(), LocalTime.now()
  // in the JVM's default zone), not the session zone.
  int64_t local_ms = 0;
  if (needs_local_clock_) local_ms = table::ZoneRules::resolve("default").toLocal(now_ms);
  constexpr int64_t kMsPerDay = 86'400'000;
  const int64_t local_day = local_ms >= 0 ? local_ms / kMsPerDay : -((-local_ms + kMsPerDay - 1) / kMsPerDay);
  const int64_t local_ms_of_day = local_ms - local_day * kMsPerDay;
  // Unprojected fields are not generated: their values would be dropped, and the row limit was fixed
  // in addSplit() from every sequence.
  for (size_t k = 0; k < emitted_fields_.size(); ++k) {
    const size_t f = static_cast<size_t>(emitted_fields_[k]);
    const DataGenFieldSpec& fs = spec_->fields[f];
    FieldState& st = state_[f];
    types::Column& col = batch.column(k);
    const TypeId id = fs.type.id;
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (size_t r = 0; r < rows; ++r) {
      if (fs.kind == DataGenFieldSpec::Kind::kSequence) {
        const int64_t v = st.next;
        st.next += stride_;
        --st.remaining;
        switch (id) {
          case TypeId::kDouble:
          case TypeId::kFloat: col.appendDouble(types::roundToType(fs.type, static_cast<double>(v))); break;
          case TypeId::kDecimal: col.appendLong(v * pow10(fs.type.scale)); break;
          case TypeId::kVarchar:
          case TypeId::kChar: col.appendString(std::to_string(v)); break;
          default: col.appendLong(v); break;
        }
        continue;
      }
      if (fs.null_rate > 0 && unit(st.rng) < fs.null_rate) {
        col.appendNull();
        continue;
      }
      switch (id) {
        case TypeId::kBoolean: col.appendLong(static_cast<int64_t>(st.rng() & 1)); break;
        case TypeId::kTinyInt:
        case TypeId::kSmallInt:
        case TypeId::kInt:
        case TypeId::kBigInt:
        case TypeId::kDecimal:
          col.appendLong(std::uniform_int_distribution<int64_t>(fs.min_long, fs.max_long)(st.rng));
          break;
        case TypeId::kDouble:
        case TypeId::kFloat: {
          double span = fs.max_double - fs.min_double;
          double v;
          if (std::isfinite(span)) {
            v = fs.min_double + unit(st.rng) * span;
          } else {
            // The span overflows (e.g. -MAX..MAX): add two half steps.
            const double half = unit(st.rng) * (fs.max_double / 2 - fs.min_double / 2);
            v = fs.min_double + half + half;
          }
          col.appendDouble(types::roundToType(fs.type, v));
          break;
        }
        case TypeId::kVarchar:
        case TypeId::kChar: {
          static const char kHex[] = "0123456789abcdef";
          int32_t len = fs.length;
          if (fs.var_len && len > 1) len = std::uniform_int_distribution<int32_t>(1, len)(st.rng);
          scratch_.resize(static_cast<size_t>(len));
          for (int32_t k = 0; k < len; ++k) scratch_[k] = kHex[st.rng() & 15];
          col.appendString(scratch_);
          break;
        }
        case TypeId::kTimestamp:
        case TypeId::kTimestampLtz: {
          int64_t past = fs.max_past_ms > 0 ? std::uniform_int_distribution<int64_t>(0, fs.max_past_ms)(st.rng) : 0;
          col.appendLong(now_ms - past);
          break;
        }
        case TypeId::kDate: col.appendLong(local_day); break;
        case TypeId::kTime: col.appendLong(local_ms_of_day); break;
        default: col.appendNull(); break;
      }
    }
  }
  batch.kinds().insert(batch.kinds().end(), rows, types::RowKind::kInsert);
}

DataGenTableSource::DataGenTableSource(std::shared_ptr<const DataGenSpec> spec, std::optional<int> parallelism)
    : spec_(std::move(spec)), parallelism_(parallelism) {}

std::shared_ptr<const runtime::StreamOperatorFactory> DataGenTableSource::operatorFactory() const {
  auto spec = spec_;
  return runtime::makeOperatorFactory(
      [spec] { return std::make_unique<DataGenSourceOperator>(std::make_shared<DataGenSource>(spec)); }, true);
}

bool DataGenTableSource::isBounded() const {
  if (spec_->number_of_rows) return true;
  for (const auto& f : spec_->fields)
    if (f.kind == DataGenFieldSpec::Kind::kSequence) return true;
  return false;
}

std::string DataGenTableSource::summary() const {
  return spec_->number_of_rows ? fmt::format("datagen rows-per-second={}, number-of-rows={}", spec_->rows_per_second,
                                             *spec_->number_of_rows)
                               : fmt::format("datagen rows-per-second={}", spec_->rows_per_second);
}

bool DataGenTableSource::applyProjection(const std::vector<int>& fields) {
  checkProjection(fields, spec_->fields.size(), "datagen", spec_->table_name);
  // The spec is shared read-only with operator factories made earlier: project a copy.
  auto spec = std::make_shared<DataGenSpec>(*spec_);
  spec->projection = fields;
  spec_ = std::move(spec);
  return true;
}

types::RowType DataGenSpec::producedType() const {
  return projectRowType(row_type, projection);
}

std::set<std::string> DataGenTableFactory::supportedOptions() const {
  return {"rows-per-second", "number-of-rows", "scan.parallelism", "fields.#.kind",  "fields.#.min",
          "fields.#.max",    "fields.#.max-past", "fields.#.length", "fields.#.var-len", "fields.#.start",
          "fields.#.end",    "fields.#.null-rate"};
}

std::unique_ptr<table::ScanTableSource> DataGenTableFactory::createSource(const table::ResolvedTable& table,
                                                                          const Configuration&) const {
  const OptionMap& o = table.options;
  const std::string& t = table.name;
  auto spec = std::make_shared<DataGenSpec>();
  spec->table_name = t;
  spec->row_type = table.physical_type;
  spec->rows_per_second = longOption(o, "rows-per-second", 10000, t);
  if (spec->rows_per_second <= 0)
    throw UserError(fmt::format("Option 'rows-per-second' of table '{}' must be positive, but was {}.", t,
                                spec->rows_per_second));
  if (o.count("number-of-rows")) {
    spec->number_of_rows = longOption(o, "number-of-rows", 0, t);
    if (*spec->number_of_rows < 0)
      throw UserError(fmt::format("Option 'number-of-rows' of table '{}' must not be negative.", t));
  }
  // Options for fields that the table does not have.
  for (const auto& kv : o) {
    if (kv.first.rfind("fields.", 0) != 0) continue;
    const size_t dot = kv.first.rfind('.');
    const std::string name = kv.first.substr(7, dot > 7 ? dot - 7 : 0);
    if (table.physical_type.indexOf(name) < 0)
      throw UserError(fmt::format("Unsupported option '{}' for the datagen table '{}': it has no column '{}'.", kv.first,
                                  t, name));
  }
  for (size_t c = 0; c < table.physical_type.size(); ++c) {
    const std::string& name = table.physical_type.names[c];
    const LogicalType& type = table.physical_type.types[c];
    const std::string prefix = "fields." + name + ".";
    DataGenFieldSpec f;
    f.type = type;
    std::string kind = findOption(o, prefix + "kind").value_or("random");
    if (kind == "sequence") {
      f.kind = DataGenFieldSpec::Kind::kSequence;
    } else if (kind != "random") {
      throw UserError(fmt::format("Unknown value '{}' for option '{}kind' of table '{}': expected random or sequence.",
                                  kind, prefix, t));
    }
    f.null_rate = doubleOption(o, prefix + "null-rate", 0.0, t);
    if (f.null_rate < 0 || f.null_rate > 1)
      throw UserError(fmt::format("Option '{}null-rate' of table '{}' must be between 0 and 1.", prefix, t));
    if (f.kind == DataGenFieldSpec::Kind::kSequence) {
      // The type first: its start and end would not even parse for a DATE.
      if (!sequenceSupports(type))
        throw UserError(fmt::format("The datagen sequence generator does not support type {} (column '{}' of table '{}').",
                                    type.toString(), name, t));
      if (!o.count(prefix + "start") || !o.count(prefix + "end"))
        throw UserError(fmt::format(
            "Could not find the required options '{0}start' and '{0}end' for the sequence column '{1}' of table '{2}'.",
            prefix, name, t));
      f.start = longOption(o, prefix + "start", 0, t);
      f.end = longOption(o, prefix + "end", 0, t);
      if (f.start > f.end)
        throw UserError(fmt::format("Option '{0}start' ({1}) of table '{2}' must not be greater than '{0}end' ({3}).",
                                    prefix, f.start, t, f.end));
      switch (type.id) {
        case TypeId::kTinyInt:
        case TypeId::kSmallInt:
        case TypeId::kInt:
          if (types::wrapToType(type, f.start) != f.start || types::wrapToType(type, f.end) != f.end)
            throw UserError(fmt::format("The sequence of column '{}' of table '{}' exceeds the {} range.", name, t,
                                        type.withNullable(true).toString()));
          break;
        case TypeId::kBigInt:
        case TypeId::kFloat:
        case TypeId::kDouble:
        case TypeId::kVarchar:
        case TypeId::kChar:
          break;
        case TypeId::kDecimal: {
          const int64_t limit = pow10(std::min(type.precision - type.scale, 18 - type.scale));
          if (f.start <= -limit || f.end >= limit)
            throw UserError(fmt::format("The sequence of column '{}' of table '{}' exceeds {}.", name, t,
                                        type.toString()));
          break;
        }
        default:
          break;  // refused above (sequenceSupports)
      }
      spec->fields.push_back(f);
      continue;
    }
    switch (type.id) {
      case TypeId::kBoolean:
        break;
      case TypeId::kTinyInt:
      case TypeId::kSmallInt:
      case TypeId::kInt: {
        // Defaults: the type's whole range (Byte/Short/Integer.MIN_VALUE .. MAX_VALUE).
        const int bits = type.integralBits();
        const int64_t lo = -(int64_t{1} << (bits - 1)), hi = (int64_t{1} << (bits - 1)) - 1;
        f.min_long = longOption(o, prefix + "min", lo, t);
        f.max_long = longOption(o, prefix + "max", hi, t);
        if (f.min_long < lo || f.max_long > hi)
          throw UserError(fmt::format("Options '{0}min'/'{0}max' of table '{1}' exceed the {2} range.", prefix, t,
                                      type.withNullable(true).toString()));
        break;
      }
      case TypeId::kBigInt:
        f.min_long = longOption(o, prefix + "min", std::numeric_limits<int64_t>::min(), t);
        f.max_long = longOption(o, prefix + "max", std::numeric_limits<int64_t>::max(), t);
        break;
      case TypeId::kFloat:
      case TypeId::kDouble: {
        // Defaults: Float/Double.MIN_VALUE .. MAX_VALUE.
        const bool is_float = type.id == TypeId::kFloat;
        f.min_double = doubleOption(o, prefix + "min",
                                    is_float ? std::numeric_limits<float>::denorm_min() : std::numeric_limits<double>::denorm_min(), t);
        f.max_double = doubleOption(o, prefix + "max",
                                    is_float ? std::numeric_limits<float>::max() : std::numeric_limits<double>::max(), t);
        if (f.min_double > f.max_double)
          throw UserError(fmt::format("Option '{0}min' of table '{1}' must not be greater than '{0}max'.", prefix, t));
        break;
      }
      case TypeId::kDecimal: {
        const int32_t digits = std::min(type.precision, 18);
        const double scale = std::pow(10.0, type.scale);
        const double bound = static_cast<double>(pow10(digits)) - 1;
        double lo = doubleOption(o, prefix + "min", std::numeric_limits<double>::denorm_min(), t) * scale;
        double hi = doubleOption(o, prefix + "max", std::numeric_limits<double>::max(), t) * scale;
        lo = std::max(std::ceil(lo), -bound);
        hi = std::min(std::floor(hi), bound);
        if (lo > hi)
          throw UserError(fmt::format("Options '{0}min'/'{0}max' of table '{1}' leave no {2} value.", prefix, t,
                                      type.toString()));
        f.min_long = static_cast<int64_t>(lo);
        f.max_long = static_cast<int64_t>(hi);
        break;
      }
      case TypeId::kVarchar:
      case TypeId::kChar: {
        int64_t fallback = type.id == TypeId::kChar || type.precision != types::kMaxVarcharLength ? type.precision : 100;
        int64_t len = longOption(o, prefix + "length", fallback, t);
        if (len < 0 || len > (1 << 24))
          throw UserError(fmt::format("Option '{}length' of table '{}' is out of range: {}.", prefix, t, len));
        f.length = static_cast<int32_t>(len);
        f.var_len = boolOption(o, prefix + "var-len", false, t);
        break;
      }
      case TypeId::kTimestamp:
      case TypeId::kTimestampLtz:
        f.max_past_ms = durationOption(o, prefix + "max-past", 0, t);
        break;
      case TypeId::kDate:
      case TypeId::kTime:
        break;
      default:
        throw UserError(fmt::format("The datagen connector does not support type {} (column '{}' of table '{}').",
                                    type.toString(), name, t));
    }
    if (f.type.isIntegral() && f.min_long > f.max_long)
      throw UserError(fmt::format("Option '{0}min' of table '{1}' must not be greater than '{0}max'.", prefix, t));
    spec->fields.push_back(f);
  }
  // Options of a column that its generator does not read (Flink's validateUnconsumedKeys): 'fields.d.min' on
  // a DATE, 'fields.i.length' on an INT, 'fields.k.min' on a sequence.
  std::vector<std::string> unused;
  std::vector<std::string> taken;
  for (size_t c = 0; c < table.physical_type.size(); ++c) {
    const std::string prefix = "fields." + table.physical_type.names[c] + ".";
    const std::vector<std::string> allowed = optionsRead(spec->fields[c]);
    for (const std::string& a : allowed) taken.push_back(prefix + a);
    for (auto it = o.lower_bound(prefix); it != o.end() && it->first.rfind(prefix, 0) == 0; ++it) {
      const std::string suffix = it->first.substr(prefix.size());
      if (suffix.find('.') != std::string::npos) continue;  // another column's ("fields.a.b.min" of column "a.b")
      if (std::find(allowed.begin(), allowed.end(), suffix) == allowed.end()) unused.push_back(it->first);
    }
  }
  if (!unused.empty()) {
    std::sort(taken.begin(), taken.end());
    throw UserError(fmt::format(
        "Unsupported options found for 'datagen' (table '{}'): a column's generator does not read them.\n\n"
        "Unsupported options:\n\n{}\n\nThe columns' generators read:\n\n{}",
        t, fmt::join(unused, "\n"), fmt::join(taken, "\n")));
  }
  return std::make_unique<DataGenTableSource>(std::move(spec), parallelismOption(o, "scan.parallelism", t));
}

}  // namespace sluice::connectors
