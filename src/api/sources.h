#pragma once
/// Built-in FLIP-27 sources: a number sequence (Flink's NumberSequenceSource), a collection of elements
/// (Flink's FromElementsSource) and text lines of a file (Flink's FileSource with TextLineInputFormat).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/operators/source_sink_operators.h"
#include "runtime/serialization/type_traits.h"

namespace sluice::api {

/// A range of positions (records, numbers or bytes); each source says whether `to` is inclusive.
/// `next`: the position of the next record to read once reading has started (the split's checkpointed
/// position; for TextLineSource the byte where the next line starts).
struct RangeSplit {
  int64_t from = 0;
  int64_t to = 0;
  std::optional<int64_t> next;

  /// "<from>-<to>", the same at every position.
  std::string splitId() const { return std::to_string(from) + "-" + std::to_string(to); }
};
SLUICE_TYPE(RangeSplit, from, to, next)

/// Hands out a fixed list of splits in order to whoever asks first.
template <typename SplitT>
class ListSplitEnumerator final : public runtime::SplitEnumerator<SplitT> {
 public:
  explicit ListSplitEnumerator(std::vector<SplitT> splits) : splits_(std::move(splits)) {}
  std::optional<SplitT> handleSplitRequest(int) override {
    if (next_ >= splits_.size()) return std::nullopt;
    return splits_[next_++];
  }

 private:
  std::vector<SplitT> splits_;
  size_t next_ = 0;
};

/// The numbers from..to inclusive, one contiguous split per reader.
class NumberSequenceSource final : public runtime::Source<int64_t, RangeSplit> {
 public:
  /// Throws UserError when from > to.
  NumberSequenceSource(int64_t from, int64_t to);
  std::unique_ptr<runtime::SplitEnumerator<RangeSplit>> createEnumerator(int parallelism) const override;
  std::unique_ptr<runtime::SourceReader<int64_t, RangeSplit>> createReader(
      const runtime::SourceReaderContext& ctx) const override;

 private:
  int64_t from_;
  int64_t to_;
};

/// The elements of a vector in order (one split; meant for parallelism 1).
template <typename T>
class CollectionSource final : public runtime::Source<T, RangeSplit> {
 public:
  explicit CollectionSource(std::vector<T> values) : values_(std::make_shared<const std::vector<T>>(std::move(values))) {}

  std::unique_ptr<runtime::SplitEnumerator<RangeSplit>> createEnumerator(int) const override {
    return std::make_unique<ListSplitEnumerator<RangeSplit>>(
        std::vector<RangeSplit>{RangeSplit{0, static_cast<int64_t>(values_->size()), std::nullopt}});
  }

  class Reader final : public runtime::SourceReader<T, RangeSplit> {
   public:
    explicit Reader(std::shared_ptr<const std::vector<T>> values) : values_(std::move(values)) {}
    void addSplit(RangeSplit split) override {
      if (!split.next) split.next = split.from;
      splits_.push_back(split);
    }
    runtime::InputStatus pollNext(runtime::ReaderOutput<T>& out) override {
      while (!splits_.empty() && *splits_.front().next >= splits_.front().to) splits_.erase(splits_.begin());
      if (splits_.empty()) return runtime::InputStatus::kEndOfInput;
      out.collect((*values_)[static_cast<size_t>((*splits_.front().next)++)]);
      return runtime::InputStatus::kMoreAvailable;
    }
    /// The unfinished splits; `next` is the index of the next element.
    std::vector<RangeSplit> snapshotState(int64_t) override {
      std::vector<RangeSplit> out;
      for (const RangeSplit& s : splits_)
        if (*s.next < s.to) out.push_back(s);
      return out;
    }

   private:
    std::shared_ptr<const std::vector<T>> values_;
    std::vector<RangeSplit> splits_;
  };

  std::unique_ptr<runtime::SourceReader<T, RangeSplit>> createReader(const runtime::SourceReaderContext&) const override {
    return std::make_unique<Reader>(values_);
  }

 private:
  std::shared_ptr<const std::vector<T>> values_;
};

/// The lines of a text file (without the line break; a trailing '\r' is dropped). The file is split into
/// byte ranges, one per reader: a split reads the lines that start inside its range (Flink's splittable
/// text input). Throws InputError naming the file when it cannot be read.
class TextLineSource final : public runtime::Source<std::string, RangeSplit> {
 public:
  explicit TextLineSource(std::string path);
  std::unique_ptr<runtime::SplitEnumerator<RangeSplit>> createEnumerator(int parallelism) const override;
  std::unique_ptr<runtime::SourceReader<std::string, RangeSplit>> createReader(
      const runtime::SourceReaderContext& ctx) const override;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int64_t size_;
};

}  // namespace sluice::api
