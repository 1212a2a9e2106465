#include "table/planner/column_pruning.h"

#include <map>

#include "common/error.h"

namespace sluice::table {

namespace {

/// A pruned node and where each old output column went (-1: dropped).
struct Pruned {
  RelNodePtr rel;
  std::vector<int> mapping;
};

void markRefs(const ExprPtr& e, std::vector<bool>& used) {
  if (e->kind == ExprKind::kInputRef) {
    used[static_cast<size_t>(e->input_index)] = true;
  } else if (e->kind == ExprKind::kCall) {
    for (const auto& a : e->args) markRefs(a, used);
  }
}

ExprPtr remap(const ExprPtr& e, const std::vector<int>& mapping) {
  if (e->kind == ExprKind::kInputRef) {
    int to = mapping[static_cast<size_t>(e->input_index)];
    SLUICE_CHECK(to >= 0, "pruned a column that is still referenced");
    if (to == e->input_index) return e;
    return makeInputRef(to, e->type);
  }
  if (e->kind != ExprKind::kCall) return e;
  auto n = std::make_shared<Expr>(*e);
  for (auto& a : n->args) a = remap(a, mapping);
  return n;
}

Pruned identity(const RelNodePtr& rel) {
  Pruned p{rel, {}};
  for (size_t i = 0; i < rel->row_type.size(); ++i) p.mapping.push_back(static_cast<int>(i));
  return p;
}

// Keeps the needed columns of `rel`'s own row type (names, types, rowtime flags) in order.
void keepColumns(const RelNode& from, RelNode& to, const std::vector<bool>& keep, std::vector<int>& mapping) {
  to.row_type = {};
  to.rowtime.clear();
  mapping.assign(from.row_type.size(), -1);
  for (size_t i = 0; i < from.row_type.size(); ++i) {
    if (!keep[i]) continue;
    mapping[i] = static_cast<int>(to.row_type.size());
    to.row_type.names.push_back(from.row_type.names[i]);
    to.row_type.types.push_back(from.row_type.types[i]);
    to.rowtime.push_back(from.rowtime[i]);
  }
}

// The watermark expression shown by explain, over the columns that survived pruning (`mapping`: old
// column -> new, -1 when dropped); null when it reads a dropped column.
ExprPtr remapExplainedWatermark(const ExprPtr& wm, const std::vector<int>& mapping) {
  std::vector<bool> reads(mapping.size(), false);
  markRefs(wm, reads);
  for (size_t i = 0; i < reads.size(); ++i)
    if (reads[i] && mapping[i] < 0) return nullptr;
  return remap(wm, mapping);
}

bool all(const std::vector<bool>& v) {
  for (bool b : v)
    if (!b) return false;
  return true;
}

/// Prunes a DAG of plans: a node read by several consumers (a reused sub-plan) keeps the union of the
/// columns they read, and each consumer remaps its references through the node's new layout.
class ColumnPruner {
 public:
  std::vector<RelNodePtr> run(const std::vector<RelNodePtr>& roots) {
    for (const auto& r : roots) countConsumers(r);
    std::vector<const RelNode*> ready;
    for (const auto& r : roots) {
      Node& n = nodes_.at(r.get());
      n.needed.assign(r->row_type.size(), true);
      if (n.pending == 0 && !n.decided) {
        n.decided = true;
        ready.push_back(r.get());
      }
    }
    // Consumers before producers: a node's columns are final once every consumer has asked for its share.
    while (!ready.empty()) {
      const RelNode* rel = ready.back();
      ready.pop_back();
      decide(*rel);
      Node& n = nodes_.at(rel);
      for (size_t i = 0; i < rel->inputs.size(); ++i) {
        Node& in = nodes_.at(rel->inputs[i].get());
        for (size_t c = 0; c < in.needed.size(); ++c) in.needed[c] = in.needed[c] || n.in_needed[i][c];
        if (--in.pending == 0) {
          in.decided = true;
          ready.push_back(rel->inputs[i].get());
        }
      }
    }
    std::vector<RelNodePtr> out;
    for (const auto& r : roots) out.push_back(build(r).rel);
    return out;
  }

 private:
  struct Node {
    int pending = 0;  ///< consumer edges not yet decided
    bool decided = false;
    std::vector<bool> needed;                  ///< output columns some consumer reads
    std::vector<bool> keep;                    ///< output columns the pruned node keeps
    std::vector<std::vector<bool>> in_needed;  ///< per input: the columns this node reads
  };

  void countConsumers(const RelNodePtr& rel) {
    auto [it, inserted] = nodes_.try_emplace(rel.get());
    if (!inserted) return;
    it->second.needed.assign(rel->row_type.size(), false);
    for (const auto& in : rel->inputs) {
      countConsumers(in);
      ++nodes_.at(in.get()).pending;
    }
  }

  static std::vector<bool> none(const RelNodePtr& rel) { return std::vector<bool>(rel->row_type.size(), false); }
  static std::vector<bool> every(const RelNodePtr& rel) { return std::vector<bool>(rel->row_type.size(), true); }

  // Which columns `rel` keeps and which columns of each input it reads, from what its consumers need.
  void decide(const RelNode& rel) {
    Node& n = nodes_.at(&rel);
    const std::vector<bool>& needed = n.needed;
    n.keep.assign(needed.size(), true);
    n.in_needed.clear();
    switch (rel.kind) {
      case RelKind::kSink:
      case RelKind::kUnion:
      case RelKind::kJoin:  // stores and emits whole input rows; its specs index them
      case RelKind::kIntervalJoin:
      case RelKind::kWindowJoin:
      case RelKind::kLookupJoin:
      case RelKind::kTemporalJoin:
      case RelKind::kChangelogNormalize:  // keeps and compares whole rows of the source
      case RelKind::kRank:                // keep, compare and emit whole input rows
      case RelKind::kDeduplicate:
      case RelKind::kWindowRank:
      case RelKind::kWindowDeduplicate:
      case RelKind::kReplicateRows:
      case RelKind::kCorrelate:  // its arguments read the input; whole input rows are part of its output
      case RelKind::kWindowTableFunction:  // its window reads the time column; the rest passes through
        for (const auto& in : rel.inputs) n.in_needed.push_back(every(in));
        return;
      case RelKind::kCalc: {
        n.keep = needed;
        bool any = false;
        for (bool k : n.keep) any = any || k;
        if (!any && !n.keep.empty()) n.keep[0] = true;  // a batch still needs one column to carry its rows
        std::vector<bool> in_needed = none(rel.inputs[0]);
        for (size_t i = 0; i < n.keep.size(); ++i)
          if (n.keep[i]) markRefs(rel.projections[i], in_needed);
        if (rel.condition) markRefs(rel.condition, in_needed);
        n.in_needed.push_back(std::move(in_needed));
        return;
      }
      case RelKind::kWatermarkAssigner: {
        // Output = the input's columns but the last (the watermark value).
        std::vector<bool> in_needed = none(rel.inputs[0]);
        for (size_t i = 0; i < needed.size(); ++i) in_needed[i] = needed[i];
        in_needed[static_cast<size_t>(rel.rowtime_index)] = true;
        in_needed[static_cast<size_t>(rel.watermark_index)] = true;
        SLUICE_CHECK(static_cast<size_t>(rel.watermark_index) + 1 == in_needed.size(), "watermark column must be last");
        n.keep.assign(in_needed.begin(), in_needed.end() - 1);
        n.in_needed.push_back(std::move(in_needed));
        return;
      }
      case RelKind::kOverAggregate: {
        // Emits its input rows whole: the input keeps what consumers read and what the window reads.
        std::vector<bool> in_needed = none(rel.inputs[0]);
        for (size_t i = 0; i < in_needed.size(); ++i) in_needed[i] = needed[i];
        for (int k : rel.over.partition_keys) in_needed[static_cast<size_t>(k)] = true;
        in_needed[static_cast<size_t>(rel.over.time_column)] = true;
        for (const auto& a : rel.over.calls) {
          if (a.arg_index >= 0) in_needed[static_cast<size_t>(a.arg_index)] = true;
          for (int k : a.user_args) in_needed[static_cast<size_t>(k)] = true;
        }
        n.in_needed.push_back(std::move(in_needed));
        return;
      }
      case RelKind::kGroupAggregate:
      case RelKind::kWindowAggregate: {
        std::vector<bool> in_needed = none(rel.inputs[0]);
        for (int k : rel.group_keys) in_needed[static_cast<size_t>(k)] = true;
        for (const auto& a : rel.aggregates)
          if (a.arg_index >= 0) in_needed[static_cast<size_t>(a.arg_index)] = true;
        for (const auto& a : rel.aggregates)
          if (a.filter_arg >= 0) in_needed[static_cast<size_t>(a.filter_arg)] = true;
        for (const auto& a : rel.aggregates)
          for (int k : a.user_args) in_needed[static_cast<size_t>(k)] = true;
        if (rel.kind == RelKind::kWindowAggregate) in_needed[static_cast<size_t>(rel.window.time_index)] = true;
        n.in_needed.push_back(std::move(in_needed));
        return;
      }
      case RelKind::kTableSourceScan: {
        // A changelog source keeps every column: its primary key indexes the physical row (FLIP-367 hash).
        if (rel.producesUpdates() || all(needed)) return;
        bool any = false;
        for (bool k : needed) any = any || k;
        n.keep = needed;
        if (!any && !n.keep.empty()) n.keep[0] = true;
        return;
      }
    }
  }

  // The pruned copy of `rel` (memoized: a shared node stays one shared node).
  const Pruned& build(const RelNodePtr& rel) {
    auto done = built_.find(rel.get());
    if (done != built_.end()) return done->second;
    Pruned out = buildNode(rel);
    return built_.emplace(rel.get(), std::move(out)).first->second;
  }

  Pruned buildNode(const RelNodePtr& rel) {
    const Node& n = nodes_.at(rel.get());
    switch (rel->kind) {
      case RelKind::kSink:
      case RelKind::kUnion:
      case RelKind::kJoin:
      case RelKind::kIntervalJoin:
      case RelKind::kWindowJoin:
      case RelKind::kLookupJoin:
      case RelKind::kTemporalJoin: {
        auto copy = std::make_shared<RelNode>(*rel);
        for (auto& in : copy->inputs) in = build(in).rel;
        return identity(copy);
      }
      case RelKind::kChangelogNormalize:
      case RelKind::kRank:
      case RelKind::kDeduplicate:
      case RelKind::kWindowRank:
      case RelKind::kWindowDeduplicate:
      case RelKind::kReplicateRows:
      case RelKind::kCorrelate:
      case RelKind::kWindowTableFunction: {
        const Pruned& child = build(rel->inputs[0]);
        if (child.rel == rel->inputs[0]) return identity(rel);
        auto copy = std::make_shared<RelNode>(*rel);
        copy->inputs = {child.rel};
        return identity(copy);
      }
      case RelKind::kCalc: {
        const Pruned& child = build(rel->inputs[0]);
        auto copy = std::make_shared<RelNode>(*rel);
        copy->inputs = {child.rel};
        copy->projections.clear();
        for (size_t i = 0; i < n.keep.size(); ++i)
          if (n.keep[i]) copy->projections.push_back(remap(rel->projections[i], child.mapping));
        if (rel->condition) copy->condition = remap(rel->condition, child.mapping);
        Pruned out;
        out.rel = copy;
        keepColumns(*rel, *copy, n.keep, out.mapping);
        return out;
      }
      case RelKind::kWatermarkAssigner: {
        const Pruned& child = build(rel->inputs[0]);
        auto copy = std::make_shared<RelNode>(*rel);
        copy->inputs = {child.rel};
        copy->rowtime_index = child.mapping[static_cast<size_t>(rel->rowtime_index)];
        copy->watermark_index = child.mapping[static_cast<size_t>(rel->watermark_index)];
        Pruned out;
        out.rel = copy;
        keepColumns(*rel, *copy, n.keep, out.mapping);
        if (copy->watermark_expr) copy->watermark_expr = remapExplainedWatermark(copy->watermark_expr, out.mapping);
        return out;
      }
      case RelKind::kOverAggregate: {
        const Pruned& child = build(rel->inputs[0]);
        auto copy = std::make_shared<RelNode>(*rel);
        copy->inputs = {child.rel};
        for (auto& k : copy->over.partition_keys) k = child.mapping[static_cast<size_t>(k)];
        copy->over.time_column = child.mapping[static_cast<size_t>(rel->over.time_column)];
        for (auto& a : copy->over.calls) {
          if (a.arg_index >= 0) a.arg_index = child.mapping[static_cast<size_t>(a.arg_index)];
          for (int& k : a.user_args) k = child.mapping[static_cast<size_t>(k)];
        }
        // Output = the pruned input's columns, then the aggregates.
        const size_t in_width = rel->inputs[0]->row_type.size();
        Pruned out;
        out.rel = copy;
        out.mapping.assign(rel->row_type.size(), -1);
        copy->row_type = child.rel->row_type;
        copy->rowtime = child.rel->rowtime;
        for (size_t i = 0; i < in_width; ++i) out.mapping[i] = child.mapping[i];
        for (size_t i = in_width; i < rel->row_type.size(); ++i) {
          out.mapping[i] = static_cast<int>(copy->row_type.size());
          copy->row_type.names.push_back(rel->row_type.names[i]);
          copy->row_type.types.push_back(rel->row_type.types[i]);
          copy->rowtime.push_back(false);
        }
        return out;
      }
      case RelKind::kGroupAggregate:
      case RelKind::kWindowAggregate: {
        const Pruned& child = build(rel->inputs[0]);
        auto copy = std::make_shared<RelNode>(*rel);
        copy->inputs = {child.rel};
        for (auto& k : copy->group_keys) k = child.mapping[static_cast<size_t>(k)];
        for (auto& a : copy->aggregates)
          if (a.arg_index >= 0) a.arg_index = child.mapping[static_cast<size_t>(a.arg_index)];
        for (auto& a : copy->aggregates)
          if (a.filter_arg >= 0) a.filter_arg = child.mapping[static_cast<size_t>(a.filter_arg)];
        for (auto& a : copy->aggregates)
          for (int& k : a.user_args) k = child.mapping[static_cast<size_t>(k)];
        if (rel->kind == RelKind::kWindowAggregate) {
          copy->window.time_index = child.mapping[static_cast<size_t>(rel->window.time_index)];
          for (auto& k : copy->window.partition_keys) k = child.mapping[static_cast<size_t>(k)];
        }
        return identity(copy);
      }
      case RelKind::kTableSourceScan: {
        if (all(n.keep)) return identity(rel);
        std::vector<int> fields;
        for (size_t i = 0; i < n.keep.size(); ++i)
          if (n.keep[i]) fields.push_back(static_cast<int>(i));
        // Metadata columns follow the physical ones; a source with them gets no projection push-down.
        if (!rel->nested_paths.empty() && fields.back() >= static_cast<int>(rel->nested_paths.size()))
          return identity(rel);
        std::vector<std::vector<int>> paths;
        for (int f : fields) paths.push_back(rel->nested_paths.empty() ? std::vector<int>{} : rel->nested_paths[static_cast<size_t>(f)]);
        const bool applied = rel->nested_paths.empty() ? rel->source->applyProjection(fields)
                                                       : rel->source->applyNestedProjection(paths);
        if (!applied) return identity(rel);
        auto copy = std::make_shared<RelNode>(*rel);
        if (!rel->nested_paths.empty()) copy->nested_paths = std::move(paths);
        Pruned out;
        out.rel = copy;
        keepColumns(*rel, *copy, n.keep, out.mapping);
        if (copy->watermark_expr) copy->watermark_expr = remapExplainedWatermark(copy->watermark_expr, out.mapping);
        return out;
      }
    }
    return identity(rel);
  }

  std::map<const RelNode*, Node> nodes_;
  std::map<const RelNode*, Pruned> built_;
};

}  // namespace

std::vector<RelNodePtr> pruneColumns(const std::vector<RelNodePtr>& roots) { return ColumnPruner().run(roots); }

RelNodePtr pruneColumns(const RelNodePtr& root) { return pruneColumns(std::vector<RelNodePtr>{root})[0]; }

}  // namespace sluice::table
