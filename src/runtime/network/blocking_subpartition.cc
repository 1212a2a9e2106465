#include "runtime/network/blocking_subpartition.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <system_error>
#include <utility>

#include "common/error.h"
#include "runtime/network/pipelined_subpartition.h"

namespace sluice::runtime {

using network::Buffer;
using network::BufferDataType;

namespace {

constexpr size_t kEntryHeader = 5;  // u8 kind + u32 size

std::string errnoText() { return std::strerror(errno); }

}  // namespace

SpillDirectory::SpillDirectory(const std::vector<std::string>& base_dirs, const std::string& job_id) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path base = base_dirs.empty() ? fs::temp_directory_path(ec) : fs::path(base_dirs.front());
  if (ec)
    throw ConfigError(fmt::format("no system temp directory for spill files ({}); set 'io.tmp.dirs'", ec.message()));
  std::random_device random;
  const std::string name = fmt::format("sluice-{}-{:08x}", job_id.substr(0, 8), random());
  const fs::path dir = base / name;
  fs::create_directories(dir, ec);
  if (ec) {
    throw ConfigError(
        fmt::format("cannot create the spill directory '{}' for blocking results: {} (check 'io.tmp.dirs')",
                    dir.string(), ec.message()));
  }
  path_ = dir.string();
}

SpillDirectory::~SpillDirectory() { remove(); }

void SpillDirectory::remove() {
  std::lock_guard<std::mutex> lock(mu_);
  if (removed_) return;
  removed_ = true;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // best effort: a leftover file must not fail the job's end
}

BlockingSubpartition::BlockingSubpartition(std::shared_ptr<network::LocalBufferPool> pool, std::string path,
                                           std::shared_ptr<const ObjectBatchSerializer> objects)
    : pool_(std::move(pool)), path_(std::move(path)), objects_(objects), elements_(std::move(objects)) {
  file_ = std::fopen(path_.c_str(), "wb");
  if (file_ == nullptr) throw InputError(fmt::format("cannot create the spill file '{}': {}", path_, errnoText()));
  serializer_ = std::make_unique<network::SpanningRecordSerializer>([this] { return requestBuffer(); },
                                                                    [this](Buffer b) { spill(std::move(b)); });
}

BlockingSubpartition::~BlockingSubpartition() {
  if (file_ != nullptr) std::fclose(file_);
}

Buffer BlockingSubpartition::requestBuffer() {
  Buffer b = pool_->requestBuffer();
  if (b.valid()) return b;
  try {
    return pool_->requestBufferBlocking();
  } catch (const InternalError&) {
    throw CancelTaskException();  // the pool was destroyed: the job is being cancelled
  }
}

void BlockingSubpartition::spill(Buffer buffer) {
  SLUICE_CHECK(file_ != nullptr, "spill file {} written after the end of the partition", path_);
  uint8_t header[kEntryHeader];
  header[0] = buffer.isBuffer() ? 0 : 1;
  const auto size = static_cast<uint32_t>(buffer.size());
  for (int i = 0; i < 4; ++i) header[1 + i] = static_cast<uint8_t>((size >> (8 * i)) & 0xff);
  if (std::fwrite(header, 1, kEntryHeader, file_) != kEntryHeader ||
      std::fwrite(buffer.data(), 1, size, file_) != size) {
    throw InputError(fmt::format("cannot write the spill file '{}': {}", path_, errnoText()));
  }
  bytes_out_.fetch_add(size, std::memory_order_relaxed);
}

void BlockingSubpartition::write(StreamElement&& element) {
  const bool end = std::holds_alternative<EndOfPartition>(element);
  elements_.write(element, *serializer_);
  if (!end) return;
  std::FILE* f = std::exchange(file_, nullptr);
  if (std::fclose(f) != 0) throw InputError(fmt::format("cannot write the spill file '{}': {}", path_, errnoText()));
  std::function<void()> listener;
  {
    std::lock_guard<std::mutex> lock(listener_mu_);
    finished_.store(true, std::memory_order_release);
    listener = finished_listener_;
  }
  if (listener) listener();
}

void BlockingSubpartition::setFinishedListener(std::function<void()> listener) {
  bool now = false;
  {
    std::lock_guard<std::mutex> lock(listener_mu_);
    finished_listener_ = listener;
    now = finished_.load(std::memory_order_acquire);
  }
  if (now && listener) listener();
}

SpilledInputChannel::SpilledInputChannel(std::shared_ptr<BlockingSubpartition> subpartition,
                                         network::NetworkBufferPool& global, int32_t buffers)
    : InputChannel(subpartition->objectSerializer()), subpartition_(std::move(subpartition)), global_(global) {
  SLUICE_CHECK(buffers >= 1, "a spilled input channel needs a buffer, got {}", buffers);
  segments_ = global_.requestExclusiveSegments(buffers, "the reader of " + subpartition_->path());
  free_ = segments_;
}

SpilledInputChannel::~SpilledInputChannel() {
  releaseBuffers();
  if (file_ != nullptr) std::fclose(file_);
  global_.recycleExclusiveSegments(segments_);
}

void SpilledInputChannel::setAvailabilityListener(std::function<void()> listener) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    listener_ = listener;
  }
  subpartition_->setFinishedListener(std::move(listener));
}

bool SpilledInputChannel::hasAvailable() const {
  if (!subpartition_->isFinished() || eof_.load(std::memory_order_acquire)) return false;
  std::lock_guard<std::mutex> lock(mu_);
  return !free_.empty();
}

void SpilledInputChannel::recycle(network::MemorySegment* segment) {
  std::function<void()> listener;
  {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(segment);
    if (!eof_.load(std::memory_order_acquire)) listener = listener_;
  }
  if (listener) listener();
}

Buffer SpilledInputChannel::nextBuffer() {
  if (!subpartition_->isFinished() || eof_.load(std::memory_order_acquire)) return Buffer();
  if (file_ == nullptr) {
    file_ = std::fopen(subpartition_->path().c_str(), "rb");
    // InputChannel::drain puts "the spill file '<path>': " before every InputError of this channel.
    if (file_ == nullptr) throw InputError(fmt::format("cannot open it: {}", errnoText()));
  }
  network::MemorySegment* segment = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.empty()) return Buffer();
    segment = free_.back();
    free_.pop_back();
  }
  Buffer buffer(segment, this);  // from here on the segment goes back through recycle()
  uint8_t header[kEntryHeader];
  const size_t got = std::fread(header, 1, kEntryHeader, file_);
  if (got == 0 && std::feof(file_)) {
    eof_.store(true, std::memory_order_release);
    return Buffer();
  }
  const uint32_t size = static_cast<uint32_t>(header[1]) | static_cast<uint32_t>(header[2]) << 8 |
                        static_cast<uint32_t>(header[3]) << 16 | static_cast<uint32_t>(header[4]) << 24;
  if (got != kEntryHeader) throw InputError(fmt::format("truncated entry header at offset {}", offset_));
  if (header[0] > 1 || size > static_cast<uint32_t>(segment->size())) {
    throw InputError(fmt::format("corrupt entry at offset {}: kind {} (0 or 1), {} bytes (a buffer holds at most {})",
                                 offset_, header[0], size, segment->size()));
  }
  if (std::fread(buffer.data(), 1, size, file_) != size) {
    throw InputError(
        fmt::format("truncated at offset {}: the entry there needs {} bytes", offset_ + kEntryHeader, size));
  }
  offset_ += static_cast<int64_t>(kEntryHeader + size);
  buffer.setDataType(header[0] == 0 ? BufferDataType::kData : BufferDataType::kEvent);
  buffer.setSize(static_cast<int32_t>(size));
  return buffer;
}

}  // namespace sluice::runtime
