// The word count of src/api/README.md, as written there, with a collect sink instead of print.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <utility>

#include "api/datastream.h"
#include "test_util.h"

namespace {

using namespace sluice::api;

TEST(ReadmeTest, WordCount) {
  auto env = StreamExecutionEnvironment::getExecutionEnvironment();
  env.setParallelism(2);
  using Count = std::pair<std::string, int64_t>;
  auto counts = env.fromElements(std::string("to be"), std::string("or not to be"))
                    .flatMap<Count>([](const std::string& line, Collector<Count>& out) {
                      std::istringstream in(line);
                      for (std::string w; in >> w;) out.collect({w, 1});
                    })
                    .keyBy([](const Count& c) { return c.first; })
                    .sum(&Count::second)
                    .collect();
  env.execute("word count");
  // STREAMING: an update per word: to 1, be 1, or 1, not 1, to 2, be 2.
  EXPECT_EQ(sluice::api::testing::sorted(counts->values()),
            (std::vector<Count>{{"be", 1}, {"be", 2}, {"not", 1}, {"or", 1}, {"to", 1}, {"to", 2}}));
}

}  // namespace
