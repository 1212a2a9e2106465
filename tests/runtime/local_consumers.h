#pragma once
// Test helper: `n` consumer gates, each reading one LocalInputChannel, and a ResultPartition writing to all
// of them through network buffers.

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "runtime/network/buffer_pool.h"
#include "runtime/network/input_channel.h"
#include "runtime/network/input_gate.h"
#include "runtime/network/pipelined_subpartition.h"

namespace sluice::runtime::testing {

struct LocalConsumers {
  network::NetworkBufferPool global{512, 32768};
  std::shared_ptr<network::LocalBufferPool> pool = global.createBufferPool(1, 512, "test partition");
  std::vector<std::unique_ptr<InputGate>> gates;
  ResultPartition partition;

  // `objects`: the serializer of the object batches written (nullptr: rows).
  explicit LocalConsumers(int n, int max_parallelism = 128,
                          std::shared_ptr<const ObjectBatchSerializer> objects = nullptr) {
    partition.consumer_parallelism = n;
    partition.consumer_max_parallelism = max_parallelism;
    partition.pool = pool;
    for (int j = 0; j < n; ++j) {
      gates.push_back(std::make_unique<InputGate>(1));
      ResultPartition::Subpartition sp{gates.back().get(), 0, j};
      sp.pipelined = std::make_shared<PipelinedSubpartition>(pool, /*initial_credit=*/1000, /*remote=*/false,
                                                             "to " + std::to_string(j), objects);
      sp.gate->attachChannel(0, std::make_shared<LocalInputChannel>(sp.pipelined));
      partition.subpartitions.push_back(std::move(sp));
    }
  }

  // Everything consumer j can read now (partially filled buffers are handed over first).
  std::deque<InputEntry> drain(int j) {
    partition.flushBuffers();
    std::deque<InputEntry> all;
    for (;;) {
      std::deque<InputEntry> out;
      if (gates[static_cast<size_t>(j)]->pollAll(out, std::chrono::steady_clock::now()) ==
          InputGate::PollResult::kTimeout) {
        return all;
      }
      for (auto& e : out) all.push_back(std::move(e));
    }
  }
};

}  // namespace sluice::runtime::testing
