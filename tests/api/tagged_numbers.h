#pragma once
// A test source whose enumerator reports backlog (FLIP-309) on a script, and tags every record with the
// backlog status its reader had heard (backlog_test.cc, two_input_backlog_sorting_test.cc).

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "api/sources.h"
#include "runtime/operators/source_sink_operators.h"

namespace sluice::api::test_sources {

using runtime::InputStatus;

// The numbers of `splits` (inclusive ranges, each for one subtask, handed out in order); the enumerator
// reports backlog at start and no backlog when it hands out the split starting at `live_from`. Each record is emitted as
// value * 2 + (1 if the reader had heard "backlog" when it emitted it, else 0).
class TaggedNumbers final : public runtime::Source<int64_t, RangeSplit> {
 public:
  TaggedNumbers(std::vector<std::pair<int, RangeSplit>> splits, int64_t live_from) : splits_(std::move(splits)), live_from_(live_from) {}
  /// Variant for recovery: no backlog at start, backlog from the split starting at `backlog_from`; the
  /// reader finishes the first split (the one of the smallest start) only once a checkpoint has completed
  /// (so one precedes the backlog). Every split a reader is given is logged by its next value.
  TaggedNumbers(std::vector<std::pair<int, RangeSplit>> splits, int64_t backlog_from, int64_t live_from)
      : splits_(std::move(splits)), live_from_(live_from), backlog_from_(backlog_from), hold_(true) {}
  /// The reader stays at the end of the split starting at `backlog_from` for `ms` of wall time before it
  /// finishes it: a window in which a checkpoint would complete if any were taken during the backlog.
  void pauseAtTheEndOfTheBacklog(int64_t ms) { backlog_pause_ms_ = ms; }
  std::vector<int64_t> splitStarts() const {
    std::lock_guard<std::mutex> lock(log_->mu);
    return log_->starts;
  }
  struct Log {
    std::mutex mu;
    std::vector<int64_t> starts;
  };

  class Enumerator final : public runtime::SplitEnumerator<RangeSplit> {
   public:
    Enumerator(std::vector<std::pair<int, RangeSplit>> splits, int64_t live_from, std::optional<int64_t> backlog_from)
        : splits_(std::move(splits)), live_from_(live_from), backlog_from_(backlog_from) {}
    void start(runtime::SplitEnumeratorContext& context) override {
      context_ = &context;
      context_->setIsProcessingBacklog(!backlog_from_.has_value());
    }
    std::optional<RangeSplit> handleSplitRequest(int subtask) override {
      for (auto& [owner, split] : splits_) {
        if (owner != subtask || handed_.count(split.from) > 0) continue;
        handed_.insert(split.from);
        if (split.from == live_from_) context_->setIsProcessingBacklog(false);
        if (split.from == backlog_from_) context_->setIsProcessingBacklog(true);
        return split;
      }
      return std::nullopt;
    }

   private:
    std::vector<std::pair<int, RangeSplit>> splits_;
    int64_t live_from_;
    std::optional<int64_t> backlog_from_;
    std::set<int64_t> handed_;
    runtime::SplitEnumeratorContext* context_ = nullptr;
  };

  class Reader final : public runtime::SourceReader<int64_t, RangeSplit> {
   public:
    Reader(std::unique_ptr<runtime::SourceReader<int64_t, RangeSplit>> inner, std::optional<int64_t> hold_from,
           std::shared_ptr<Log> log, std::optional<int64_t> pause_from = std::nullopt, int64_t pause_ms = 0)
        : inner_(std::move(inner)), hold_from_(hold_from), log_(std::move(log)), pause_from_(pause_from),
          pause_ms_(pause_ms) {}
    void addSplit(RangeSplit split) override {
      {
        std::lock_guard<std::mutex> lock(log_->mu);
        log_->starts.push_back(split.next.value_or(split.from));
      }
      holding_ = hold_from_ && split.from == *hold_from_;
      pausing_ = pause_ms_ > 0 && pause_from_ && split.from == *pause_from_;
      pause_until_.reset();
      inner_->addSplit(std::move(split));
    }
    void notifyCheckpointComplete(int64_t) override { holding_ = false; }
    std::vector<RangeSplit> snapshotState(int64_t id) override { return inner_->snapshotState(id); }
    void setIsProcessingBacklog(bool backlog) override { backlog_ = backlog; }
    InputStatus pollNext(runtime::ReaderOutput<int64_t>& output) override {
      struct Tagging final : runtime::ReaderOutput<int64_t> {
        runtime::ReaderOutput<int64_t>* out;
        bool backlog;
        void collect(int64_t v) override { out->collect(v * 2 + (backlog ? 1 : 0)); }
        void collect(int64_t v, int64_t ts) override { out->collect(v * 2 + (backlog ? 1 : 0), ts); }
      } tagging;
      tagging.out = &output;
      tagging.backlog = backlog_;
      const InputStatus status = inner_->pollNext(tagging);
      if (status == InputStatus::kEndOfInput && pausing_) {
        const auto now = std::chrono::steady_clock::now();
        if (!pause_until_) pause_until_ = now + std::chrono::milliseconds(pause_ms_);
        if (now < *pause_until_) return InputStatus::kNothingAvailable;
      }
      return status == InputStatus::kEndOfInput && holding_ ? InputStatus::kNothingAvailable : status;
    }

   private:
    std::unique_ptr<runtime::SourceReader<int64_t, RangeSplit>> inner_;
    std::optional<int64_t> hold_from_;
    std::shared_ptr<Log> log_;
    bool holding_ = false;
    bool backlog_ = false;
    std::optional<int64_t> pause_from_;
    int64_t pause_ms_ = 0;
    bool pausing_ = false;
    std::optional<std::chrono::steady_clock::time_point> pause_until_;
  };

  std::unique_ptr<runtime::SplitEnumerator<RangeSplit>> createEnumerator(int) const override {
    return std::make_unique<Enumerator>(splits_, live_from_, backlog_from_);
  }
  std::unique_ptr<runtime::SourceReader<int64_t, RangeSplit>> createReader(
      const runtime::SourceReaderContext& ctx) const override {
    std::optional<int64_t> hold_from;
    for (const auto& [owner, split] : splits_) {
      if (hold_ && (!hold_from || split.from < *hold_from)) hold_from = split.from;
    }
    return std::make_unique<Reader>(NumberSequenceSource(1, 1).createReader(ctx), hold_from, log_, backlog_from_,
                                    backlog_pause_ms_);
  }

 private:
  std::vector<std::pair<int, RangeSplit>> splits_;
  int64_t live_from_;
  std::optional<int64_t> backlog_from_;
  bool hold_ = false;
  int64_t backlog_pause_ms_ = 0;
  std::shared_ptr<Log> log_ = std::make_shared<Log>();
};

// Tags by hand: 2v + 1 for v in [from, to] of a backlog split, 2v for a live one.
inline std::vector<int64_t> tagged(int64_t from, int64_t to, bool backlog) {
  std::vector<int64_t> out;
  for (int64_t v = from; v <= to; ++v) out.push_back(v * 2 + (backlog ? 1 : 0));
  return out;
}

}  // namespace sluice::api::test_sources
