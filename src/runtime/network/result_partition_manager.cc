#include "runtime/network/result_partition_manager.h"

#include "common/error.h"

namespace sluice::runtime {

void ResultPartitionManager::registerSubpartition(const std::string& partition_id, int32_t index,
                                                  std::shared_ptr<PipelinedSubpartition> subpartition) {
  std::lock_guard<std::mutex> lock(mu_);
  const bool inserted = subpartitions_.emplace(std::make_pair(partition_id, index), std::move(subpartition)).second;
  SLUICE_CHECK(inserted, "subpartition {} of partition {} registered twice", index, partition_id);
}

std::shared_ptr<PipelinedSubpartition> ResultPartitionManager::lookup(const std::string& partition_id,
                                                                      int32_t index) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = subpartitions_.find(std::make_pair(partition_id, index));
  return it == subpartitions_.end() ? nullptr : it->second;
}

}  // namespace sluice::runtime
