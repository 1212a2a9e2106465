/// libFuzzer target for the SQL lexer and parser: any byte string must either parse or throw a
/// sluice::SluiceError (SqlError in practice). Any other exception, a crash or a sanitizer report is a bug.
/// Build: clang++-14 -std=c++20 -fsanitize=fuzzer,address -Isrc fuzz/sql_parser_fuzz.cc \
///          src/table/sql/*.cc src/types/logical_type.cc -lfmt
/// Run:   ./sql_parser_fuzz fuzz/corpus/sql -max_total_time=60

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/error.h"
#include "table/sql/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    auto statements = sluice::table::sql::parseScript(text);
    // Exercise the tree walkers too: every parsed expression must print and clone.
    for (const auto& st : statements) {
      if (st.query) {
        auto copy = st.query->clone();
        for (const auto& sel : copy->selects)
          for (const auto& item : sel.select_list)
            if (item.expr) (void)item.expr->toString();
      }
      if (st.create_table)
        for (const auto& col : st.create_table->columns)
          if (col.expr) (void)col.expr->clone()->equals(*col.expr);
    }
  } catch (const sluice::SluiceError&) {
    // Expected for malformed input.
  }
  return 0;
}
