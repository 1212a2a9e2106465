// `table.exec.source.idle-timeout` for a watermark the source does not generate itself (no push-down): the
// planner puts a WatermarkAssigner after the scan, and a source subtask that has a split but no rows
// holds back the windows downstream until its assigner announces IDLE. The source here is unbounded, so
// without idleness the TUMBLE window never fires; the test waits for the expected rows, cancels the job
// and checks nothing else was emitted. Expected rows are worked out by hand next to the data.

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/config.h"
#include "connectors/builtin.h"
#include "runtime/operators/row_source_reader_operator.h"
#include "table/api/table_environment.h"
#include "table/catalog/table_factory.h"
#include "types/value_format.h"

namespace sluice::table {
namespace {

using types::RowBatch;

constexpr int64_t k20150101 = 1420070400000;  // 2015-01-01T00:00:00 in ms since the epoch

// (k, v, ts): the rows subtask 0 emits, in one batch. Watermark ts - 2 s, 10 s tumbling windows:
//   a,1 00:00:01   b,2 00:00:04   a,3 00:00:09   b,4 00:00:12   a,5 00:00:15   a,6 00:00:27
// Subtask 0's watermark is 00:00:25 (27 - 2): [00:00, 00:00:10) and [00:00:10, 00:00:20) fire (end - 1 ms
// <= 00:00:25), [00:00:20, 00:00:30) does not. No row is late (ascending).
//   [00:00, 00:00:10): a = 1 + 3 = 4 (2 rows), b = 2 (1 row)
//   [00:00:10, 00:00:20): a = 5 (1 row), b = 4 (1 row)
RowBatch scriptedRows(const types::RowType& type) {
  const std::vector<std::tuple<const char*, int, int>> rows = {{"a", 1, 1},  {"b", 2, 4},  {"a", 3, 9},
                                                               {"b", 4, 12}, {"a", 5, 15}, {"a", 6, 27}};
  RowBatch b(type);
  for (const auto& [k, v, s] : rows) {
    b.column(0).appendString(k);
    b.column(1).appendLong(v);
    b.column(2).appendLong(k20150101 + s * 1000);
    b.kinds().push_back(types::RowKind::kInsert);
  }
  return b;
}

// Every subtask gets one split (its own index); the reader of split 0 emits the rows once, every reader
// then has nothing more, forever (an unbounded source with a silent split, like an empty partition).
struct SilentSplitSource final : runtime::Source<RowBatch, int> {
  explicit SilentSplitSource(types::RowType t) : type(std::move(t)) {}
  bool isBounded() const override { return false; }
  struct Enumerator final : runtime::SplitEnumerator<int> {
    std::vector<int> given;
    std::optional<int> handleSplitRequest(int subtask) override {
      if (std::count(given.begin(), given.end(), subtask) > 0) return std::nullopt;
      given.push_back(subtask);
      return subtask;
    }
  };
  struct Reader final : runtime::SourceReader<RowBatch, int> {
    explicit Reader(types::RowType t) : type(std::move(t)) {}
    types::RowType type;
    bool pending = false;
    void addSplit(int split) override { pending = split == 0; }
    runtime::InputStatus pollNext(runtime::ReaderOutput<RowBatch>& out) override {
      if (!pending) return runtime::InputStatus::kNothingAvailable;
      pending = false;
      out.collect(scriptedRows(type));
      return runtime::InputStatus::kMoreAvailable;
    }
  };
  std::unique_ptr<runtime::SplitEnumerator<int>> createEnumerator(int) const override {
    return std::make_unique<Enumerator>();
  }
  std::unique_ptr<runtime::SourceReader<RowBatch, int>> createReader(
      const runtime::SourceReaderContext&) const override {
    return std::make_unique<Reader>(type);
  }
  types::RowType type;
};

struct SilentSplitTableSource final : ScanTableSource {
  SilentSplitTableSource(types::RowType t, int p) : type(std::move(t)), parallelism_(p) {}
  std::shared_ptr<const runtime::StreamOperatorFactory> operatorFactory() const override {
    auto source = std::make_shared<SilentSplitSource>(type);
    return runtime::makeOperatorFactory(
        [source] { return std::make_unique<runtime::RowSourceReaderOperator<int>>(source); }, true);
  }
  std::optional<int> parallelism() const override { return parallelism_; }
  bool isBounded() const override { return false; }
  std::string summary() const override { return "silent-split"; }
  types::RowType type;
  int parallelism_;
};

struct SilentSplitFactory final : DynamicTableFactory {
  std::string identifier() const override { return "silent-split"; }
  std::set<std::string> supportedOptions() const override { return {"scan.parallelism"}; }
  std::unique_ptr<ScanTableSource> createSource(const ResolvedTable& table, const Configuration&) const override {
    return std::make_unique<SilentSplitTableSource>(table.physical_type,
                                                    std::stoi(table.options.at("scan.parallelism")));
  }
};

TEST(IdleSourceTest, WatermarkAssignerIdleTimeoutLetsTheWindowsFire) {
  Configuration config;
  config.set("parallelism.default", "1");
  auto registry = std::make_shared<FactoryRegistry>();
  connectors::registerBuiltinConnectors(*registry);
  registry->add(std::make_shared<SilentSplitFactory>());
  TableEnvironment env(config, registry);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> lines;
  env.setCollectCallback([&](const types::RowType&, const RowBatch& batch) {
    std::lock_guard<std::mutex> lock(mu);
    for (size_t r = 0; r < batch.numRows(); ++r) {
      lines.emplace_back();
      types::formatRow(batch, r, lines.back());
    }
    cv.notify_all();
  });
  const std::vector<std::string> expected = {
      "+I[2015-01-01T00:00, 2015-01-01T00:00:10, a, 4, 2]",
      "+I[2015-01-01T00:00, 2015-01-01T00:00:10, b, 2, 1]",
      "+I[2015-01-01T00:00:10, 2015-01-01T00:00:20, a, 5, 1]",
      "+I[2015-01-01T00:00:10, 2015-01-01T00:00:20, b, 4, 1]",
  };
  auto job = std::async(std::launch::async, [&] {
    env.executeScript(
        "SET 'table.exec.source.idle-timeout' = '300 ms';\n"
        "CREATE TABLE t (k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) "
        "WITH ('connector' = 'silent-split', 'scan.parallelism' = '2');\n"
        "SELECT window_start, window_end, k, SUM(v) AS s, COUNT(*) AS c "
        "FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, k;");
  });
  {
    // A guard against a hang only: the windows fire about 300 ms after the start.
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::seconds(60), [&] { return lines.size() >= expected.size(); });
  }
  env.cancel();
  job.get();
  std::lock_guard<std::mutex> lock(mu);
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, expected);
}

}  // namespace
}  // namespace sluice::table
