// OVER windows and ORDER BY items of the syntax tree (ast.h).
#include <fmt/format.h>

#include "table/sql/ast.h"

namespace sluice::table::sql {

OrderItem OrderItem::clone() const {
  OrderItem out;
  out.pos = pos;
  out.expr = expr ? expr->clone() : nullptr;
  out.descending = descending;
  out.nulls_first = nulls_first;
  return out;
}

std::string OrderItem::toString() const {
  std::string out = expr ? expr->toString() : "?";
  if (descending) out += " DESC";
  if (nulls_first) out += *nulls_first ? " NULLS FIRST" : " NULLS LAST";
  return out;
}

std::shared_ptr<OverWindow> OverWindow::clone() const {
  auto out = std::make_shared<OverWindow>();
  out->pos = pos;
  out->ref = ref;
  out->ref_pos = ref_pos;
  for (const auto& p : partition_by) out->partition_by.push_back(p->clone());
  for (const auto& o : order_by) out->order_by.push_back(o.clone());
  out->has_frame = has_frame;
  out->rows = rows;
  out->frame_pos = frame_pos;
  out->lower = lower;
  out->upper = upper;
  return out;
}

namespace {
std::string boundText(const FrameBound& b) {
  switch (b.kind) {
    case FrameBoundKind::kUnboundedPreceding: return "UNBOUNDED PRECEDING";
    case FrameBoundKind::kPreceding: return (b.offset ? b.offset->toString() : "?") + " PRECEDING";
    case FrameBoundKind::kCurrentRow: return "CURRENT ROW";
    case FrameBoundKind::kFollowing: return (b.offset ? b.offset->toString() : "?") + " FOLLOWING";
    case FrameBoundKind::kUnboundedFollowing: return "UNBOUNDED FOLLOWING";
  }
  return "?";
}
}  // namespace

std::string OverWindow::toString() const {
  std::vector<std::string> parts;
  if (!ref.empty()) parts.push_back(ref);
  if (!partition_by.empty()) {
    std::string p = "PARTITION BY ";
    for (size_t i = 0; i < partition_by.size(); ++i) p += (i ? ", " : "") + partition_by[i]->toString();
    parts.push_back(p);
  }
  if (!order_by.empty()) {
    std::string o = "ORDER BY ";
    for (size_t i = 0; i < order_by.size(); ++i) o += (i ? ", " : "") + order_by[i].toString();
    parts.push_back(o);
  }
  if (has_frame)
    parts.push_back(fmt::format("{} BETWEEN {} AND {}", rows ? "ROWS" : "RANGE", boundText(lower), boundText(upper)));
  std::string out = "(";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? " " : "") + parts[i];
  return out + ")";
}

}  // namespace sluice::table::sql
