#include "table/runtime/lookup_join.h"

#include <chrono>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "common/error.h"
#include "runtime/time/processing_time_service.h"
#include "table/functions/calc_program.h"
#include "table/functions/evaluator.h"
#include "table/runtime/accumulators_internal.h"

namespace sluice::table {

using types::RowBatch;
using types::RowKind;
using types::RowType;

namespace {

/// The dimension calc's output type: its projections' types (the loader's row when there are none).
RowType dimCalcType(const LookupJoinSpec& spec) {
  RowType t = spec.loader->rowType();
  if (!spec.dim_projections.empty()) {
    t.types.clear();
    for (const auto& p : spec.dim_projections) t.types.push_back(p->type);
  }
  t.names.resize(t.types.size());
  for (size_t i = 0; i < t.names.size(); ++i) {
    if (i < spec.dim_names.size()) t.names[i] = spec.dim_names[i];
    if (t.names[i].empty()) t.names[i] = fmt::format("$k{}", i);
  }
  return t;
}

void checkSpec(const RowType& probe, const LookupJoinSpec& spec) {
  SLUICE_USER_CHECK(spec.loader != nullptr, "a lookup join needs a table loader");
  SLUICE_USER_CHECK(spec.type == FlinkJoinType::kInner || spec.type == FlinkJoinType::kLeft,
                    "Temporal table join currently only support INNER JOIN and LEFT JOIN, but was {}",
                    joinTypeName(spec.type));
  SLUICE_USER_CHECK(!spec.probe_keys.empty() && spec.probe_keys.size() == spec.dim_keys.size(),
                    "lookup keys: {} probe, {} dimension", spec.probe_keys.size(), spec.dim_keys.size());
  const RowType dim = dimCalcType(spec);
  SLUICE_USER_CHECK(spec.dim_width <= dim.size(), "dimension width {} of a calc output of {} columns", spec.dim_width,
                    dim.size());
  for (size_t i = 0; i < spec.probe_keys.size(); ++i) {
    const int p = spec.probe_keys[i], d = spec.dim_keys[i];
    SLUICE_USER_CHECK(p >= 0 && static_cast<size_t>(p) < probe.size(), "probe key column {} out of range", p);
    SLUICE_USER_CHECK(d >= 0 && static_cast<size_t>(d) < dim.size(), "dimension key column {} out of range", d);
  }
  if (spec.join_condition)
    SLUICE_USER_CHECK(spec.join_condition->type.id == types::TypeId::kBoolean,
                      "lookup join condition must be BOOLEAN, is {}", spec.join_condition->type.toString());
}

}  // namespace

RowType lookupDimType(const LookupJoinSpec& spec) {
  RowType all = dimCalcType(spec);
  all.names.resize(spec.dim_width);
  all.types.resize(spec.dim_width);
  return all;
}

RowType LookupJoinOperator::outputType(const RowType& probe, const RowType& dim, FlinkJoinType type) {
  RowType out = probe;
  for (size_t i = 0; i < dim.size(); ++i) {
    out.names.push_back(dim.names[i]);
    out.types.push_back(type == FlinkJoinType::kLeft ? dim.types[i].withNullable(true) : dim.types[i]);
  }
  return out;
}

struct LookupJoinOperator::Impl {
  Impl(RowType probe, LookupJoinSpec s)
      : probe_type(std::move(probe)),
        spec(std::move(s)),
        calc_type(dimCalcType(spec)),
        output_type(outputType(probe_type, lookupDimType(spec), spec.type)),
        probe_keys(probe_type, spec.probe_keys),
        dim_keys(calc_type, spec.dim_keys) {
    if (spec.dim_condition || !spec.dim_projections.empty()) {
      std::vector<ExprPtr> projections = spec.dim_projections;
      if (projections.empty())
        for (size_t i = 0; i < calc_type.size(); ++i)
          projections.push_back(makeInputRef(static_cast<int>(i), calc_type.types[i]));
      calc.emplace(spec.loader->rowType(), spec.dim_condition, projections, calc_type.names);
    }
    if (spec.join_condition) {
      condition.emplace(spec.join_condition);
      pair_type = probe_type;
      for (size_t i = 0; i < spec.dim_width; ++i) {
        pair_type.names.push_back(calc_type.names[i]);
        pair_type.types.push_back(calc_type.types[i]);
      }
    }
  }

  int64_t now(const runtime::OperatorContext& ctx) const {
    if (ctx.processing_time_service != nullptr) return ctx.processing_time_service->currentProcessingTime();
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  /// FileSystemLookupFunction's reload: a new cache from the whole table, replacing the old one.
  void load(const runtime::OperatorContext& ctx) {
    std::vector<RowBatch> loaded;
    spec.loader->load(ctx.config, loaded);
    RowBatch rows(calc_type);
    for (RowBatch& b : loaded) {
      RowBatch c = calc ? calc->apply(std::move(b), &calc_scratch) : std::move(b);
      for (size_t r = 0; r < c.numRows(); ++r) rows.appendRow(c, r, RowKind::kInsert);
    }
    std::unordered_map<std::string, std::vector<uint32_t>> index;
    std::string key;
    for (size_t r = 0; r < rows.numRows(); ++r) {
      bool null_key = false;
      for (int k : spec.dim_keys) null_key = null_key || rows.column(static_cast<size_t>(k)).isNull(r);
      if (null_key) continue;  // SQL equality: a NULL key is never looked up
      dim_keys.encode(rows, r, key);
      index[key].push_back(static_cast<uint32_t>(r));
    }
    cache = std::move(rows);
    cache_index = std::move(index);
    ++loads;
    const int64_t ttl = spec.loader->cacheTtlMs();
    const int64_t t = now(ctx);
    next_load = ttl > 0 && t <= INT64_MAX - ttl ? t + ttl : INT64_MAX;
  }

  void appendDim(size_t dim_row, RowBatch& out) const {
    const size_t first = probe_type.size();
    for (size_t i = 0; i < spec.dim_width; ++i) out.column(first + i).appendFrom(cache.column(i), dim_row);
  }

  void process(RowBatch& batch, runtime::Output* output) {
    RowBatch out(output_type);
    for (size_t row = 0; row < batch.numRows(); ++row) {
      const RowKind kind = batch.kind(row);
      matches.clear();
      bool null_key = false;
      for (int k : spec.probe_keys) null_key = null_key || batch.column(static_cast<size_t>(k)).isNull(row);
      if (!null_key) {
        probe_keys.encode(batch, row, key_buf);
        auto it = cache_index.find(key_buf);
        if (it != cache_index.end()) matches = it->second;
      }
      if (condition && !matches.empty()) {
        RowBatch pairs(pair_type);
        for (uint32_t m : matches) {
          for (size_t i = 0; i < probe_type.size(); ++i) pairs.column(i).appendFrom(batch.column(i), row);
          for (size_t i = 0; i < spec.dim_width; ++i)
            pairs.column(probe_type.size() + i).appendFrom(cache.column(i), m);
          pairs.kinds().push_back(RowKind::kInsert);
        }
        condition->evaluateFilter(pairs, selected, &scratch);
        std::vector<uint32_t> kept;
        kept.reserve(selected.size());
        for (uint32_t i : selected) kept.push_back(matches[i]);
        matches.swap(kept);
      }
      if (matches.empty()) {
        if (spec.type != FlinkJoinType::kLeft) continue;
        for (size_t i = 0; i < probe_type.size(); ++i) out.column(i).appendFrom(batch.column(i), row);
        for (size_t i = 0; i < spec.dim_width; ++i) out.column(probe_type.size() + i).appendNull();
        out.kinds().push_back(kind);
        continue;
      }
      for (uint32_t m : matches) {
        for (size_t i = 0; i < probe_type.size(); ++i) out.column(i).appendFrom(batch.column(i), row);
        appendDim(m, out);
        out.kinds().push_back(kind);
      }
    }
    if (!out.empty()) output->collect(std::move(out));
  }

  RowType probe_type;
  LookupJoinSpec spec;
  RowType calc_type;
  RowType output_type;
  agg::KeyCodec probe_keys;
  agg::KeyCodec dim_keys;
  std::optional<CalcProgram> calc;
  CalcScratch calc_scratch;
  std::optional<ExprEvaluator> condition;
  RowType pair_type;
  EvalScratch scratch;
  // The cache: the dimension calc's output rows and, per key (KeyCodec bytes), their row numbers.
  RowBatch cache;
  std::unordered_map<std::string, std::vector<uint32_t>> cache_index;
  int64_t next_load = INT64_MAX;
  int64_t loads = 0;
  bool opened = false;
  std::string key_buf;
  std::vector<uint32_t> matches, selected;
};

LookupJoinOperator::LookupJoinOperator(RowType probe_type, LookupJoinSpec spec) {
  checkSpec(probe_type, spec);
  impl_ = std::make_unique<Impl>(std::move(probe_type), std::move(spec));
}

LookupJoinOperator::~LookupJoinOperator() = default;

int64_t LookupJoinOperator::numLoads() const { return impl_->loads; }
size_t LookupJoinOperator::numCachedRows() const { return impl_->cache.numRows(); }

void LookupJoinOperator::open(const runtime::OperatorContext& ctx, runtime::Output* output) {
  StreamOperator::open(ctx, output);
  impl_->load(ctx_);
  impl_->opened = true;
}

void LookupJoinOperator::processBatch(RowBatch&& batch) {
  Impl& s = *impl_;
  SLUICE_CHECK(s.opened, "LookupJoin used before open()");
  if (s.now(ctx_) >= s.next_load) s.load(ctx_);
  s.process(batch, output_);
}

std::shared_ptr<const runtime::StreamOperatorFactory> makeLookupJoinFactory(RowType probe_type, LookupJoinSpec spec) {
  LookupJoinOperator probe(probe_type, spec);
  return runtime::makeOperatorFactory([probe_type = std::move(probe_type), spec = std::move(spec)] {
    return std::make_unique<LookupJoinOperator>(probe_type, spec);
  });
}

}  // namespace sluice::table
