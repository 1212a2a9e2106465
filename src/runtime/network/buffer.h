#pragma once
/// Network memory: `MemorySegment` (a fixed-size byte block, Flink's `MemorySegment`), `BufferRecycler`
/// (where a segment goes back to, Flink's `BufferRecycler`) and `Buffer` (a segment with the bytes used,
/// a data/event flag and a usable-capacity limit, Flink's `NetworkBuffer` + `BufferBuilder` trimming).
///
/// Threading: a Buffer belongs to one thread at a time (it is moved between threads, never shared).
/// Recyclers are thread-safe.

#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>

#include "common/error.h"

namespace sluice::runtime::network {

/// A fixed-size block of bytes owned by a NetworkBufferPool (Flink's `MemorySegment`). Not movable, so
/// pointers to it stay valid for the pool's lifetime.
class MemorySegment {
 public:
  /// Allocates `size` bytes (zero-filled).
  explicit MemorySegment(int32_t size) : size_(size), data_(new uint8_t[static_cast<size_t>(size)]()) {
    SLUICE_CHECK(size > 0, "memory segment size must be positive, got {}", size);
  }
  MemorySegment(const MemorySegment&) = delete;
  MemorySegment& operator=(const MemorySegment&) = delete;
  /// Size in bytes.
  int32_t size() const { return size_; }
  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }

 private:
  int32_t size_;
  std::unique_ptr<uint8_t[]> data_;
};

/// Takes a segment back when the Buffer that held it is released (Flink's `BufferRecycler`).
/// Implementations are thread-safe: buffers are released on whichever thread consumed them.
class BufferRecycler {
 public:
  virtual ~BufferRecycler() = default;
  /// Takes `segment` back; called exactly once per handed-out segment.
  virtual void recycle(MemorySegment* segment) = 0;
};

/// What a buffer carries (Flink's `Buffer.DataType`, reduced to the two kinds the credit protocol tells
/// apart: data needs credit, events do not).
enum class BufferDataType : uint8_t { kData = 0, kEvent = 1 };

/// A memory segment in use: `size()` bytes written, usable up to `capacity()` bytes, released to its
/// recycler when destroyed or `recycle()`d (Flink's `NetworkBuffer`). Move-only; an empty Buffer (default
/// constructed or moved from) holds nothing.
///
/// The capacity limit is how buffer debloating (FLIP-183) shrinks buffers: a buffer started after a new
/// size was announced is limited to that size, while the segment stays full-size and buffers already
/// filled keep their size. Call only from the thread that holds the buffer.
class Buffer {
 public:
  Buffer() = default;
  /// Wraps `segment` (owned by `recycler`) with capacity = the whole segment.
  Buffer(MemorySegment* segment, BufferRecycler* recycler, BufferDataType type = BufferDataType::kData)
      : segment_(segment), recycler_(recycler), capacity_(segment->size()), type_(type) {}
  Buffer(Buffer&& o) noexcept { moveFrom(o); }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      recycle();
      moveFrom(o);
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { recycle(); }

  /// True when the buffer holds a segment.
  bool valid() const { return segment_ != nullptr; }
  explicit operator bool() const { return valid(); }

  /// Bytes written (readable).
  int32_t size() const { return size_; }
  /// Usable bytes: the capacity limit (<= the segment size).
  int32_t capacity() const { return capacity_; }
  /// The segment size in bytes (the most a capacity limit may be).
  int32_t maxCapacity() const { return segment_ ? segment_->size() : 0; }
  int32_t writableBytes() const { return capacity_ - size_; }
  bool isFull() const { return size_ >= capacity_; }
  const uint8_t* data() const { return segment_->data(); }
  uint8_t* data() { return segment_->data(); }

  BufferDataType dataType() const { return type_; }
  void setDataType(BufferDataType type) { type_ = type; }
  /// True for data, false for an event (Flink's `Buffer.isBuffer`).
  bool isBuffer() const { return type_ == BufferDataType::kData; }

  /// Sets the written size (bytes). Throws InternalError when above the capacity.
  void setSize(int32_t size) {
    SLUICE_CHECK(size >= 0 && size <= capacity_, "buffer size {} outside [0, {}]", size, capacity_);
    size_ = size;
  }
  /// Limits the usable bytes to `limit`, clamped to the segment size (Flink's `BufferBuilder.trim`).
  /// Throws InternalError when `limit` is below the bytes already written or not positive.
  void setCapacityLimit(int32_t limit) {
    SLUICE_CHECK(limit > 0 && limit >= size_, "buffer capacity limit {} below written size {}", limit, size_);
    capacity_ = std::min(limit, maxCapacity());
  }
  /// Copies up to `n` bytes from `src` after the written bytes; returns how many fitted.
  int32_t append(const uint8_t* src, int32_t n) {
    const int32_t k = std::min(n, writableBytes());
    if (k > 0) std::memcpy(segment_->data() + size_, src, static_cast<size_t>(k));
    size_ += k;
    return k;
  }

  /// Returns the segment to its recycler now (idempotent).
  void recycle() {
    if (segment_ != nullptr) {
      MemorySegment* s = segment_;
      segment_ = nullptr;
      recycler_->recycle(s);
    }
  }
  /// The recycler this buffer returns to (nullptr when empty).
  BufferRecycler* recycler() const { return segment_ ? recycler_ : nullptr; }
  /// Where the first record that starts in this data buffer begins (bytes), or -1 when every byte
  /// continues a record begun in an earlier buffer. Set by the writer; producer side only (not sent), so
  /// an unaligned barrier can tell which overtaken bytes start a whole record.
  int32_t firstRecordOffset() const { return first_record_offset_; }
  void setFirstRecordOffset(int32_t offset) { first_record_offset_ = offset; }

 private:
  void moveFrom(Buffer& o) {
    segment_ = std::exchange(o.segment_, nullptr);
    recycler_ = o.recycler_;
    size_ = std::exchange(o.size_, 0);
    capacity_ = std::exchange(o.capacity_, 0);
    type_ = o.type_;
    first_record_offset_ = std::exchange(o.first_record_offset_, -1);
  }

  MemorySegment* segment_ = nullptr;
  BufferRecycler* recycler_ = nullptr;
  int32_t size_ = 0;
  int32_t capacity_ = 0;
  BufferDataType type_ = BufferDataType::kData;
  int32_t first_record_offset_ = -1;
};

/// A buffer of `size` (> 0) bytes on the heap, outside every pool, freed when released: events that need
/// no credit (received events, priority barriers) use it, as Flink allocates unpooled memory for them.
inline Buffer unpooledBuffer(int32_t size, BufferDataType type) {
  struct HeapRecycler final : BufferRecycler {
    void recycle(MemorySegment* segment) override { delete segment; }
  };
  static HeapRecycler recycler;
  return Buffer(new MemorySegment(size), &recycler, type);
}

}  // namespace sluice::runtime::network
