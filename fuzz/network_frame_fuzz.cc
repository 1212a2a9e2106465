// libFuzzer target: the data-connection frame decoder (runtime/network/network_frame.h) on untrusted bytes.
// The input is fed to a FrameDecoder in chunks whose sizes come from the input's first byte, so frames
// split across reads are exercised. A NetworkFrameError is the expected answer to bad bytes; anything else
// (a crash, a sanitizer report, another exception, or a decoded frame that does not re-encode to the same
// bytes) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "runtime/network/network_frame.h"

using sluice::runtime::network::decodeFrame;
using sluice::runtime::network::encodeFrame;
using sluice::runtime::network::Frame;
using sluice::runtime::network::FrameDecoder;
using sluice::runtime::network::NetworkFrameError;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t chunk = 1 + data[0] % 64;
  std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  FrameDecoder decoder("fuzz peer", 1u << 20);
  size_t fed = 0;
  try {
    while (fed < input.size()) {
      const size_t n = std::min(chunk, input.size() - fed);
      decoder.feed(input.substr(fed, n));
      fed += n;
      while (std::optional<Frame> f = decoder.next()) {
        // A decoded frame encodes back to bytes that decode to the same frame.
        const std::string again = encodeFrame(*f);
        if (!(decodeFrame(again) == *f)) std::abort();
      }
    }
    decoder.finish();
  } catch (const NetworkFrameError&) {
    // The expected outcome for garbage.
  }
  return 0;
}
