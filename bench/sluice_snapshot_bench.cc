// What a heap keyed-state snapshot costs the task thread: the whole synchronous snapshot (the path before
// asynchronous snapshots) against the synchronous part of a copy-on-write snapshot, the write-out that now
// runs on the snapshot thread, and the task's extra cost of copying on write while a snapshot is live
// (one update to every key, with and without a live snapshot). Prints a table; not a test.
//   build/release/bench/sluice_snapshot_bench [--keys N] [--rounds R]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "bench_args.h"
#include "common/hash.h"
#include "runtime/state/keyed_state_backend.h"

namespace {

using namespace sluice::runtime::state;
using Clock = std::chrono::steady_clock;

constexpr int32_t kMaxP = 128;

double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

struct Row {
  double full_sync = 1e18, freeze = 1e18, write = 1e18, update_plain = 1e18, update_cow = 1e18;
};

Row measure(int64_t keys, int64_t rounds) {
  KeyedStateBackend b(KeyGroupRange::of(0, kMaxP - 1), kMaxP);
  auto& v = b.getValueState(ValueStateDescriptor<int64_t>{"sum"});
  std::vector<std::pair<std::string, int32_t>> addr;
  addr.reserve(static_cast<size_t>(keys));
  for (int64_t k = 0; k < keys; ++k) {
    std::string key(reinterpret_cast<const char*>(&k), sizeof k);
    addr.emplace_back(key, sluice::assignToKeyGroup(sluice::hashBytes(key), kMaxP));
  }
  auto updateAll = [&] {
    for (const auto& [key, group] : addr) {
      b.setCurrentKey(key, group);
      v.valueOrInsert(0) += 1;
    }
  };
  updateAll();
  Row r;
  for (int64_t i = 0; i < rounds; ++i) {
    auto t = Clock::now();
    const auto blobs = b.snapshot();
    r.full_sync = std::min(r.full_sync, msSince(t));
    t = Clock::now();
    updateAll();
    r.update_plain = std::min(r.update_plain, msSince(t));
    t = Clock::now();
    auto snap = b.snapshotAsync();
    r.freeze = std::min(r.freeze, msSince(t));
    t = Clock::now();
    updateAll();  // every shard is shared with the live snapshot: copied on its first write
    r.update_cow = std::min(r.update_cow, msSince(t));
    t = Clock::now();
    const auto written = snap->write();
    r.write = std::min(r.write, msSince(t));
    snap.reset();
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t keys = 0;
  int64_t rounds = 3;
  sluice::bench::parseCountOptions(argc, argv, {{"--keys", &keys}, {"--rounds", &rounds}});
  std::vector<int64_t> sizes = keys > 0 ? std::vector<int64_t>{keys} : std::vector<int64_t>{100000, 1000000};
  fmt::print("{:>9} {:>16} {:>14} {:>15} {:>15} {:>18}\n", "keys", "sync_before_ms", "sync_after_ms",
             "async_write_ms", "update_all_ms", "update_all_cow_ms");
  for (int64_t n : sizes) {
    const Row r = measure(n, rounds);
    fmt::print("{:>9} {:>16.2f} {:>14.3f} {:>15.2f} {:>15.2f} {:>18.2f}\n", n, r.full_sync, r.freeze, r.write,
               r.update_plain, r.update_cow);
  }
  return 0;
}
