// Runs every tests/sql/**/*.test file (format: README.md) against a TableEnvironment, once at
// parallelism 1 and once at parallelism 4 with tight channels (1 kb network buffers, one per subpartition:
// `taskmanager.network.memory.max-buffers-per-channel` = 1) on two TaskManagers (remote channels over TCP) to shake ordering and partitioning.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <cctype>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/config.h"
#include "common/error.h"
#include "connectors/builtin.h"
#include "sql_test_file.h"
#include "test_functions.h"
#include "table/api/table_environment.h"
#include "table/catalog/table_factory.h"
#include "types/row_batch.h"
#include "types/value_format.h"

namespace sluice::sqltest {
namespace {

namespace fs = std::filesystem;

/// One test instance: a file and the parallelism it runs at.
struct SqlTestCase {
  std::string path;      ///< absolute
  std::string relative;  ///< relative to tests/sql, for names and messages
  int parallelism;
};

/// gtest prints the parameter of a failed test with this.
void PrintTo(const SqlTestCase& c, std::ostream* os) { *os << c.relative << " at parallelism " << c.parallelism; }

/// The folder searched for `.test` files: tests/sql of the source tree, or SLUICE_SQLTEST_ROOT when set
/// (to run a scratch folder of cases).
std::string testRoot() {
  const char* root = std::getenv("SLUICE_SQLTEST_ROOT");
  return root != nullptr ? std::string(root) : std::string(SLUICE_SOURCE_DIR) + "/tests/sql";
}

std::vector<SqlTestCase> discoverCases() {
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(testRoot(), ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".test") files.push_back(it->path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<SqlTestCase> cases;
  for (int p : {1, 2, 4}) {
    for (const auto& f : files) {
      const std::string relative = fs::relative(f, testRoot()).string();
      // BATCH files also run at parallelism 2 (the issue's -p 1, 2 and 4).
      if (p == 2 && relative.rfind("batch/", 0) != 0) continue;
      cases.push_back(SqlTestCase{f, relative, p});
    }
  }
  return cases;
}

std::string caseName(const testing::TestParamInfo<SqlTestCase>& info) {
  std::string name = info.param.relative;
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".test") == 0) name.resize(name.size() - 5);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name + "_p" + std::to_string(info.param.parallelism);
}

/// A fresh directory for one file's inputs and outputs; removed afterwards unless SLUICE_KEEP_TEST_DIR
/// is set in the environment.
class TempDir {
 public:
  TempDir() {
    std::string templ = (fs::temp_directory_path() / "sluice-sqltest-XXXXXX").string();
    if (mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + templ);
    path_ = templ;
  }
  ~TempDir() {
    if (std::getenv("SLUICE_KEEP_TEST_DIR") != nullptr) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string listing(const std::vector<std::string>& lines) {
  if (lines.empty()) return "    (no rows)\n";
  std::string out;
  for (const auto& l : lines) out += "    " + l + "\n";
  return out;
}

std::string indent(const std::string& text) {
  std::string out = "    ";
  for (char c : text) {
    out += c;
    if (c == '\n') out += "    ";
  }
  return out + "\n";
}

class SqlFileTest : public testing::TestWithParam<SqlTestCase> {
 protected:
  void runFile();

 private:
  // What running one piece of SQL produced: the collected changelog or the error.
  struct Outcome {
    std::vector<std::string> changelog;
    bool failed = false;
    bool user_error = false;
    bool sql_error = false;
    int line = 0;
    int column = 0;
    std::string message;
  };

  Outcome run(const std::string& sql);
  std::string where(const Record& rec, const std::string& sql) const {
    return fmt::format("{}:{} (parallelism {}, {})\n  SQL:\n{}", GetParam().relative, rec.line, GetParam().parallelism,
                       env_->config().get(options::kRuntimeMode), indent(sql));
  }
  void checkQuery(const Record& rec, const std::string& sql, const Outcome& got);
  void checkError(const Record& rec, const std::string& sql, const Outcome& got, const std::string& expected_message);

  std::unique_ptr<table::TableEnvironment> env_;
  std::mutex mu_;
  std::vector<std::string> collected_;
};

SqlFileTest::Outcome SqlFileTest::run(const std::string& sql) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    collected_.clear();
  }
  Outcome out;
  try {
    env_->executeScript(sql);
  } catch (const SqlError& e) {
    out.failed = out.user_error = out.sql_error = true;
    out.line = e.line();
    out.column = e.column();
    out.message = e.what();
  } catch (const UserError& e) {
    out.failed = out.user_error = true;
    out.message = e.what();
  } catch (const InternalError& e) {
    out.failed = true;
    out.message = std::string("InternalError: ") + e.what();
  } catch (const std::exception& e) {
    out.failed = true;
    out.message = std::string("std::exception: ") + e.what();
  }
  std::lock_guard<std::mutex> lock(mu_);
  out.changelog = collected_;
  return out;
}

void SqlFileTest::checkError(const Record& rec, const std::string& sql, const Outcome& got,
                             const std::string& expected_message) {
  const std::string expected_place =
      rec.error_line ? fmt::format("a SqlError at {}:{}", *rec.error_line, *rec.error_column) : "a UserError";
  if (!got.failed) {
    ADD_FAILURE() << where(rec, sql) << "  expected " << expected_place << " containing:\n"
                  << indent(expected_message) << "  but it succeeded; changelog:\n"
                  << listing(got.changelog);
    return;
  }
  std::vector<std::string> problems;
  if (!got.user_error) problems.push_back("the error is not a UserError");
  if (rec.error_line) {
    if (!got.sql_error) {
      problems.push_back("the error is not a SqlError");
    } else if (got.line != *rec.error_line || got.column != *rec.error_column) {
      problems.push_back(fmt::format("the position is {}:{}, expected {}:{}", got.line, got.column, *rec.error_line,
                                     *rec.error_column));
    }
  }
  if (got.message.find(expected_message) == std::string::npos) problems.push_back("the message lacks the expected text");
  if (problems.empty()) return;
  std::string what;
  for (const auto& p : problems) what += "    " + p + "\n";
  ADD_FAILURE() << where(rec, sql) << "  expected " << expected_place << " containing:\n"
                << indent(expected_message) << "  actual (" << (got.sql_error ? fmt::format("SqlError at {}:{}", got.line, got.column)
                                                                               : std::string(got.user_error ? "UserError" : "not a UserError"))
                << "):\n"
                << indent(got.message) << what;
}

void SqlFileTest::checkQuery(const Record& rec, const std::string& sql, const Outcome& got) {
  if (got.failed) {
    ADD_FAILURE() << where(rec, sql) << "  expected:\n"
                  << listing(rec.lines) << "  but it failed:\n"
                  << indent(got.message);
    return;
  }
  if (env_->config().get(options::kRuntimeMode) == "BATCH") {
    // BATCH delivers final results only: every row an insertion.
    for (const auto& l : got.changelog)
      if (l.rfind("+I[", 0) != 0) {
        ADD_FAILURE() << where(rec, sql) << "  BATCH mode emitted a row that is not +I: " << l << "\n  changelog:\n"
                      << listing(got.changelog);
        return;
      }
  }
  if (rec.kind == RecordKind::kQueryOrdered) {
    if (got.changelog != rec.lines)
      ADD_FAILURE() << where(rec, sql) << "  expected rows in this order:\n"
                    << listing(rec.lines) << "  actual:\n"
                    << listing(got.changelog);
    return;
  }
  const bool exact = rec.kind == RecordKind::kQueryChangelog && GetParam().parallelism == 1;
  if (exact) {
    if (got.changelog != rec.lines) {
      ADD_FAILURE() << where(rec, sql) << "  expected changelog:\n"
                    << listing(rec.lines) << "  actual changelog:\n"
                    << listing(got.changelog);
    }
    return;
  }
  std::vector<std::string> problems;
  std::vector<std::string> expected;
  if (rec.kind == RecordKind::kQueryChangelog) {
    std::vector<std::string> expected_problems;
    expected = materialize(rec.lines, expected_problems);
    for (const auto& p : expected_problems) problems.push_back("in the expected changelog: " + p);
  } else {
    for (const auto& l : rec.lines) expected.push_back(normalizeExpectedRow(l));
    std::sort(expected.begin(), expected.end());
  }
  std::vector<std::string> actual_problems;
  const std::vector<std::string> actual = materialize(got.changelog, actual_problems);
  for (const auto& p : actual_problems) problems.push_back("in the actual changelog: " + p);
  if (actual == expected && problems.empty()) return;
  std::string detail;
  for (const auto& p : problems) detail += "    " + p + "\n";
  for (const auto& r : sortedDifference(expected, actual)) detail += "    missing:    " + r + "\n";
  for (const auto& r : sortedDifference(actual, expected)) detail += "    unexpected: " + r + "\n";
  ADD_FAILURE() << where(rec, sql) << "  expected final rows:\n"
                << listing(expected) << "  actual final rows:\n"
                << listing(actual) << "  actual changelog:\n"
                << listing(got.changelog) << detail;
}

void SqlFileTest::runFile() {
  const SqlTestCase& tc = GetParam();
  const std::vector<Record> records = parseTestFile(readFile(tc.path), tc.relative);
  ASSERT_FALSE(records.empty()) << tc.relative << ": no records";

  TempDir dir;
  std::map<std::string, std::string> vars{{"__TEST_DIR__", dir.path()}};

  Configuration config;
  config.set("parallelism.default", std::to_string(tc.parallelism));
  if (tc.parallelism > 1) {
    config.set("taskmanager.memory.segment-size", "1kb");
    config.set("taskmanager.network.memory.max-buffers-per-channel", "1");
    // Two TaskManagers: channels between subtasks of different TaskManagers go over loopback TCP.
    config.set("local.number-taskmanager", "2");
  }
  auto registry = std::make_shared<table::FactoryRegistry>();
  connectors::registerBuiltinConnectors(*registry);
  registerTestFunctions();
  env_ = std::make_unique<table::TableEnvironment>(config, registry);
  env_->setCollectCallback([this](const types::RowType&, const types::RowBatch& batch) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t r = 0; r < batch.numRows(); ++r) {
      std::string line;
      types::formatRow(batch, r, line);
      collected_.push_back(std::move(line));
    }
  });

  // SLUICE_SQLTEST_TRACE=1 names each record before it runs (to find the one that crashes or hangs).
  const bool trace = std::getenv("SLUICE_SQLTEST_TRACE") != nullptr;
  for (const Record& rec : records) {
    if (rec.only_parallelism && *rec.only_parallelism != tc.parallelism) continue;
    if (rec.skip_parallelism && *rec.skip_parallelism == tc.parallelism) continue;
    if (trace) std::cerr << "[sqltest] " << tc.relative << ":" << rec.line << std::endl;
    std::string sql;
    try {
      sql = substituteVariables(rec.sql, vars);
    } catch (const std::exception& e) {
      ADD_FAILURE() << tc.relative << ":" << rec.line << ": " << e.what();
      continue;
    }
    switch (rec.kind) {
      case RecordKind::kInput: {
        const std::string path = dir.path() + "/" + rec.name + ".csv";
        std::ofstream out(path, std::ios::binary);
        for (const auto& l : rec.lines) out << l << '\n';
        out.close();
        ASSERT_TRUE(out.good()) << "cannot write " << path;
        vars[rec.name] = path;
        break;
      }
      case RecordKind::kSet: {
        try {
          env_->config().set(rec.name, sql);
        } catch (const std::exception& e) {
          ADD_FAILURE() << tc.relative << ":" << rec.line << ": set " << rec.name << " failed: " << e.what();
        }
        break;
      }
      case RecordKind::kStatementOk: {
        const Outcome got = run(sql);
        if (got.failed) ADD_FAILURE() << where(rec, sql) << "  expected success, but it failed:\n" << indent(got.message);
        break;
      }
      case RecordKind::kStatementError:
      case RecordKind::kQueryError: {
        std::string message;
        try {
          message = substituteVariables(rec.message, vars);
        } catch (const std::exception& e) {
          ADD_FAILURE() << tc.relative << ":" << rec.line << ": " << e.what();
          continue;
        }
        checkError(rec, sql, run(sql), message);
        break;
      }
      case RecordKind::kQueryChangelog:
      case RecordKind::kQueryRows:
      case RecordKind::kQueryOrdered:
        checkQuery(rec, sql, run(sql));
        if (rec.also_streaming) {
          const std::string mode = env_->config().get(options::kRuntimeMode);
          env_->config().set(options::kRuntimeMode.key(), "STREAMING");
          checkQuery(rec, sql, run(sql));
          env_->config().set(options::kRuntimeMode.key(), mode);
        }
        break;
    }
  }
  env_.reset();
}

TEST_P(SqlFileTest, Run) { runFile(); }

INSTANTIATE_TEST_SUITE_P(Sql, SqlFileTest, testing::ValuesIn(discoverCases()), caseName);

}  // namespace
}  // namespace sluice::sqltest
