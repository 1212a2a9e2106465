#include "connectors/filesystem_connector.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/config.h"
#include "common/error.h"
#include "connectors/builtin.h"
#include "test_util.h"

namespace sluice::connectors {
namespace {

using testing::CollectingOutput;
using testing::runSource;
using testing::TempDir;
using types::LogicalType;
using types::RowType;

table::ResolvedTable fsTable(const std::string& path, RowType type, std::map<std::string, std::string> extra = {}) {
  table::ResolvedTable t;
  t.name = "t";
  t.physical_type = std::move(type);
  t.options = {{"connector", "filesystem"}, {"path", path}, {"format", "csv"}};
  for (auto& kv : extra) t.options[kv.first] = kv.second;
  return t;
}

RowType idName() { return RowType{{"id", "name"}, {LogicalType::bigint(), LogicalType::string()}}; }

// The values of column 0 (BIGINT) of every row collected.
std::multiset<int64_t> firstColumn(const CollectingOutput& out) {
  std::multiset<int64_t> ids;
  for (const auto& b : out.batches)
    for (size_t r = 0; r < b.numRows(); ++r) ids.insert(b.column(0).getLong(r));
  return ids;
}

TEST(FileSystemSourceTest, ReadsAFileWithQuotesCrLfAndNoFinalNewline) {
  TempDir dir;
  std::string p = dir.write("a.csv", "1,\"x, y\"\r\n2,plain\r\n3,last");
  Configuration conf;
  auto src = FileSystemTableFactory().createSource(fsTable("file://" + p, idName()), conf);
  EXPECT_TRUE(src->isBounded());
  EXPECT_FALSE(src->parallelism().has_value());
  CollectingOutput out;
  runSource(*src, 0, 1, out);
  ASSERT_EQ(out.batches.size(), 1u);
  const auto& b = out.batches[0];
  ASSERT_EQ(b.numRows(), 3u);
  EXPECT_EQ(b.column(0).getLong(2), 3);
  EXPECT_EQ(b.column(1).getString(0), "x, y");
  EXPECT_EQ(b.column(1).getString(1), "plain");
  EXPECT_EQ(b.column(1).getString(2), "last");
}

TEST(FileSystemSourceTest, MissingPathFailsAtCreation) {
  Configuration conf;
  try {
    FileSystemTableFactory().createSource(fsTable("/nonexistent/dir/x.csv", idName()), conf);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("'/nonexistent/dir/x.csv'"));
  }
}

TEST(FileSystemSourceTest, MissingFormatOrPathIsAUserError) {
  Configuration conf;
  table::ResolvedTable t = fsTable("/tmp", idName());
  t.options.erase("format");
  EXPECT_THROW(FileSystemTableFactory().createSource(t, conf), UserError);
  t = fsTable("/tmp", idName(), {{"format", "avro"}});
  EXPECT_THROW(FileSystemTableFactory().createSource(t, conf), UserError);
  t.options.erase("path");
  EXPECT_THROW(FileSystemTableFactory().createSource(t, conf), UserError);
}

TEST(FileSystemSourceTest, ParseErrorNamesFileAndLine) {
  TempDir dir;
  std::string p = dir.write("bad.csv", "1,a\n2,b\n\nthree,c\n");
  Configuration conf;
  auto src = FileSystemTableFactory().createSource(fsTable(p, idName()), conf);
  CollectingOutput out;
  try {
    runSource(*src, 0, 1, out);
    FAIL();
  } catch (const InputError& e) {
    // Line 3 is blank; the bad row is on line 4.
    EXPECT_EQ(std::string(e.what()), p + ":4: cannot parse 'three' as BIGINT for column 'id'");
  }
}

// The rows before a bad line reach the output before the job fails (Flink's reader emits record by
// record, so a sink has seen them); the bad row itself is not emitted.
TEST(FileSystemSourceTest, ParseErrorEmitsTheRowsBeforeTheBadLine) {
  TempDir dir;
  std::string csv = dir.write("bad.csv", "1,a\n2,b\nthree,c\n4,d\n");
  std::string json = dir.write("bad.json", "{\"id\":1,\"name\":\"a\"}\n{\"id\":2,\"name\":\"b\"}\n{\"id\":\n");
  Configuration conf;
  for (const auto& [path, format, line] : {std::make_tuple(csv, "csv", 3), std::make_tuple(json, "json", 3)}) {
    SCOPED_TRACE(format);
    auto src = FileSystemTableFactory().createSource(fsTable(path, idName(), {{"format", format}}), conf);
    CollectingOutput out;
    try {
      runSource(*src, 0, 1, out);
      FAIL();
    } catch (const InputError& e) {
      EXPECT_THAT(e.what(), ::testing::StartsWith(path + ":" + std::to_string(line) + ": "));
    }
    EXPECT_EQ(firstColumn(out), (std::multiset<int64_t>{1, 2}));
  }
}

TEST(FileSystemSourceTest, IgnoreParseErrorsCountsAndKeepsRows) {
  TempDir dir;
  std::string p = dir.write("bad.csv", "1,a\nx,b\n3\n4,d,extra\n");
  Configuration conf;
  auto src = FileSystemTableFactory().createSource(fsTable(p, idName(), {{"csv.ignore-parse-errors", "true"}}), conf);
  CollectingOutput out;
  auto op = runSource(*src, 0, 1, out);
  auto* fsop = dynamic_cast<FileSystemSourceOperator*>(op.get());
  ASSERT_NE(fsop, nullptr);
  // Rows: (1,a), (NULL,b), (3,NULL); "4,d,extra" dropped. Errors: x, missing name, dropped row = 3.
  EXPECT_EQ(out.rows(), 3u);
  EXPECT_EQ(fsop->parseErrors(), 3);
  EXPECT_EQ(fsop->rowsEmitted(), 3);
  EXPECT_TRUE(out.batches[0].column(0).isNull(1));
  EXPECT_TRUE(out.batches[0].column(1).isNull(2));
}

TEST(FileSystemSourceTest, BatchesRespectBatchSize) {
  TempDir dir;
  std::string content;
  for (int i = 1; i <= 250; ++i) content += std::to_string(i) + ",n\n";
  std::string p = dir.write("a.csv", content);
  Configuration conf;
  conf.set("sluice.batch.size", "100");
  auto src = FileSystemTableFactory().createSource(fsTable(p, idName()), conf);
  auto op = src->operatorFactory()->createOperator();
  runtime::OperatorContext ctx;
  ctx.config = &conf;
  CollectingOutput out;
  op->open(ctx, &out);
  auto* s = dynamic_cast<runtime::SourceOperator*>(op.get());
  while (s->emitNext() != runtime::InputStatus::kEndOfInput) {
  }
  // 250 rows in batches of at most 100: 100, 100, 50.
  ASSERT_EQ(out.batches.size(), 3u);
  EXPECT_EQ(out.batches[0].numRows(), 100u);
  EXPECT_EQ(out.batches[2].numRows(), 50u);
}

// Lines 1..10007, one number each, of varying width; one subtask per byte range.
TEST(FileSystemSourceTest, ParallelSplitReadsEveryLineOnce) {
  TempDir dir;
  const int64_t n = 10007;
  std::string content;
  for (int64_t i = 1; i <= n; ++i)
    content += std::to_string(i) + "," + std::string(static_cast<size_t>(i % 7), 'z') + "\n";
  std::string p = dir.write("numbers.csv", content);
  Configuration conf;
  auto src = FileSystemTableFactory().createSource(fsTable(p, idName()), conf);
  for (int parallelism = 1; parallelism <= 5; ++parallelism) {
    std::set<int64_t> seen;
    int64_t sum = 0;
    size_t rows = 0;
    for (int i = 0; i < parallelism; ++i) {
      CollectingOutput out;
      runSource(*src, i, parallelism, out);
      for (const auto& b : out.batches) {
        for (size_t r = 0; r < b.numRows(); ++r) {
          seen.insert(b.column(0).getLong(r));
          sum += b.column(0).getLong(r);
          EXPECT_EQ(b.column(1).getString(r).size(), static_cast<size_t>(b.column(0).getLong(r) % 7));
        }
        rows += b.numRows();
      }
    }
    EXPECT_EQ(rows, static_cast<size_t>(n)) << "parallelism " << parallelism;
    EXPECT_EQ(seen.size(), static_cast<size_t>(n)) << "parallelism " << parallelism;
    // 10007 * 10008 / 2 = 50075028
    EXPECT_EQ(sum, 50075028) << "parallelism " << parallelism;
  }
}

TEST(FileSystemSourceTest, ParallelSplitReportsTheRightLine) {
  TempDir dir;
  std::string content;
  for (int i = 1; i <= 1000; ++i) content += (i == 777 ? std::string("bad") : std::to_string(i)) + ",v\n";
  std::string p = dir.write("n.csv", content);
  Configuration conf;
  auto src = FileSystemTableFactory().createSource(fsTable(p, idName()), conf);
  int errors = 0;
  for (int i = 0; i < 3; ++i) {
    CollectingOutput out;
    try {
      runSource(*src, i, 3, out);
    } catch (const InputError& e) {
      ++errors;
      EXPECT_EQ(std::string(e.what()), p + ":777: cannot parse 'bad' as BIGINT for column 'id'");
    }
  }
  EXPECT_EQ(errors, 1);
}

TEST(FileSystemSourceTest, DirectoryFilesAreAssignedRoundRobin) {
  TempDir dir;
  dir.write("in/a.csv", "1,a\n2,a\n");
  dir.write("in/b.csv", "3,b\n");
  dir.write("in/sub/c.csv", "4,c\n");
  dir.write("in/_SUCCESS", "garbage\n");
  dir.write("in/.hidden.csv", "garbage\n");
  Configuration conf;
  auto src = FileSystemTableFactory().createSource(fsTable(dir.path() + "/in", idName()), conf);
  // Sorted files: a.csv, b.csv, sub/c.csv -> subtask 0: a.csv and sub/c.csv, subtask 1: b.csv.
  CollectingOutput out0, out1;
  runSource(*src, 0, 2, out0);
  runSource(*src, 1, 2, out1);
  EXPECT_EQ(firstColumn(out0), (std::multiset<int64_t>{1, 2, 4}));
  EXPECT_EQ(firstColumn(out1), (std::multiset<int64_t>{3}));
}

// source.path.regex-pattern keeps the files whose whole absolute path matches; subdirectories are
// still descended and hidden files stay hidden.
TEST(FileSystemSourceTest, RegexPatternFiltersTheFilesOfADirectory) {
  TempDir dir;
  dir.write("in/a.csv", "1,a\n");
  dir.write("in/notes.txt", "garbage\n");
  dir.write("in/sub/c.csv", "3,c\n");
  dir.write("in/sub/d.csv.bak", "garbage\n");
  dir.write("in/_e.csv", "garbage\n");
  Configuration conf;
  auto ids = [&](const std::string& regex) {
    auto src = FileSystemTableFactory().createSource(
        fsTable(dir.path() + "/in", idName(), {{"source.path.regex-pattern", regex}}), conf);
    CollectingOutput out;
    runSource(*src, 0, 1, out);
    return firstColumn(out);
  };
  EXPECT_EQ(ids(".*\\.csv"), (std::multiset<int64_t>{1, 3}));
  EXPECT_EQ(ids(dir.path() + "/in/sub/.*\\.csv"), (std::multiset<int64_t>{3}));
  // A match must cover the whole path: a bare file name matches nothing.
  EXPECT_EQ(ids("a\\.csv"), (std::multiset<int64_t>{}));
  try {
    FileSystemTableFactory().createSource(
        fsTable(dir.path() + "/in", idName(), {{"source.path.regex-pattern", "(.csv"}}), conf);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(),
                ::testing::StartsWith("Invalid value '(.csv' for option 'source.path.regex-pattern' of table 't'"));
  }
}

// A monitor interval makes Flink's source unbounded; Sluice refuses it instead of reading the files once.
TEST(FileSystemSourceTest, MonitorIntervalIsRefused) {
  TempDir dir;
  std::string p = dir.write("a.csv", "1,a\n");
  Configuration conf;
  try {
    FileSystemTableFactory().createSource(fsTable(p, idName(), {{"source.monitor-interval", "10 s"}}), conf);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), ::testing::StartsWith("Option 'source.monitor-interval' of table 't': continuous "
                                                "monitoring of the path is not supported yet"));
  }
}

TEST(FileSystemSourceTest, ErrorInDirectoryNamesTheFile) {
  TempDir dir;
  dir.write("in/a.csv", "1,a\n");
  dir.write("in/b.csv", "2,b\nx,b\n");
  Configuration conf;
  auto src = FileSystemTableFactory().createSource(fsTable(dir.path() + "/in/", idName()), conf);
  CollectingOutput out;
  try {
    runSource(*src, 0, 1, out);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), dir.path() + "/in/b.csv:2: cannot parse 'x' as BIGINT for column 'id'");
  }
}

TEST(FileSystemSourceTest, ScanParallelism) {
  TempDir dir;
  std::string p = dir.write("a.csv", "1,a\n");
  Configuration conf;
  auto src = FileSystemTableFactory().createSource(fsTable(p, idName(), {{"scan.parallelism", "3"}}), conf);
  EXPECT_EQ(src->parallelism(), 3);
  try {
    FileSystemTableFactory().createSource(fsTable(p, idName(), {{"scan.parallelism", "0"}}), conf);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "Invalid configured parallelism 0 for table 't' (option 'scan.parallelism').");
  }
  try {
    FileSystemTableFactory().createSource(fsTable(p, idName(), {{"scan.parallelism", "two"}}), conf);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "Could not parse value 'two' for key 'scan.parallelism' of table 't': expected an integer.");
  }
}

TEST(FileSystemFactoryTest, UnknownOptionListsSupportedOnes) {
  table::FactoryRegistry registry;
  registerBuiltinConnectors(registry);
  EXPECT_EQ(registry.identifiers(),
            (std::vector<std::string>{"blackhole", "datagen", "filesystem", "kafka", "nexmark", "print", "upsert-kafka"}));
  table::ResolvedTable t =
      fsTable("/tmp", idName(), {{"csv.delimiter", ";"}, {"sink.rolling-policy.file-size", "1MB"}});
  try {
    registry.find(t);
    FAIL();
  } catch (const UserError& e) {
    std::string msg = e.what();
    EXPECT_THAT(msg, ::testing::HasSubstr("Unsupported options:\n\ncsv.delimiter\n"));
    EXPECT_THAT(msg, ::testing::HasSubstr("csv.field-delimiter\n"));
    EXPECT_THAT(msg, ::testing::Not(::testing::HasSubstr("Unsupported options:\n\ncsv.delimiter\nsink.")));
    // 6 edits from 'csv.field-delimiter': too far for a guess.
    EXPECT_THAT(msg, ::testing::Not(::testing::HasSubstr("Did you mean")));
  }
  // 1 edit from 'source.monitor-interval', 2 from 'sink.rolling-policy.file-size'.
  t = fsTable("/tmp", idName(), {{"source.monitor-intervall", "1s"}, {"sink.rolling-policy.fiel-size", "1MB"}});
  try {
    registry.find(t);
    FAIL();
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_THAT(msg, ::testing::HasSubstr("Unsupported options:\n\nsink.rolling-policy.fiel-size\nsource.monitor-intervall\n\n"
                                          "Did you mean 'sink.rolling-policy.file-size' instead of "
                                          "'sink.rolling-policy.fiel-size'?\n\nDid you mean 'source.monitor-interval' instead "
                                          "of 'source.monitor-intervall'?\n\nSupported options:"));
  }
}

// Runs one sink subtask over `batch` to its end and returns the files it committed.
std::vector<std::string> runSink(const table::DynamicTableSink& sink, int subtask, int parallelism,
                                 types::RowBatch batch) {
  auto op = sink.operatorFactory()->createOperator();
  runtime::OperatorContext ctx;
  ctx.subtask_index = subtask;
  ctx.parallelism = parallelism;
  op->open(ctx, nullptr);
  op->processBatch(std::move(batch));
  op->endInput();
  op->close();
  return dynamic_cast<FileSystemSinkOperator*>(op.get())->committedFiles();
}

types::RowBatch rows(const std::vector<std::pair<int64_t, std::string>>& values) {
  types::RowBatch b(idName());
  for (const auto& v : values) {
    b.column(0).appendLong(v.first);
    b.column(1).appendString(v.second);
    b.kinds().push_back(types::RowKind::kInsert);
  }
  return b;
}

// Every entry name directly in `dir` (hidden ones too), sorted.
std::vector<std::string> listDir(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The run UUID the sink's operators name their files with.
std::string runIdOf(const table::DynamicTableSink& sink, const std::string& dir) {
  auto op = sink.operatorFactory()->createOperator();
  op->open(runtime::OperatorContext{}, nullptr);
  auto* fs_op = dynamic_cast<FileSystemSinkOperator*>(op.get());
  // ".../part-<uuid>-0-0.csv": the uuid is between "part-" and "-0-0.csv".
  std::string name = fs_op->partFilePath(0).substr(dir.size() + 1);
  op->close();
  return name.substr(5, name.size() - 5 - 8);
}

// Reads the whole directory back with one source subtask: the ids, sorted.
std::multiset<int64_t> readBackIds(const std::string& dir) {
  Configuration conf;
  auto src = FileSystemTableFactory().createSource(fsTable(dir, idName()), conf);
  CollectingOutput out;
  runSource(*src, 0, 1, out);
  std::multiset<int64_t> ids;
  for (const auto& b : out.batches)
    for (size_t r = 0; r < b.numRows(); ++r) ids.insert(b.column(0).getLong(r));
  return ids;
}

TEST(FileSystemSinkTest, RandomUuidHasTheVersion4Form) {
  const std::string a = randomUuid();
  const std::string b = randomUuid();
  EXPECT_THAT(a, ::testing::MatchesRegex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
  EXPECT_NE(a, b);
}

TEST(FileSystemSinkTest, EachSubtaskCommitsAUniquelyNamedPartFileThatReadsBack) {
  TempDir dir;
  Configuration conf;
  FileSystemTableFactory f;
  const std::string out_dir = dir.path() + "/out";
  auto sink = f.createSink(fsTable(out_dir + "/", idName()), conf);
  EXPECT_FALSE(sink->acceptsUpdates());
  const std::string uuid = runIdOf(*sink, out_dir);
  std::vector<std::string> p0 = runSink(*sink, 0, 2, rows({{1, "a b"}, {2, "x"}}));
  std::vector<std::string> p1 = runSink(*sink, 1, 2, rows({{3, ""}}));
  const std::string name0 = "part-" + uuid + "-0-0.csv";
  const std::string name1 = "part-" + uuid + "-1-0.csv";
  EXPECT_EQ(p0, (std::vector<std::string>{out_dir + "/" + name0}));
  EXPECT_EQ(p1, (std::vector<std::string>{out_dir + "/" + name1}));
  // Only the two committed files remain: the in-progress ones were renamed.
  EXPECT_EQ(listDir(out_dir), (std::vector<std::string>{std::min(name0, name1), std::max(name0, name1)}));
  EXPECT_EQ(testing::readFile(out_dir + "/" + name0), "1,\"a b\"\n2,x\n");
  EXPECT_EQ(testing::readFile(out_dir + "/" + name1), "3,\n");
  auto src = f.createSource(fsTable(out_dir, idName()), conf);
  CollectingOutput out;
  runSource(*src, 0, 1, out);
  ASSERT_EQ(out.rows(), 3u);
  EXPECT_EQ(readBackIds(out_dir), (std::multiset<int64_t>{1, 2, 3}));
}

TEST(FileSystemSinkTest, TwoRunsIntoTheSameDirectoryAppend) {
  TempDir dir;
  Configuration conf;
  FileSystemTableFactory f;
  const std::string out_dir = dir.path() + "/out";
  // Run 1 at parallelism 2: ids 1, 2 (subtask 0) and 3 (subtask 1).
  auto first = f.createSink(fsTable(out_dir, idName()), conf);
  runSink(*first, 0, 2, rows({{1, "a"}, {2, "b"}}));
  runSink(*first, 1, 2, rows({{3, "c"}}));
  // Run 2 (a new job: planned again) at parallelism 1: ids 3 and 4. Its part-...-0-0 file must not replace
  // run 1's subtask-0 file.
  auto second = f.createSink(fsTable(out_dir, idName()), conf);
  EXPECT_NE(runIdOf(*first, out_dir), runIdOf(*second, out_dir));
  runSink(*second, 0, 1, rows({{3, "c"}, {4, "d"}}));
  // 2 + 1 files of run 1, 1 file of run 2.
  EXPECT_EQ(listDir(out_dir).size(), 3u);
  // The union of both runs: {1, 2, 3} + {3, 4}.
  EXPECT_EQ(readBackIds(out_dir), (std::multiset<int64_t>{1, 2, 3, 3, 4}));
}

TEST(FileSystemSinkTest, MissingDirectoryIsCreatedWithItsParents) {
  TempDir dir;
  Configuration conf;
  const std::string out_dir = dir.path() + "/a/b/c";
  auto sink = FileSystemTableFactory().createSink(fsTable("file://" + out_dir, idName()), conf);
  EXPECT_FALSE(std::filesystem::exists(out_dir));
  std::vector<std::string> files = runSink(*sink, 0, 1, rows({{7, "z"}}));
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(std::filesystem::path(files[0]).parent_path().string(), out_dir);
  EXPECT_EQ(testing::readFile(files[0]), "7,z\n");
}

TEST(FileSystemSinkTest, AFilePathIsAnError) {
  TempDir dir;
  Configuration conf;
  const std::string file = dir.write("result.csv", "old\n");
  try {
    FileSystemTableFactory().createSink(fsTable(file, idName()), conf);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "Path '" + file + "' of table 't' is a file; the filesystem sink writes part files into a directory.");
  }
  // A file that appears after planning fails the subtask the same way.
  const std::string later = dir.path() + "/later";
  auto sink = FileSystemTableFactory().createSink(fsTable(later, idName()), conf);
  dir.write("later", "x\n");
  auto op = sink->operatorFactory()->createOperator();
  try {
    op->open(runtime::OperatorContext{}, nullptr);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("Path '" + later + "' of table 't' is a file;"));
  }
  EXPECT_EQ(testing::readFile(file), "old\n");
  EXPECT_EQ(testing::readFile(later), "x\n");
}

TEST(FileSystemSinkTest, AJobFailingBeforeEndInputLeavesNoFile) {
  TempDir dir;
  Configuration conf;
  const std::string out_dir = dir.path() + "/out";
  auto sink = FileSystemTableFactory().createSink(fsTable(out_dir, idName()), conf);
  auto op = sink->operatorFactory()->createOperator();
  op->open(runtime::OperatorContext{}, nullptr);
  op->processBatch(rows({{1, "a"}, {2, "b"}}));
  auto* fs_op = dynamic_cast<FileSystemSinkOperator*>(op.get());
  // While running, only the hidden in-progress file exists, and a reader of the directory skips it.
  const std::string hidden = std::filesystem::path(fs_op->inProgressPath(0)).filename().string();
  EXPECT_EQ(hidden.substr(0, 6), ".part-");
  EXPECT_EQ(listDir(out_dir), (std::vector<std::string>{hidden}));
  EXPECT_EQ(readBackIds(out_dir), (std::multiset<int64_t>{}));
  // Failure: close without endInput.
  op->close();
  EXPECT_TRUE(fs_op->committedFiles().empty());
  EXPECT_EQ(listDir(out_dir), (std::vector<std::string>{}));
  // The same when the operator is only destroyed.
  auto op2 = sink->operatorFactory()->createOperator();
  op2->open(runtime::OperatorContext{}, nullptr);
  op2->processBatch(rows({{3, "c"}}));
  op2.reset();
  EXPECT_EQ(listDir(out_dir), (std::vector<std::string>{}));
}

TEST(FileSystemSinkTest, ASubtaskWithoutRowsLeavesNoFile) {
  TempDir dir;
  Configuration conf;
  const std::string out_dir = dir.path() + "/out";
  auto sink = FileSystemTableFactory().createSink(fsTable(out_dir, idName()), conf);
  EXPECT_TRUE(runSink(*sink, 0, 1, rows({})).empty());
  EXPECT_TRUE(std::filesystem::is_directory(out_dir));
  EXPECT_EQ(listDir(out_dir), (std::vector<std::string>{}));
}

TEST(FileSystemSinkTest, RollsToTheNextPartFilePastTheRollingSize) {
  TempDir dir;
  Configuration conf;
  const std::string out_dir = dir.path() + "/out";
  auto sink =
      FileSystemTableFactory().createSink(fsTable(out_dir, idName(), {{"sink.rolling-policy.file-size", "10b"}}), conf);
  // Each line "N,aaaa\n" is 7 bytes. A row starts a new part when the current one is already > 10 bytes:
  // part 0: row 1 (7), row 2 (14 > 10); part 1: row 3 (7), row 4 (14); part 2: row 5 (7).
  auto op = sink->operatorFactory()->createOperator();
  runtime::OperatorContext ctx;
  ctx.subtask_index = 1;
  ctx.parallelism = 2;
  op->open(ctx, nullptr);
  op->processBatch(rows({{1, "aaaa"}, {2, "aaaa"}, {3, "aaaa"}}));
  op->processBatch(rows({{4, "aaaa"}, {5, "aaaa"}}));
  auto* fs_op = dynamic_cast<FileSystemSinkOperator*>(op.get());
  // Nothing visible before the commit.
  EXPECT_EQ(readBackIds(out_dir), (std::multiset<int64_t>{}));
  op->endInput();
  op->close();
  const std::vector<std::string>& files = fs_op->committedFiles();
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[2], fs_op->partFilePath(2));
  EXPECT_EQ(files[2].substr(files[2].size() - 8), "-1-2.csv");
  EXPECT_EQ(testing::readFile(files[0]), "1,aaaa\n2,aaaa\n");
  EXPECT_EQ(testing::readFile(files[1]), "3,aaaa\n4,aaaa\n");
  EXPECT_EQ(testing::readFile(files[2]), "5,aaaa\n");
  EXPECT_EQ(listDir(out_dir).size(), 3u);
}

TEST(FileSystemSinkTest, BadRollingSizeIsAnError) {
  Configuration conf;
  for (const std::string bad : {"lots", "0", "-5mb"}) {
    try {
      FileSystemTableFactory().createSink(fsTable("/tmp/x", idName(), {{"sink.rolling-policy.file-size", bad}}), conf);
      FAIL() << bad;
    } catch (const UserError& e) {
      EXPECT_EQ(std::string(e.what()), "Invalid value '" + bad +
                                           "' for option 'sink.rolling-policy.file-size' of table 't': expected a "
                                           "positive memory size such as '128mb'.");
    }
  }
}

TEST(FileSystemSinkTest, RejectsUpdates) {
  TempDir dir;
  Configuration conf;
  auto sink = FileSystemTableFactory().createSink(fsTable(dir.path() + "/o/", idName()), conf);
  auto op = sink->operatorFactory()->createOperator();
  op->open(runtime::OperatorContext{}, nullptr);
  types::RowBatch b = rows({{1, "a"}});
  b.kinds()[0] = types::RowKind::kDelete;
  EXPECT_THROW(op->processBatch(std::move(b)), InternalError);
}

}  // namespace
}  // namespace sluice::connectors
