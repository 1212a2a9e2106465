#pragma once
/// The file side of RocksDB incremental checkpoints (Flink's RocksIncrementalSnapshotStrategy with its
/// RocksDBStateUploader, and RocksDBStateDownloader; flink-checkpointing.md §3.6): the files of a native
/// RocksDB checkpoint are uploaded into the job's checkpoint directory, SST files into `shared/` once
/// (later checkpoints reuse the upload while the file is live), MANIFEST, CURRENT and OPTIONS into
/// `taskowned/` for every checkpoint. An upload is a hard link when the file systems allow it, else a
/// copy, then fsync of the file and of its directory; every file is recorded with its size and zlib
/// CRC32, checked again before a restore uses it.
///
/// Errors: a file that cannot be uploaded throws InputError naming both paths; on restore a missing,
/// short, long or corrupt file throws InputError naming its path and what differs.
/// Threading: one uploader per backend, on the task thread; downloadIncrementalFiles from any thread.

#include <cstdint>
#include <map>
#include <string>

#include "runtime/checkpoint/checkpoint_types.h"
#include "runtime/state/key_group.h"

namespace sluice::runtime::state {

/// Where the files of one checkpoint go: `<job dir>/shared` and `<job dir>/taskowned`.
struct IncrementalCheckpointTarget {
  std::string shared_directory;
  std::string task_owned_directory;
  int64_t checkpoint_id = 0;
};

/// A fresh random backend identifier (32 hex digits; Flink's backendIdentifier UUID).
std::string newBackendId();

/// Uploads the native checkpoints of one RocksDB backend and remembers the SST files the previous one
/// uploaded, so an SST file is uploaded once over its life (Flink keeps the previous checkpoint's SST
/// set). Uploaded names are unique: `<backend id>-<local name>` in shared/, `<backend id>-<checkpoint
/// id>-<local name>` in taskowned/.
class IncrementalSnapshotUploader {
 public:
  explicit IncrementalSnapshotUploader(std::string backend_id) : backend_id_(std::move(backend_id)) {}
  const std::string& backendId() const { return backend_id_; }

  /// Uploads the files of the native checkpoint in `local_directory` (new SST files, then the private
  /// files) and returns the handle: range, `states` (column family -> kind), files with sizes and CRCs,
  /// and checkpointed_size = bytes uploaded now. Afterwards the reusable set is exactly this
  /// checkpoint's SST files. InputError naming the paths when a file cannot be written.
  checkpoint::IncrementalKeyedStateHandle upload(const std::string& local_directory,
                                                 const IncrementalCheckpointTarget& target, KeyGroupRange range,
                                                 std::map<std::string, uint8_t> states);

 private:
  std::string backend_id_;
  std::map<std::string, checkpoint::IncrementalStateFile> uploaded_;  ///< local SST name -> its upload
};

/// Places every file of `handle` in `directory` under its local name (hard link, else copy) after
/// checking that it exists and has the recorded size and CRC32. InputError naming the file's path.
void downloadIncrementalFiles(const checkpoint::IncrementalKeyedStateHandle& handle, const std::string& directory);

}  // namespace sluice::runtime::state
