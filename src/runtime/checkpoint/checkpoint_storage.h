#pragma once
/// Checkpoint storage on the local filesystem (Flink's FileSystemCheckpointStorage with its
/// FsCheckpointStorageAccess, CompletedCheckpointStore retention, and Checkpoints.loadCheckpointMetadata).
///
/// Layout, as Flink's (flink-checkpointing.md §1.1, `execution.checkpointing.dir`):
///
///   <root>/<job-id>/chk-<n>/_metadata     one completed checkpoint
///   <root>/<job-id>/shared/               state shared by several checkpoints (incremental)
///   <root>/<job-id>/taskowned/            state owned by the TaskManagers
///   <savepoint-dir>/savepoint-<first 6 chars of the job id>-<12 random hex>/_metadata
///
/// Canonical state is written inline into `_metadata` (Flink's state below
/// `execution.checkpointing.data-inline-threshold`). RocksDB incremental checkpoints
/// (execution.checkpointing.incremental) upload their SST files into `shared/` and their MANIFEST, CURRENT
/// and OPTIONS into `taskowned/` (the tasks write them; `_metadata` references them by absolute path,
/// size and CRC32). Retention deletes such a file once no retained checkpoint references it (Flink's
/// SharedStateRegistry); files of checkpoints that never completed stay until the job directory goes.
///
/// Every file is written under a temporary name in its final directory, fsync'd, then renamed and the
/// directory fsync'd: a crash leaves either no `_metadata` or a complete one, never a torn file under the
/// final name (a leftover `._metadata.*.inprogress` is ignored and removed with its directory).
///
/// Threading: `store`, `storeSavepoint` and `discard` of one instance are called from one thread (the
/// checkpoint coordinator's); the static `storeSavepointInto`, `load` and `findLatest*` from any thread.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runtime/checkpoint/completed_checkpoint.h"

namespace sluice::runtime::checkpoint {

/// The name of the metadata file in a checkpoint or savepoint directory (Flink's METADATA_FILE_NAME).
inline constexpr const char* kMetadataFileName = "_metadata";

/// `path` without a leading `file://` (Flink's scheme of the local file system); other paths unchanged.
std::string localFileSystemPath(std::string path);

/// A checkpoint's or savepoint's directory from the path of its `_metadata` file (Flink's external path
/// and savepoint location name the directory, as every savepoint report does); other paths unchanged.
std::string withoutMetadataFile(std::string path);

/// The checkpoint directories of one job under a root directory, with retention of completed checkpoints.
/// Paths may start with `file://`.
class FsCheckpointStorage {
 public:
  /// `root_dir`: `execution.checkpointing.dir`. `job_id`: a directory name (non-empty, no '/', not "." or
  /// ".."). `num_retained` (>= 1): `execution.checkpointing.num-retained`. `savepoint_dir`:
  /// `execution.checkpointing.savepoint-dir`, the default target of savepoints (may be empty). Creates
  /// `<root>/<job-id>/{shared,taskowned}`. Throws ConfigError naming the option when a value is invalid
  /// or the directories cannot be created.
  FsCheckpointStorage(std::string root_dir, std::string job_id, int32_t num_retained = 1,
                      std::string savepoint_dir = "");

  /// `<root>/<job-id>`.
  const std::string& jobDirectory() const { return job_dir_; }
  /// `<root>/<job-id>/chk-<id>`.
  std::string checkpointDirectory(int64_t checkpoint_id) const;
  /// `<root>/<job-id>/shared` and `<root>/<job-id>/taskowned`.
  std::string sharedStateDirectory() const;
  std::string taskOwnedStateDirectory() const;
  /// The paths of every file the RocksDB incremental handles of `checkpoint` reference.
  static std::set<std::string> incrementalFilesOf(const CompletedCheckpoint& checkpoint);

  /// Writes a completed checkpoint to `chk-<id>/_metadata` and returns that file's path; sets nothing in
  /// `checkpoint` (its external pointer is the returned path's directory). Then applies retention: keeps
  /// the newest `num_retained` completed checkpoints of the job directory and deletes the directories of
  /// older ones (Flink's addCheckpointAndSubsumeOldestOne), then the files of `shared/` and `taskowned/`
  /// that only the deleted ones referenced. A savepoint goes to `storeSavepoint(c, "")`
  /// and is never subsumed. Throws InputError naming the path when writing fails.
  std::string store(const CompletedCheckpoint& checkpoint);

  /// Writes a savepoint into a new `savepoint-<6 of job id>-<12 hex>` directory under `target_dir` (empty:
  /// the constructor's savepoint dir; ConfigError naming execution.checkpointing.savepoint-dir when both
  /// are empty). Returns the `_metadata` path. Throws InputError naming the path when writing fails.
  std::string storeSavepoint(const CompletedCheckpoint& savepoint, const std::string& target_dir);

  /// Writes a savepoint of job `job_id` into a new `savepoint-<6 of job id>-<12 hex>` directory under
  /// `target_dir` (may start with `file://`; created when missing), without any checkpoint directory: a job
  /// without `execution.checkpointing.dir` still takes savepoints (Flink's savepoint target is independent of
  /// the checkpoint storage). Returns the `_metadata` path. Throws ConfigError naming
  /// execution.checkpointing.savepoint-dir when `target_dir` is empty, InputError naming the path when
  /// creating or writing fails. Stateless: any thread.
  static std::string storeSavepointInto(const CompletedCheckpoint& savepoint, const std::string& job_id,
                                        const std::string& target_dir);

  /// Deletes `chk-<id>` and everything in it (no-op when absent). Throws InputError naming the directory
  /// when it cannot be removed.
  void discard(int64_t checkpoint_id);

  /// Ids of the `chk-<n>` directories holding a `_metadata` file, ascending.
  std::vector<int64_t> completedCheckpointIds() const;

  /// Reads a checkpoint or savepoint; `path` is its `_metadata` file or the directory holding it (Flink's
  /// `-s` accepts both). Sets `external_pointer` to that directory. Throws InputError naming the path when
  /// it does not exist or cannot be read, and as deserializeCheckpointMetadata for bad contents.
  static CompletedCheckpoint load(const std::string& path);

  /// The newest `chk-<n>` under `job_dir` whose `_metadata` loads; directories without a complete file
  /// are skipped. nullopt when there is none (or `job_dir` does not exist).
  static std::optional<CompletedCheckpoint> findLatestCheckpoint(const std::string& job_dir);
  /// findLatestCheckpoint(`<root>/<job-id>`).
  static std::optional<CompletedCheckpoint> findLatest(const std::string& root_dir, const std::string& job_id);

 private:
  std::string root_dir_;
  std::string job_id_;
  std::string job_dir_;
  int32_t num_retained_;
  std::string savepoint_dir_;
  /// Checkpoint id -> the incremental files it references, for the retained ones seen so far.
  std::map<int64_t, std::set<std::string>> referenced_files_;

  const std::set<std::string>& filesOf(int64_t checkpoint_id);
  bool ownsFile(const std::string& path) const;
};

}  // namespace sluice::runtime::checkpoint
