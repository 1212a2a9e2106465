#pragma once
/// Internal: UTF-8 code point helpers for the string kernels (Flink counts characters, not bytes).

#include <cstddef>
#include <string_view>

namespace sluice::table::internal {

/// True for the first byte of a code point.
inline bool isLead(char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }

inline size_t codePoints(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += isLead(c);
  return n;
}

/// Byte offset of code point `cp` (or s.size() when beyond).
inline size_t byteOffset(std::string_view s, size_t cp) {
  size_t seen = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (isLead(s[i])) {
      if (seen == cp) return i;
      ++seen;
    }
  }
  return s.size();
}

/// `s` with every letter upper-cased (`upper`) or lower-cased, as Java's String.toUpperCase /
/// toLowerCase, which Flink falls back to for non-ASCII text: Unicode's simple case mappings (glibc's C.UTF-8
/// tables) plus 'ß' -> "SS". Bytes that are not valid UTF-8 are kept as they are. Appends to `out`.
void changeCase(std::string_view s, bool upper, std::string& out);

}  // namespace sluice::table::internal
