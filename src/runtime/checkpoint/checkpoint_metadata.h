#pragma once
/// The binary form of a `_metadata` file (Flink's Checkpoints.storeCheckpointMetadata /
/// MetadataV3Serializer, in Sluice's own layout). All integers of the frame are little endian:
///
///   bytes 0..3    magic 0x49 0x60 0x67 0x2d (Flink's HEADER_MAGIC_NUMBER 0x4960672d)
///   bytes 4..7    u32 format version (kCheckpointMetadataVersion)
///   bytes 8..15   u64 payload length
///   bytes 16..    payload
///   last 4 bytes  u32 CRC32 (zlib) of the payload
///
/// Payload (DataOutputView: i64 fixed 8 bytes, counts and lengths as varints, strings varint + bytes):
/// checkpoint id i64, job id, kind u8, trigger ms i64, completion ms i64, operator count; per operator
/// uid, max parallelism, parallelism, then per subtask: keyed count, (key group, blob)*, operator state
/// count, (name, mode u8, element count, element*)*, then (version >= 2) the RocksDB incremental handles:
/// count, (backend id, checkpoint id i64, key group start, end, state count, (name, kind u8)*, shared
/// files, private files)*, files as count, (local name, absolute path, size, crc32)*, then (version >= 3)
/// its channel state (FLIP-76): input count, (input edge, producer subtask, bytes)*, output count, (output
/// edge, consumer subtask, bytes)*. The external pointer is not stored: it is where the file is found.
///
/// Stateless free functions, callable from any thread.

#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/checkpoint/completed_checkpoint.h"

namespace sluice::runtime::checkpoint {

/// The metadata format this build writes (2: RocksDB incremental handles; 3: channel state of unaligned
/// checkpoints); it reads versions kOldestReadableCheckpointMetadataVersion to this.
inline constexpr uint32_t kCheckpointMetadataVersion = 3;
inline constexpr uint32_t kOldestReadableCheckpointMetadataVersion = 1;
/// Bytes of the frame around the payload: magic, version, length before it; the CRC after it.
inline constexpr size_t kCheckpointMetadataHeaderBytes = 16;
inline constexpr size_t kCheckpointMetadataTrailerBytes = 4;
/// The largest max parallelism Flink accepts (KeyGroupRangeAssignment.UPPER_BOUND_MAX_PARALLELISM, 2^15).
inline constexpr int32_t kUpperBoundMaxParallelism = 1 << 15;

/// Encodes `checkpoint` as a complete `_metadata` file (frame and payload). Throws InternalError when the
/// checkpoint breaks its invariants (subtasks.size() != parallelism, a key group outside [0, max
/// parallelism), parallelism outside [1, max parallelism]).
std::string serializeCheckpointMetadata(const CompletedCheckpoint& checkpoint);

/// Decodes a `_metadata` file read from `source` (a path, used in messages). The bytes are untrusted:
/// a short file, bad magic, unsupported version, a length field longer than the bytes present, a CRC
/// mismatch, or a payload that does not decode (truncated, out-of-range value, trailing bytes) throws
/// InputError naming `source`, what is wrong and the byte offset in the file. Every length is bounded
/// by the bytes left before anything is allocated. `external_pointer` is left empty.
CompletedCheckpoint deserializeCheckpointMetadata(std::string_view bytes, const std::string& source);

}  // namespace sluice::runtime::checkpoint
