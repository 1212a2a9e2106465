#include "api/sources.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/error.h"

namespace sluice::api {

NumberSequenceSource::NumberSequenceSource(int64_t from, int64_t to) : from_(from), to_(to) {
  if (from > to) throw UserError(fmt::format("fromSequence: start {} must not be greater than end {}", from, to));
}

std::unique_ptr<runtime::SplitEnumerator<RangeSplit>> NumberSequenceSource::createEnumerator(int parallelism) const {
  // Flink's NumberSequenceSource.splitNumberRange: `parallelism` contiguous ranges of near-equal size.
  std::vector<RangeSplit> splits;
  const __int128 total = static_cast<__int128>(to_) - from_ + 1;
  const int n = static_cast<int>(std::min<__int128>(parallelism, total));
  __int128 start = from_;
  for (int i = 0; i < n; ++i) {
    const __int128 len = total / n + (i < total % n ? 1 : 0);
    splits.push_back(RangeSplit{static_cast<int64_t>(start), static_cast<int64_t>(start + len - 1), std::nullopt});
    start += len;
  }
  return std::make_unique<ListSplitEnumerator<RangeSplit>>(std::move(splits));
}

namespace {

// RangeSplit here is inclusive [from, to] so that to == INT64_MAX works.
class SequenceReader final : public runtime::SourceReader<int64_t, RangeSplit> {
 public:
  void addSplit(RangeSplit split) override {
    splits_.push_back(split);
    if (splits_.size() == 1) next_ = split.next.value_or(split.from);
  }
  std::vector<RangeSplit> snapshotState(int64_t) override {
    std::vector<RangeSplit> out(splits_.begin(), splits_.end());
    if (!out.empty()) out.front().next = next_;
    return out;
  }
  runtime::InputStatus pollNext(runtime::ReaderOutput<int64_t>& out) override {
    if (splits_.empty()) return runtime::InputStatus::kEndOfInput;
    const RangeSplit& s = splits_.front();
    for (int i = 0; i < 256; ++i) {
      out.collect(next_);
      if (next_ == s.to) {
        splits_.erase(splits_.begin());
        if (splits_.empty()) return runtime::InputStatus::kEndOfInput;
        next_ = splits_.front().next.value_or(splits_.front().from);
        return runtime::InputStatus::kMoreAvailable;
      }
      ++next_;
    }
    return runtime::InputStatus::kMoreAvailable;
  }

 private:
  std::vector<RangeSplit> splits_;
  int64_t next_ = 0;
};

class LineReader final : public runtime::SourceReader<std::string, RangeSplit> {
 public:
  explicit LineReader(std::string path) : path_(std::move(path)) {}
  void addSplit(RangeSplit split) override { splits_.push_back(split); }
  std::vector<RangeSplit> snapshotState(int64_t) override {
    std::vector<RangeSplit> out(splits_.begin(), splits_.end());
    if (in_.is_open() && !out.empty()) out.front().next = pos_;
    return out;
  }
  runtime::InputStatus pollNext(runtime::ReaderOutput<std::string>& out) override {
    if (!in_.is_open()) {
      if (splits_.empty()) return runtime::InputStatus::kEndOfInput;
      openSplit();
    }
    std::string line;
    for (int i = 0; i < 256; ++i) {
      if (pos_ >= split_.to || !std::getline(in_, line)) {
        in_.close();
        splits_.erase(splits_.begin());
        return splits_.empty() ? runtime::InputStatus::kEndOfInput : runtime::InputStatus::kMoreAvailable;
      }
      pos_ += static_cast<int64_t>(line.size()) + 1;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      out.collect(std::move(line));
    }
    return runtime::InputStatus::kMoreAvailable;
  }

 private:
  void openSplit() {
    split_ = splits_.front();
    in_.open(path_, std::ios::binary);
    if (!in_) throw InputError(fmt::format("{}: cannot open file: {}", path_, std::strerror(errno)));
    // A restored split starts at its checkpointed line start (the byte before it is a '\n', so the skip
    // below reads nothing).
    pos_ = split_.next.value_or(split_.from);
    if (pos_ > 0) {
      // Skip the line that started before the split; a line starting exactly at `from` belongs to it.
      in_.seekg(pos_ - 1);
      std::string partial;
      std::getline(in_, partial);
      pos_ += static_cast<int64_t>(partial.size());
    }
  }

  std::string path_;
  std::vector<RangeSplit> splits_;
  RangeSplit split_;
  std::ifstream in_;
  int64_t pos_ = 0;
};

}  // namespace

std::unique_ptr<runtime::SourceReader<int64_t, RangeSplit>> NumberSequenceSource::createReader(
    const runtime::SourceReaderContext&) const {
  return std::make_unique<SequenceReader>();
}

TextLineSource::TextLineSource(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  if (std::filesystem::is_directory(path_, ec))
    throw InputError(fmt::format("{}: is a directory; TextLineSource reads one file", path_));
  std::ifstream in(path_, std::ios::binary | std::ios::ate);
  if (!in) throw InputError(fmt::format("{}: cannot open file: {}", path_, std::strerror(errno)));
  size_ = static_cast<int64_t>(in.tellg());
}

std::unique_ptr<runtime::SplitEnumerator<RangeSplit>> TextLineSource::createEnumerator(int parallelism) const {
  std::vector<RangeSplit> splits;
  const int64_t n = std::max<int64_t>(1, parallelism);
  for (int64_t i = 0; i < n; ++i) splits.push_back(RangeSplit{size_ * i / n, size_ * (i + 1) / n, std::nullopt});
  return std::make_unique<ListSplitEnumerator<RangeSplit>>(std::move(splits));
}

std::unique_ptr<runtime::SourceReader<std::string, RangeSplit>> TextLineSource::createReader(
    const runtime::SourceReaderContext&) const {
  return std::make_unique<LineReader>(path_);
}

}  // namespace sluice::api
