// LIKE and string function kernels. Strings are UTF-8; lengths and positions count code points
// (Flink's BinaryStringData.numChars); UPPER/LOWER map ASCII in place and other text as Java does.
#include <algorithm>
#include <cstring>
#include <locale.h>
#include <wctype.h>
#include <string>

#include <fmt/format.h>

#include "common/error.h"
#include "common/utf8.h"
#include "table/functions/evaluator_internal.h"
#include "table/functions/utf8.h"

namespace sluice::table::internal {

using types::Column;
using types::LogicalType;
using types::TypeId;

namespace {

/// One element of a compiled LIKE pattern.
struct LikeToken {
  enum Kind { kLiteral, kOne, kAny } kind;
  char c;
};

/// A compiled LIKE pattern (SqlLikeUtils semantics: '%' any sequence, '_' one character, the escape
/// character makes the next '%', '_' or escape literal).
class LikeMatcher {
 public:
  LikeMatcher(std::string_view pattern, char escape, bool has_escape) {
    for (size_t i = 0; i < pattern.size(); ++i) {
      const char c = pattern[i];
      if (has_escape && c == escape) {
        if (i + 1 >= pattern.size() || (pattern[i + 1] != '%' && pattern[i + 1] != '_' && pattern[i + 1] != escape))
          throw UserError(fmt::format("Invalid escape sequence '{}' in LIKE pattern '{}'", pattern.substr(i, 2), pattern));
        tokens_.push_back({LikeToken::kLiteral, pattern[++i]});
      } else if (c == '%') {
        if (tokens_.empty() || tokens_.back().kind != LikeToken::kAny) tokens_.push_back({LikeToken::kAny, 0});
      } else if (c == '_') {
        tokens_.push_back({LikeToken::kOne, 0});
      } else {
        tokens_.push_back({LikeToken::kLiteral, c});
      }
    }
    classify();
  }

  bool match(std::string_view s) const {
    switch (shape_) {
      case Shape::kExact: return s == literal_;
      case Shape::kPrefix: return s.size() >= literal_.size() && s.compare(0, literal_.size(), literal_) == 0;
      case Shape::kSuffix: return s.size() >= literal_.size() && s.compare(s.size() - literal_.size(), literal_.size(), literal_) == 0;
      case Shape::kContains: return s.find(literal_) != std::string_view::npos;
      case Shape::kGeneral: break;
    }
    return general(s);
  }

 private:
  enum class Shape { kExact, kPrefix, kSuffix, kContains, kGeneral };

  void classify() {
    const size_t n = tokens_.size();
    size_t first = 0, last = n;
    const bool lead_any = n > 0 && tokens_[0].kind == LikeToken::kAny;
    const bool trail_any = n > 0 && tokens_[n - 1].kind == LikeToken::kAny;
    if (lead_any) first = 1;
    if (trail_any && n > first) last = n - 1;
    for (size_t i = first; i < last; ++i) {
      if (tokens_[i].kind != LikeToken::kLiteral) return;  // general
      literal_ += tokens_[i].c;
    }
    if (!lead_any && !trail_any) shape_ = Shape::kExact;
    else if (!lead_any) shape_ = Shape::kPrefix;
    else if (!trail_any) shape_ = Shape::kSuffix;
    else shape_ = Shape::kContains;
  }

  /// Greedy wildcard matching with backtracking to the last '%'.
  bool general(std::string_view s) const {
    size_t si = 0, ti = 0;
    size_t star_t = std::string::npos, star_s = 0;
    while (si < s.size()) {
      if (ti < tokens_.size() && tokens_[ti].kind == LikeToken::kAny) {
        star_t = ti++;
        star_s = si;
      } else if (ti < tokens_.size() && tokens_[ti].kind == LikeToken::kOne) {
        ++ti;
        ++si;
        while (si < s.size() && !isLead(s[si])) ++si;
      } else if (ti < tokens_.size() && tokens_[ti].c == s[si]) {
        ++ti;
        ++si;
      } else if (star_t != std::string::npos) {
        ti = star_t + 1;
        si = ++star_s;
        while (si < s.size() && !isLead(s[si])) si = ++star_s;
      } else {
        return false;
      }
    }
    while (ti < tokens_.size() && tokens_[ti].kind == LikeToken::kAny) ++ti;
    return ti == tokens_.size();
  }

  std::vector<LikeToken> tokens_;
  Shape shape_ = Shape::kGeneral;
  std::string literal_;
};

class LikeNode final : public Node {
 public:
  LikeNode(NodePtr value, NodePtr pattern, char escape, bool has_escape, int reg)
      : Node(LogicalType::boolean(value->type().nullable || pattern->type().nullable), reg, value->mayThrow() || pattern->mayThrow()),
        value_(std::move(value)), pattern_(std::move(pattern)), escape_(escape), has_escape_(has_escape) {
    if (pattern_->isConst()) {
      EvalContext ctx;
      ctx.rows = 1;
      const Column& p = pattern_->eval(ctx, nullptr);
      if (!p.isNull(0)) matcher_ = std::make_unique<LikeMatcher>(p.getString(0), escape_, has_escape_);
    }
  }

  const Column& eval(EvalContext& ctx, const uint8_t* active) const override {
    const size_t n = ctx.rows;
    const Column& v = value_->eval(ctx, active);
    const Column& p = pattern_->eval(ctx, active);
    Column& out = prepare(ctx);
    const bool vc = value_->isConst(), pc = pattern_->isConst();
    andValidity(out.validity().data(), v, vc, p, pc, n);
    const uint8_t* ov = out.validity().data();
    int64_t* o = out.longs().data();
    if (matcher_) {
      for (size_t i = 0; i < n; ++i) o[i] = ov[i] && matcher_->match(v.getString(at(vc, i)));
      return out;
    }
    for (size_t i = 0; i < n; ++i) {
      if (!ov[i]) continue;
      LikeMatcher m(p.getString(at(pc, i)), escape_, has_escape_);
      o[i] = m.match(v.getString(at(vc, i)));
    }
    return out;
  }

 private:
  NodePtr value_, pattern_;
  char escape_;
  bool has_escape_;
  std::unique_ptr<LikeMatcher> matcher_;
};

bool inSet(std::string_view set, std::string_view cp) { return set.find(cp) != std::string_view::npos; }

/// Code point starting at byte i.
std::string_view cpAt(std::string_view s, size_t i) {
  size_t j = i + 1;
  while (j < s.size() && !isLead(s[j])) ++j;
  return s.substr(i, j - i);
}

std::string_view trimString(std::string_view s, std::string_view chars, bool leading, bool trailing) {
  if (leading) {
    size_t i = 0;
    while (i < s.size()) {
      const std::string_view cp = cpAt(s, i);
      if (!inSet(chars, cp)) break;
      i += cp.size();
    }
    s.remove_prefix(i);
  }
  if (trailing) {
    while (!s.empty()) {
      size_t i = s.size() - 1;
      while (i > 0 && !isLead(s[i])) --i;
      if (!inSet(chars, s.substr(i))) break;
      s.remove_suffix(s.size() - i);
    }
  }
  return s;
}

/// Flink's LPAD/RPAD (SqlFunctionUtils.lpad/rpad), in code points: NULL for a negative length or an
/// empty pad; the result is exactly `len` characters (the base is truncated when longer).
bool pad(std::string_view base, int64_t len, std::string_view padding, bool left, std::string& out) {
  if (len < 0 || padding.empty()) return false;
  out.clear();
  const size_t n = static_cast<size_t>(len);
  const size_t base_cps = codePoints(base);
  const size_t pad_cps = codePoints(padding);
  const size_t fill = n > base_cps ? n - base_cps : 0;
  auto appendFill = [&]() {
    size_t done = 0;
    while (done < fill) {
      const size_t take = std::min(pad_cps, fill - done);
      out.append(padding.substr(0, byteOffset(padding, take)));
      done += take;
    }
  };
  if (left) appendFill();
  out.append(base.substr(0, byteOffset(base, std::min(n, base_cps))));
  if (!left) appendFill();
  return true;
}

/// True when the column's text is all ASCII, so characters are bytes (checked once per batch).
bool isAscii(const Column& c) {
  uint8_t any = 0;
  for (char ch : c.arena()) any |= static_cast<uint8_t>(ch);
  return (any & 0x80) == 0;
}

/// An argument of a string function: its column and whether it is one constant row.
struct Arg {
  const Column* col;
  bool is_const;
  std::string_view str(size_t i) const { return col->getString(is_const ? 0 : i); }
  int64_t lng(size_t i) const { return col->longs()[is_const ? 0 : i]; }
};

class StringFunctionNode final : public Node {
 public:
  StringFunctionNode(ScalarOp op, LogicalType t, std::vector<NodePtr> args, int reg)
      : Node(t, reg, anyThrows(args)), op_(op), args_(std::move(args)) {}

  const Column& eval(EvalContext& ctx, const uint8_t* active) const override {
    const size_t n = ctx.rows;
    std::vector<Arg> a;
    a.reserve(args_.size());
    for (const auto& node : args_) a.push_back({&node->eval(ctx, active), node->isConst()});
    Column& out = prepare(ctx);
    uint8_t* ov = out.validity().data();
    copyValidity(ov, *a[0].col, a[0].is_const, n);
    for (size_t k = 1; k < a.size(); ++k) {
      const uint8_t* v = a[k].col->validity().data();
      if (a[k].is_const) {
        if (!v[0]) std::memset(ov, 0, n);
      } else {
        for (size_t i = 0; i < n; ++i) ov[i] &= v[i];
      }
    }
    const bool ascii = isAscii(*a[0].col);
    std::string& arena = out.arena();
    std::vector<types::StringRef>& refs = out.strings();
    switch (op_) {
      case ScalarOp::kCharLength: {
        int64_t* o = out.longs().data();
        for (size_t i = 0; i < n; ++i) {
          const std::string_view s = a[0].str(i);
          o[i] = ov[i] ? static_cast<int64_t>(ascii ? s.size() : codePoints(s)) : 0;
        }
        break;
      }
      case ScalarOp::kUpper: case ScalarOp::kLower: {
        const bool upper = op_ == ScalarOp::kUpper;
        if (!ascii) {
          std::string changed;
          for (size_t i = 0; i < n; ++i) {
            if (!ov[i]) continue;
            changed.clear();
            changeCase(a[0].str(i), upper, changed);
            setString(out, i, changed);
          }
          break;
        }
        arena.reserve(a[0].col->arena().size());
        for (size_t i = 0; i < n; ++i) {
          if (!ov[i]) continue;
          const size_t at_byte = arena.size();
          setString(out, i, a[0].str(i));
          for (size_t j = at_byte; j < arena.size(); ++j) {
            char& c = arena[j];
            if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 32);
            else if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
          }
        }
        break;
      }
      case ScalarOp::kTrim: case ScalarOp::kLtrim: case ScalarOp::kRtrim:
        for (size_t i = 0; i < n; ++i) {
          if (!ov[i]) continue;
          const std::string_view chars = a.size() > 1 ? a[1].str(i) : std::string_view(" ");
          setString(out, i, trimString(a[0].str(i), chars, op_ != ScalarOp::kRtrim, op_ != ScalarOp::kLtrim));
        }
        break;
      case ScalarOp::kSubstring:
        arena.reserve(a[0].col->arena().size());
        for (size_t i = 0; i < n; ++i) {
          if (!ov[i]) continue;
          const std::string_view s = a[0].str(i);
          const int64_t pos = a[1].lng(i);
          const int64_t len = a.size() > 2 ? a[2].lng(i) : INT64_MAX;
          if (len < 0) { ov[i] = 0; continue; }  // BinaryStringDataUtil.substringSQL
          const int64_t chars = ascii ? static_cast<int64_t>(s.size()) : static_cast<int64_t>(codePoints(s));
          const int64_t start = pos > 0 ? pos - 1 : pos < 0 ? chars + pos : 0;
          if (start < 0 || start >= chars) { refs[i] = {static_cast<uint32_t>(arena.size()), 0}; continue; }
          const int64_t end = chars - start < len ? chars : start + len;
          const size_t b0 = ascii ? static_cast<size_t>(start) : byteOffset(s, static_cast<size_t>(start));
          const size_t b1 = ascii ? static_cast<size_t>(end) : byteOffset(s, static_cast<size_t>(end));
          setString(out, i, s.substr(b0, b1 - b0));
        }
        break;
      case ScalarOp::kLpad: case ScalarOp::kRpad: {
        const bool left = op_ == ScalarOp::kLpad;
        std::string buf;
        for (size_t i = 0; i < n; ++i) {
          if (!ov[i]) continue;
          const std::string_view base = a[0].str(i), padding = a[2].str(i);
          const int64_t len = a[1].lng(i);
          if (ascii && padding.size() == 1 && len >= 0) {
            // Common case (LPAD(x, 2, '0')): ASCII base, one pad character; written in place.
            const size_t target = static_cast<size_t>(len);
            const size_t keep = std::min(target, base.size());
            const uint32_t offset = static_cast<uint32_t>(arena.size());
            if (!left) arena.append(base.data(), keep);
            arena.append(target - keep, padding[0]);
            if (left) arena.append(base.data(), keep);
            refs[i] = {offset, static_cast<uint32_t>(target)};
            continue;
          }
          if (pad(base, len, padding, left, buf)) setString(out, i, buf);
          else ov[i] = 0;
        }
        break;
      }
      case ScalarOp::kConcat: {
        size_t bytes = 0;
        for (const Arg& x : a) bytes += x.is_const ? x.col->arena().size() * n : x.col->arena().size();
        arena.reserve(bytes);
        for (size_t i = 0; i < n; ++i) {
          if (!ov[i]) continue;
          const uint32_t offset = static_cast<uint32_t>(arena.size());
          for (const Arg& x : a) {
            const std::string_view part = x.str(i);
            arena.append(part.data(), part.size());
          }
          refs[i] = {offset, static_cast<uint32_t>(arena.size() - offset)};
        }
        break;
      }
      default:
        SLUICE_CHECK(false, "not a string function: {}", scalarOpName(op_));
    }
    return out;
  }

 private:
  static bool anyThrows(const std::vector<NodePtr>& a) {
    for (const auto& x : a) if (x->mayThrow()) return true;
    return false;
  }
  ScalarOp op_;
  std::vector<NodePtr> args_;
};

}  // namespace

NodePtr makeLikeNode(NodePtr value, NodePtr pattern, char escape, bool has_escape, int reg) {
  return std::make_unique<LikeNode>(std::move(value), std::move(pattern), escape, has_escape, reg);
}

NodePtr makeStringFunctionNode(ScalarOp op, const LogicalType& type, std::vector<NodePtr> args, int reg) {
  return std::make_unique<StringFunctionNode>(op, type, std::move(args), reg);
}

namespace {
/// The C.UTF-8 locale for towupper_l / towlower_l (in libc-bin, which every Debian system has).
locale_t utf8Locale() {
  static const locale_t loc = [] {
    locale_t l = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
    SLUICE_CHECK(l != static_cast<locale_t>(nullptr), "the C.UTF-8 locale is missing (UPPER/LOWER of non-ASCII text)");
    return l;
  }();
  return loc;
}
}  // namespace

void changeCase(std::string_view s, bool upper, std::string& out) {
  const locale_t loc = utf8Locale();
  for (size_t i = 0; i < s.size();) {
    uint32_t cp = 0;
    if (!decodeUtf8(s, i, cp)) {
      out.push_back(s[i++]);
      continue;
    }
    if (upper && cp == U'\u00DF') {
      out += "SS";  // Java's full mapping of the sharp s
      continue;
    }
    const wint_t mapped = upper ? towupper_l(static_cast<wint_t>(cp), loc) : towlower_l(static_cast<wint_t>(cp), loc);
    appendUtf8(out, static_cast<uint32_t>(mapped));
  }
}

}  // namespace sluice::table::internal
