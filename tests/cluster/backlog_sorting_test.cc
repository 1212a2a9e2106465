// Sorted inputs of keyed one-input operators (FLIP-327 mixed mode, BATCH): a scripted source announces
// backlog with RecordAttributes (or as a FLIP-309 source does, through SourceBacklogStatus), and a
// recording keyed operator shows what reached it and in which order. Expected sequences are written out by
// hand from the scripts below.

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <variant>
#include <vector>

#include "cluster/mini_cluster.h"
#include "graph/job_graph.h"
#include "progress_wait.h"
#include "runtime/operators/keyed_input_sorter.h"
#include "runtime/operators/source_backlog_status.h"
#include "test_operators.h"

namespace sluice::cluster {
namespace {

using graph::TransformationKind;
using testing::bigintRow;
using testing::makeHashPartition;
using testing::makeTransformation;

// One step of a script: a batch of (key, value) rows, a watermark, record attributes, the enumerator's
// backlog status (FLIP-309: the source's SourceBacklogStatus, which also sets its backlog gauge), or a
// gate that holds the source until the test opens it.
struct Rows {
  std::vector<std::pair<int64_t, int64_t>> rows;
};
struct EnumeratorBacklog {
  bool backlog;
};
struct Gate {
  const std::atomic<bool>* open;
};
using Step = std::variant<Rows, runtime::Watermark, runtime::RecordAttributes, EnumeratorBacklog, Gate>;

class ScriptedSource : public runtime::SourceOperator {
 public:
  explicit ScriptedSource(const std::vector<Step>* script) : script_(script) {}
  void open(const runtime::OperatorContext& ctx, runtime::Output* output) override {
    SourceOperator::open(ctx, output);
    backlog_ = runtime::SourceBacklogStatus::forOperator(ctx_);
  }
  runtime::InputStatus emitNext() override {
    if (next_ == script_->size()) return runtime::InputStatus::kEndOfInput;
    const Step& step = (*script_)[next_];
    if (const auto* gate = std::get_if<Gate>(&step)) {
      if (!gate->open->load()) return runtime::InputStatus::kNothingAvailable;
      ++next_;
      return runtime::InputStatus::kMoreAvailable;
    }
    ++next_;
    if (const auto* status = std::get_if<EnumeratorBacklog>(&step)) {
      if (auto attributes = backlog_.setProcessingBacklog(status->backlog)) output_->emitRecordAttributes(*attributes);
    } else if (const auto* rows = std::get_if<Rows>(&step)) {
      types::RowBatch b(bigintRow(2));
      for (const auto& [k, v] : rows->rows) {
        b.column(0).appendLong(k);
        b.column(1).appendLong(v);
        b.kinds().push_back(types::RowKind::kInsert);
      }
      output_->collect(std::move(b));
    } else if (const auto* mark = std::get_if<runtime::Watermark>(&step)) {
      output_->emitWatermark(*mark);
    } else {
      output_->emitRecordAttributes(std::get<runtime::RecordAttributes>(step));
    }
    return runtime::InputStatus::kMoreAvailable;
  }

 private:
  const std::vector<Step>* script_;
  size_t next_ = 0;
  runtime::SourceBacklogStatus backlog_;
};

// What one subtask of the recorder saw, as text: "r k v", "wm t", "ra 1|0", "begin", "end".
struct Log {
  std::mutex mu;
  std::map<int, std::vector<std::string>> by_subtask;
  void add(int subtask, std::string e) {
    std::lock_guard<std::mutex> lock(mu);
    by_subtask[subtask].push_back(std::move(e));
  }
};

class Recorder : public runtime::StreamOperator {
 public:
  explicit Recorder(Log* log) : log_(log) {}
  void processBatch(types::RowBatch&& in) override {
    for (size_t r = 0; r < in.numRows(); ++r) {
      log_->add(ctx_.subtask_index, fmt::format("r {} {}", in.column(0).getLong(r), in.column(1).getLong(r)));
    }
  }
  void processWatermark(runtime::Watermark mark) override {
    if (mark.timestamp == runtime::Watermark::kMaxTimestamp) log_->add(ctx_.subtask_index, "wm max");
    else log_->add(ctx_.subtask_index, fmt::format("wm {}", mark.timestamp));
  }
  void processRecordAttributes(runtime::RecordAttributes a) override {
    log_->add(ctx_.subtask_index, fmt::format("ra {}", a.is_backlog ? 1 : 0));
  }
  void beginSortedInput() override { log_->add(ctx_.subtask_index, "begin"); }
  void endSortedInput() override { log_->add(ctx_.subtask_index, "end"); }

 private:
  Log* log_;
};

struct JobRun {
  Log log;
  JobExecutionResult result;
};

// ScriptedSource(p=1) -HASH(0)-> Recorder(p=parallelism), the recorder keyed on column 0.
graph::JobGraph scriptJob(Log* log, const std::vector<Step>& script, Configuration& conf, int parallelism) {
  conf.set("sluice.batch.size", "3");
  auto source = makeTransformation(1, "script", TransformationKind::kSource, 1, runtime::makeOperatorFactory([&script] {
                                     return std::make_unique<ScriptedSource>(&script);
                                   }, true));
  auto hash = makeHashPartition(2, source, {0});
  auto recorder = makeTransformation(
      3, "Sink: recorder", TransformationKind::kSink, parallelism,
      runtime::makeKeyedRowOperatorFactory([log] { return std::make_unique<Recorder>(log); }, bigintRow(2), {0}),
      {hash});
  return graph::buildJobGraph({recorder}, conf, "backlog-sorting");
}

void runScript(JobRun& out, const std::vector<Step>& script, Configuration conf, int parallelism = 1) {
  graph::JobGraph job = scriptJob(&out.log, script, conf, parallelism);
  MiniCluster cluster(conf);
  out.result = cluster.execute(job, conf);
}

const OperatorProgress& recorderProgress(const JobExecutionResult& r) {
  return r.vertices.back().operators.at(0);
}

// The rows of `events` between `from` and `to` (exclusive), by key in the order they came.
std::map<int64_t, std::vector<int64_t>> rowsByKey(const std::vector<std::string>& events, size_t from, size_t to) {
  std::map<int64_t, std::vector<int64_t>> m;
  for (size_t i = from; i < to; ++i) {
    long long k = 0, v = 0;
    if (std::sscanf(events[i].c_str(), "r %lld %lld", &k, &v) == 2) m[k].push_back(v);
  }
  return m;
}

// Each key's rows form one contiguous run in [from, to).
bool groupedByKey(const std::vector<std::string>& events, size_t from, size_t to) {
  std::vector<int64_t> keys;
  for (size_t i = from; i < to; ++i) {
    long long k = 0, v = 0;
    if (std::sscanf(events[i].c_str(), "r %lld %lld", &k, &v) != 2) return false;
    if (keys.empty() || keys.back() != k) keys.push_back(k);
  }
  std::vector<int64_t> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  return std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
}

size_t indexOf(const std::vector<std::string>& events, const std::string& e, size_t from = 0) {
  for (size_t i = from; i < events.size(); ++i)
    if (events[i] == e) return i;
  return events.size();
}

const std::vector<Step> kScript = {
    runtime::RecordAttributes{true},
    Rows{{{3, 1}, {1, 2}, {2, 3}, {1, 4}, {3, 5}, {2, 6}}},
    runtime::Watermark{10},
    Rows{{{1, 7}, {3, 8}}},
    runtime::Watermark{20},
    runtime::RecordAttributes{false},
    Rows{{{2, 9}, {1, 10}}},
    runtime::Watermark{30},
};

TEST(BacklogSortingTest, MixedModeGroupsTheBacklogByKeyHoldsItsWatermarkAndThenPassesThrough) {
  Configuration conf;
  conf.set("execution.checkpointing.interval-during-backlog", "0");
  JobRun r;
  runScript(r, kScript, conf);
  ASSERT_EQ(r.result.status, JobStatus::kFinished);
  const std::vector<std::string>& ev = r.log.by_subtask[0];
  // ra 1, begin, the 8 backlog rows grouped by key, end, ra 0, wm 20 (the largest held), the realtime
  // rows in arrival order, wm 30, the final watermark.
  ASSERT_EQ(ev.size(), 1u + 1 + 8 + 1 + 1 + 1 + 2 + 1 + 1) << fmt::format("{}", fmt::join(ev, " | "));
  EXPECT_EQ(ev[0], "ra 1");
  EXPECT_EQ(ev[1], "begin");
  EXPECT_TRUE(groupedByKey(ev, 2, 10)) << fmt::format("{}", fmt::join(ev, " | "));
  const std::map<int64_t, std::vector<int64_t>> backlog = {{1, {2, 4, 7}}, {2, {3, 6}}, {3, {1, 5, 8}}};
  EXPECT_EQ(rowsByKey(ev, 2, 10), backlog);
  const std::vector<std::string> tail = {"end", "ra 0", "wm 20", "r 2 9", "r 1 10", "wm 30", "wm max"};
  EXPECT_EQ(std::vector<std::string>(ev.begin() + 10, ev.end()), tail);
  EXPECT_EQ(recorderProgress(r.result).records_sorted, 8);
  EXPECT_EQ(recorderProgress(r.result).sorting_subtasks, 0);
}

TEST(BacklogSortingTest, WithoutIntervalDuringBacklogZeroNothingIsSorted) {
  JobRun r;
  runScript(r, kScript, Configuration{});
  ASSERT_EQ(r.result.status, JobStatus::kFinished);
  const std::vector<std::string> expected = {"ra 1", "r 3 1", "r 1 2", "r 2 3", "r 1 4", "r 3 5", "r 2 6", "wm 10",
                                             "r 1 7", "r 3 8", "wm 20", "ra 0", "r 2 9", "r 1 10", "wm 30", "wm max"};
  EXPECT_EQ(r.log.by_subtask[0], expected);
  EXPECT_EQ(recorderProgress(r.result).records_sorted, 0);
}

TEST(BacklogSortingTest, TheEndOfInputDuringBacklogFlushesTheSortedRecordsAndTheHeldWatermark) {
  const std::vector<Step> script = {runtime::RecordAttributes{true}, Rows{{{5, 1}, {4, 2}, {5, 3}}},
                                    runtime::Watermark{7}};
  Configuration conf;
  conf.set("execution.checkpointing.interval-during-backlog", "0");
  JobRun r;
  runScript(r, script, conf);
  ASSERT_EQ(r.result.status, JobStatus::kFinished);
  const std::vector<std::string>& ev = r.log.by_subtask[0];
  // The final watermark arrives while sorting: held like the others, given after the flush.
  ASSERT_EQ(ev.size(), 7u) << fmt::format("{}", fmt::join(ev, " | "));
  EXPECT_EQ(ev[0], "ra 1");
  EXPECT_EQ(ev[1], "begin");
  EXPECT_TRUE(groupedByKey(ev, 2, 5));
  const std::map<int64_t, std::vector<int64_t>> rows = {{4, {2}}, {5, {1, 3}}};
  EXPECT_EQ(rowsByKey(ev, 2, 5), rows);
  EXPECT_EQ(ev[5], "end");
  EXPECT_EQ(ev[6], "wm max");
}

TEST(BacklogSortingTest, BatchModeSortsFromTheFirstRecordAndIgnoresRecordAttributes) {
  Configuration conf;
  conf.set("execution.runtime-mode", "BATCH");
  JobRun r;
  runScript(r, kScript, conf);
  ASSERT_EQ(r.result.status, JobStatus::kFinished);
  const std::vector<std::string>& ev = r.log.by_subtask[0];
  // BATCH: no watermarks reach the operator but the final one; every row sorted in one phase.
  ASSERT_GE(ev.size(), 3u);
  const size_t begin = indexOf(ev, "begin");
  const size_t end = indexOf(ev, "end");
  ASSERT_LT(begin, end) << fmt::format("{}", fmt::join(ev, " | "));
  EXPECT_EQ(end - begin - 1, 10u);
  EXPECT_TRUE(groupedByKey(ev, begin + 1, end));
  const std::map<int64_t, std::vector<int64_t>> rows = {{1, {2, 4, 7, 10}}, {2, {3, 6, 9}}, {3, {1, 5, 8}}};
  EXPECT_EQ(rowsByKey(ev, begin + 1, end), rows);
  EXPECT_EQ(recorderProgress(r.result).records_sorted, 10);
}

TEST(BacklogSortingTest, ASortPastItsMemorySpillsAndKeepsEveryRecordAtParallelismTwo) {
  // 6000 backlog rows over 7 keys (k = i % 7, v = i), then 1 realtime row per key.
  std::vector<Step> script = {runtime::RecordAttributes{true}};
  for (int64_t b = 0; b < 60; ++b) {
    Rows rows;
    for (int64_t i = b * 100; i < (b + 1) * 100; ++i) rows.rows.emplace_back(i % 7, i);
    script.emplace_back(std::move(rows));
  }
  script.emplace_back(runtime::RecordAttributes{false});
  Rows realtime;
  for (int64_t k = 0; k < 7; ++k) realtime.rows.emplace_back(k, -1);
  script.emplace_back(std::move(realtime));
  Configuration conf;
  conf.set("execution.checkpointing.interval-during-backlog", "0");
  conf.set("execution.sorted-inputs.memory", "1 kb");
  JobRun r;
  runScript(r, script, conf, 2);
  ASSERT_EQ(r.result.status, JobStatus::kFinished);
  std::map<int64_t, std::vector<int64_t>> seen;
  for (auto& [subtask, ev] : r.log.by_subtask) {
    const size_t begin = indexOf(ev, "begin");
    const size_t end = indexOf(ev, "end");
    ASSERT_LT(end, ev.size()) << "subtask " << subtask;
    EXPECT_TRUE(groupedByKey(ev, begin + 1, end)) << "subtask " << subtask;
    for (auto& [k, vs] : rowsByKey(ev, begin + 1, end)) {
      // A key's rows keep their arrival order: i = k, k + 7, k + 14, ...
      for (size_t j = 0; j < vs.size(); ++j) EXPECT_EQ(vs[j], static_cast<int64_t>(k + 7 * j));
      seen[k].insert(seen[k].end(), vs.begin(), vs.end());
    }
    // The realtime row of each key comes after the flush.
    for (auto& [k, vs] : rowsByKey(ev, end, ev.size())) EXPECT_EQ(vs, std::vector<int64_t>{-1});
  }
  ASSERT_EQ(seen.size(), 7u);
  // 6000 = 7 * 857 + 1: key 0 has 858 rows, keys 1..6 have 857.
  for (auto& [k, vs] : seen) EXPECT_EQ(vs.size(), k == 0 ? 858u : 857u) << "key " << k;
  EXPECT_EQ(recorderProgress(r.result).records_sorted, 6000);
  EXPECT_GT(recorderProgress(r.result).bytes_spilled, 0);
}

// The figures a job reports while its keyed operator sorts a backlog (the progress snapshot the CLI's
// progress line and --metrics read): the source's backlog gauge, the subtasks sorting, the records sorted
// and the bytes spilled. The source reports backlog as a FLIP-309 source does, sends 600 rows and waits at
// a gate, so the figures cannot move while the test reads them.
void checkMetricsWhileSorting(bool small_memory) {
  SCOPED_TRACE(small_memory ? "1 kb of sort memory" : "128 mb of sort memory");
  constexpr int64_t kBacklogRows = 600;
  std::atomic<bool> open{false};
  std::vector<Step> script = {EnumeratorBacklog{true}};
  for (int64_t b = 0; b < 6; ++b) {
    Rows rows;
    for (int64_t i = b * 100; i < (b + 1) * 100; ++i) rows.rows.emplace_back(i % 7, i);
    script.emplace_back(std::move(rows));
  }
  script.emplace_back(Gate{&open});
  script.emplace_back(EnumeratorBacklog{false});
  script.emplace_back(Rows{{{1, -1}, {2, -2}}});
  Configuration conf;
  conf.set("execution.checkpointing.interval-during-backlog", "0");
  // 600 rows of two BIGINTs take more than 1 kb (the smallest setting) and far less than 128 mb (the default).
  if (small_memory) conf.set("execution.sorted-inputs.memory", "1 kb");
  Log log;
  graph::JobGraph job = scriptJob(&log, script, conf, 2);
  MiniCluster cluster(conf);
  auto handle = cluster.start(job, conf);
  const auto recorder = [](const JobProgress& p) { return p.vertices.back().operators.at(0); };
  // Both subtasks sort (the attributes reach every channel) once every backlog row has reached a sorter.
  ASSERT_TRUE(testing::waitForProgress(*handle, [&](const JobProgress& p) {
    return recorder(p).records_sorted >= kBacklogRows && recorder(p).sorting_subtasks == 2;
  })) << "the recorder did not sort the backlog";
  const JobProgress during = handle->progress();
  ASSERT_EQ(during.vertices.size(), 2u);
  EXPECT_EQ(during.vertices.front().operators.at(0).backlog_subtasks, 1) << "the source is not shown in backlog";
  EXPECT_EQ(recorder(during).backlog_subtasks, 0) << "only sources and watermark assigners report backlog";
  EXPECT_EQ(recorder(during).records_sorted, kBacklogRows);
  EXPECT_EQ(recorder(during).records_in, 0) << "a sorted row reached the operator before the flush";
  if (small_memory) {
    EXPECT_GT(recorder(during).bytes_spilled, 0);
  } else {
    EXPECT_EQ(recorder(during).bytes_spilled, 0);
  }
  open.store(true);
  const JobExecutionResult result = handle->wait();
  ASSERT_EQ(result.status, JobStatus::kFinished);
  const OperatorProgress& done = recorderProgress(result);
  // The 2 live rows after the backlog are not sorted; nothing sorts and nothing is backlog any more.
  EXPECT_EQ(done.records_sorted, kBacklogRows);
  EXPECT_EQ(done.records_in, kBacklogRows + 2);
  EXPECT_EQ(done.sorting_subtasks, 0);
  EXPECT_EQ(result.vertices.front().operators.at(0).backlog_subtasks, 0);
  if (small_memory) {
    EXPECT_GE(done.bytes_spilled, recorder(during).bytes_spilled);
  } else {
    EXPECT_EQ(done.bytes_spilled, 0);
  }
}

TEST(BacklogSortingTest, WhileSortingTheSourceShowsBacklogAndTheOperatorItsSortedAndSpilledFigures) {
  checkMetricsWhileSorting(/*small_memory=*/true);
  checkMetricsWhileSorting(/*small_memory=*/false);
}

}  // namespace
}  // namespace sluice::cluster
