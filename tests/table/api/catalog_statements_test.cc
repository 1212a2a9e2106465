// SHOW, DESCRIBE and DROP against the session catalog: the result tables as Flink's SQL client shows
// them (column names and cell values written out by hand from the DDL below), SHOW CREATE as text, and the
// errors for missing objects.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/error.h"
#include "connectors/builtin.h"
#include "table/api/table_environment.h"
#include "table/catalog/table_factory.h"
#include "types/row_batch.h"
#include "types/value_format.h"

namespace sluice::table {
namespace {

struct Captured {
  std::vector<std::string> names;
  std::vector<std::string> rows;  ///< formatRow text (the print connector's: booleans lower case)
};

class CatalogStatementsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto registry = std::make_shared<FactoryRegistry>();
    connectors::registerBuiltinConnectors(*registry);
    env_ = std::make_unique<TableEnvironment>(Configuration(), registry);
    env_->setTableResultCallback([this](const types::RowType& schema, const types::RowBatch& rows) {
      Captured c;
      c.names = schema.names;
      for (size_t r = 0; r < rows.numRows(); ++r) {
        std::string text;
        types::formatRow(rows, r, text);
        c.rows.push_back(text);
      }
      results_.push_back(c);
    });
    env_->setMessageCallback([this](const std::string& m) { messages_.push_back(m); });
    env_->executeScript(
        "CREATE TABLE t (id BIGINT, name STRING, ts TIMESTAMP(3), up AS UPPER(name),\n"
        "  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND, PRIMARY KEY (id) NOT ENFORCED)\n"
        "WITH ('connector' = 'datagen', 'number-of-rows' = '3');\n"
        "CREATE VIEW v AS SELECT id, up FROM t WHERE id > 1;\n"
        "CREATE TABLE a (x INT) WITH ('connector' = 'blackhole');");
  }

  std::unique_ptr<TableEnvironment> env_;
  std::vector<Captured> results_;
  std::vector<std::string> messages_;
};

TEST_F(CatalogStatementsTest, ShowListsTheCatalog) {
  env_->executeScript("SHOW TABLES; SHOW VIEWS; SHOW CATALOGS; SHOW DATABASES; SHOW CURRENT CATALOG;"
                      "SHOW CURRENT DATABASE;");
  ASSERT_EQ(results_.size(), 6u);
  // Tables and views, sorted by name.
  EXPECT_EQ(results_[0].names, std::vector<std::string>{"table name"});
  EXPECT_EQ(results_[0].rows, (std::vector<std::string>{"+I[a]", "+I[t]", "+I[v]"}));
  EXPECT_EQ(results_[1].names, std::vector<std::string>{"view name"});
  EXPECT_EQ(results_[1].rows, std::vector<std::string>{"+I[v]"});
  EXPECT_EQ(results_[2].rows, std::vector<std::string>{"+I[default_catalog]"});
  EXPECT_EQ(results_[3].rows, std::vector<std::string>{"+I[default_database]"});
  EXPECT_EQ(results_[4].names, std::vector<std::string>{"current catalog name"});
  EXPECT_EQ(results_[5].rows, std::vector<std::string>{"+I[default_database]"});
}

TEST_F(CatalogStatementsTest, DescribeShowsFlinksColumns) {
  env_->executeScript("DESCRIBE t; DESC v;");
  ASSERT_EQ(results_.size(), 2u);
  EXPECT_EQ(results_[0].names, (std::vector<std::string>{"name", "type", "null", "key", "extras", "watermark"}));
  // id: the primary key, so NOT NULL; ts: the rowtime with its watermark; up: computed, UPPER(STRING) = STRING.
  EXPECT_EQ(results_[0].rows, (std::vector<std::string>{
                                  "+I[id, BIGINT, false, PRI(id), , ]",
                                  "+I[name, STRING, true, , , ]",
                                  "+I[ts, TIMESTAMP(3) *ROWTIME*, true, , , (ts - INTERVAL '1' SECOND)]",
                                  "+I[up, STRING, true, , AS UPPER(name), ]",
                              }));
  EXPECT_EQ(results_[1].rows,
            (std::vector<std::string>{"+I[id, BIGINT, false, , , ]", "+I[up, STRING, true, , , ]"}));
}

TEST_F(CatalogStatementsTest, ShowCreateIsText) {
  env_->executeScript("SHOW CREATE TABLE a; SHOW CREATE VIEW v;");
  ASSERT_EQ(messages_.size(), 2u);
  EXPECT_EQ(messages_[0],
            "CREATE TABLE `default_catalog`.`default_database`.`a` (\n  `x` INT\n) WITH (\n  'connector' = "
            "'blackhole'\n)\n");
  EXPECT_EQ(messages_[1], "CREATE VIEW `default_catalog`.`default_database`.`v` AS\nSELECT id, up FROM t WHERE id > 1\n");
}

TEST_F(CatalogStatementsTest, DropRemovesAndNamesWhatIsMissing) {
  env_->executeScript("DROP VIEW v; DROP TABLE IF EXISTS nope; DROP TEMPORARY VIEW IF EXISTS v; SHOW TABLES;");
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].rows, (std::vector<std::string>{"+I[a]", "+I[t]"}));
  // "DROP TABLE nope": the name at column 12.
  try {
    env_->executeScript("DROP TABLE nope");
    FAIL() << "expected an error";
  } catch (const SqlError& e) {
    EXPECT_EQ(e.column(), 12);
    EXPECT_NE(std::string(e.what()).find("Table with identifier 'default_catalog.default_database.nope' does not exist"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(env_->executeScript("DESCRIBE nope"), SqlError);
  EXPECT_THROW(env_->executeScript("SHOW FUNCTIONS"), SqlError);
  // A dropped table can be created again.
  env_->executeScript("DROP TABLE a; CREATE TABLE a (y STRING) WITH ('connector' = 'blackhole'); DESCRIBE a;");
  ASSERT_EQ(results_.size(), 2u);
  EXPECT_EQ(results_[1].rows, std::vector<std::string>{"+I[y, STRING, true, , , ]"});
}

}  // namespace
}  // namespace sluice::table
