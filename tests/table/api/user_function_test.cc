// User-defined scalar functions registered from C++ (TableEnvironment::createTemporarySystemFunction):
// the SQL signature taken from the C++ one, NULL handling of plain and optional parameters, implicit casts
// of the arguments, the result's nullability, constant folding of deterministic functions only, and the
// catalog statements that list them. Expected rows worked out by hand.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "common/config.h"
#include "common/error.h"
#include "connectors/builtin.h"
#include "table/api/table_environment.h"
#include "table/catalog/table_factory.h"
#include "table/functions/user_function.h"
#include "types/row_batch.h"
#include "types/value_format.h"

namespace sluice::table {
namespace {

class UserFunctionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto registry = std::make_shared<FactoryRegistry>();
    connectors::registerBuiltinConnectors(*registry);
    env_ = std::make_unique<TableEnvironment>(Configuration(), registry);
    auto capture = [this](const types::RowType&, const types::RowBatch& rows) {
      for (size_t r = 0; r < rows.numRows(); ++r) {
        std::string text;
        types::formatRow(rows, r, text);
        rows_.push_back(text);
      }
    };
    env_->setCollectCallback(capture);
    env_->setTableResultCallback(capture);
  }
  std::vector<std::string> run(const std::string& sql) {
    rows_.clear();
    env_->executeScript(sql);
    return rows_;
  }

  std::unique_ptr<TableEnvironment> env_;
  std::vector<std::string> rows_;
};

const char* kValues = "(VALUES ('ab', 2), ('xyz', CAST(NULL AS INT)), (CAST(NULL AS STRING), 5)) AS t(s, n)";

TEST_F(UserFunctionTest, PlainParametersGiveNullForNullArguments) {
  env_->createTemporarySystemFunction("len", makeScalarFunction([](std::string_view s) -> int64_t {
                                        return static_cast<int64_t>(s.size());
                                      }));
  // 'ab' 2, 'xyz' 3, NULL: not called, NULL.
  EXPECT_EQ(run(std::string("SELECT len(s) FROM ") + kValues),
            (std::vector<std::string>{"+I[2]", "+I[3]", "+I[null]"}));
}

TEST_F(UserFunctionTest, OptionalParametersSeeNullAndIntegersWiden) {
  // a: INT column widened to BIGINT; b: an INT literal widened to DOUBLE. NULL a -> -1, else a * b; an
  // optional result may be NULL (a = 5 gives nullopt).
  env_->createTemporarySystemFunction(
      "scale", makeScalarFunction([](std::optional<int64_t> a, double b) -> std::optional<double> {
        if (!a) return -1.0;
        if (*a == 5) return std::nullopt;
        return static_cast<double>(*a) * b;
      }));
  EXPECT_EQ(run(std::string("SELECT scale(n, 3) FROM ") + kValues),
            (std::vector<std::string>{"+I[6.0]", "+I[-1.0]", "+I[null]"}));
}

TEST_F(UserFunctionTest, BooleanResultFiltersAndTheSignatureIsChecked) {
  env_->createTemporarySystemFunction("is_long", makeScalarFunction([](std::string_view s, int32_t min) -> bool {
                                        return static_cast<int32_t>(s.size()) >= min;
                                      }));
  EXPECT_EQ(run(std::string("SELECT s FROM ") + kValues + " WHERE is_long(s, 3)"),
            (std::vector<std::string>{"+I[xyz]"}));
  // BIGINT does not narrow to INT; the error names the call's position and the expected signature.
  try {
    run(std::string("SELECT is_long(s, CAST(3 AS BIGINT)) FROM ") + kValues);
    FAIL() << "expected an error";
  } catch (const SqlError& e) {
    EXPECT_EQ(e.line(), 1);
    EXPECT_EQ(e.column(), 8);
    EXPECT_NE(std::string(e.what()).find("Invalid input arguments (STRING, BIGINT). Expected signature: (STRING, INT)"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(UserFunctionTest, OnlyDeterministicFunctionsAreFoldedToConstants) {
  // Called once per row unless folded: a deterministic call without column arguments is computed once
  // at planning, a non-deterministic one per row (as Flink treats RAND()).
  auto calls = std::make_shared<std::atomic<int64_t>>(0);
  env_->createTemporarySystemFunction("ticket", makeScalarFunction([calls]() -> int64_t { return ++*calls; }, false));
  env_->createTemporarySystemFunction("folded", makeScalarFunction([calls]() -> int64_t { return 100 + ++*calls; }));
  std::vector<std::string> rows = run(std::string("SELECT ticket(), folded() FROM ") + kValues);
  ASSERT_EQ(rows.size(), 3u);
  // folded() ran once (at planning, first: 101) before the three per-row tickets 2, 3, 4.
  EXPECT_EQ(rows, (std::vector<std::string>{"+I[2, 101]", "+I[3, 101]", "+I[4, 101]"}));
}

TEST_F(UserFunctionTest, ResultNullabilityFollowsTheArguments) {
  env_->createTemporarySystemFunction("len", makeScalarFunction([](std::string_view s) -> int64_t {
                                        return static_cast<int64_t>(s.size());
                                      }));
  env_->createTemporarySystemFunction("len_or_zero", makeScalarFunction([](std::optional<std::string_view> s) -> int64_t {
                                        return s ? static_cast<int64_t>(s->size()) : 0;
                                      }));
  run(std::string("CREATE VIEW v AS SELECT len('ab') AS a, len(s) AS b, len_or_zero(s) AS c FROM ") + kValues);
  // A plain parameter with a nullable argument makes the result nullable; an optional one does not.
  EXPECT_EQ(run("DESCRIBE v"), (std::vector<std::string>{"+I[a, BIGINT, false, , , ]", "+I[b, BIGINT, true, , , ]",
                                                        "+I[c, BIGINT, false, , , ]"}));
}

TEST_F(UserFunctionTest, RegistrationAndListing) {
  auto f = makeScalarFunction([](int64_t x) -> int64_t { return x + 1; });
  env_->createTemporarySystemFunction("inc", f);
  EXPECT_THROW(env_->createTemporarySystemFunction("INC", f), UserError);  // names ignore case
  env_->createTemporaryFunction("plus_one", f);
  EXPECT_EQ(run("SHOW USER FUNCTIONS"), (std::vector<std::string>{"+I[inc]", "+I[plus_one]"}));
  std::vector<std::string> all = run("SHOW FUNCTIONS");
  EXPECT_NE(std::find(all.begin(), all.end(), "+I[inc]"), all.end());
  EXPECT_NE(std::find(all.begin(), all.end(), "+I[UPPER]"), all.end());
  EXPECT_EQ(run("SELECT inc(1), plus_one(inc(1))"), std::vector<std::string>{"+I[2, 3]"});
  EXPECT_TRUE(env_->dropTemporarySystemFunction("inc"));
  EXPECT_FALSE(env_->dropTemporarySystemFunction("inc"));
  EXPECT_THROW(run("SELECT inc(1)"), SqlError);
}

TEST_F(UserFunctionTest, AnExceptionInsideTheFunctionFailsTheJobNamingIt) {
  env_->createTemporarySystemFunction("boom", makeScalarFunction([](int32_t n) -> int32_t {
                                        if (n == 5) throw std::runtime_error("five");
                                        return n;
                                      }));
  // Only n is read, so the pruned scan has one column: the call is boom($0).
  try {
    run(std::string("SELECT boom(n) FROM ") + kValues);
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("user-defined function boom($0) failed: five"), std::string::npos) << e.what();
  }
}

// split(s): the words of s (split on spaces, empty ones skipped) with their lengths.
std::shared_ptr<const TableFunction> splitFunction() {
  return makeTableFunction({"word", "length"}, [](std::string_view s) {
    std::vector<std::tuple<std::string, int32_t>> out;
    size_t i = 0;
    while (i < s.size()) {
      size_t j = s.find(' ', i);
      if (j == std::string_view::npos) j = s.size();
      if (j > i) out.emplace_back(std::string(s.substr(i, j - i)), static_cast<int32_t>(j - i));
      i = j + 1;
    }
    return out;
  });
}

const char* kSentences = "(VALUES ('a bb'), ('ccc'), (''), (CAST(NULL AS STRING))) AS t(s)";

TEST_F(UserFunctionTest, LateralTableJoinsEachRowWithTheRowsOfItsCall) {
  env_->createTemporarySystemFunction("split", splitFunction());
  // 'a bb' -> (a, 1), (bb, 2); 'ccc' -> (ccc, 3); '' -> none; NULL (a plain parameter) -> none.
  const std::vector<std::string> inner = {"+I[a bb, a, 1]", "+I[a bb, bb, 2]", "+I[ccc, ccc, 3]"};
  EXPECT_EQ(run(std::string("SELECT s, word, length FROM ") + kSentences + ", LATERAL TABLE(split(s))"), inner);
  EXPECT_EQ(run(std::string("SELECT * FROM ") + kSentences + " CROSS JOIN LATERAL TABLE(split(s))"), inner);
  // Renamed columns, a filter on them, an expression argument.
  EXPECT_EQ(run(std::string("SELECT s, w FROM ") + kSentences +
                ", LATERAL TABLE(split(UPPER(s))) AS T(w, n) WHERE n > 1"),
            (std::vector<std::string>{"+I[a bb, BB]", "+I[ccc, CCC]"}));
  // LEFT JOIN ... ON TRUE pads a row without results.
  EXPECT_EQ(run(std::string("SELECT s, w, n FROM ") + kSentences +
                " LEFT JOIN LATERAL TABLE(split(s)) AS T(w, n) ON TRUE"),
            (std::vector<std::string>{"+I[a bb, a, 1]", "+I[a bb, bb, 2]", "+I[ccc, ccc, 3]", "+I[, null, null]",
                                      "+I[null, null, null]"}));
}

TEST_F(UserFunctionTest, LateralTableKeepsTheInputsChangelog) {
  env_->createTemporarySystemFunction("split", splitFunction());
  // COUNT per sentence: +I[x y, 1] then -U[x y, 1], +U[x y, 2]; each becomes one row per word, same kind.
  EXPECT_EQ(run("SELECT k, c, word FROM (SELECT s AS k, COUNT(*) AS c FROM (VALUES ('x y'), ('x y')) AS v(s) "
                "GROUP BY s), LATERAL TABLE(split(k))"),
            (std::vector<std::string>{"+I[x y, 1, x]", "+I[x y, 1, y]", "-U[x y, 1, x]", "-U[x y, 1, y]",
                                      "+U[x y, 2, x]", "+U[x y, 2, y]"}));
}

TEST_F(UserFunctionTest, LateralTableErrorsNameTheirPlace) {
  env_->createTemporarySystemFunction("split", splitFunction());
  env_->createTemporarySystemFunction("len", makeScalarFunction([](std::string_view s) -> int64_t {
                                        return static_cast<int64_t>(s.size());
                                      }));
  auto error = [&](const std::string& sql) -> std::string {
    try {
      run(sql);
    } catch (const SqlError& e) {
      return fmt::format("{}:{} {}", e.line(), e.column(), e.what());
    }
    return "no error";
  };
  const std::string from = std::string("SELECT * FROM ") + kSentences;  // 80 characters
  EXPECT_NE(error(from + " LEFT JOIN LATERAL TABLE(split(s)) AS T(w, n) ON n > 1").find("supports only ON TRUE"),
            std::string::npos);
  EXPECT_NE(error(from + " RIGHT JOIN LATERAL TABLE(split(s)) ON TRUE").find("only INNER, CROSS and LEFT"),
            std::string::npos);
  EXPECT_NE(error(from + ", LATERAL TABLE(len(s))").find("len is a scalar function"), std::string::npos);
  EXPECT_NE(error("SELECT split(s) FROM " + std::string(kSentences)).find("1:8 "), std::string::npos);
  EXPECT_NE(error(from + ", LATERAL TABLE(split(1))").find("Invalid function call split"), std::string::npos);
  EXPECT_NE(error("SELECT * FROM LATERAL TABLE(split('a'))").find("1:15 "), std::string::npos);
}

TEST_F(UserFunctionTest, ExplainShowsFlinksCorrelate) {
  env_->createTemporarySystemFunction("split", splitFunction());
  std::string text;  // EXPLAIN's plan reaches the message callback
  env_->setMessageCallback([&text](const std::string& m) { text += m; });
  run(std::string("EXPLAIN SELECT s, word FROM ") + kSentences + ", LATERAL TABLE(split(s))");
  // (A VALUES column is EXPR$0 until the Calc that applies the alias list t(s).)
  EXPECT_NE(text.find("Correlate(invocation=[split(EXPR$0)], correlate=[table(split(EXPR$0))], "
                      "select=[EXPR$0, word, length], joinType=[INNER])"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace sluice::table
