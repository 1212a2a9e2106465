#pragma once
/// ResultPartitionManager: the pipelined subpartitions one TaskManager serves to other TaskManagers
/// (Flink's `ResultPartitionManager`), looked up by the transport when a PartitionRequest arrives.
///
/// Threading: thread-safe (the cluster registers at deployment, the transport's I/O thread looks up).

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "runtime/network/pipelined_subpartition.h"

namespace sluice::runtime {

/// Registry of one TaskManager's remotely readable subpartitions.
class ResultPartitionManager {
 public:
  /// Makes subpartition `index` of `partition_id` requestable. Throws InternalError when it is already
  /// registered.
  void registerSubpartition(const std::string& partition_id, int32_t index,
                            std::shared_ptr<PipelinedSubpartition> subpartition);
  /// The subpartition, or nullptr when none is registered under that id and index (Flink's
  /// `PartitionNotFoundException` case).
  std::shared_ptr<PipelinedSubpartition> lookup(const std::string& partition_id, int32_t index) const;
  /// Forgets every subpartition of `partition_id` (Flink's `releasePartition`: a cancelled producer's
  /// result); later requests for it find none. Returns how many were registered.
  int releasePartition(const std::string& partition_id);

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int32_t>, std::shared_ptr<PipelinedSubpartition>> subpartitions_;
};

}  // namespace sluice::runtime
