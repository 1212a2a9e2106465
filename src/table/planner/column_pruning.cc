#include "table/planner/column_pruning.h"

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

Pruned prune(const RelNodePtr& rel, const std::vector<bool>& needed);

Pruned pruneInputAll(const RelNodePtr& input) {
  return prune(input, std::vector<bool>(input->row_type.size(), true));
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

Pruned prune(const RelNodePtr& rel, const std::vector<bool>& needed) {
  switch (rel->kind) {
    case RelKind::kSink: {
      auto copy = std::make_shared<RelNode>(*rel);
      copy->inputs = {pruneInputAll(rel->inputs[0]).rel};
      return identity(copy);
    }
    case RelKind::kUnion: {
      auto copy = std::make_shared<RelNode>(*rel);
      for (auto& in : copy->inputs) in = pruneInputAll(in).rel;
      return identity(copy);
    }
    case RelKind::kCalc: {
      std::vector<bool> keep = needed;
      bool any = false;
      for (bool k : keep) any = any || k;
      if (!any && !keep.empty()) keep[0] = true;  // a batch still needs one column to carry its rows
      std::vector<bool> in_needed(rel->inputs[0]->row_type.size(), false);
      for (size_t i = 0; i < keep.size(); ++i)
        if (keep[i]) markRefs(rel->projections[i], in_needed);
      if (rel->condition) markRefs(rel->condition, in_needed);
      Pruned child = prune(rel->inputs[0], in_needed);
      auto copy = std::make_shared<RelNode>(*rel);
      copy->inputs = {child.rel};
      copy->projections.clear();
      for (size_t i = 0; i < keep.size(); ++i)
        if (keep[i]) copy->projections.push_back(remap(rel->projections[i], child.mapping));
      if (rel->condition) copy->condition = remap(rel->condition, child.mapping);
      Pruned out;
      out.rel = copy;
      keepColumns(*rel, *copy, keep, out.mapping);
      return out;
    }
    case RelKind::kWatermarkAssigner: {
      // Output = the input's columns but the last (the watermark value).
      std::vector<bool> in_needed(rel->inputs[0]->row_type.size(), false);
      for (size_t i = 0; i < needed.size(); ++i) in_needed[i] = needed[i];
      in_needed[static_cast<size_t>(rel->rowtime_index)] = true;
      in_needed[static_cast<size_t>(rel->watermark_index)] = true;
      SLUICE_CHECK(static_cast<size_t>(rel->watermark_index) + 1 == in_needed.size(), "watermark column must be last");
      Pruned child = prune(rel->inputs[0], in_needed);
      auto copy = std::make_shared<RelNode>(*rel);
      copy->inputs = {child.rel};
      copy->rowtime_index = child.mapping[static_cast<size_t>(rel->rowtime_index)];
      copy->watermark_index = child.mapping[static_cast<size_t>(rel->watermark_index)];
      std::vector<bool> keep(in_needed.begin(), in_needed.end() - 1);
      Pruned out;
      out.rel = copy;
      keepColumns(*rel, *copy, keep, out.mapping);
      if (copy->watermark_expr) copy->watermark_expr = remapExplainedWatermark(copy->watermark_expr, out.mapping);
      return out;
    }
    case RelKind::kGroupAggregate:
    case RelKind::kWindowAggregate: {
      std::vector<bool> in_needed(rel->inputs[0]->row_type.size(), false);
      for (int k : rel->group_keys) in_needed[static_cast<size_t>(k)] = true;
      for (const auto& a : rel->aggregates)
        if (a.arg_index >= 0) in_needed[static_cast<size_t>(a.arg_index)] = true;
      if (rel->kind == RelKind::kWindowAggregate) in_needed[static_cast<size_t>(rel->window.time_index)] = true;
      Pruned child = prune(rel->inputs[0], in_needed);
      auto copy = std::make_shared<RelNode>(*rel);
      copy->inputs = {child.rel};
      for (auto& k : copy->group_keys) k = child.mapping[static_cast<size_t>(k)];
      for (auto& a : copy->aggregates)
        if (a.arg_index >= 0) a.arg_index = child.mapping[static_cast<size_t>(a.arg_index)];
      if (rel->kind == RelKind::kWindowAggregate)
        copy->window.time_index = child.mapping[static_cast<size_t>(rel->window.time_index)];
      return identity(copy);
    }
    case RelKind::kChangelogNormalize:
      // Keeps and compares whole rows of the source: nothing below it is pruned.
      return identity(rel);
    case RelKind::kTableSourceScan: {
      std::vector<int> fields;
      for (size_t i = 0; i < needed.size(); ++i)
        if (needed[i]) fields.push_back(static_cast<int>(i));
      if (fields.empty()) fields.push_back(0);
      // A changelog source keeps every column: its primary key indexes the physical row (FLIP-367 hash).
      if (rel->producesUpdates()) return identity(rel);
      if (fields.size() == needed.size() || !rel->source->applyProjection(fields)) return identity(rel);
      auto copy = std::make_shared<RelNode>(*rel);
      std::vector<bool> keep(needed.size(), false);
      for (int f : fields) keep[static_cast<size_t>(f)] = true;
      Pruned out;
      out.rel = copy;
      keepColumns(*rel, *copy, keep, out.mapping);
      if (copy->watermark_expr) copy->watermark_expr = remapExplainedWatermark(copy->watermark_expr, out.mapping);
      return out;
    }
  }
  return identity(rel);
}

}  // namespace

RelNodePtr pruneColumns(const RelNodePtr& root) { return pruneInputAll(root).rel; }

}  // namespace sluice::table
