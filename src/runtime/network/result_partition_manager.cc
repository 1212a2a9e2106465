#include "runtime/network/result_partition_manager.h"

#include <climits>

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

int ResultPartitionManager::releasePartition(const std::string& partition_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = subpartitions_.lower_bound(std::make_pair(partition_id, INT32_MIN));
  int released = 0;
  while (it != subpartitions_.end() && it->first.first == partition_id) {
    it = subpartitions_.erase(it);
    ++released;
  }
  return released;
}

}  // namespace sluice::runtime
