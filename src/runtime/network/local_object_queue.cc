#include "runtime/network/local_object_queue.h"

#include <fmt/format.h>

#include "common/error.h"

namespace sluice::runtime::network {

namespace {

uint64_t readLe(std::string_view bytes, size_t at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[at + static_cast<size_t>(i)])) << (8 * i);
  return v;
}

void writeLe(std::string& out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

void LocalObjectQueue::push(ObjectBatchPtr batch, std::string& handle) {
  uint64_t seq;
  {
    std::lock_guard<std::mutex> lock(mu_);
    seq = next_++;
    queue_.emplace_back(seq, std::move(batch));
  }
  handle.clear();
  handle.push_back(kHandleRecord);
  writeLe(handle, seq, 8);
}

ObjectBatchPtr LocalObjectQueue::take(std::string_view record) {
  if (record.size() != kHandleBytes || record[0] != kHandleRecord) {
    throw InputError(fmt::format("a local object batch handle of {} bytes (expected {})", record.size(), kHandleBytes));
  }
  const uint64_t seq = readLe(record, 1, 8);
  std::lock_guard<std::mutex> lock(mu_);
  if (queue_.empty() || queue_.front().first != seq) {
    throw InputError(fmt::format("local object batch handle {} does not name the next queued batch ({})", seq,
                                 queue_.empty() ? std::string("none") : std::to_string(queue_.front().first)));
  }
  ObjectBatchPtr batch = std::move(queue_.front().second);
  queue_.pop_front();
  return batch;
}

void LocalObjectQueue::resolve(std::string_view raw, const ObjectBatchSerializer& objects, std::string& out) const {
  size_t pos = 0;
  while (pos < raw.size()) {
    SLUICE_CHECK(raw.size() - pos >= 4, "overtaken local records end inside a record length");
    const uint64_t n = readLe(raw, pos, 4);
    SLUICE_CHECK(n <= raw.size() - pos - 4, "overtaken local record of {} bytes, {} left", n, raw.size() - pos - 4);
    const std::string_view record = raw.substr(pos + 4, n);
    pos += 4 + n;
    if (record.empty() || record[0] != kHandleRecord) {
      out.append(raw.data() + pos - 4 - n, 4 + n);
      continue;
    }
    SLUICE_CHECK(record.size() == kHandleBytes, "local object batch handle of {} bytes", record.size());
    const uint64_t seq = readLe(record, 1, 8);
    const ObjectBatch* batch = nullptr;
    for (const auto& [s, b] : queue_) {
      if (s == seq) batch = b.get();
    }
    SLUICE_CHECK(batch != nullptr, "overtaken local object batch {} is not queued", seq);
    const size_t at = out.size();
    out.append(4, '\0');
    out.push_back(kObjectBatchRecord);
    objects.serialize(*batch, out);
    const uint64_t len = out.size() - at - 4;
    SLUICE_CHECK(len <= 0xffffffffu, "record of {} bytes is too large", len);
    for (int i = 0; i < 4; ++i) out[at + static_cast<size_t>(i)] = static_cast<char>((len >> (8 * i)) & 0xff);
  }
}

size_t LocalObjectQueue::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

}  // namespace sluice::runtime::network
