// libFuzzer target: the decoders of StreamElements from untrusted buffers (runtime/network/
// stream_element_codec.h: RowBatch records, object batch records of a DataStream type, events) and the
// reader of blocking results' spill files (SpilledInputChannel in runtime/network/blocking_subpartition.h).
//
// The first byte picks the path:
//   0: buffers of a rows-only channel, 1: buffers of a channel of `Leg` tuple batches (the rest of the input
//      is a list of buffers: u8 flags (bit 0: event), u8 size, that many bytes; an event buffer holds u8 type,
//      i64 value, u32 payload length, payload: watermark 1, end of partition 2, checkpoint barrier 5,
//      watermark status 8, record attributes 9 (value 1 backlog, 0 not));
//   2: the rest of the input is a spill file of `Leg` batches, read through a SpilledInputChannel.
// An InputError is the expected answer to bad bytes (and names where they came from on the spill path);
// anything else (a crash, a sanitizer report, an InternalError or another exception) is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "common/error.h"
#include "runtime/network/blocking_subpartition.h"
#include "runtime/network/buffer_pool.h"
#include "runtime/network/stream_element_codec.h"
#include "runtime/serialization/object_batch_serializer.h"

namespace {

using namespace sluice;
using namespace sluice::runtime;

// Records with strings, numbers, optionals and vectors (airline, delay, distance, stops).
using Leg = std::tuple<std::string, int64_t, std::optional<double>, std::vector<std::string>>;

constexpr int32_t kSegmentSize = 256;

void roundTrip(RecordAttributes a, network::LocalBufferPool& pool) {
  network::Buffer buffer = pool.requestBuffer();
  if (!buffer.valid()) std::abort();
  network::EventSerializer::toBuffer(
      network::NetworkEvent{network::NetworkEventType::kRecordAttributes, a.is_backlog ? 1 : 0, {}}, buffer);
  network::StreamElementDeserializer again;
  again.read(std::move(buffer), [&](StreamElement&& e) {
    if (std::get<RecordAttributes>(e) != a) std::abort();
  });
}

void decodeBuffers(std::string_view input, std::shared_ptr<const ObjectBatchSerializer> objects) {
  network::NetworkBufferPool global(64, kSegmentSize);
  auto pool = global.createBufferPool(1, 64, "fuzz channel");
  network::StreamElementDeserializer elements(std::move(objects), /*max_record_bytes=*/1u << 20);
  std::vector<StreamElement> out;
  try {
    while (input.size() >= 2) {
      const bool event = (input[0] & 1) != 0;
      const size_t size = std::min<size_t>(static_cast<uint8_t>(input[1]), input.size() - 2);
      network::Buffer buffer = pool->requestBuffer();
      if (!buffer.valid()) std::abort();  // every buffer is recycled as soon as it is read
      buffer.append(reinterpret_cast<const uint8_t*>(input.data() + 2), static_cast<int32_t>(size));
      buffer.setDataType(event ? network::BufferDataType::kEvent : network::BufferDataType::kData);
      input.remove_prefix(2 + size);
      elements.read(std::move(buffer), [&](StreamElement&& e) {
        // Decoded record attributes are a valid element: they round-trip.
        if (const auto* a = std::get_if<RecordAttributes>(&e)) roundTrip(*a, *pool);
        out.push_back(std::move(e));
      });
    }
  } catch (const InputError&) {
    // The expected outcome for corrupt bytes.
  }
  elements.clear();
}

void readSpillFile(std::string_view input) {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/sluice-stream-element-fuzz.XXXXXX";
    const char* made = ::mkdtemp(tmpl);
    if (made == nullptr) std::abort();
    return std::string(made);
  }();
  const std::string path = dir + "/0-0-0.spill";
  network::NetworkBufferPool global(64, kSegmentSize);
  auto pool = global.createBufferPool(2, 2, "fuzz producer");
  auto subpartition = std::make_shared<BlockingSubpartition>(pool, path, objectBatchSerializer<Leg>());
  subpartition->write(EndOfPartition{});  // finished: the reader may open the file, which we replace
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (!input.empty() && std::fwrite(input.data(), 1, input.size(), f) != input.size()) std::abort();
  std::fclose(f);
  {
    SpilledInputChannel channel(subpartition, global, 2);
    std::deque<InputEntry> out;
    try {
      // Each drain reads at least one buffer while any is left: the file is at most the input's size.
      for (size_t i = 0; i <= input.size() && channel.hasAvailable(); ++i) channel.drain(0, out);
    } catch (const InputError& e) {
      // Corrupt spill bytes must name the file.
      if (std::string_view(e.what()).find(path) == std::string_view::npos) std::abort();
    }
  }
  std::remove(path.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      decodeBuffers(input, nullptr);
      break;
    case 1:
      decodeBuffers(input, objectBatchSerializer<Leg>());
      break;
    default:
      readSpillFile(input);
      break;
  }
  return 0;
}
