#include "connectors/nexmark/nexmark_functions.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/error.h"
#include "table/functions/user_function.h"

namespace sluice::connectors::nexmark {

void registerNexmarkFunctions() {
  table::registerFunctionClass("com.github.nexmark.flink.udf.CountChar", [] {
    return table::makeScalarFunction([](std::optional<std::string_view> s, std::string_view c) -> int64_t {
      if (c.empty()) throw UserError("count_char: the character argument is empty");
      if (!s) return 0;
      return static_cast<int64_t>(std::count(s->begin(), s->end(), c.front()));
    });
  });
}

}  // namespace sluice::connectors::nexmark
