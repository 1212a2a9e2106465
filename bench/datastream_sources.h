#pragma once
// What the DataStream benchmarks share (sluice_datastream_bench, sluice_backlog_bench): the in-memory events,
// a FLIP-27 source over them and a sink that counts and sums. Bench code only.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "api/datastream.h"

namespace bench_ds {

struct Event {
  int64_t key = 0;
  int64_t time = 0;  // event time, ms
  int64_t value = 0;
};
// Count and max of a key's window (the window job's accumulator and result).
struct WindowResult {
  int64_t key = 0;
  int64_t count = 0;
  int64_t max = 0;
};
SLUICE_TYPE(Event, key, time, value)
SLUICE_TYPE(WindowResult, key, count, max)

using sluice::api::RangeSplit;

using Events = std::shared_ptr<const std::vector<Event>>;

inline Events generate(int64_t records, int64_t keys, int64_t ms_per_record) {
  auto v = std::make_shared<std::vector<Event>>();
  v->resize(static_cast<size_t>(records));
  for (int64_t i = 0; i < records; ++i) (*v)[static_cast<size_t>(i)] = Event{i % keys, i * ms_per_record, (i * 7919) % 1000};
  return v;
}

// The records of a shared vector, strided over the readers (the source's parallelism): a split is
// {from = first index, to = size}; its reader steps by the parallelism.
class VectorSource final : public sluice::runtime::Source<Event, RangeSplit> {
 public:
  explicit VectorSource(Events events) : events_(std::move(events)) {}

  std::unique_ptr<sluice::runtime::SplitEnumerator<RangeSplit>> createEnumerator(int parallelism) const override {
    // Split i holds the records i, i + p, i + 2p, ...: event time advances alike in every reader, as in a
    // partitioned log, so the watermark (the minimum over the readers) does not hold windows back.
    std::vector<RangeSplit> splits;
    const auto n = static_cast<int64_t>(events_->size());
    for (int i = 0; i < parallelism; ++i) splits.push_back(RangeSplit{i, n, {}});
    return std::make_unique<sluice::api::ListSplitEnumerator<RangeSplit>>(std::move(splits));
  }

  class Reader final : public sluice::runtime::SourceReader<Event, RangeSplit> {
   public:
    Reader(Events events, int stride) : events_(std::move(events)), stride_(stride) {}
    void addSplit(RangeSplit split) override {
      if (!split.next) split.next = split.from;
      splits_.push_back(split);
    }
    sluice::runtime::InputStatus pollNext(sluice::runtime::ReaderOutput<Event>& out) override {
      while (!splits_.empty() && *splits_.front().next >= splits_.front().to) splits_.erase(splits_.begin());
      if (splits_.empty()) return sluice::runtime::InputStatus::kEndOfInput;
      RangeSplit& s = splits_.front();
      int64_t i = *s.next;
      for (int n = 0; n < 1024 && i < s.to; ++n, i += stride_) out.collect((*events_)[static_cast<size_t>(i)]);
      s.next = i;
      return sluice::runtime::InputStatus::kMoreAvailable;
    }
    std::vector<RangeSplit> snapshotState(int64_t) override { return splits_; }

   private:
    Events events_;
    int stride_;
    std::vector<RangeSplit> splits_;
  };

  std::unique_ptr<sluice::runtime::SourceReader<Event, RangeSplit>> createReader(
      const sluice::runtime::SourceReaderContext& ctx) const override {
    return std::make_unique<Reader>(events_, ctx.parallelism);
  }

 private:
  Events events_;
};

// What a run's sink saw: records and the (wrapping) sum of one field of each.
struct Totals {
  int64_t count = 0;
  uint64_t sum = 0;
  bool operator==(const Totals& o) const { return count == o.count && sum == o.sum; }
};

struct SinkTotals {
  std::atomic<int64_t> count{0};
  std::atomic<uint64_t> sum{0};
};

// Counts the records and sums field(record); writers add their subtask's totals at the end of input.
template <typename T, int64_t T::*Field>
class SummingSink final : public sluice::api::Sink<T> {
 public:
  explicit SummingSink(std::shared_ptr<SinkTotals> totals) : totals_(std::move(totals)) {}
  class Writer final : public sluice::api::SinkWriter<T> {
   public:
    explicit Writer(std::shared_ptr<SinkTotals> totals) : totals_(std::move(totals)) {}
    void write(const T& value, std::optional<int64_t>) override {
      ++count_;
      sum_ += static_cast<uint64_t>(value.*Field);
    }
    void flush(bool end_of_input) override {
      if (!end_of_input) return;
      totals_->count += count_;
      totals_->sum += sum_;
      count_ = 0;
      sum_ = 0;
    }

   private:
    std::shared_ptr<SinkTotals> totals_;
    int64_t count_ = 0;
    uint64_t sum_ = 0;
  };
  std::unique_ptr<sluice::api::SinkWriter<T>> createWriter(const sluice::api::SinkWriterContext&) const override {
    return std::make_unique<Writer>(totals_);
  }

 private:
  std::shared_ptr<SinkTotals> totals_;
};

}  // namespace bench_ds
