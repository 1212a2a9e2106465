// WatermarkStrategy::withIdleness (Flink's): assignTimestampsAndWatermarks and FLIP-27 sources announce
// WatermarkStatus IDLE after the timeout without records and ACTIVE again before the next records; an
// unbounded source subtask without a split is idle at once. Processing time is driven by hand; every
// expected status sequence is worked out in the comments.
#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "harness.h"
#include "test_util.h"

namespace sluice::api {
namespace {

using testing::makeEnv;
using Statuses = std::vector<std::string>;

TEST(IdlenessTest, AssignerMarksIdleAfterTheTimeoutAndActiveBeforeRecords) {
  auto env = makeEnv(1);
  auto stream = env.fromElements<int64_t>(0).assignTimestampsAndWatermarks(
      WatermarkStrategy<int64_t>::forMonotonousTimestamps().withIdleness(100));
  testing::Harness h(stream);  // opened at processing time 0; checks every 20 ms
  h.push<int64_t>({{1, 1000}});
  EXPECT_EQ(h.out.watermarks, (std::vector<int64_t>{999}));
  h.setProcessingTime(20);   // the check sees the record: active since 20, next check at 40
  h.setProcessingTime(119);  // the check due at 40 runs now: 20 + 100 > 119; next at 139
  EXPECT_TRUE(h.out.statuses.empty());
  h.setProcessingTime(139);  // 20 + 100 <= 139
  EXPECT_EQ(h.out.statuses, (Statuses{"IDLE"}));
  h.setProcessingTime(500);
  EXPECT_EQ(h.out.statuses, (Statuses{"IDLE"}));  // announced once
  // Upstream statuses are this operator's own business: swallowed.
  h.watermarkStatus(runtime::WatermarkStatus::kActive);
  EXPECT_EQ(h.out.statuses, (Statuses{"IDLE"}));
  h.push<int64_t>({{2, 3000}});
  EXPECT_EQ(h.out.statuses, (Statuses{"IDLE", "ACTIVE"}));
  EXPECT_EQ(h.out.watermarks, (std::vector<int64_t>{999, 2999}));
}

TEST(IdlenessTest, AssignerFinalWatermarkFollowsActive) {
  auto env = makeEnv(1);
  auto stream = env.fromElements<int64_t>(0).assignTimestampsAndWatermarks(
      WatermarkStrategy<int64_t>::forMonotonousTimestamps().withIdleness(std::chrono::milliseconds(50)));
  testing::Harness h(stream);  // checks every 10 ms (50 * 5 is not below 200: 50 / 5)
  h.setProcessingTime(10);     // no record since the start at 0: 0 + 50 > 10
  h.setProcessingTime(50);     // the check due at 20 runs at 50: idle
  EXPECT_EQ(h.out.statuses, (Statuses{"IDLE"}));
  h.watermark(runtime::Watermark::kMaxTimestamp);
  EXPECT_EQ(h.out.statuses, (Statuses{"IDLE", "ACTIVE"}));
  EXPECT_EQ(h.out.watermarks, (std::vector<int64_t>{runtime::Watermark::kMaxTimestamp}));
}

TEST(IdlenessTest, WithoutIdlenessNothingIsAnnounced) {
  auto env = makeEnv(1);
  auto stream =
      env.fromElements<int64_t>(0).assignTimestampsAndWatermarks(WatermarkStrategy<int64_t>::forMonotonousTimestamps());
  testing::Harness h(stream);
  h.push<int64_t>({{1, 1000}});
  h.setProcessingTime(1000000);
  EXPECT_TRUE(h.out.statuses.empty());
}

// An unbounded source: subtask 0 gets split 0, whose reader emits the records of `script` one poll each,
// then nothing; no other subtask gets a split.
struct ScriptedSource final : Source<int64_t, int> {
  std::vector<std::vector<std::pair<int64_t, int64_t>>> script;  // per poll: (value, timestamp)
  bool isBounded() const override { return false; }
  std::unique_ptr<SplitEnumerator<int>> createEnumerator(int) const override {
    struct E : SplitEnumerator<int> {
      bool given = false;
      std::optional<int> handleSplitRequest(int subtask) override {
        if (given || subtask != 0) return std::nullopt;
        given = true;
        return 0;
      }
    };
    return std::make_unique<E>();
  }
  std::unique_ptr<SourceReader<int64_t, int>> createReader(const SourceReaderContext&) const override {
    struct R : SourceReader<int64_t, int> {
      std::deque<std::vector<std::pair<int64_t, int64_t>>> polls;
      void addSplit(int) override {}
      InputStatus pollNext(ReaderOutput<int64_t>& out) override {
        if (polls.empty()) return InputStatus::kNothingAvailable;
        for (const auto& [v, ts] : polls.front()) out.collect(v, ts);
        polls.pop_front();
        return InputStatus::kNothingAvailable;  // one poll's records per emitNext
      }
    };
    auto r = std::make_unique<R>();
    r->polls.assign(script.begin(), script.end());
    return r;
  }
};

// Drives one subtask of a source operator by hand.
struct SourceHarness {
  SourceHarness(std::shared_ptr<ScriptedSource> source, WatermarkStrategy<int64_t> strategy, int subtask,
                int parallelism)
      : op(std::move(source), std::move(strategy), 0, false, nullptr) {
    runtime::OperatorContext ctx;
    ctx.subtask_index = subtask;
    ctx.parallelism = parallelism;
    ctx.operator_name = "scripted";
    ctx.task_name = "scripted";
    ctx.config = &config;
    ctx.metrics = &metrics;
    ctx.processing_time_service = &timers;
    op.open(ctx, &out);
  }
  ~SourceHarness() { op.close(); }
  int64_t now = 0;
  Configuration config;
  runtime::OperatorMetrics metrics;
  runtime::ProcessingTimeService timers{[this] { return now; }};
  testing::CollectingOutput out;
  runtime::SourceReaderOperator<int64_t, int> op;
};

TEST(IdlenessTest, SourceSubtaskWithoutSplitIsIdleAndWaits) {
  auto source = std::make_shared<ScriptedSource>();
  SourceHarness h(source, WatermarkStrategy<int64_t>::forMonotonousTimestamps(), 1, 2);
  EXPECT_EQ(h.op.emitNext(), runtime::InputStatus::kNothingAvailable);
  EXPECT_EQ(h.op.emitNext(), runtime::InputStatus::kNothingAvailable);
  EXPECT_EQ(h.out.statuses, (Statuses{"IDLE"}));
}

TEST(IdlenessTest, SourceIsIdleAfterTheTimeoutWithoutRecordsActiveBeforeTheNext) {
  auto source = std::make_shared<ScriptedSource>();
  source->script = {{{1, 1000}, {2, 2000}}, {}, {}, {{3, 5000}}};
  SourceHarness h(source, WatermarkStrategy<int64_t>::forMonotonousTimestamps().withIdleness(100), 0, 2);
  h.op.emitNext();  // at 0: records 1, 2 -> watermark 2000 - 1; active since 0
  EXPECT_EQ(h.out.watermarks, (std::vector<int64_t>{1999}));
  h.now = 99;
  h.op.emitNext();  // empty poll: 0 + 100 > 99
  EXPECT_TRUE(h.out.statuses.empty());
  h.now = 100;
  h.op.emitNext();  // empty poll: 0 + 100 <= 100, idle
  EXPECT_EQ(h.out.statuses, (Statuses{"IDLE"}));
  h.now = 150;
  h.op.emitNext();  // record 3 at 5000: ACTIVE first, then the record and watermark 4999
  EXPECT_EQ(h.out.statuses, (Statuses{"IDLE", "ACTIVE"}));
  EXPECT_EQ(h.out.values<int64_t>(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(h.out.watermarks, (std::vector<int64_t>{1999, 4999}));
}

// --- a whole job ------------------------------------------------------------------------------------------------

using P = std::pair<std::string, int64_t>;  // (key, value); the timestamp is the record's

// Unbounded; every subtask gets a split of its own; only split 0 has records (its reader emits them in one
// poll), the others stay silent forever, like empty partitions.
struct SilentSplits final : Source<P, int> {
  bool isBounded() const override { return false; }
  std::unique_ptr<SplitEnumerator<int>> createEnumerator(int) const override {
    struct E : SplitEnumerator<int> {
      std::vector<int> given;
      std::optional<int> handleSplitRequest(int subtask) override {
        if (std::find(given.begin(), given.end(), subtask) != given.end()) return std::nullopt;
        given.push_back(subtask);
        return subtask;
      }
    };
    return std::make_unique<E>();
  }
  std::unique_ptr<SourceReader<P, int>> createReader(const SourceReaderContext&) const override {
    struct R : SourceReader<P, int> {
      bool pending = false;
      void addSplit(int split) override { pending = split == 0; }
      InputStatus pollNext(ReaderOutput<P>& out) override {
        if (!pending) return InputStatus::kNothingAvailable;
        pending = false;
        for (const auto& [v, ts] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 5}, {2, 12}, {9, 25}})
          out.collect(P{"k", v}, ts);
        return InputStatus::kNothingAvailable;
      }
    };
    return std::make_unique<R>();
  }
};

// Signals once `expected` records were written.
struct CountingSink final : Sink<P> {
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<P> rows;
  };
  std::shared_ptr<State> state = std::make_shared<State>();
  std::unique_ptr<SinkWriter<P>> createWriter(const SinkWriterContext&) const override {
    struct W : SinkWriter<P> {
      std::shared_ptr<State> s;
      void write(const P& v, std::optional<int64_t>) override {
        std::lock_guard<std::mutex> lock(s->mu);
        s->rows.push_back(v);
        s->cv.notify_all();
      }
    };
    auto w = std::make_unique<W>();
    w->s = state;
    return w;
  }
};

TEST(IdlenessTest, SilentSourceSubtaskDoesNotHoldBackTheWindows) {
  // Split 0: 1@1, 3@5, 2@12, 9@25; watermark 25 - 1 = 24 (monotonous): [0, 10) = 1 + 3 = 4 and
  // [10, 20) = 2 fire; [20, 30) (29 > 24) does not. Subtask 1 has a split but no records: without
  // withIdleness it holds every window back forever; with it, it is idle after 200 ms.
  auto env = makeEnv(2);
  auto sink = std::make_shared<CountingSink>();
  env.fromSource(std::make_shared<SilentSplits>(),
                 WatermarkStrategy<P>::forMonotonousTimestamps().withIdleness(std::chrono::milliseconds(200)), "silent")
      .keyBy([](const P& p) { return p.first; })
      .window(TumblingEventTimeWindows::of(10))
      .reduce([](const P& a, const P& b) {
        return P{a.first, a.second + b.second};
      })
      .sinkTo(sink);
  auto client = env.executeAsync("idle");
  {
    std::unique_lock<std::mutex> lock(sink->state->mu);
    sink->state->cv.wait_for(lock, std::chrono::seconds(60), [&] { return sink->state->rows.size() >= 2; });
  }
  client->cancel();
  EXPECT_TRUE(client->getJobExecutionResult().wasCancelled());
  std::lock_guard<std::mutex> lock(sink->state->mu);
  std::vector<P> rows = sink->state->rows;
  std::sort(rows.begin(), rows.end());
  EXPECT_EQ(rows, (std::vector<P>{{"k", 2}, {"k", 4}}));
}

}  // namespace
}  // namespace sluice::api
