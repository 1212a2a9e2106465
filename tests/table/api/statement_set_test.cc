// The StatementSet API (TableEnvironment::createStatementSet, Flink's StatementSet): its INSERTs run as one
// job in which INSERTs reading one table share one source that reads the file once; the sinks' part files
// hold exactly each INSERT's rows.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/error.h"
#include "connectors/builtin.h"
#include "table/api/table_environment.h"

namespace sluice::table {
namespace {

namespace fs = std::filesystem;

class StatementSetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sluice_statement_set_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "t.csv") << "a,1,x\nb,2,y\na,3,z\nc,5,w\n";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::unique_ptr<TableEnvironment> env(bool reuse_source = true) {
    Configuration config;
    config.set("parallelism.default", "2");
    config.set("table.optimizer.reuse-source-enabled", reuse_source ? "true" : "false");
    auto registry = std::make_shared<FactoryRegistry>();
    connectors::registerBuiltinConnectors(*registry);
    auto e = std::make_unique<TableEnvironment>(config, registry);
    e->executeScript("CREATE TABLE t (k STRING, v INT, s STRING) WITH ('connector' = 'filesystem', 'path' = '" +
                     (dir_ / "t.csv").string() + "', 'format' = 'csv');\n" + sinkDdl("out1", "k STRING, v INT") +
                     sinkDdl("out2", "s STRING, w INT"));
    return e;
  }

  std::string sinkDdl(const std::string& name, const std::string& columns) const {
    return "CREATE TABLE " + name + " (" + columns + ") WITH ('connector' = 'filesystem', 'path' = '" +
           (dir_ / name).string() + "', 'format' = 'csv');\n";
  }

  /// Every line of the part files in sink directory `name`, sorted.
  std::vector<std::string> written(const std::string& name) const {
    std::vector<std::string> lines;
    for (const auto& f : fs::directory_iterator(dir_ / name)) {
      std::ifstream in(f.path());
      for (std::string line; std::getline(in, line);) lines.push_back(line);
    }
    std::sort(lines.begin(), lines.end());
    return lines;
  }

  fs::path dir_;
};

// out1: rows with v > 1 -> b,2 a,3 c,5; out2: s and v * 10 of rows with v < 5 -> x,10 y,20 z,30.
constexpr const char* kInsert1 = "INSERT INTO out1 SELECT k, v FROM t WHERE v > 1";
constexpr const char* kInsert2 = "INSERT INTO out2 SELECT s, v * 10 FROM t WHERE v < 5;";
const std::vector<std::string> kOut1{"a,3", "b,2", "c,5"};
const std::vector<std::string> kOut2{"x,10", "y,20", "z,30"};

size_t sourceVertices(const std::string& json_plan) {
  const nlohmann::json plan = nlohmann::json::parse(json_plan);
  size_t n = 0;
  for (const auto& node : plan["nodes"]) n += node["operator"].get<std::string>().rfind("Source: t", 0) == 0;
  return n;
}

TEST_F(StatementSetTest, InsertsShareOneSourceThatReadsTheFileOnce) {
  auto e = env();
  StatementSet set = e->createStatementSet();
  set.addInsertSql(kInsert1).addInsertSql(kInsert2);
  EXPECT_EQ(sourceVertices(set.explain(true)), 1u);
  JobSummary summary = set.execute();
  EXPECT_EQ(summary.name, "insert-into_statement_set");
  EXPECT_EQ(summary.rows_read, 4);  // the file's 4 lines, once
  EXPECT_EQ(summary.rows_written, 6);
  ASSERT_EQ(e->jobs().size(), 1u);
  EXPECT_EQ(written("out1"), kOut1);
  EXPECT_EQ(written("out2"), kOut2);
  // Executed statements are removed from the set, as in Flink.
  EXPECT_THROW(set.explain(), UserError);
}

TEST_F(StatementSetTest, WithoutSourceReuseEachInsertReadsTheFile) {
  auto e = env(false);
  StatementSet set = e->createStatementSet();
  set.addInsertSql(kInsert1).addInsertSql(kInsert2);
  EXPECT_EQ(sourceVertices(set.explain(true)), 2u);
  EXPECT_EQ(set.execute().rows_read, 8);
  EXPECT_EQ(written("out1"), kOut1);
  EXPECT_EQ(written("out2"), kOut2);
}

TEST_F(StatementSetTest, PlanTextShowsTheReusedScan) {
  auto e = env();
  StatementSet set = e->createStatementSet();
  set.addInsertSql(kInsert1).addInsertSql(kInsert2);
  const std::string text = set.explain();
  EXPECT_NE(text.find("(reuse_id=[1])"), std::string::npos) << text;
  EXPECT_NE(text.find("Reused(reference_id=[1])"), std::string::npos) << text;
}

TEST_F(StatementSetTest, OnlyInsertStatementsAreAccepted) {
  auto e = env();
  StatementSet set = e->createStatementSet();
  try {
    set.addInsertSql("SELECT k FROM t");
    FAIL() << "expected an error";
  } catch (const SqlError& err) {
    EXPECT_EQ(err.line(), 1);
    EXPECT_EQ(err.column(), 1);
    EXPECT_NE(std::string(err.what()).find("Only INSERT statements"), std::string::npos) << err.what();
  }
  try {
    set.addInsertSql(std::string(kInsert1) + ";\n" + kInsert2);
    FAIL() << "expected an error";
  } catch (const SqlError& err) {
    EXPECT_EQ(err.line(), 2);
    EXPECT_EQ(err.column(), 1);
  }
  EXPECT_THROW(set.addInsertSql("  "), UserError);
  EXPECT_THROW(set.execute(), UserError);  // nothing was added
}

// A mistake in an INSERT is reported against that INSERT's own text when the set is planned.
TEST_F(StatementSetTest, ValidationErrorsPointIntoTheirInsert) {
  auto e = env();
  StatementSet set = e->createStatementSet();
  set.addInsertSql(kInsert1).addInsertSql("INSERT INTO out2\nSELECT s, nope FROM t");
  try {
    set.execute();
    FAIL() << "expected an error";
  } catch (const SqlError& err) {
    EXPECT_EQ(err.line(), 2);
    EXPECT_EQ(err.column(), 11);
    EXPECT_NE(std::string(err.what()).find("Column 'nope' not found"), std::string::npos) << err.what();
  }
  EXPECT_TRUE(e->jobs().empty());
}

}  // namespace
}  // namespace sluice::table
