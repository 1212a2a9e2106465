#pragma once
/// UTF-8 encoding and decoding of single code points (header-only; the SQL lexer's Unicode literals and the
/// string kernels' case mapping share it).

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sluice {

/// Appends code point `cp` (at most 0x10FFFF; the caller checks) to `out` as 1 to 4 UTF-8 bytes.
inline void appendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

/// Decodes the code point starting at `s[i]` into `cp` and moves `i` past it; false (nothing moved) when
/// the bytes there are not a well-formed sequence (a stray continuation byte, a truncated sequence).
inline bool decodeUtf8(std::string_view s, size_t& i, uint32_t& cp) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  const size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > s.size()) return false;
  uint32_t v = len == 1 ? c : len == 2 ? (c & 0x1Fu) : len == 3 ? (c & 0x0Fu) : (c & 0x07u);
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return false;
    v = (v << 6) | (byte(i + k) & 0x3Fu);
  }
  cp = v;
  i += len;
  return true;
}

}  // namespace sluice
