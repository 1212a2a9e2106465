#include "runtime/checkpoint/checkpoint_metadata.h"

#include <zlib.h>

#include <cstdint>
#include <limits>

#include "common/error.h"
#include "runtime/serialization/type_serializer.h"

namespace sluice::runtime::checkpoint {
namespace {

constexpr unsigned char kMagic[4] = {0x49, 0x60, 0x67, 0x2d};

uint32_t crc32Of(std::string_view bytes) {
  // zlib's crc32 takes a uInt length: feed large payloads in chunks.
  uLong crc = crc32(0L, Z_NULL, 0);
  size_t done = 0;
  while (done < bytes.size()) {
    const size_t n = std::min<size_t>(bytes.size() - done, std::numeric_limits<uInt>::max());
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + done), static_cast<uInt>(n));
    done += n;
  }
  return static_cast<uint32_t>(crc);
}

void putLE(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t getLE(std::string_view in, size_t offset, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(in[offset + i])) << (8 * i);
  return v;
}

void writeI64(DataOutputView& out, int64_t v) { TypeSerializer<int64_t>::serialize(v, out); }
void writeString(DataOutputView& out, const std::string& s) { TypeSerializer<std::string>::serialize(s, out); }

/// Reads the payload; `fail` builds an InputError naming the source and the file offset.
class PayloadReader {
 public:
  PayloadReader(std::string_view payload, const std::string& source) : in_(payload), source_(source) {}

  /// `payload_offset`: where the bad value starts in the payload (default: the current position).
  [[noreturn]] void fail(const std::string& what, size_t payload_offset = SIZE_MAX) const {
    const size_t at = payload_offset == SIZE_MAX ? in_.position() : payload_offset;
    throw InputError(
        fmt::format("checkpoint metadata '{}': {} at byte {}", source_, what, kCheckpointMetadataHeaderBytes + at));
  }
  int64_t readI64() { return TypeSerializer<int64_t>::deserialize(in_); }
  uint8_t readU8() { return TypeSerializer<uint8_t>::deserialize(in_); }
  std::string readString() { return TypeSerializer<std::string>::deserialize(in_); }
  uint64_t readVarUint() { return in_.readVarUint(); }
  /// A count of items taking at least `min_bytes` each, bounded by the bytes left.
  size_t readCount(size_t min_bytes) { return in_.readLength(min_bytes); }
  /// A varint in [lo, hi], `what` naming it in the error.
  int32_t readInt(const char* what, int64_t lo, int64_t hi) {
    const size_t start = in_.position();
    const uint64_t v = in_.readVarUint();
    if (v < static_cast<uint64_t>(lo) || v > static_cast<uint64_t>(hi)) {
      fail(fmt::format("{} {} is outside [{}, {}]", what, v, lo, hi), start);
    }
    return static_cast<int32_t>(v);
  }
  bool atEnd() const { return in_.atEnd(); }
  size_t position() const { return in_.position(); }

 private:
  DataInputView in_;
  const std::string& source_;
};

// RocksDB incremental handles (version >= 2), kept apart from the rest of a subtask's state.
void writeIncrementalFiles(DataOutputView& out, const std::vector<IncrementalStateFile>& files) {
  out.writeVarUint(files.size());
  for (const IncrementalStateFile& f : files) {
    writeString(out, f.local_name);
    writeString(out, f.path);
    out.writeVarUint(f.size);
    out.writeVarUint(f.crc32);
  }
}

void writeIncrementalHandles(DataOutputView& out, const std::string& uid, int32_t max_parallelism,
                             const std::vector<IncrementalKeyedStateHandle>& handles) {
  out.writeVarUint(handles.size());
  for (const IncrementalKeyedStateHandle& h : handles) {
    SLUICE_CHECK(h.key_group_start >= 0 && h.key_group_start <= h.key_group_end && h.key_group_end < max_parallelism,
                 "operator '{}': incremental handle range [{}, {}] of {}", uid, h.key_group_start, h.key_group_end,
                 max_parallelism);
    writeString(out, h.backend_id);
    writeI64(out, h.checkpoint_id);
    out.writeVarUint(static_cast<uint64_t>(h.key_group_start));
    out.writeVarUint(static_cast<uint64_t>(h.key_group_end));
    out.writeVarUint(h.states.size());
    for (const auto& [name, kind] : h.states) {
      writeString(out, name);
      out.writeBytes(&kind, 1);
    }
    writeIncrementalFiles(out, h.shared_files);
    writeIncrementalFiles(out, h.private_files);
    out.writeVarUint(h.checkpointed_size);
  }
}

std::vector<IncrementalStateFile> readIncrementalFiles(PayloadReader& r, const char* what) {
  // A file takes >= 4 bytes (two string lengths, size, crc).
  const size_t n = r.readCount(4);
  std::vector<IncrementalStateFile> files;
  files.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    IncrementalStateFile f;
    const size_t at = r.position();
    f.local_name = r.readString();
    if (f.local_name.empty() || f.local_name.find('/') != std::string::npos || f.local_name == "." ||
        f.local_name == "..") {
      r.fail(fmt::format("{} file name '{}' is not a plain file name", what, f.local_name), at);
    }
    f.path = r.readString();
    if (f.path.empty() || f.path.front() != '/') r.fail(fmt::format("{} file path '{}' is not absolute", what, f.path));
    f.size = r.readVarUint();
    const size_t crc_at = r.position();
    const uint64_t crc = r.readVarUint();
    if (crc > 0xffffffffull) r.fail(fmt::format("{} file checksum {} exceeds 32 bits", what, crc), crc_at);
    f.crc32 = static_cast<uint32_t>(crc);
    files.push_back(std::move(f));
  }
  return files;
}

std::vector<IncrementalKeyedStateHandle> readIncrementalHandles(PayloadReader& r, int32_t max_parallelism) {
  // A handle takes >= 15 bytes (id length, 8-byte checkpoint id, range, three counts, size).
  const size_t n = r.readCount(15);
  std::vector<IncrementalKeyedStateHandle> handles;
  handles.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    IncrementalKeyedStateHandle h;
    h.backend_id = r.readString();
    h.checkpoint_id = r.readI64();
    h.key_group_start = r.readInt("incremental key group start", 0, max_parallelism - 1);
    h.key_group_end = r.readInt("incremental key group end", h.key_group_start, max_parallelism - 1);
    const size_t states = r.readCount(2);
    for (size_t s = 0; s < states; ++s) {
      std::string name = r.readString();
      const uint8_t kind = r.readU8();
      if (!h.states.emplace(name, kind).second) r.fail(fmt::format("incremental state '{}' appears twice", name));
    }
    h.shared_files = readIncrementalFiles(r, "shared");
    h.private_files = readIncrementalFiles(r, "private");
    h.checkpointed_size = r.readVarUint();
    handles.push_back(std::move(h));
  }
  return handles;
}

// Channel state of one subtask (format version >= 3): input count, (input, producer subtask, bytes)*, output
// count, (output, consumer subtask, bytes)*.
void writeChannelState(DataOutputView& out, const SubtaskChannelState& c) {
  out.writeVarUint(c.input.size());
  for (const InputChannelStateEntry& e : c.input) {
    out.writeVarUint(static_cast<uint64_t>(e.input));
    out.writeVarUint(static_cast<uint64_t>(e.producer_subtask));
    writeString(out, e.bytes);
  }
  out.writeVarUint(c.output.size());
  for (const OutputChannelStateEntry& e : c.output) {
    out.writeVarUint(static_cast<uint64_t>(e.output));
    out.writeVarUint(static_cast<uint64_t>(e.consumer_subtask));
    writeString(out, e.bytes);
  }
}

/// Edges per vertex and subtasks per edge are bounded like parallelism (Flink's 2^15 upper bound).
constexpr int64_t kMaxChannelIndex = kUpperBoundMaxParallelism - 1;

/// Reads one list of channel state entries; `edge` and `peer` point at the entry's edge index and peer
/// subtask; `name` and `peer_name` name them in errors.
template <typename Entry>
std::vector<Entry> readChannelEntries(PayloadReader& r, int32_t Entry::*edge, int32_t Entry::*peer, const char* name,
                                      const char* peer_name) {
  std::vector<Entry> entries;
  // Each entry takes >= 3 bytes (two varints and a length).
  const size_t n = r.readCount(3);
  for (size_t i = 0; i < n; ++i) {
    Entry e;
    e.*edge = r.readInt(fmt::format("channel state {}", name).c_str(), 0, kMaxChannelIndex);
    e.*peer = r.readInt(fmt::format("channel state {} subtask", peer_name).c_str(), 0, kMaxChannelIndex);
    e.bytes = r.readString();
    for (const Entry& other : entries) {
      if (other.*edge == e.*edge && other.*peer == e.*peer) {
        r.fail(fmt::format("{} channel state of {} {} with {} subtask {} appears twice", name, name, e.*edge, peer_name,
                           e.*peer));
      }
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

SubtaskChannelState readChannelState(PayloadReader& r) {
  SubtaskChannelState c;
  c.input = readChannelEntries(r, &InputChannelStateEntry::input, &InputChannelStateEntry::producer_subtask, "input",
                               "producer");
  c.output = readChannelEntries(r, &OutputChannelStateEntry::output, &OutputChannelStateEntry::consumer_subtask,
                                "output", "consumer");
  return c;
}

OperatorSubtaskState readSubtask(PayloadReader& r, int32_t max_parallelism, uint32_t version) {
  OperatorSubtaskState s;
  // Each keyed entry takes >= 2 bytes (a key group varint and a blob length).
  const size_t keyed = r.readCount(2);
  for (size_t i = 0; i < keyed; ++i) {
    const int32_t group = r.readInt("key group", 0, max_parallelism - 1);
    std::string blob = r.readString();
    if (!s.keyed.emplace(group, std::move(blob)).second) r.fail(fmt::format("key group {} appears twice", group));
  }
  // Each named state takes >= 3 bytes (name length, mode, element count).
  const size_t named = r.readCount(3);
  for (size_t i = 0; i < named; ++i) {
    std::string name = r.readString();
    OperatorListState list;
    const uint8_t mode = r.readU8();
    if (mode > static_cast<uint8_t>(OperatorStateMode::kBroadcast)) {
      r.fail(fmt::format("operator state '{}' has mode {} (0, 1 or 2)", name, mode));
    }
    list.mode = static_cast<OperatorStateMode>(mode);
    const size_t elements = r.readCount(1);
    list.elements.reserve(elements);
    for (size_t e = 0; e < elements; ++e) list.elements.push_back(r.readString());
    if (!s.operator_state.emplace(name, std::move(list)).second) {
      r.fail(fmt::format("operator state '{}' appears twice", name));
    }
  }
  if (version >= 2) s.incremental = readIncrementalHandles(r, max_parallelism);
  if (version >= 3) s.channel = readChannelState(r);
  return s;
}

CompletedCheckpoint readPayload(PayloadReader& r, uint32_t version) {
  CompletedCheckpoint c;
  c.checkpoint_id = r.readI64();
  if (c.checkpoint_id < 0) r.fail(fmt::format("negative checkpoint id {}", c.checkpoint_id));
  c.job_id = r.readString();
  const uint8_t kind = r.readU8();
  if (kind > static_cast<uint8_t>(CheckpointKind::kSavepointTerminate)) r.fail(fmt::format("checkpoint kind {} (0 to 3)", kind));
  c.kind = static_cast<CheckpointKind>(kind);
  c.trigger_timestamp_ms = r.readI64();
  c.completion_timestamp_ms = r.readI64();
  // Each operator takes >= 3 bytes (uid length, parallelism, max parallelism) plus its subtasks.
  const size_t operators = r.readCount(3);
  for (size_t i = 0; i < operators; ++i) {
    std::string uid = r.readString();
    OperatorState op;
    op.max_parallelism = r.readInt("max parallelism", 1, kUpperBoundMaxParallelism);
    op.parallelism = r.readInt("parallelism", 1, op.max_parallelism);
    // A subtask takes >= 4 bytes (its four counts), so the end of the input stops a huge parallelism early.
    op.subtasks.reserve(std::min<size_t>(static_cast<size_t>(op.parallelism), 1024));
    for (int32_t s = 0; s < op.parallelism; ++s) {
      if (r.atEnd()) r.fail(fmt::format("operator '{}' ends after {} of its {} subtasks", uid, s, op.parallelism));
      op.subtasks.push_back(readSubtask(r, op.max_parallelism, version));
    }
    if (!c.operators.emplace(uid, std::move(op)).second) r.fail(fmt::format("operator '{}' appears twice", uid));
  }
  if (!r.atEnd()) r.fail("trailing bytes after the last operator");
  return c;
}

}  // namespace

std::string serializeCheckpointMetadata(const CompletedCheckpoint& checkpoint) {
  std::string payload;
  DataOutputView out(payload);
  writeI64(out, checkpoint.checkpoint_id);
  writeString(out, checkpoint.job_id);
  const uint8_t kind = static_cast<uint8_t>(checkpoint.kind);
  out.writeBytes(&kind, 1);
  writeI64(out, checkpoint.trigger_timestamp_ms);
  writeI64(out, checkpoint.completion_timestamp_ms);
  out.writeVarUint(checkpoint.operators.size());
  for (const auto& [uid, op] : checkpoint.operators) {
    SLUICE_CHECK(op.max_parallelism >= 1 && op.max_parallelism <= kUpperBoundMaxParallelism,
                 "operator '{}': max parallelism {}", uid, op.max_parallelism);
    SLUICE_CHECK(op.parallelism >= 1 && op.parallelism <= op.max_parallelism,
                 "operator '{}': parallelism {} with max parallelism {}", uid, op.parallelism, op.max_parallelism);
    SLUICE_CHECK(op.subtasks.size() == static_cast<size_t>(op.parallelism),
                 "operator '{}': {} subtask states for parallelism {}", uid, op.subtasks.size(), op.parallelism);
    writeString(out, uid);
    out.writeVarUint(static_cast<uint64_t>(op.max_parallelism));
    out.writeVarUint(static_cast<uint64_t>(op.parallelism));
    for (const OperatorSubtaskState& s : op.subtasks) {
      out.writeVarUint(s.keyed.size());
      for (const auto& [group, blob] : s.keyed) {
        SLUICE_CHECK(group >= 0 && group < op.max_parallelism, "operator '{}': key group {} of {}", uid, group,
                     op.max_parallelism);
        out.writeVarUint(static_cast<uint64_t>(group));
        writeString(out, blob);
      }
      out.writeVarUint(s.operator_state.size());
      for (const auto& [name, list] : s.operator_state) {
        writeString(out, name);
        const uint8_t mode = static_cast<uint8_t>(list.mode);
        out.writeBytes(&mode, 1);
        out.writeVarUint(list.elements.size());
        for (const std::string& e : list.elements) writeString(out, e);
      }
      writeIncrementalHandles(out, uid, op.max_parallelism, s.incremental);
      writeChannelState(out, s.channel);
    }
  }

  std::string file;
  file.reserve(kCheckpointMetadataHeaderBytes + payload.size() + kCheckpointMetadataTrailerBytes);
  file.append(reinterpret_cast<const char*>(kMagic), sizeof(kMagic));
  putLE(file, kCheckpointMetadataVersion, 4);
  putLE(file, payload.size(), 8);
  file += payload;
  putLE(file, crc32Of(payload), 4);
  return file;
}

CompletedCheckpoint deserializeCheckpointMetadata(std::string_view bytes, const std::string& source) {
  const auto fail = [&](const std::string& what) {
    return InputError(fmt::format("checkpoint metadata '{}': {}", source, what));
  };
  if (bytes.size() < sizeof(kMagic)) {
    throw fail(fmt::format("truncated: {} bytes, the magic number alone takes {}", bytes.size(), sizeof(kMagic)));
  }
  if (bytes.substr(0, sizeof(kMagic)) != std::string_view(reinterpret_cast<const char*>(kMagic), sizeof(kMagic))) {
    throw fail("bad magic number at byte 0: not a checkpoint metadata file");
  }
  if (bytes.size() < kCheckpointMetadataHeaderBytes) {
    throw fail(fmt::format("truncated header: {} bytes of {}", bytes.size(), kCheckpointMetadataHeaderBytes));
  }
  const uint64_t version = getLE(bytes, 4, 4);
  if (version < kOldestReadableCheckpointMetadataVersion || version > kCheckpointMetadataVersion) {
    throw fail(fmt::format("unsupported format version {} at byte 4 (this build reads versions {} to {})", version,
                           kOldestReadableCheckpointMetadataVersion, kCheckpointMetadataVersion));
  }
  const uint64_t length = getLE(bytes, 8, 8);
  const size_t available = bytes.size() - kCheckpointMetadataHeaderBytes;
  if (length > available || available - length < kCheckpointMetadataTrailerBytes) {
    throw fail(fmt::format("payload length {} at byte 8 exceeds the file: {} bytes follow the header, too few for "
                           "the payload and its {}-byte checksum (truncated file?)",
                           length, available, kCheckpointMetadataTrailerBytes));
  }
  if (available - length > kCheckpointMetadataTrailerBytes) {
    throw fail(fmt::format("{} unexpected bytes after the checksum at byte {}",
                           available - length - kCheckpointMetadataTrailerBytes,
                           kCheckpointMetadataHeaderBytes + length + kCheckpointMetadataTrailerBytes));
  }
  const std::string_view payload = bytes.substr(kCheckpointMetadataHeaderBytes, length);
  const size_t crc_offset = kCheckpointMetadataHeaderBytes + length;
  const uint32_t stored = static_cast<uint32_t>(getLE(bytes, crc_offset, 4));
  const uint32_t actual = crc32Of(payload);
  if (stored != actual) {
    throw fail(fmt::format("checksum mismatch: the CRC32 at byte {} is {:08x}, the payload's is {:08x} (corrupt file)",
                           crc_offset, stored, actual));
  }
  PayloadReader reader(payload, source);
  try {
    return readPayload(reader, static_cast<uint32_t>(version));
  } catch (const InputError& e) {
    const std::string what = e.what();
    if (what.rfind("checkpoint metadata '", 0) == 0) throw;
    // DataInputView counts offsets from the payload's start.
    throw fail(fmt::format("corrupt payload (offsets from byte {}): {}", kCheckpointMetadataHeaderBytes, what));
  }
}

}  // namespace sluice::runtime::checkpoint
