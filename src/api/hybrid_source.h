#pragma once
/// HybridSource (Flink's HybridSource, FLIP-150; backlog reporting FLIP-309): reads its sources one after
/// another, e.g. the files of a history and then the live topic. Every source but the last must be bounded;
/// the hybrid is bounded when its last source is. While the splits handed out come from any source but the
/// last, the source reports backlog (SplitEnumeratorContext::setIsProcessingBacklog(true) at start), and no
/// backlog from the first request served by the last source on, so checkpoints follow
/// execution.checkpointing.interval-during-backlog while the history is read.
///
/// Differences from Flink: the sources share one record type T and one split type SplitT (Flink allows
/// any split type per source); the switch to source i + 1 happens when source i's enumerator has no split
/// left for the asking reader, not once every reader has finished source i, so at -p > 1 one reader may
/// start on the next source while another still reads the previous one. A source restored after a failure
/// starts its enumerator at the first source again and skips the splits claimed before the checkpoint
/// (see source_sink_operators.h), so it reports backlog until a reader asks for work of the last source.
/// Threading: as any Source (the enumerator under the coordinator's lock, a reader on its task thread).

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "runtime/operators/source_sink_operators.h"
#include "runtime/serialization/type_serializer.h"

namespace sluice::api {

/// A split of the hybrid: which source it belongs to, and that source's split.
template <typename SplitT>
struct HybridSourceSplit {
  int32_t source_index = 0;
  SplitT split;
};

/// See the file comment.
template <typename T, typename SplitT>
class HybridSource final : public runtime::Source<T, HybridSourceSplit<SplitT>> {
 public:
  using Inner = runtime::Source<T, SplitT>;
  using Split = HybridSourceSplit<SplitT>;

  /// Throws UserError when `sources` is empty or a source before the last is unbounded.
  explicit HybridSource(std::vector<std::shared_ptr<const Inner>> sources) : sources_(std::move(sources)) {
    SLUICE_USER_CHECK(!sources_.empty(), "HybridSource needs at least one source");
    for (size_t i = 0; i + 1 < sources_.size(); ++i) {
      SLUICE_USER_CHECK(sources_[i]->isBounded(), "HybridSource: source {} of {} is unbounded; only the last may be",
                        i + 1, sources_.size());
    }
  }

  bool isBounded() const override { return sources_.back()->isBounded(); }

  class Enumerator final : public runtime::SplitEnumerator<Split> {
   public:
    Enumerator(std::vector<std::shared_ptr<const Inner>> sources, int parallelism)
        : sources_(std::move(sources)), parallelism_(parallelism) {}
    void start(runtime::SplitEnumeratorContext& context) override {
      context_ = &context;
      current_ = sources_[0]->createEnumerator(parallelism_);
      current_->start(context);
      context_->setIsProcessingBacklog(sources_.size() > 1);
    }
    std::optional<Split> handleSplitRequest(int subtask) override {
      while (true) {
        if (auto split = current_->handleSplitRequest(subtask)) return Split{static_cast<int32_t>(index_), std::move(*split)};
        if (index_ + 1 >= sources_.size()) return std::nullopt;
        ++index_;
        current_ = sources_[index_]->createEnumerator(parallelism_);
        current_->start(*context_);
        if (index_ + 1 == sources_.size()) context_->setIsProcessingBacklog(false);
      }
    }

   private:
    const std::vector<std::shared_ptr<const Inner>> sources_;
    int parallelism_;
    runtime::SplitEnumeratorContext* context_ = nullptr;
    size_t index_ = 0;
    std::unique_ptr<runtime::SplitEnumerator<SplitT>> current_;
  };

  class Reader final : public runtime::SourceReader<T, Split> {
   public:
    Reader(std::vector<std::shared_ptr<const Inner>> sources, runtime::SourceReaderContext ctx)
        : sources_(std::move(sources)), ctx_(ctx) {}
    void addSplit(Split split) override {
      const auto index = static_cast<size_t>(split.source_index);
      SLUICE_CHECK(index < sources_.size(), "hybrid split of source {} (there are {})", index, sources_.size());
      readerOf(index).addSplit(std::move(split.split));
      order_.push_back(index);
    }
    void setIsProcessingBacklog(bool backlog) override {
      for (auto& [index, reader] : readers_) reader->setIsProcessingBacklog(backlog);
    }
    runtime::InputStatus pollNext(runtime::ReaderOutput<T>& output) override {
      while (!order_.empty()) {
        const runtime::InputStatus status = readerOf(order_.front()).pollNext(output);
        if (status != runtime::InputStatus::kEndOfInput) return status;
        // That source's splits are done (a reader reads its splits in order): the next one's.
        const size_t done = order_.front();
        while (!order_.empty() && order_.front() == done) order_.pop_front();
        if (!order_.empty()) return runtime::InputStatus::kMoreAvailable;
      }
      return runtime::InputStatus::kEndOfInput;
    }
    std::vector<Split> snapshotState(int64_t checkpoint_id) override {
      std::vector<Split> out;
      for (auto& [index, reader] : readers_) {
        for (SplitT& s : reader->snapshotState(checkpoint_id)) out.push_back(Split{static_cast<int32_t>(index), std::move(s)});
      }
      return out;
    }
    void notifyCheckpointComplete(int64_t checkpoint_id) override {
      for (auto& [index, reader] : readers_) reader->notifyCheckpointComplete(checkpoint_id);
    }
    void close() override {
      for (auto& [index, reader] : readers_) reader->close();
    }

   private:
    runtime::SourceReader<T, SplitT>& readerOf(size_t index) {
      auto& r = readers_[index];
      if (!r) {
        r = sources_[index]->createReader(ctx_);
        r->start();
      }
      return *r;
    }
    const std::vector<std::shared_ptr<const Inner>> sources_;
    runtime::SourceReaderContext ctx_;
    std::map<size_t, std::unique_ptr<runtime::SourceReader<T, SplitT>>> readers_;
    std::deque<size_t> order_;  ///< source index of each split added and not finished, in order
  };

  std::unique_ptr<runtime::SplitEnumerator<Split>> createEnumerator(int parallelism) const override {
    return std::make_unique<Enumerator>(sources_, parallelism);
  }
  std::unique_ptr<runtime::SourceReader<T, Split>> createReader(const runtime::SourceReaderContext& ctx) const override {
    return std::make_unique<Reader>(sources_, ctx);
  }

  /// Version 1: the source index, then that source's serializer version and bytes.
  class SplitSerializer final : public runtime::SimpleVersionedSerializer<Split> {
   public:
    explicit SplitSerializer(std::vector<std::shared_ptr<const Inner>> sources) : sources_(std::move(sources)) {}
    int32_t getVersion() const override { return 1; }
    std::string serialize(const Split& split) const override {
      auto inner = sources_[static_cast<size_t>(split.source_index)]->getSplitSerializer();
      SLUICE_USER_CHECK(inner != nullptr, "HybridSource: source {} has no split serializer", split.source_index + 1);
      std::string out;
      runtime::DataOutputView w(out);
      runtime::TypeSerializer<int32_t>::serialize(split.source_index, w);
      runtime::TypeSerializer<int32_t>::serialize(inner->getVersion(), w);
      runtime::TypeSerializer<std::string>::serialize(inner->serialize(split.split), w);
      return out;
    }
    Split deserialize(int32_t version, std::string_view bytes) const override {
      if (version != 1) throw InputError(fmt::format("hybrid split serializer version {} is not known (expected 1)", version));
      runtime::DataInputView in(bytes);
      Split split;
      split.source_index = runtime::TypeSerializer<int32_t>::deserialize(in);
      const int32_t inner_version = runtime::TypeSerializer<int32_t>::deserialize(in);
      const std::string inner_bytes = runtime::TypeSerializer<std::string>::deserialize(in);
      if (split.source_index < 0 || static_cast<size_t>(split.source_index) >= sources_.size()) {
        throw InputError(fmt::format("hybrid split of source {} (there are {})", split.source_index + 1, sources_.size()));
      }
      auto inner = sources_[static_cast<size_t>(split.source_index)]->getSplitSerializer();
      if (inner == nullptr) throw InputError("hybrid split of a source without a split serializer");
      split.split = inner->deserialize(inner_version, inner_bytes);
      return split;
    }

   private:
    const std::vector<std::shared_ptr<const Inner>> sources_;
  };

  std::shared_ptr<const runtime::SimpleVersionedSerializer<Split>> getSplitSerializer() const override {
    return std::make_shared<SplitSerializer>(sources_);
  }
  std::string splitId(const Split& split) const override {
    return fmt::format("{}:{}", split.source_index, sources_[static_cast<size_t>(split.source_index)]->splitId(split.split));
  }

 private:
  std::vector<std::shared_ptr<const Inner>> sources_;
};

}  // namespace sluice::api
