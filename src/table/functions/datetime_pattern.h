#pragma once
/// Internal: Java SimpleDateFormat / DateTimeFormatter style patterns, as DATE_FORMAT and
/// TO_TIMESTAMP(s, fmt) take them. Letters: y (year), M (month; MMM "Jan", MMMM "January"),
/// d (day of month), H (hour 0-23), h (hour 1-12), a (AM/PM), m (minute), s (second),
/// S (fraction of second: SSS = milliseconds), E (day of week: "Mon", EEEE "Monday").
/// Text in single quotes is literal ('' is a quote); other non-letters are literal.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::table::internal {

class DateTimePattern {
 public:
  /// Compiles `pattern`; throws UserError naming the pattern on an unknown letter or open quote.
  explicit DateTimePattern(std::string_view pattern);

  /// Appends the wall-clock time `epoch_ms` formatted by the pattern.
  void format(int64_t epoch_ms, std::string& out) const;
  /// Parses `text` (the whole of it must match). Fields not in the pattern default to 1970-01-01
  /// 00:00:00.000. Returns false when the text does not match or a field is out of range.
  bool parse(std::string_view text, int64_t& epoch_ms) const;

 private:
  struct Token {
    char letter;        ///< 0 for literal text
    int count;          ///< letter repetitions
    std::string text;   ///< literal text
  };
  std::vector<Token> tokens_;
};

}  // namespace sluice::table::internal
