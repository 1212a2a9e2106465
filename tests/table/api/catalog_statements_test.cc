// SHOW, DESCRIBE and DROP against the session catalog: the result tables as Flink's SQL client shows
// them (column names and cell values written out by hand from the DDL below), SHOW CREATE as text, and the
// errors for missing objects.

#include <gtest/gtest.h>

#include <algorithm>
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
  // A dropped table can be created again.
  env_->executeScript("DROP TABLE a; CREATE TABLE a (y STRING) WITH ('connector' = 'blackhole'); DESCRIBE a;");
  ASSERT_EQ(results_.size(), 2u);
  EXPECT_EQ(results_[1].rows, std::vector<std::string>{"+I[y, STRING, true, , , ]"});
}

TEST_F(CatalogStatementsTest, ShowFiltersByLikeAndDatabase) {
  env_->executeScript(
      "SHOW TABLES LIKE 't%'; SHOW TABLES NOT LIKE 't'; SHOW TABLES FROM default_database ILIKE 'T';"
      "SHOW VIEWS IN default_catalog.default_database; SHOW TABLES LIKE '_';"
      "SHOW FUNCTIONS LIKE 'REGEXP%'; SHOW USER FUNCTIONS; SHOW COLUMNS FROM t LIKE '%d';"
      "SHOW COLUMNS IN t NOT LIKE '%a%'; SHOW MODULES; SHOW FULL MODULES;");
  ASSERT_EQ(results_.size(), 11u);
  EXPECT_EQ(results_[0].rows, std::vector<std::string>{"+I[t]"});
  EXPECT_EQ(results_[1].rows, (std::vector<std::string>{"+I[a]", "+I[v]"}));
  EXPECT_EQ(results_[2].rows, std::vector<std::string>{"+I[t]"});
  EXPECT_EQ(results_[3].rows, std::vector<std::string>{"+I[v]"});
  EXPECT_EQ(results_[4].rows, (std::vector<std::string>{"+I[a]", "+I[t]", "+I[v]"}));
  EXPECT_EQ(results_[5].names, std::vector<std::string>{"function name"});
  EXPECT_EQ(results_[5].rows,
            (std::vector<std::string>{"+I[REGEXP]", "+I[REGEXP_EXTRACT]", "+I[REGEXP_REPLACE]"}));
  EXPECT_TRUE(results_[6].rows.empty());
  // Columns id, name, ts, up: only `id` ends in d; `name` has an a.
  EXPECT_EQ(results_[7].rows, std::vector<std::string>{"+I[id, BIGINT, false, PRI(id), , ]"});
  ASSERT_EQ(results_[8].rows.size(), 3u);
  EXPECT_EQ(results_[8].rows[0], "+I[id, BIGINT, false, PRI(id), , ]");
  EXPECT_EQ(results_[9].rows, std::vector<std::string>{"+I[core]"});
  EXPECT_EQ(results_[10].names, (std::vector<std::string>{"module name", "used"}));
  EXPECT_EQ(results_[10].rows, std::vector<std::string>{"+I[core, true]"});
}

TEST_F(CatalogStatementsTest, ShowFunctionsListsBuiltins) {
  env_->executeScript("SHOW FUNCTIONS");
  ASSERT_EQ(results_.size(), 1u);
  for (const char* f : {"+I[COUNT]", "+I[UPPER]", "+I[JSON_VALUE]", "+I[TUMBLE]", "+I[SHA256]", "+I[LISTAGG]",
                        "+I[STDDEV_POP]", "+I[FIRST_VALUE]"})
    EXPECT_NE(std::find(results_[0].rows.begin(), results_[0].rows.end(), f), results_[0].rows.end()) << f;
  std::vector<std::string> names;
  for (const auto& r : results_[0].rows) names.push_back(r.substr(3, r.size() - 4));  // "+I[NAME]"
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

TEST_F(CatalogStatementsTest, UseAcceptsTheOneCatalogAndDatabase) {
  env_->executeScript("USE CATALOG default_catalog; USE default_database; USE default_catalog.default_database;");
  auto errorOf = [&](const std::string& sql) -> std::pair<std::string, int> {
    try {
      env_->executeScript(sql);
    } catch (const SqlError& e) {
      return {e.what(), e.column()};
    }
    return {"", 0};
  };
  auto [cat, cat_col] = errorOf("USE CATALOG hive");
  EXPECT_NE(cat.find("A catalog with name [hive] does not exist."), std::string::npos) << cat;
  EXPECT_EQ(cat_col, 13);
  auto [db, db_col] = errorOf("USE mydb");
  EXPECT_NE(db.find("A database with name [mydb] does not exist in the catalog: [default_catalog]."),
            std::string::npos)
      << db;
  EXPECT_EQ(db_col, 5);
  auto [from, from_col] = errorOf("SHOW TABLES FROM other_db");
  EXPECT_NE(from.find("Database other_db does not exist in Catalog default_catalog."), std::string::npos) << from;
  EXPECT_EQ(from_col, 18);
}

TEST_F(CatalogStatementsTest, AlterRenamesAndChangesOptions) {
  env_->executeScript(
      "ALTER TABLE a RENAME TO b; ALTER TABLE b SET ('connector' = 'print', 'print-identifier' = 'x');"
      "ALTER TABLE b RESET ('print-identifier'); ALTER VIEW v RENAME TO w; SHOW TABLES; SHOW CREATE TABLE b;");
  ASSERT_EQ(results_.size(), 1u);
  EXPECT_EQ(results_[0].rows, (std::vector<std::string>{"+I[b]", "+I[t]", "+I[w]"}));
  ASSERT_EQ(messages_.size(), 1u);
  EXPECT_EQ(messages_[0],
            "CREATE TABLE `default_catalog`.`default_database`.`b` (\n  `x` INT\n) WITH (\n  'connector' = "
            "'print'\n)\n");
  // Renaming onto an existing name, or a view with ALTER TABLE, fails and changes nothing.
  EXPECT_THROW(env_->executeScript("ALTER TABLE b RENAME TO t"), SqlError);
  EXPECT_THROW(env_->executeScript("ALTER TABLE w SET ('a' = 'b')"), SqlError);
  results_.clear();
  env_->executeScript("SHOW TABLES");
  EXPECT_EQ(results_[0].rows, (std::vector<std::string>{"+I[b]", "+I[t]", "+I[w]"}));
}

}  // namespace
}  // namespace sluice::table
