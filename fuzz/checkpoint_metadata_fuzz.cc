// libFuzzer target: the checkpoint `_metadata` decoder (runtime/checkpoint/checkpoint_metadata.h) on untrusted
// bytes. The first input byte picks what the rest is: even, a whole file (so the frame checks are exercised);
// odd, a payload that the target frames with a valid checksum (so the payload decoder is reached at all).
// An InputError is the expected answer to bad bytes; anything else (a crash, a sanitizer report, another
// exception, or a decoded checkpoint that does not encode to bytes decoding to the same encoding) is a finding.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "common/error.h"
#include "runtime/checkpoint/checkpoint_metadata.h"

using sluice::InputError;
using sluice::runtime::checkpoint::CompletedCheckpoint;
using sluice::runtime::checkpoint::deserializeCheckpointMetadata;
using sluice::runtime::checkpoint::kCheckpointMetadataVersion;
using sluice::runtime::checkpoint::serializeCheckpointMetadata;

namespace {

void putLE(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::string frame(const std::string& payload) {
  std::string file("\x49\x60\x67\x2d", 4);
  putLE(file, kCheckpointMetadataVersion, 4);
  putLE(file, payload.size(), 8);
  file += payload;
  putLE(file, crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(payload.data()),
                    static_cast<uInt>(payload.size())),
        4);
  return file;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string file = (data[0] & 1) != 0 ? frame(rest) : rest;
  try {
    const CompletedCheckpoint c = deserializeCheckpointMetadata(file, "fuzz/_metadata");
    // Decoding accepts non-minimal varints, so compare encodings after one round.
    const std::string once = serializeCheckpointMetadata(c);
    if (serializeCheckpointMetadata(deserializeCheckpointMetadata(once, "again")) != once) std::abort();
  } catch (const InputError&) {
    // The expected outcome for garbage.
  }
  return 0;
}
