// sluice_exchange_bench: what a keyBy exchange costs through local channels and through TCP between
// TaskManagers, printed as a table (not a test).
//
// The job: a source of ROWS rows (BIGINT key = v % 4096, BIGINT value = v, batches of sluice.batch.size) at
// parallelism p -> HASH on the key (keyBy) -> a sink at parallelism p that counts the rows and sums the
// values. The sink is in its own slot sharing group, so it takes the slots after the source's: subtask i of
// the source sits in slot i, subtask j of the sink in slot p + j, slot s in TaskManager s mod N
// (local.number-taskmanager). With N = 1 every channel is local (buffers handed over in the process); with
// N = 2p every channel of the exchange crosses loopback TCP (RemoteInputChannel, credit-based); N = 2 at
// p = 2 mixes both. Every run's count and sum are checked against the formulas.
//
// Columns: p, TaskManagers, remote channels / all channels of the exchange, rows/s (source rows over wall
// time, start-up included), MB/s (numBytesOut of the source: the serialized bytes through the exchange),
// and the rate relative to local channels at the same p.
//
// Usage: sluice_exchange_bench [--rows N] [--repeat N]. Defaults: 40,000,000 rows (about a second per TCP
// run on a 2-core machine), best of 2 runs.

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_args.h"
#include "cluster/mini_cluster.h"
#include "common/config.h"
#include "graph/job_graph.h"
#include "graph/transformation.h"
#include "runtime/operators/stream_operator.h"
#include "types/row_batch.h"

namespace {

using namespace sluice;
using Clock = std::chrono::steady_clock;

constexpr int64_t kKeys = 4096;

types::RowType keyValueRow() {
  types::RowType t;
  t.names = {"key", "value"};
  t.types = {types::LogicalType::bigint(), types::LogicalType::bigint()};
  return t;
}

// Subtask s of p emits v = s + 1, s + 1 + p, ... up to `rows`, as (v % 4096, v), `batch` rows per batch.
class SequenceSource : public runtime::SourceOperator {
 public:
  SequenceSource(int64_t rows, size_t batch) : rows_(rows), batch_(batch), type_(keyValueRow()) {}
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override {
    SourceOperator::open(ctx, output);
    next_ = 1 + ctx.subtask_index;
  }
  runtime::InputStatus emitNext() override {
    if (next_ > rows_) return runtime::InputStatus::kEndOfInput;
    types::RowBatch b(type_);
    for (size_t i = 0; i < batch_ && next_ <= rows_; ++i, next_ += ctx_.parallelism) {
      b.column(0).appendLong(next_ % kKeys);
      b.column(1).appendLong(next_);
      b.kinds().push_back(types::RowKind::kInsert);
    }
    output_->collect(std::move(b));
    return runtime::InputStatus::kMoreAvailable;
  }

 private:
  int64_t rows_;
  size_t batch_;
  types::RowType type_;
  int64_t next_ = 1;
};

struct Totals {
  std::atomic<int64_t> rows{0};
  std::atomic<int64_t> sum{0};
};

// Counts rows and sums values; adds its totals once, at the end of input.
class CountingSink : public runtime::StreamOperator {
 public:
  explicit CountingSink(Totals* totals) : totals_(totals) {}
  void processBatch(types::RowBatch&& in) override {
    for (size_t r = 0; r < in.numRows(); ++r) sum_ += in.column(1).getLong(r);
    rows_ += static_cast<int64_t>(in.numRows());
  }
  void endInput() override {
    totals_->rows += rows_;
    totals_->sum += sum_;
  }

 private:
  Totals* totals_;
  int64_t rows_ = 0;
  int64_t sum_ = 0;
};

struct Measurement {
  double seconds = 1e300;
  int64_t bytes = 0;
  int remote_channels = 0;
};

graph::JobGraph buildJob(const Configuration& conf, int parallelism, int64_t rows, Totals* totals) {
  const size_t batch = static_cast<size_t>(conf.get(options::kBatchSize));
  auto source = std::make_shared<graph::Transformation>();
  source->id = 1;
  source->name = "sequence";
  source->kind = graph::TransformationKind::kSource;
  source->parallelism = parallelism;
  source->factory =
      runtime::makeOperatorFactory([rows, batch] { return std::make_unique<SequenceSource>(rows, batch); }, true);
  auto key_by = std::make_shared<graph::Transformation>();
  key_by->id = 2;
  key_by->name = "keyBy";
  key_by->kind = graph::TransformationKind::kPartition;
  key_by->partitioner.strategy = graph::ShipStrategy::kHash;
  key_by->partitioner.key_columns = {0};
  key_by->inputs = {source};
  auto sink = std::make_shared<graph::Transformation>();
  sink->id = 3;
  sink->name = "Sink: count";
  sink->kind = graph::TransformationKind::kSink;
  sink->parallelism = parallelism;
  sink->slot_sharing_group = "consumer";
  sink->factory = runtime::makeOperatorFactory([totals] { return std::make_unique<CountingSink>(totals); });
  sink->inputs = {key_by};
  return graph::buildJobGraph({sink}, conf);
}

Measurement measure(int parallelism, int task_managers, int64_t rows, int repeat) {
  Measurement m;
  for (int r = 0; r < repeat; ++r) {
    Configuration conf;
    conf.set("local.number-taskmanager", std::to_string(task_managers));
    Totals totals;
    const graph::JobGraph job = buildJob(conf, parallelism, rows, &totals);
    if (job.vertices.size() != 2) throw std::runtime_error("expected a source and a sink vertex");
    const auto start = Clock::now();
    const cluster::JobExecutionResult result = cluster::MiniCluster(conf).execute(job, conf);
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    // 1 + ... + rows.
    const int64_t want_sum = rows % 2 == 0 ? rows / 2 * (rows + 1) : (rows + 1) / 2 * rows;
    if (totals.rows.load() != rows || totals.sum.load() != want_sum) {
      throw std::runtime_error(fmt::format("p={} TaskManagers={}: the sink saw {} rows (sum {}), expected {} (sum {})",
                                           parallelism, task_managers, totals.rows.load(), totals.sum.load(), rows,
                                           want_sum));
    }
    m.seconds = std::min(m.seconds, s);
    m.bytes = result.vertices[0].num_bytes_out;
    m.remote_channels = result.remote_channels;
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t rows = 40'000'000;
  int repeat = 2;
  try {
    int64_t repeat_count = repeat;
    sluice::bench::parseCountOptions(argc, argv, {{"--rows", &rows}, {"--repeat", &repeat_count}});
    repeat = static_cast<int>(repeat_count);
    fmt::print("sluice_exchange_bench: source (key = v % 4096, value = v) -> keyBy(key) -> counting sink\n");
    fmt::print(
        "{} rows, 2 BIGINT columns, best of {} runs; rows/s = source rows / wall time (start-up included); "
        "MB/s = serialized bytes through the exchange / wall time\n\n",
        rows, repeat);
    fmt::print("{:>2} | {:>12} | {:>15} | {:>12} | {:>9} | {:>8}\n", "p", "TaskManagers", "remote channels", "rows/s",
               "MB/s", "vs local");
    fmt::print("{:-<2}-+-{:-<12}-+-{:-<15}-+-{:-<12}-+-{:-<9}-+-{:-<8}\n", "", "", "", "", "", "");
    for (int p : {1, 2}) {
      double local_rate = 0;
      std::vector<int> tms = {1, 2};
      if (p > 1) tms.push_back(2 * p);
      for (int n : tms) {
        const Measurement m = measure(p, n, rows, repeat);
        const double rate = static_cast<double>(rows) / m.seconds;
        if (n == 1) local_rate = rate;
        fmt::print("{:>2} | {:>12} | {:>15} | {:>10.2f} M | {:>9.1f} | {:>7.2f}x\n", p, n,
                   fmt::format("{}/{}", m.remote_channels, p * p), rate / 1e6,
                   static_cast<double>(m.bytes) / 1e6 / m.seconds, rate / local_rate);
        std::fflush(stdout);
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sluice_exchange_bench: %s\n", e.what());
    return 1;
  }
}
