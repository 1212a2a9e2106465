#include "table/sql/lexer.h"

#include <cctype>

#include <fmt/format.h>

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
