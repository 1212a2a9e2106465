#include "table/runtime/streaming_join.h"

#include <algorithm>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "runtime/network/record_writer.h"
#include "runtime/operators/keyed_input_sorter.h"
#include "runtime/serialization/type_serializer.h"
#include "table/functions/evaluator.h"
#include "table/runtime/accumulators_internal.h"
#include "table/runtime/operator_state_internal.h"
#include "table/runtime/state_retention.h"

namespace sluice::table {

/// One stored row of a join side (Flink's record, or Tuple2<record, numOfAssociations> /
/// Tuple2<appearTimes, numOfAssociations> of the outer views). `row` is empty in a map keyed by the row.
struct JoinRecord {
  std::string row;
  int32_t count = 1;          ///< copies of the row (maps keyed by the row); 1 otherwise
  int32_t associations = -1;  ///< matching rows of the other side per copy; -1 on an inner side
};
SLUICE_TYPE(JoinRecord, row, count, associations)

using types::RowBatch;
using types::RowKind;
using types::RowType;

const char* joinTypeName(FlinkJoinType t) {
  switch (t) {
    case FlinkJoinType::kInner: return "InnerJoin";
    case FlinkJoinType::kLeft: return "LeftOuterJoin";
    case FlinkJoinType::kRight: return "RightOuterJoin";
    case FlinkJoinType::kFull: return "FullOuterJoin";
    case FlinkJoinType::kSemi: return "LeftSemiJoin";
    case FlinkJoinType::kAnti: return "LeftAntiJoin";
  }
  return "?";
}

std::string JoinInputSideSpec::toString() const {
  if (!hasUniqueKey()) return "NoUniqueKey";
  return join_key_contains_unique_key ? "JoinKeyContainsUniqueKey" : "HasUniqueKey";
}

namespace {

using ValueView = runtime::state::ValueState<JoinRecord>;
using MapView = runtime::state::MapState<std::string, JoinRecord>;

enum class Shape { kJoinKeyContainsUniqueKey, kHasUniqueKey, kNoUniqueKey };

std::vector<int> allColumns(const RowType& t) {
  std::vector<int> out;
  for (size_t i = 0; i < t.size(); ++i) out.push_back(static_cast<int>(i));
  return out;
}

/// One copy of a stored row of the other side, read before any state change of this input row.
struct Stored {
  std::string row;      ///< KeyCodec bytes of the whole row
  int32_t associations;
  std::string map_key;  ///< its key in a map view (empty for a value view)
};

/// One input side: its codecs, its state view and whether it is an outer side.
struct Side {
  Side(const RowType& type, std::vector<int> join_keys, const JoinInputSideSpec& spec, bool is_outer,
       std::string state_name)
      : keys(type, std::move(join_keys)),
        rows(type, allColumns(type)),
        width(type.size()),
        outer(is_outer),
        name(std::move(state_name)) {
    if (!spec.hasUniqueKey()) {
      shape = Shape::kNoUniqueKey;
    } else if (spec.join_key_contains_unique_key) {
      shape = Shape::kJoinKeyContainsUniqueKey;
    } else {
      shape = Shape::kHasUniqueKey;
      unique_key.emplace(type, spec.unique_key);
    }
  }

  void open(const runtime::OperatorContext& ctx, runtime::state::KeyedStateBackend& backend, int64_t ttl_ms) {
    if (shape == Shape::kJoinKeyContainsUniqueKey) {
      value = &backend.getValueState(runtime::state::ValueStateDescriptor<JoinRecord>{name});
    } else {
      map = &backend.getMapState(runtime::state::MapStateDescriptor<std::string, JoinRecord>{name});
    }
    if (ttl_ms <= 0) return;
    retention = std::make_unique<StateRetention>(ttl_ms, name);
    retention->open(ctx, backend, [this] {
      if (value != nullptr) value->clear();
      else map->clear();
    });
  }

  /// Retention: drops the current key's rows when they expired (before they are read).
  void expireIfDue(int64_t now) {
    if (retention) retention->expireIfDue(now);
  }
  /// Retention: this side's rows of the current key changed at `now`; `write` false when a row was only
  /// removed (the rows left were not written, so their time to live stays).
  void written(int64_t now, bool write = true) {
    if (!retention) return;
    const bool any = value != nullptr ? value->value() != nullptr : map->entries() != nullptr;
    if (!any) retention->forget();
    else if (write) retention->touch(now);
  }

  /// Every stored copy of the current join key, in byte order of the map keys (deterministic on both
  /// backends).
  void records(std::vector<Stored>& out) {
    out.clear();
    if (value != nullptr) {
      if (const JoinRecord* r = value->value()) out.push_back({r->row, r->associations, {}});
      return;
    }
    MapView::Entries* m = map->entries();
    if (m == nullptr) return;
    std::vector<std::pair<const std::string*, const JoinRecord*>> sorted;
    sorted.reserve(m->size());
    for (const auto& [k, r] : *m) sorted.emplace_back(&k, &r);
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return *a.first < *b.first; });
    for (const auto& [k, r] : sorted) {
      const std::string& row = shape == Shape::kNoUniqueKey ? *k : r->row;
      for (int32_t c = 0; c < r->count; ++c) out.push_back({row, r->associations, *k});
    }
  }

  /// A row with the same unique key is stored (Flink's hasRecord/getRecord; always false without one).
  bool hasUniqueKeyRecord(const std::string& uk) { return shape == Shape::kHasUniqueKey && map->contains(uk); }

  void add(const std::string& row, const std::string& uk, int32_t associations) {
    switch (shape) {
      case Shape::kJoinKeyContainsUniqueKey: value->update(JoinRecord{row, 1, associations}); return;
      case Shape::kHasUniqueKey: map->put(uk, JoinRecord{row, 1, associations}); return;
      case Shape::kNoUniqueKey:
        if (JoinRecord* r = map->get(row)) {
          ++r->count;
          r->associations = associations;
        } else {
          map->put(row, JoinRecord{{}, 1, associations});
        }
        return;
    }
  }

  void retract(const std::string& row, const std::string& uk) {
    switch (shape) {
      case Shape::kJoinKeyContainsUniqueKey: value->clear(); return;
      case Shape::kHasUniqueKey: map->remove(uk); return;
      case Shape::kNoUniqueKey:
        if (JoinRecord* r = map->get(row)) {
          if (r->count > 1) --r->count;
          else map->remove(row);
        }
        return;
    }
  }

  void setAssociations(const Stored& s, int32_t n) {
    if (value != nullptr) {
      if (JoinRecord* r = value->value()) r->associations = n;
      return;
    }
    if (JoinRecord* r = map->get(s.map_key)) r->associations = n;
  }

  /// Checks restored records (untrusted bytes).
  void checkRestored(const runtime::state::StreamOperatorStateContext& sc) {
    auto bad = [&](int32_t group, const std::string& what) {
      internal::rethrowRestoreError(sc, name, group, InputError(what));
    };
    auto checkKey = [&](std::string_view key, int32_t group) {
      if (!keys.isValid(key)) bad(group, "a join key does not decode");
    };
    if (value != nullptr) {
      value->forEachKey([&](std::string_view key, int32_t group, std::string_view, JoinRecord& r) {
        checkKey(key, group);
        if (!rows.isValid(r.row)) bad(group, fmt::format("a row does not decode as {} columns", width));
      });
      return;
    }
    map->forEachKey([&](std::string_view key, int32_t group, std::string_view, MapView::Entries& m) {
      checkKey(key, group);
      for (const auto& [k, r] : m) {
        const std::string& row = shape == Shape::kNoUniqueKey ? k : r.row;
        if (!rows.isValid(row)) bad(group, fmt::format("a row does not decode as {} columns", width));
        if (shape == Shape::kHasUniqueKey && !unique_key->isValid(k)) bad(group, "a unique key does not decode");
        if (r.count < 1) bad(group, fmt::format("a row count of {}", r.count));
      }
    });
  }

  agg::KeyCodec keys;
  agg::KeyCodec rows;
  std::optional<agg::KeyCodec> unique_key;
  size_t width;
  bool outer;
  std::string name;
  std::unique_ptr<StateRetention> retention;  ///< table.exec.state.ttl > 0
  Shape shape = Shape::kNoUniqueKey;
  ValueView* value = nullptr;
  MapView* map = nullptr;
};

void checkSpec(const RowType& left, const RowType& right, const JoinSpec& spec) {
  SLUICE_USER_CHECK(!spec.left_keys.empty(), "a streaming join needs equi-join keys");
  SLUICE_USER_CHECK(spec.left_keys.size() == spec.right_keys.size(), "join keys: {} left, {} right",
                    spec.left_keys.size(), spec.right_keys.size());
  auto inRange = [](const std::vector<int>& cols, const RowType& t, const char* what) {
    for (int c : cols)
      SLUICE_USER_CHECK(c >= 0 && static_cast<size_t>(c) < t.size(), "{} column {} out of range (row of {})", what, c,
                        t.size());
  };
  inRange(spec.left_keys, left, "left join key");
  inRange(spec.right_keys, right, "right join key");
  inRange(spec.left_spec.unique_key, left, "left unique key");
  inRange(spec.right_spec.unique_key, right, "right unique key");
  if (spec.non_equi_condition)
    SLUICE_USER_CHECK(spec.non_equi_condition->type.id == types::TypeId::kBoolean,
                      "join condition must be BOOLEAN, is {}", spec.non_equi_condition->type.toString());
}

}  // namespace

struct StreamingJoinOperator::Impl {
  Impl(const RowType& left_type, const RowType& right_type, JoinSpec s)
      : spec(std::move(s)),
        left(left_type, spec.left_keys, spec.left_spec, spec.leftIsOuter() || spec.isSemiOrAnti(), "left-records"),
        right(right_type, spec.right_keys, spec.right_spec, spec.rightIsOuter(), "right-records"),
        output_type(outputType(left_type, right_type, spec.type)) {
    if (spec.non_equi_condition) {
      condition.emplace(spec.non_equi_condition);
      for (const auto& t : left_type.types) pair_type.types.push_back(t);
      for (const auto& t : right_type.types) pair_type.types.push_back(t);
      pair_type.names.assign(pair_type.types.size(), "");
    }
  }

  void process(RowBatch& batch, bool input_is_left);
  /// StreamingSemiAntiJoinOperator.processElement1 / processElement2.
  void processSemiAnti(RowBatch& batch, bool input_is_left);
  /// One row of an inner or outer join (StreamingJoinOperator.processElement), the current key set.
  void processRow(const RowBatch& batch, size_t row, bool input_is_left, RowKind kind, Side& self, Side& other,
                  RowBatch& out);
  /// The stored copies of the other side matching row `row` of `batch` (same join key, not NULL, and the
  /// non-equi condition TRUE).
  void associated(const RowBatch& batch, size_t row, bool input_is_left, Side& other, std::vector<Stored>& out);
  /// Appends [input row + other] (other = nullptr: the other side NULL) in left/right order.
  void emit(const RowBatch& batch, size_t row, bool input_is_left, const Side& other, const Stored* match,
            RowKind kind, RowBatch& out) const;
  /// Appends [NULLs + stored other row] (the input side padded).
  void emitPaddedOther(bool input_is_left, const Side& other, const Stored& match, RowBatch& out) const;

  JoinSpec spec;
  Side left;
  Side right;
  RowType output_type;
  std::optional<ExprEvaluator> condition;
  RowType pair_type;
  std::unique_ptr<runtime::state::StreamOperatorStateContext> own_state;
  runtime::state::KeyedStateBackend* backend = nullptr;
  runtime::Output* output = nullptr;
  // Reused buffers.
  std::vector<uint64_t> hashes;
  std::string key_buf, row_buf, uk_buf;
  std::vector<Stored> candidates, matches;
  std::vector<uint32_t> selected;
  EvalScratch scratch;
};

RowType StreamingJoinOperator::outputType(const RowType& left, const RowType& right, FlinkJoinType type) {
  if (type == FlinkJoinType::kSemi || type == FlinkJoinType::kAnti) return left;
  RowType out;
  const bool pad_left = type == FlinkJoinType::kRight || type == FlinkJoinType::kFull;
  const bool pad_right = type == FlinkJoinType::kLeft || type == FlinkJoinType::kFull;
  for (size_t i = 0; i < left.size(); ++i) {
    out.names.push_back(left.names[i]);
    out.types.push_back(pad_left ? left.types[i].withNullable(true) : left.types[i]);
  }
  for (size_t i = 0; i < right.size(); ++i) {
    out.names.push_back(right.names[i]);
    out.types.push_back(pad_right ? right.types[i].withNullable(true) : right.types[i]);
  }
  return out;
}

StreamingJoinOperator::StreamingJoinOperator(RowType left_type, RowType right_type, JoinSpec spec) {
  checkSpec(left_type, right_type, spec);
  impl_ = std::make_unique<Impl>(left_type, right_type, std::move(spec));
}

StreamingJoinOperator::~StreamingJoinOperator() = default;

size_t StreamingJoinOperator::numKeys(bool left) const {
  const Side& s = left ? impl_->left : impl_->right;
  if (s.value != nullptr) return s.value->size();
  return s.map != nullptr ? s.map->size() : 0;
}

void StreamingJoinOperator::open(const runtime::OperatorContext& ctx, runtime::Output* output) {
  StreamOperator::open(ctx, output);
  Impl& s = *impl_;
  auto& sc = internal::stateContextOf(ctx_, s.own_state);
  s.backend = &sc.keyedStateBackend();
  s.output = output_;
  s.left.open(ctx_, *s.backend, s.spec.state_ttl_ms);
  s.right.open(ctx_, *s.backend, s.spec.state_ttl_ms);
  if (!sc.isRestored()) return;
  s.left.checkRestored(sc);
  s.right.checkRestored(sc);
}

void StreamingJoinOperator::processBatch(RowBatch&& batch) { impl_->process(batch, true); }
void StreamingJoinOperator::processBatch2(RowBatch&& batch) { impl_->process(batch, false); }

void StreamingJoinOperator::Impl::associated(const RowBatch& batch, size_t row, bool input_is_left, Side& other,
                                             std::vector<Stored>& out) {
  out.clear();
  const Side& self = input_is_left ? left : right;
  // JoinConditionWithNullFilters: a NULL in an equi-join key matches nothing (the other side's rows of
  // this key group carry the same NULL).
  for (int k : self.keys.keyColumns())
    if (batch.column(static_cast<size_t>(k)).isNull(row)) return;
  other.records(candidates);
  if (candidates.empty()) return;
  if (!condition) {
    out.swap(candidates);
    return;
  }
  RowBatch pairs(pair_type);
  const size_t input_first = input_is_left ? 0 : left.width;
  const size_t other_first = input_is_left ? left.width : 0;
  for (const Stored& c : candidates) {
    for (size_t i = 0; i < self.width; ++i) pairs.column(input_first + i).appendFrom(batch.column(i), row);
    other.rows.decodeAppend(c.row, pairs, other_first);
    pairs.kinds().push_back(RowKind::kInsert);
  }
  condition->evaluateFilter(pairs, selected, &scratch);
  for (uint32_t i : selected) out.push_back(std::move(candidates[i]));
}

void StreamingJoinOperator::Impl::emit(const RowBatch& batch, size_t row, bool input_is_left, const Side& other,
                                       const Stored* match, RowKind kind, RowBatch& out) const {
  const Side& self = input_is_left ? left : right;
  const size_t input_first = input_is_left ? 0 : left.width;
  const size_t other_first = input_is_left ? left.width : 0;
  for (size_t i = 0; i < self.width; ++i) out.column(input_first + i).appendFrom(batch.column(i), row);
  if (match != nullptr) {
    other.rows.decodeAppend(match->row, out, other_first);
  } else {
    for (size_t i = 0; i < other.width; ++i) out.column(other_first + i).appendNull();
  }
  out.kinds().push_back(kind);
}

void StreamingJoinOperator::Impl::emitPaddedOther(bool input_is_left, const Side& other, const Stored& match,
                                                  RowBatch& out) const {
  const Side& self = input_is_left ? left : right;
  const size_t input_first = input_is_left ? 0 : left.width;
  const size_t other_first = input_is_left ? left.width : 0;
  for (size_t i = 0; i < self.width; ++i) out.column(input_first + i).appendNull();
  other.rows.decodeAppend(match.row, out, other_first);
}

void StreamingJoinOperator::Impl::processSemiAnti(RowBatch& batch, bool input_is_left) {
  const bool anti = spec.type == FlinkJoinType::kAnti;
  Side& self = input_is_left ? left : right;
  Side& other = input_is_left ? right : left;
  RowBatch out(output_type);
  runtime::hashKeys(batch, self.keys.keyColumns(), hashes);
  const int64_t now = self.retention ? self.retention->now() : 0;
  for (size_t row = 0; row < batch.numRows(); ++row) {
    const RowKind kind = batch.kind(row);
    const bool accumulate = types::isAccumulate(kind);
    self.keys.encode(batch, row, key_buf);
    backend->setCurrentKey(key_buf, internal::keyGroupOf(hashes[row], *backend));
    self.expireIfDue(now);
    other.expireIfDue(now);
    self.rows.encode(batch, row, row_buf);
    if (self.unique_key) self.unique_key->encode(batch, row, uk_buf);
    associated(batch, row, input_is_left, other, matches);
    if (input_is_left) {
      // A left row passes with its own kind when it has a match (semi) or none (anti).
      if (matches.empty() == anti) out.appendRow(batch, row, kind);
      if (accumulate) self.add(row_buf, uk_buf, static_cast<int32_t>(matches.size()));
      else self.retract(row_buf, uk_buf);
      self.written(now, accumulate);
      continue;
    }
    if (accumulate) self.add(row_buf, uk_buf, -1);
    else self.retract(row_buf, uk_buf);
    self.written(now, accumulate);
    // Updating the left rows' association counts writes them (Flink's OnCreateAndWrite).
    if (!matches.empty()) other.written(now);
    for (const Stored& m : matches) {
      // The first match of a left row lets it pass (semi, with the right row's kind) or retracts it
      // (anti, -D); losing the last match does the opposite (semi: the right row's kind, anti: +I).
      if (accumulate && m.associations == 0) {
        other.rows.decodeAppend(m.row, out, 0);
        out.kinds().push_back(anti ? RowKind::kDelete : kind);
      } else if (!accumulate && m.associations == 1) {
        other.rows.decodeAppend(m.row, out, 0);
        out.kinds().push_back(anti ? RowKind::kInsert : kind);
      }
      other.setAssociations(m, m.associations + (accumulate ? 1 : -1));
    }
  }
  if (!out.empty()) output->collect(std::move(out));
}

void StreamingJoinOperator::Impl::process(RowBatch& batch, bool input_is_left) {
  SLUICE_CHECK(backend != nullptr, "StreamingJoin used before open()");
  if (spec.isSemiOrAnti()) {
    processSemiAnti(batch, input_is_left);
    return;
  }
  Side& self = input_is_left ? left : right;
  Side& other = input_is_left ? right : left;
  RowBatch out(output_type);
  runtime::hashKeys(batch, self.keys.keyColumns(), hashes);
  const int64_t now = self.retention ? self.retention->now() : 0;
  for (size_t row = 0; row < batch.numRows(); ++row) {
    const RowKind kind = batch.kind(row);
    self.keys.encode(batch, row, key_buf);
    backend->setCurrentKey(key_buf, internal::keyGroupOf(hashes[row], *backend));
    if (self.retention) {
      self.expireIfDue(now);
      other.expireIfDue(now);
    }
    processRow(batch, row, input_is_left, kind, self, other, out);
    if (self.retention) {
      self.written(now, types::isAccumulate(kind));
      // An outer side's association counts changed with the matches (a write, Flink's OnCreateAndWrite).
      if (other.outer && !matches.empty()) other.written(now);
    }
  }
  if (!out.empty()) output->collect(std::move(out));
}

void StreamingJoinOperator::Impl::processRow(const RowBatch& batch, size_t row, bool input_is_left, RowKind kind,
                                             Side& self, Side& other, RowBatch& out) {
  auto paddedOther = [&](const Stored& m, RowKind k) {
    emitPaddedOther(input_is_left, other, m, out);
    out.kinds().push_back(k);
  };
  self.rows.encode(batch, row, row_buf);
  if (self.unique_key) self.unique_key->encode(batch, row, uk_buf);
  if (types::isAccumulate(kind)) {
    // Flink's isAdditionalMatch, read before this row changes the state.
    const bool additional = other.outer && self.shape != Shape::kJoinKeyContainsUniqueKey &&
                            !self.hasUniqueKeyRecord(uk_buf);
    if (!self.outer) self.add(row_buf, uk_buf, -1);
    associated(batch, row, input_is_left, other, matches);
    if (self.outer && matches.empty()) {
      emit(batch, row, input_is_left, other, nullptr, RowKind::kInsert, out);
      self.add(row_buf, uk_buf, 0);
      return;
    }
    for (const Stored& m : matches) {
      if (other.outer) {
        if (m.associations == 0) paddedOther(m, RowKind::kDelete);
        if (m.associations == 0 || additional) other.setAssociations(m, m.associations + 1);
      }
      // An inner join forwards the input's kind; a join with an outer side sends +I / -D only.
      const RowKind out_kind = self.outer || other.outer ? RowKind::kInsert : kind;
      emit(batch, row, input_is_left, other, &m, out_kind, out);
    }
    if (self.outer) self.add(row_buf, uk_buf, static_cast<int32_t>(matches.size()));
  } else {
    self.retract(row_buf, uk_buf);
    associated(batch, row, input_is_left, other, matches);
    if (matches.empty()) {
      if (self.outer) emit(batch, row, input_is_left, other, nullptr, RowKind::kDelete, out);
      return;
    }
    for (const Stored& m : matches) {
      emit(batch, row, input_is_left, other, &m, self.outer ? RowKind::kDelete : kind, out);
      if (other.outer) {
        if (m.associations == 1) paddedOther(m, RowKind::kInsert);
        other.setAssociations(m, m.associations - 1);
      }
    }
  }
}

namespace {

// Both inputs sorted by their join keys in BATCH mode and during backlog (FLIP-327).
class StreamingJoinFactory : public runtime::KeyedTwoInputRowOperatorFactory {
 public:
  StreamingJoinFactory(RowType left, RowType right, JoinSpec spec, int first_edges)
      : KeyedTwoInputRowOperatorFactory(left, right, spec.left_keys, spec.right_keys, first_edges),
        left_(std::move(left)), right_(std::move(right)), spec_(std::move(spec)) {}
  std::unique_ptr<runtime::StreamOperator> createOperator() const override {
    return std::make_unique<StreamingJoinOperator>(left_, right_, spec_);
  }

 private:
  RowType left_;
  RowType right_;
  JoinSpec spec_;
};

}  // namespace

std::shared_ptr<const runtime::StreamOperatorFactory> makeStreamingJoinFactory(RowType left_type, RowType right_type,
                                                                               JoinSpec spec,
                                                                               int num_first_input_edges) {
  StreamingJoinOperator probe(left_type, right_type, spec);
  return std::make_shared<StreamingJoinFactory>(std::move(left_type), std::move(right_type), std::move(spec),
                                                num_first_input_edges);
}

}  // namespace sluice::table
