// String, regex, hash and Base64 functions as row kernels, with the semantics of Flink's
// SqlFunctionUtils / BinaryStringData and Calcite's SqlFunctions (positions count code points).
// Regular expressions use PCRE2, the closest library to java.util.regex (lookaround, backreferences,
// possessive quantifiers); Java's ASCII POSIX classes (\p{Lower}, ...) are rewritten for it. Digests use
// OpenSSL's libcrypto.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <openssl/evp.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include <fmt/format.h>

#include "common/error.h"
#include "table/functions/builtins.h"
#include "table/functions/utf8.h"
#include "types/value_format.h"

namespace sluice::table::internal {

using types::Column;
using types::LogicalType;

namespace {

/// java.util.regex's ASCII POSIX classes (\p{Lower}, \P{Digit}, ...), which PCRE2 does not know, as
/// ranges usable inside a character class.
const char* javaPosixClass(std::string_view name) {
  static const std::pair<const char*, const char*> kClasses[] = {
      {"Lower", "a-z"}, {"Upper", "A-Z"}, {"ASCII", "\\x00-\\x7F"}, {"Alpha", "a-zA-Z"}, {"Digit", "0-9"},
      {"Alnum", "a-zA-Z0-9"}, {"Punct", "!-\\/:-@\\[-`{-~"}, {"Graph", "a-zA-Z0-9!-\\/:-@\\[-`{-~"},
      {"Print", "\\x20a-zA-Z0-9!-\\/:-@\\[-`{-~"}, {"Blank", " \\t"}, {"Cntrl", "\\x00-\\x1F\\x7F"},
      {"XDigit", "0-9a-fA-F"}, {"Space", " \\t\\n\\x0B\\f\\r"}};
  for (const auto& [n, ranges] : kClasses)
    if (name == n) return ranges;
  return nullptr;
}

/// Rewrites the Java-only POSIX classes of `pattern` into PCRE2 syntax; everything else is kept.
std::string translateJavaRegex(std::string_view p) {
  std::string out;
  out.reserve(p.size());
  int depth = 0;  // inside [...] (Java allows nesting)
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char n = p[i + 1];
      if ((n == 'p' || n == 'P') && i + 2 < p.size() && p[i + 2] == '{') {
        const size_t close = p.find('}', i + 3);
        const char* ranges = close == std::string_view::npos ? nullptr : javaPosixClass(p.substr(i + 3, close - i - 3));
        if (ranges && (depth == 0 || n == 'p')) {
          if (depth > 0) out += ranges;
          else out += std::string(n == 'P' ? "[^" : "[") + ranges + "]";
          i = close;
          continue;
        }
      }
      out += c;
      out += n;
      ++i;
      continue;
    }
    if (c == '[') ++depth;
    else if (c == ']' && depth > 0) --depth;
    out += c;
  }
  return out;
}

/// A compiled pattern; matching is thread-safe (match data is per call).
class Regex {
 public:
  /// Null when the pattern does not compile (Flink's functions then give NULL or FALSE).
  static std::shared_ptr<const Regex> compile(std::string_view java_pattern) {
    const std::string pattern = translateJavaRegex(java_pattern);
    int err = 0;
    PCRE2_SIZE offset = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                     PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &err, &offset, nullptr);
    if (!code) return nullptr;
    return std::shared_ptr<const Regex>(new Regex(code));
  }
  ~Regex() { pcre2_code_free(code_); }
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  /// Finds the first match at or after byte 0; `groups` gets [start, end) byte pairs (PCRE2_UNSET
  /// for a group that did not take part). False when there is none.
  bool find(std::string_view s, std::vector<size_t>& groups) const {
    std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> md(
        pcre2_match_data_create_from_pattern(code_, nullptr), &pcre2_match_data_free);
    const int rc = pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), 0, 0, md.get(), nullptr);
    if (rc < 0) return false;
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
    const uint32_t pairs = pcre2_get_ovector_count(md.get());
    groups.assign(ov, ov + 2 * pairs);
    return true;
  }

  uint32_t groupCount() const {
    uint32_t n = 0;
    pcre2_pattern_info(code_, PCRE2_INFO_CAPTURECOUNT, &n);
    return n;
  }

  /// Every match replaced by `rep` taken literally (Matcher.quoteReplacement). False on a match error.
  bool replaceAll(std::string_view s, std::string_view rep, std::string& out) const {
    PCRE2_SIZE len = s.size() + rep.size() + 16;
    for (int attempt = 0; attempt < 2; ++attempt) {
      out.resize(len);
      const int rc = pcre2_substitute(
          code_, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), 0,
          PCRE2_SUBSTITUTE_GLOBAL | PCRE2_SUBSTITUTE_LITERAL | PCRE2_SUBSTITUTE_OVERFLOW_LENGTH, nullptr, nullptr,
          reinterpret_cast<PCRE2_SPTR>(rep.data()), rep.size(), reinterpret_cast<PCRE2_UCHAR*>(out.data()), &len);
      if (rc >= 0) {
        out.resize(len);
        return true;
      }
      if (rc != PCRE2_ERROR_NOMEMORY) return false;
    }
    return false;
  }

 private:
  explicit Regex(pcre2_code* code) : code_(code) {}
  pcre2_code* code_;
};

/// The pattern of argument `k`: compiled once when it is a constant, else per row.
class PatternArg {
 public:
  PatternArg(const NodePtr& node) {
    if (!node->isConst()) return;
    EvalContext ctx;
    ctx.rows = 1;
    const Column& c = node->eval(ctx, nullptr);
    constant_ = true;
    if (!c.isNull(0)) {
      text_ = std::string(c.getString(0));
      regex_ = Regex::compile(text_);
    }
  }
  std::shared_ptr<const Regex> get(std::string_view pattern) const {
    if (constant_) return regex_;
    return Regex::compile(pattern);
  }

 private:
  bool constant_ = false;
  std::string text_;
  std::shared_ptr<const Regex> regex_;
};

/// Index (in code points) of `seek` in `s` at or after code point `from`, or -1. An empty `seek`
/// is found at 0 whatever `from` is (BinaryStringData.indexOf).
int64_t indexOfCp(std::string_view s, std::string_view seek, int64_t from) {
  if (seek.empty()) return 0;
  const size_t start = byteOffset(s, static_cast<size_t>(std::max<int64_t>(from, 0)));
  const size_t at = s.find(seek, start);
  if (at == std::string_view::npos) return -1;
  return static_cast<int64_t>(codePoints(s.substr(0, at)));
}

std::string reverseCp(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t end = s.size();
  while (end > 0) {
    size_t begin = end - 1;
    while (begin > 0 && !isLead(s[begin])) --begin;
    out.append(s.substr(begin, end - begin));
    end = begin;
  }
  return out;
}

void appendUtf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

uint32_t firstCodePoint(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(s[i])); };
  const uint32_t c = b(0);
  if (c < 0x80 || s.size() < 2) return c;
  if (c < 0xE0) return ((c & 0x1F) << 6) | (b(1) & 0x3F);
  if (c < 0xF0 || s.size() < 4) return s.size() < 3 ? c : ((c & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
  return ((c & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
}

/// Lower-case hex of a digest (EncodingUtils.hex). Throws UserError for an unknown SHA-2 length.
std::string digestHex(const char* algorithm, std::string_view s) {
  const EVP_MD* md = EVP_get_digestbyname(algorithm);
  if (!md) throw InternalError(fmt::format("digest {} is not available", algorithm));
  unsigned char buf[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(s.data(), s.size(), buf, &len, md, nullptr) != 1)
    throw InternalError(fmt::format("digest {} failed", algorithm));
  std::string out;
  out.reserve(2 * len);
  static const char* const kHex = "0123456789abcdef";
  for (unsigned i = 0; i < len; ++i) {
    out += kHex[buf[i] >> 4];
    out += kHex[buf[i] & 15];
  }
  return out;
}

const char* shaName(int64_t bits) {
  switch (bits) {
    case 224: return "SHA224";
    case 256: return "SHA256";
    case 384: return "SHA384";
    case 512: return "SHA512";
    default: throw UserError(fmt::format("SHA2 supports hash lengths 224, 256, 384 and 512, not {}", bits));
  }
}

constexpr const char* kBase64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string toBase64(std::string_view s) {
  std::string out;
  out.reserve((s.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < s.size(); i += 3) {
    const uint32_t v = (static_cast<uint8_t>(s[i]) << 16) | (static_cast<uint8_t>(s[i + 1]) << 8) | static_cast<uint8_t>(s[i + 2]);
    for (int k = 18; k >= 0; k -= 6) out += kBase64[(v >> k) & 63];
  }
  if (i < s.size()) {
    uint32_t v = static_cast<uint8_t>(s[i]) << 16;
    if (i + 1 < s.size()) v |= static_cast<uint8_t>(s[i + 1]) << 8;
    out += kBase64[(v >> 18) & 63];
    out += kBase64[(v >> 12) & 63];
    out += i + 1 < s.size() ? kBase64[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

/// java.util.Base64's basic decoder: padding optional, any other character is an error.
bool fromBase64(std::string_view s, std::string& out) {
  out.clear();
  size_t end = s.size();
  if (end > 0 && s[end - 1] == '=') --end;
  if (end > 0 && s[end - 1] == '=') --end;
  if (end != s.size() && s.size() % 4 != 0) return false;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < end; ++i) {
    const char* p = std::strchr(kBase64, s[i]);
    if (!p || s[i] == 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(p - kBase64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xFF);
    }
  }
  return end % 4 != 1;
}

/// Calcite's SqlFunctions.initcap: ASCII letters and digits form words; the first letter of a word
/// is upper-cased, the others lower-cased.
std::string initcap(std::string_view s) {
  std::string out(s);
  bool start = true;
  for (char& c : out) {
    const bool digit = c >= '0' && c <= '9', upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z';
    if (start) {
      if (lower) c = static_cast<char>(c - 32);
      if (digit || upper || lower) start = false;
    } else if (upper) {
      c = static_cast<char>(c + 32);
    } else if (!digit && !lower) {
      start = true;
    }
  }
  return out;
}

/// StringUtils.splitByWholeSeparatorPreserveAllTokens(s, sep)[index], NULL beyond the end.
bool splitIndex(std::string_view s, std::string_view sep, int64_t index, std::string_view& out) {
  if (index < 0 || s.empty()) return false;
  std::vector<std::string_view> parts;
  if (sep.empty()) {
    // An empty separator splits on whitespace, keeping empty tokens.
    size_t b = 0;
    for (size_t i = 0; i <= s.size(); ++i) {
      if (i == s.size() || std::isspace(static_cast<unsigned char>(s[i]))) {
        parts.push_back(s.substr(b, i - b));
        b = i + 1;
      }
    }
  } else {
    size_t b = 0;
    for (;;) {
      const size_t at = s.find(sep, b);
      if (at == std::string_view::npos) {
        parts.push_back(s.substr(b));
        break;
      }
      parts.push_back(s.substr(b, at - b));
      b = at + sep.size();
    }
  }
  if (index >= static_cast<int64_t>(parts.size())) return false;
  out = parts[static_cast<size_t>(index)];
  return true;
}

/// SqlFunctionUtils.instr in code points.
int64_t instr(std::string_view s, std::string_view sub, int64_t start, int64_t nth) {
  if (nth <= 0) throw UserError(fmt::format("INSTR: nthAppearance must be positive, but is {}", nth));
  if (start == 0) return 0;
  if (start > 0) {
    int64_t from = start, index = 0;
    for (int64_t k = 0; k < nth; ++k) {
      index = indexOfCp(s, sub, from - 1) + 1;
      if (index == 0) return 0;
      from = index + 1;
    }
    return index;
  }
  const int64_t pos = instr(reverseCp(s), reverseCp(sub), -start, nth);
  if (pos == 0) return 0;
  return static_cast<int64_t>(codePoints(s)) + 2 - pos - static_cast<int64_t>(codePoints(sub));
}

std::string uuid4() {
  thread_local std::mt19937_64 gen{std::random_device{}()};
  uint64_t hi = gen(), lo = gen();
  hi = (hi & ~0xF000ULL) | 0x4000ULL;                       // version 4
  lo = (lo & ~(0xC000ULL << 48)) | (0x8000ULL << 48);       // IETF variant
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xFFFF, hi & 0xFFFF, lo >> 48,
                     lo & 0xFFFFFFFFFFFFULL);
}

/// SqlFunctionUtils.overlay in code points (a non-positive length drops the rest, as Flink's).
std::string overlay(std::string_view s, std::string_view r, int64_t start, int64_t len) {
  const int64_t n = static_cast<int64_t>(codePoints(s));
  if (start <= 0 || start > n) return std::string(s);
  std::string out(s.substr(0, byteOffset(s, static_cast<size_t>(start - 1))));
  out.append(r);
  if (start + len <= n && len > 0) out.append(s.substr(byteOffset(s, static_cast<size_t>(start - 1 + len))));
  return out;
}

/// java.net.URL's parts of "scheme://[userinfo@]host[:port][path][?query][#ref]" (SqlFunctionUtils.parseUrl).
/// False (NULL) for a URL of another shape, an unknown part, or a missing query / ref / user info.
bool parseUrl(std::string_view url, std::string_view part, std::optional<std::string_view> key, std::string& out) {
  const size_t colon = url.find("://");
  if (colon == std::string_view::npos || colon == 0) return false;
  for (size_t i = 0; i < colon; ++i) {
    const char c = url[i];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.')) return false;
  }
  std::string_view rest = url.substr(colon + 3);
  const size_t hash = rest.find('#');
  const std::optional<std::string_view> ref = hash == std::string_view::npos ? std::nullopt : std::optional(rest.substr(hash + 1));
  if (hash != std::string_view::npos) rest = rest.substr(0, hash);
  const size_t qm = rest.find('?');
  const std::optional<std::string_view> query = qm == std::string_view::npos ? std::nullopt : std::optional(rest.substr(qm + 1));
  if (qm != std::string_view::npos) rest = rest.substr(0, qm);
  const size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  const std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  const size_t at = authority.rfind('@');
  const std::optional<std::string_view> user = at == std::string_view::npos ? std::nullopt : std::optional(authority.substr(0, at));
  std::string_view host = at == std::string_view::npos ? authority : authority.substr(at + 1);
  const size_t port = host.rfind(':');
  if (port != std::string_view::npos && host.find(']', port) == std::string_view::npos) host = host.substr(0, port);
  if (key) {
    if (part != "QUERY" || !query) return false;
    // Pattern "(&|^)key=([^&]*)": the first parameter named `key`.
    for (size_t b = 0; b <= query->size();) {
      size_t e = query->find('&', b);
      if (e == std::string_view::npos) e = query->size();
      const std::string_view param = query->substr(b, e - b);
      if (param.size() > key->size() && param.substr(0, key->size()) == *key && param[key->size()] == '=') {
        out = std::string(param.substr(key->size() + 1));
        return true;
      }
      b = e + 1;
    }
    return false;
  }
  std::optional<std::string_view> r;
  if (part == "HOST") r = host;
  else if (part == "PATH") r = path;
  else if (part == "QUERY") r = query;
  else if (part == "REF") r = ref;
  else if (part == "PROTOCOL") r = url.substr(0, colon);
  else if (part == "AUTHORITY") r = authority;
  else if (part == "USERINFO") r = user;
  else if (part == "FILE") {
    out = std::string(path);
    if (query) out += "?" + std::string(*query);
    return true;
  }
  if (!r) return false;
  out = std::string(*r);
  return true;
}

RowFn textKernel(ScalarOp op, std::shared_ptr<PatternArg> pattern) {
  switch (op) {
    case ScalarOp::kReplace:
      // Java's String.replace: an empty target inserts the replacement around every character.
      return [](const RowArgs& a, Column& out, size_t i) {
        const std::string_view s = a.s(0), from = a.s(1), to = a.s(2);
        std::string r;
        if (from.empty()) {
          r.append(to);
          for (size_t b = 0; b < s.size();) {
            size_t e = b + 1;
            while (e < s.size() && !isLead(s[e])) ++e;
            r.append(s.substr(b, e - b));
            r.append(to);
            b = e;
          }
        } else {
          size_t b = 0;
          for (size_t at; (at = s.find(from, b)) != std::string_view::npos; b = at + from.size()) {
            r.append(s.substr(b, at - b));
            r.append(to);
          }
          r.append(s.substr(b));
        }
        setString(out, i, r);
        return true;
      };
    case ScalarOp::kRegexp:
      return [pattern](const RowArgs& a, Column& out, size_t i) {
        std::vector<size_t> g;
        const std::string_view re = a.s(1);
        const auto rx = re.empty() ? nullptr : pattern->get(re);
        out.longs()[i] = rx && rx->find(a.s(0), g);
        return true;
      };
    case ScalarOp::kRegexpExtract:
      return [pattern](const RowArgs& a, Column& out, size_t i) {
        const auto rx = pattern->get(a.s(1));
        const int64_t idx = a.size() > 2 ? a.l(2) : 0;
        std::vector<size_t> g;
        if (!rx || idx < 0 || idx > rx->groupCount() || !rx->find(a.s(0), g)) return false;
        const size_t k = static_cast<size_t>(idx) * 2;
        if (k + 1 >= g.size() || g[k] == PCRE2_UNSET) return false;
        setString(out, i, a.s(0).substr(g[k], g[k + 1] - g[k]));
        return true;
      };
    case ScalarOp::kRegexpReplace:
      return [pattern](const RowArgs& a, Column& out, size_t i) {
        const auto rx = pattern->get(a.s(1));
        std::string r;
        if (!rx || !rx->replaceAll(a.s(0), a.s(2), r)) return false;
        setString(out, i, r);
        return true;
      };
    case ScalarOp::kSplitIndex:
      return [](const RowArgs& a, Column& out, size_t i) {
        std::string_view part;
        if (!splitIndex(a.s(0), a.s(1), a.l(2), part)) return false;
        setString(out, i, part);
        return true;
      };
    case ScalarOp::kLeft: case ScalarOp::kRight: {
      const bool left = op == ScalarOp::kLeft;
      return [left](const RowArgs& a, Column& out, size_t i) {
        const std::string_view s = a.s(0);
        const int64_t n = a.l(1);
        const size_t cps = codePoints(s);
        const size_t take = n <= 0 ? 0 : std::min<size_t>(static_cast<size_t>(n), cps);
        setString(out, i, left ? s.substr(0, byteOffset(s, take)) : s.substr(byteOffset(s, cps - take)));
        return true;
      };
    }
    case ScalarOp::kInitCap:
      return [](const RowArgs& a, Column& out, size_t i) { setString(out, i, initcap(a.s(0))); return true; };
    case ScalarOp::kReverse:
      return [](const RowArgs& a, Column& out, size_t i) { setString(out, i, reverseCp(a.s(0))); return true; };
    case ScalarOp::kPosition:
      return [](const RowArgs& a, Column& out, size_t i) {
        out.longs()[i] = indexOfCp(a.s(1), a.s(0), 0) + 1;
        return true;
      };
    case ScalarOp::kLocate:
      return [](const RowArgs& a, Column& out, size_t i) {
        const int64_t from = a.size() > 2 ? a.l(2) : 1;
        out.longs()[i] = indexOfCp(a.s(1), a.s(0), from - 1) + 1;
        return true;
      };
    case ScalarOp::kInstr:
      return [](const RowArgs& a, Column& out, size_t i) {
        out.longs()[i] = instr(a.s(0), a.s(1), a.size() > 2 ? a.l(2) : 1, a.size() > 3 ? a.l(3) : 1);
        return true;
      };
    case ScalarOp::kRepeat:
      return [](const RowArgs& a, Column& out, size_t i) {
        std::string r;
        const std::string_view s = a.s(0);
        for (int64_t k = 0; k < a.l(1); ++k) r.append(s);
        setString(out, i, r);
        return true;
      };
    case ScalarOp::kAscii:
      return [](const RowArgs& a, Column& out, size_t i) {
        const std::string_view s = a.s(0);
        out.longs()[i] = s.empty() ? 0 : static_cast<int64_t>(firstCodePoint(s));
        return true;
      };
    case ScalarOp::kChr:
      // SqlFunctionUtils.chr: "" for a negative code, else the character of its low byte.
      return [](const RowArgs& a, Column& out, size_t i) {
        const int64_t c = a.l(0);
        std::string r;
        if (c >= 0) appendUtf8(static_cast<uint32_t>(c & 0xFF), r);
        setString(out, i, r);
        return true;
      };
    case ScalarOp::kMd5: case ScalarOp::kSha1: case ScalarOp::kSha224: case ScalarOp::kSha256:
    case ScalarOp::kSha384: case ScalarOp::kSha512: {
      const char* name = op == ScalarOp::kMd5 ? "MD5" : op == ScalarOp::kSha1 ? "SHA1" : op == ScalarOp::kSha224 ? "SHA224"
                       : op == ScalarOp::kSha256 ? "SHA256" : op == ScalarOp::kSha384 ? "SHA384" : "SHA512";
      return [name](const RowArgs& a, Column& out, size_t i) { setString(out, i, digestHex(name, a.s(0))); return true; };
    }
    case ScalarOp::kSha2:
      return [](const RowArgs& a, Column& out, size_t i) {
        setString(out, i, digestHex(shaName(a.l(1)), a.s(0)));
        return true;
      };
    case ScalarOp::kToBase64:
      return [](const RowArgs& a, Column& out, size_t i) { setString(out, i, toBase64(a.s(0))); return true; };
    case ScalarOp::kFromBase64:
      return [](const RowArgs& a, Column& out, size_t i) {
        std::string r;
        if (!fromBase64(a.s(0), r))
          throw UserError(fmt::format("FROM_BASE64: '{}' is not valid Base64", a.s(0)));
        setString(out, i, r);
        return true;
      };
    case ScalarOp::kUuid:
      return [](const RowArgs&, Column& out, size_t i) { setString(out, i, uuid4()); return true; };
    case ScalarOp::kBin:
      return [](const RowArgs& a, Column& out, size_t i) {
        // Long.toBinaryString: two's complement for negative values.
        uint64_t v = static_cast<uint64_t>(a.l(0));
        std::string r;
        do {
          r += static_cast<char>('0' + (v & 1));
          v >>= 1;
        } while (v != 0);
        std::reverse(r.begin(), r.end());
        setString(out, i, r);
        return true;
      };
    case ScalarOp::kOverlay:
      return [](const RowArgs& a, Column& out, size_t i) {
        setString(out, i, overlay(a.s(0), a.s(1), a.l(2), a.size() > 3 ? a.l(3) : static_cast<int64_t>(codePoints(a.s(1)))));
        return true;
      };
    case ScalarOp::kParseUrl:
      return [](const RowArgs& a, Column& out, size_t i) {
        std::string r;
        if (!parseUrl(a.s(0), a.s(1), a.size() > 2 ? std::optional<std::string_view>(a.s(2)) : std::nullopt, r))
          return false;
        setString(out, i, r);
        return true;
      };
    default:
      throw InternalError(fmt::format("not a text function: {}", scalarOpName(op)));
  }
}

/// HEX / IS_ALPHA / IS_DIGIT / IS_DECIMAL depend on the argument's type.
RowFn typedTextKernel(ScalarOp op, const LogicalType& arg) {
  const bool is_string = arg.isString(), integral = arg.isIntegral();
  switch (op) {
    case ScalarOp::kHex:
      return [is_string](const RowArgs& a, Column& out, size_t i) {
        static const char* const kHex = "0123456789ABCDEF";
        std::string r;
        if (is_string) {
          for (char c : a.s(0)) {
            r += kHex[static_cast<uint8_t>(c) >> 4];
            r += kHex[static_cast<uint8_t>(c) & 15];
          }
        } else {
          r = fmt::format("{:X}", static_cast<uint64_t>(a.l(0)));  // Long.toHexString, upper-cased
        }
        setString(out, i, r);
        return true;
      };
    default:
      return [op, is_string, integral](const RowArgs& a, Column& out, size_t i) {
        bool r = false;
        if (a.valid(0) && !is_string) {
          r = op == ScalarOp::kIsDecimal || (op == ScalarOp::kIsDigit && integral);
        } else if (a.valid(0)) {
          const std::string_view s = a.s(0);
          if (op == ScalarOp::kIsDecimal) {
            int64_t l = 0;
            double d = 0;
            r = !s.empty() && (types::parseInt64(s, l) || types::parseDouble(s, d));
          } else {
            const bool alpha = op == ScalarOp::kIsAlpha;
            r = !s.empty() && std::all_of(s.begin(), s.end(), [alpha](char c) {
              return alpha ? std::isalpha(static_cast<unsigned char>(c)) != 0 : (c >= '0' && c <= '9');
            });
          }
        }
        out.longs()[i] = r;
        return true;
      };
  }
}

}  // namespace

NodePtr makeTextNode(ScalarOp op, const LogicalType& type, std::vector<NodePtr> args, int reg) {
  if (op == ScalarOp::kConcatWs) {
    // NULL only when the separator is NULL; NULL arguments after it are skipped.
    return makeRowFunctionNode(type, std::move(args), false, false,
                               [](const RowArgs& a, Column& out, size_t i) {
                                 if (!a.valid(0)) return false;
                                 std::string r;
                                 bool first = true;
                                 for (size_t k = 1; k < a.size(); ++k) {
                                   if (!a.valid(k)) continue;
                                   if (!first) r.append(a.s(0));
                                   r.append(a.s(k));
                                   first = false;
                                 }
                                 setString(out, i, r);
                                 return true;
                               },
                               reg);
  }
  std::shared_ptr<PatternArg> pattern;
  if (op == ScalarOp::kRegexp || op == ScalarOp::kRegexpExtract || op == ScalarOp::kRegexpReplace)
    pattern = std::make_shared<PatternArg>(args[1]);
  if (op == ScalarOp::kSplitIndex && args[1]->type().isIntegral()) {
    // SqlFunctionUtils.splitIndex(str, int character, index): NULL for a code outside 1..255.
    return makeRowFunctionNode(type, std::move(args), true, false,
                               [](const RowArgs& a, Column& out, size_t i) {
                                 const int64_t code = a.l(1);
                                 if (code < 1 || code > 255) return false;
                                 std::string sep;
                                 appendUtf8(static_cast<uint32_t>(code), sep);
                                 std::string_view part;
                                 if (!splitIndex(a.s(0), sep, a.l(2), part)) return false;
                                 setString(out, i, part);
                                 return true;
                               },
                               reg);
  }
  if (op == ScalarOp::kHex || op == ScalarOp::kIsAlpha || op == ScalarOp::kIsDigit || op == ScalarOp::kIsDecimal) {
    const LogicalType arg = args[0]->type();
    return makeRowFunctionNode(type, std::move(args), op == ScalarOp::kHex, false, typedTextKernel(op, arg), reg);
  }
  const bool may_throw = op == ScalarOp::kInstr || op == ScalarOp::kSha2 || op == ScalarOp::kFromBase64;
  return makeRowFunctionNode(type, std::move(args), true, may_throw, textKernel(op, std::move(pattern)), reg);
}

}  // namespace sluice::table::internal
