// OVER windows, WINDOW clauses and ORDER BY items (Calcite's windowSpecification grammar, as Flink
// accepts it).
#include <fmt/format.h>

#include "table/sql/parser_internal.h"

namespace sluice::table::sql {

OrderItem Parser::parseOrderItem() {
  OrderItem item;
  item.pos = peek().pos;
  item.expr = parseExpr();
  if (acceptWord("DESC")) {
    item.descending = true;
  } else {
    acceptWord("ASC");
  }
  if (peek().isWord("NULLS")) {
    next();
    if (acceptWord("FIRST")) {
      item.nulls_first = true;
    } else if (acceptWord("LAST")) {
      item.nulls_first = false;
    } else {
      unexpected(peek(), {"FIRST", "LAST"});
    }
  }
  return item;
}

FrameBound Parser::parseFrameBound() {
  FrameBound b;
  b.pos = peek().pos;
  if (peek().isWord("UNBOUNDED")) {
    next();
    if (acceptWord("PRECEDING")) {
      b.kind = FrameBoundKind::kUnboundedPreceding;
    } else if (acceptWord("FOLLOWING")) {
      b.kind = FrameBoundKind::kUnboundedFollowing;
    } else {
      unexpected(peek(), {"PRECEDING", "FOLLOWING"});
    }
    return b;
  }
  if (peek().isWord("CURRENT") && peek(1).isWord("ROW")) {
    next();
    next();
    b.kind = FrameBoundKind::kCurrentRow;
    return b;
  }
  b.offset = std::shared_ptr<const Expr>(parseAdditive().release());
  if (acceptWord("PRECEDING")) {
    b.kind = FrameBoundKind::kPreceding;
  } else if (acceptWord("FOLLOWING")) {
    b.kind = FrameBoundKind::kFollowing;
  } else {
    unexpected(peek(), {"PRECEDING", "FOLLOWING"});
  }
  return b;
}

void Parser::parseWindowSpecBody(OverWindow& w) {
  auto clauseWord = [&](const Token& t) {
    return t.isWord("PARTITION") || t.isWord("ORDER") || t.isWord("ROWS") || t.isWord("RANGE");
  };
  if (isIdentifier(peek()) && !clauseWord(peek())) {
    w.ref_pos = peek().pos;
    w.ref = next().text;
  }
  if (peek().isWord("PARTITION")) {
    next();
    expectWord("BY");
    do {
      w.partition_by.push_back(parseExpr());
    } while (acceptSymbol(","));
  }
  if (peek().isWord("ORDER")) {
    next();
    expectWord("BY");
    do {
      w.order_by.push_back(parseOrderItem());
    } while (acceptSymbol(","));
  }
  if (peek().isWord("ROWS") || peek().isWord("RANGE")) {
    w.frame_pos = peek().pos;
    w.has_frame = true;
    w.rows = next().upper == "ROWS";
    if (acceptWord("BETWEEN")) {
      w.lower = parseFrameBound();
      expectWord("AND");
      w.upper = parseFrameBound();
    } else {
      w.lower = parseFrameBound();
      w.upper.kind = FrameBoundKind::kCurrentRow;
      w.upper.pos = w.lower.pos;
    }
    if (w.lower.kind == FrameBoundKind::kUnboundedFollowing)
      fail("UNBOUNDED FOLLOWING cannot be specified for the lower frame boundary", w.lower.pos);
    if (w.upper.kind == FrameBoundKind::kUnboundedPreceding)
      fail("UNBOUNDED PRECEDING cannot be specified for the upper frame boundary", w.upper.pos);
  }
  if (peek().isWord("EXCLUDE")) unsupported(peek(), "EXCLUDE in a window frame");
  if (!peek().isSymbol(")")) {
    std::vector<std::string> expected;
    if (w.partition_by.empty() && w.order_by.empty() && !w.has_frame) expected.push_back("PARTITION");
    if (w.order_by.empty() && !w.has_frame) expected.push_back("ORDER");
    if (!w.has_frame) {
      expected.push_back("ROWS");
      expected.push_back("RANGE");
    }
    if (!w.partition_by.empty() || !w.order_by.empty()) expected.push_back(",");
    expected.push_back(")");
    unexpected(peek(), expected);
  }
}

ExprPtr Parser::parseOver(ExprPtr call) {
  const Token& over_tok = next();  // OVER
  auto w = std::make_shared<OverWindow>();
  w->pos = over_tok.pos;
  if (isIdentifier(peek())) {
    w->ref_pos = peek().pos;
    w->ref = next().text;
  } else {
    expectSymbol("(");
    parseWindowSpecBody(*w);
    expectSymbol(")");
  }
  auto e = std::make_unique<Expr>();
  e->kind = ExprKind::kOver;
  e->pos = call->pos;
  e->children.push_back(std::move(call));
  e->over = std::move(w);
  return e;
}

void Parser::parseWindowClause(SelectStmt& s) {
  expectWord("WINDOW");
  do {
    const SourcePos name_pos = peek().pos;
    std::string name = parseIdentifier("a window name");
    for (const auto& nw : s.windows)
      if (nw.name == name) fail(fmt::format("Duplicate window names are not allowed: '{}'", name), name_pos);
    expectWord("AS");
    auto w = std::make_shared<OverWindow>();
    w->pos = name_pos;
    expectSymbol("(");
    parseWindowSpecBody(*w);
    expectSymbol(")");
    s.windows.push_back(NamedWindow{std::move(name), std::move(w)});
  } while (acceptSymbol(","));
  // A window may extend one defined before it; then OVER w in the items is replaced by its window.
  for (size_t i = 0; i < s.windows.size(); ++i) {
    if (!s.windows[i].window->ref.empty()) s.windows[i].window = resolveWindow(*s.windows[i].window, s, i);
  }
  for (auto& item : s.select_list)
    if (item.expr) resolveWindowRefs(*item.expr, s);
}

std::shared_ptr<const OverWindow> Parser::resolveWindow(const OverWindow& w, const SelectStmt& s,
                                                        size_t visible) const {
  const OverWindow* base = nullptr;
  for (size_t i = 0; i < visible && i < s.windows.size(); ++i)
    if (s.windows[i].name == w.ref) base = s.windows[i].window.get();
  if (base == nullptr) fail(fmt::format("Window '{}' not found", w.ref), w.ref_pos);
  // SQL's window refinement: the referenced window gives the PARTITION BY (the referencing one may not
  // have its own) and its ORDER BY unless this one adds one; a referenced window must not have a frame.
  if (!w.partition_by.empty())
    fail(fmt::format("PARTITION BY not allowed with existing window reference '{}'", w.ref), w.partition_by[0]->pos);
  if (!w.order_by.empty() && !base->order_by.empty())
    fail(fmt::format("ORDER BY not allowed in both base and referenced windows ('{}')", w.ref), w.order_by[0].pos);
  if (base->has_frame && (w.has_frame || !w.order_by.empty()))
    fail(fmt::format("Referenced window '{}' cannot have a frame when it is refined", w.ref), w.ref_pos);
  auto out = base->clone();
  out->pos = w.pos;
  out->ref.clear();
  if (!w.order_by.empty()) {
    out->order_by.clear();
    for (const auto& o : w.order_by) out->order_by.push_back(o.clone());
  }
  if (w.has_frame) {
    out->has_frame = true;
    out->rows = w.rows;
    out->frame_pos = w.frame_pos;
    out->lower = w.lower;
    out->upper = w.upper;
  }
  return out;
}

void Parser::resolveWindowRefs(Expr& e, const SelectStmt& s) const {
  if (e.kind == ExprKind::kOver && e.over && !e.over->ref.empty()) e.over = resolveWindow(*e.over, s, s.windows.size());
  for (auto& c : e.children)
    if (c) resolveWindowRefs(*c, s);
}

void Parser::checkNoWindowRefs(const Expr& e) const {
  if (e.kind == ExprKind::kOver && e.over && !e.over->ref.empty())
    fail(fmt::format("Window '{}' not found", e.over->ref), e.over->ref_pos);
  for (const auto& c : e.children)
    if (c) checkNoWindowRefs(*c);
}

}  // namespace sluice::table::sql
