#include "table/sql/lexer.h"

#include <cctype>

#include <fmt/format.h>

#include "common/utf8.h"
#include "table/sql/parser.h"

namespace sluice::table::sql {

namespace {

bool isWordStart(unsigned char c) { return std::isalpha(c) || c == '_' || c >= 0x80; }
bool isWordPart(unsigned char c) { return std::isalnum(c) || c == '_' || c == '$' || c >= 0x80; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

std::string toUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string_view script) : s_(script) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    // A UTF-8 byte order mark (editors on some systems write one) is not part of the script.
    if (s_.substr(0, 3) == "\xEF\xBB\xBF") i_ = 3;
    for (;;) {
      skipSpaceAndComments();
      Token t;
      t.pos = {line_, col_};
      t.offset = i_;
      if (i_ >= s_.size()) {
        t.kind = TokenKind::kEnd;
        t.end = i_;
        out.push_back(std::move(t));
        return out;
      }
      lexOne(t);
      t.end = i_;
      out.push_back(std::move(t));
    }
  }

 private:
  char peek(size_t ahead = 0) const { return i_ + ahead < s_.size() ? s_[i_ + ahead] : '\0'; }

  void advance() {
    unsigned char c = static_cast<unsigned char>(s_[i_]);
    if (c == '\n') {
      ++line_;
      col_ = 1;
    } else if ((c & 0xC0) != 0x80) {  // UTF-8 continuation bytes do not start a new column
      ++col_;
    }
    ++i_;
  }

  [[noreturn]] void fail(const std::string& msg, SourcePos pos) const { throwSqlError(msg, s_, pos); }

  void skipSpaceAndComments() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        advance();
      } else if (c == '-' && peek(1) == '-') {
        while (i_ < s_.size() && s_[i_] != '\n') advance();
      } else if (c == '/' && peek(1) == '*') {
        SourcePos start{line_, col_};
        advance();
        advance();
        for (;;) {
          if (i_ >= s_.size()) fail("Lexical error: unterminated comment (missing \"*/\")", start);
          if (s_[i_] == '*' && peek(1) == '/') {
            advance();
            advance();
            break;
          }
          advance();
        }
      } else {
        return;
      }
    }
  }

  // Reads a quoted run ending in `quote`, where a doubled quote stands for one.
  std::string readQuoted(char quote, const char* what, SourcePos start) {
    std::string value;
    advance();  // opening quote
    for (;;) {
      if (i_ >= s_.size()) fail(fmt::format("Lexical error: unterminated {} (missing {})", what, quote), start);
      char c = s_[i_];
      if (c == quote) {
        if (peek(1) == quote) {
          value.push_back(quote);
          advance();
          advance();
          continue;
        }
        advance();
        return value;
      }
      value.push_back(c);
      advance();
    }
  }

  // As readQuoted for a string literal, also recording where each byte of the value was written.
  std::string readStringWithPositions(SourcePos start, std::vector<SourcePos>& where) {
    std::string value;
    advance();
    for (;;) {
      if (i_ >= s_.size()) fail("Lexical error: unterminated string literal (missing ')", start);
      where.push_back({line_, col_});
      char c = s_[i_];
      if (c == '\'') {
        if (peek(1) != '\'') {
          where.pop_back();
          advance();
          return value;
        }
        advance();
      }
      value.push_back(c);
      advance();
    }
  }

  // If UESCAPE '<c>' follows (after spaces and comments), consumes it and returns the escape string, its
  // position and the keyword's; otherwise leaves the position where it was.
  bool readUescape(std::string& esc, SourcePos& esc_pos, SourcePos& word) {
    const size_t i = i_;
    const int line = line_, col = col_;
    skipSpaceAndComments();
    if (s_.size() - i_ >= 7 && toUpper(s_.substr(i_, 7)) == "UESCAPE" &&
        (i_ + 7 == s_.size() || !isWordPart(static_cast<unsigned char>(s_[i_ + 7])))) {
      word = {line_, col_};
      for (int k = 0; k < 7; ++k) advance();
      skipSpaceAndComments();
      if (peek() != '\'') fail("Lexical error: UESCAPE must be followed by a one-character string literal", word);
      esc_pos = {line_, col_};
      esc = readQuoted('\'', "string literal", esc_pos);
      return true;
    }
    i_ = i;
    line_ = line;
    col_ = col;
    return false;
  }

  // U&'...' [UESCAPE '<c>'] (Calcite's SqlLiteral.unescapeUnicode, plus the SQL standard's \+XXXXXX).
  void lexUnicodeString(Token& t) {
    advance();  // U
    advance();  // &
    std::vector<SourcePos> where;
    std::string raw = readStringWithPositions(t.pos, where);
    std::string esc = "\\";
    SourcePos esc_pos, word;
    if (readUescape(esc, esc_pos, word)) {
      if (utf8Length(esc) != 1)
        fail(fmt::format("UESCAPE '{}' must be exactly one character", esc), esc_pos);
      const char e = esc[0];
      if (std::isxdigit(static_cast<unsigned char>(e)) || e == ' ' || e == '\t' || e == '\n' || e == '\r' ||
          e == '\f' || e == '\v' || e == '+' || e == '"')
        fail(fmt::format("UESCAPE '{}' may not be hex digit, whitespace, plus sign, or double quote", esc), esc_pos);
    }
    t.kind = TokenKind::kString;
    t.text = unescapeUnicode(raw, where, esc);
  }

  static size_t utf8Length(std::string_view s) {
    size_t n = 0;
    for (char c : s)
      if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
    return n;
  }


  // Reads `n` hex digits at raw[k..]; false unless all n are there.
  static bool hexDigits(std::string_view raw, size_t k, size_t n, uint32_t& v) {
    if (k + n > raw.size()) return false;
    v = 0;
    for (size_t j = k; j < k + n; ++j) {
      const char c = raw[j];
      if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
      v = v * 16 + static_cast<uint32_t>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    return true;
  }

  // Escapes: <e><e> is <e>; <e>XXXX a UTF-16 code unit (a surrogate pair as two escapes); <e>+XXXXXX a
  // code point. Errors name the character index in the literal (as Calcite) and point at the escape.
  std::string unescapeUnicode(std::string_view raw, const std::vector<SourcePos>& where, std::string_view esc) const {
    std::string out;
    size_t chars = 0;  // characters of the literal before position k (Calcite's index)
    for (size_t k = 0; k < raw.size();) {
      if (raw.substr(k, esc.size()) != esc) {
        out.push_back(raw[k]);
        if ((static_cast<unsigned char>(raw[k]) & 0xC0) != 0x80) ++chars;
        ++k;
        continue;
      }
      const SourcePos at = where[k];
      const size_t d = k + esc.size();
      if (raw.substr(d, esc.size()) == esc) {
        out.append(esc);
        k = d + esc.size();
        chars += 2;
        continue;
      }
      uint32_t cp = 0;
      if (d < raw.size() && raw[d] == '+') {
        if (!hexDigits(raw, d + 1, 6, cp))
          fail(fmt::format("Unicode escape sequence starting at character {} is not exactly six hex digits", chars), at);
        if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
          fail(fmt::format("Unicode escape sequence starting at character {} is not a valid code point", chars), at);
        k = d + 7;
        chars += 8;
      } else {
        if (!hexDigits(raw, d, 4, cp))
          fail(fmt::format("Unicode escape sequence starting at character {} is not exactly four hex digits", chars), at);
        k = d + 4;
        chars += 5;
        if (cp >= 0xDC00 && cp <= 0xDFFF)
          fail(fmt::format("Unicode escape sequence starting at character {} is a lone low surrogate", chars - 5), at);
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          // A high surrogate is only valid as the first half of a pair written as two escapes.
          uint32_t low = 0;
          if (raw.substr(k, esc.size()) != esc || !hexDigits(raw, k + esc.size(), 4, low) || low < 0xDC00 ||
              low > 0xDFFF)
            fail(fmt::format("Unicode escape sequence starting at character {} is a high surrogate without a low one",
                             chars - 5),
                 at);
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          k += esc.size() + 4;
          chars += 5;
        }
      }
      appendUtf8(out, cp);
    }
    return out;
  }

  void lexNumber(Token& t) {
    size_t start = i_;
    bool dot = false;
    while (isDigit(peek())) advance();
    if (peek() == '.') {
      dot = true;
      advance();
      while (isDigit(peek())) advance();
    }
    t.kind = dot ? TokenKind::kDecimal : TokenKind::kInteger;
    if (peek() == 'e' || peek() == 'E') {
      size_t k = 1;
      if (peek(1) == '+' || peek(1) == '-') k = 2;
      if (isDigit(peek(k))) {
        for (size_t j = 0; j < k; ++j) advance();
        while (isDigit(peek())) advance();
        t.kind = TokenKind::kApproximate;
      }
    }
    t.text = std::string(s_.substr(start, i_ - start));
  }

  void lexOne(Token& t) {
    unsigned char c = static_cast<unsigned char>(s_[i_]);
    if ((c == 'U' || c == 'u') && peek(1) == '&' && peek(2) == '\'') {
      lexUnicodeString(t);
      return;
    }
    if (isWordStart(c)) {
      size_t start = i_;
      while (i_ < s_.size() && isWordPart(static_cast<unsigned char>(s_[i_]))) advance();
      t.kind = TokenKind::kWord;
      t.text = std::string(s_.substr(start, i_ - start));
      t.upper = toUpper(t.text);
      return;
    }
    if (isDigit(static_cast<char>(c)) || (c == '.' && isDigit(peek(1)))) {
      lexNumber(t);
      return;
    }
    if (c == '\'') {
      t.kind = TokenKind::kString;
      t.text = readQuoted('\'', "string literal", t.pos);
      std::string esc;
      SourcePos esc_pos, word;
      if (readUescape(esc, esc_pos, word))
        fail("UESCAPE cannot be specified without Unicode literal introducer", word);
      return;
    }
    if (c == '`') {
      t.kind = TokenKind::kQuotedIdent;
      t.text = readQuoted('`', "quoted identifier", t.pos);
      if (t.text.empty()) fail("Lexical error: empty quoted identifier ``", t.pos);
      return;
    }
    static const char* const kTwoChar[] = {"||", "<>", "!=", "<=", ">=", "=>"};
    for (const char* sym : kTwoChar) {
      if (static_cast<char>(c) == sym[0] && peek(1) == sym[1]) {
        t.kind = TokenKind::kSymbol;
        t.text = std::string(sym, 2);
        t.upper = t.text;
        advance();
        advance();
        return;
      }
    }
    static const std::string_view kOneChar = "(),.;+-*/%=<>[]?:{}";
    if (kOneChar.find(static_cast<char>(c)) != std::string_view::npos) {
      t.kind = TokenKind::kSymbol;
      t.text = std::string(1, static_cast<char>(c));
      t.upper = t.text;
      advance();
      return;
    }
    if (c == '"') {
      fail("Lexical error: double quotes do not delimit identifiers in Flink SQL; use `backquotes` for "
           "identifiers and 'single quotes' for strings",
           t.pos);
    }
    std::string shown = c >= 0x20 && c < 0x7f ? std::string(1, static_cast<char>(c))
                                                : fmt::format("\\x{:02x}", static_cast<unsigned>(c));
    fail(fmt::format("Lexical error: unexpected character \"{}\"", shown), t.pos);
  }

  std::string_view s_;
  size_t i_ = 0;
  int line_ = 1;
  int col_ = 1;
};

}  // namespace

std::string Token::describe() const {
  switch (kind) {
    case TokenKind::kEnd: return "<EOF>";
    case TokenKind::kString: {
      std::string out = "'";
      for (char c : text) {
        out.push_back(c);
        if (c == '\'') out.push_back('\'');
      }
      return out + "'";
    }
    case TokenKind::kQuotedIdent: return "`" + text + "`";
    default: return text;
  }
}

std::vector<Token> tokenize(std::string_view script) { return Lexer(script).run(); }

}  // namespace sluice::table::sql
