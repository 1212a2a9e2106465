#include "runtime/checkpoint/checkpoint_storage.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>
#include <system_error>
#include <utility>

#include "common/error.h"
#include "runtime/checkpoint/checkpoint_metadata.h"

namespace sluice::runtime::checkpoint {
namespace fs = std::filesystem;

namespace {

constexpr const char* kCheckpointDirPrefix = "chk-";  // Flink's CHECKPOINT_DIR_PREFIX
constexpr const char* kSharedStateDir = "shared";     // Flink's CHECKPOINT_SHARED_STATE_DIR
constexpr const char* kTaskOwnedStateDir = "taskowned";  // Flink's CHECKPOINT_TASK_OWNED_STATE_DIR

std::string errnoText(int err) { return std::strerror(err); }

uint64_t randomBits() {
  std::random_device random;
  return (static_cast<uint64_t>(random()) << 32) ^ random();
}

/// The id of a `chk-<n>` directory name, nullopt for any other name.
std::optional<int64_t> parseCheckpointDirName(const std::string& name) {
  const std::string prefix = kCheckpointDirPrefix;
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  const char* first = name.data() + prefix.size();
  const char* last = name.data() + name.size();
  if (!std::all_of(first, last, [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  int64_t id = 0;
  const auto [end, ec] = std::from_chars(first, last, id);
  if (ec != std::errc() || end != last) return std::nullopt;
  return id;
}

/// Ids of the `chk-<n>` directories of `job_dir` (those with a `_metadata` file when `complete_only`),
/// ascending. Empty when `job_dir` does not exist.
std::vector<int64_t> listCheckpointIds(const fs::path& job_dir, bool complete_only) {
  std::vector<int64_t> ids;
  std::error_code ec;
  fs::directory_iterator it(job_dir, ec);
  if (ec) return ids;
  for (const fs::directory_entry& entry : it) {
    std::error_code entry_ec;
    if (!entry.is_directory(entry_ec)) continue;
    const std::optional<int64_t> id = parseCheckpointDirName(entry.path().filename().string());
    if (!id) continue;
    if (complete_only && !fs::is_regular_file(entry.path() / kMetadataFileName, entry_ec)) continue;
    ids.push_back(*id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

/// Syncs a directory so that a rename inside it survives a crash.
void syncDirectory(const fs::path& dir, const fs::path& file_for_messages) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    throw InputError(fmt::format("cannot sync the directory of '{}': {}", file_for_messages.string(), errnoText(errno)));
  }
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) {
    throw InputError(fmt::format("cannot sync the directory of '{}': {}", file_for_messages.string(), errnoText(err)));
  }
}

/// Writes `bytes` to `target` through a temporary file in the same directory: write, fsync, rename,
/// fsync the directory. `target` must not exist yet. Throws InputError naming `target`.
void writeFileAtomically(const fs::path& target, std::string_view bytes) {
  const fs::path dir = target.parent_path();
  std::error_code ec;
  if (fs::exists(target, ec)) {
    throw InputError(fmt::format("cannot write '{}': the file already exists", target.string()));
  }
  const fs::path temp = dir / fmt::format("._{}.{:016x}.inprogress", target.filename().string(), randomBits());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError(fmt::format("cannot create '{}': {}", temp.string(), errnoText(errno)));
  const auto failWith = [&](const char* what, int err) {
    ::close(fd);
    ::unlink(temp.c_str());
    return InputError(fmt::format("cannot write '{}' ({} failed: {})", target.string(), what, errnoText(err)));
  };
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw failWith("write", errno);
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) throw failWith("fsync", errno);
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    throw InputError(fmt::format("cannot write '{}' (close failed: {})", target.string(), errnoText(err)));
  }
  if (std::rename(temp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    throw InputError(fmt::format("cannot write '{}' (rename failed: {})", target.string(), errnoText(err)));
  }
  syncDirectory(dir, target);
}

void createDirectories(const fs::path& dir, const char* option) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw ConfigError(fmt::format("cannot create the checkpoint directory '{}': {} (check '{}')", dir.string(),
                                  ec ? ec.message() : "not a directory", option));
  }
}

}  // namespace

std::string localFileSystemPath(std::string path) {
  // Flink's paths carry a scheme; the local file system's is file:// (file:///tmp/ck is /tmp/ck).
  if (path.rfind("file://", 0) == 0) path.erase(0, 7);
  return path;
}

std::string withoutMetadataFile(std::string path) {
  const std::string suffix = std::string("/") + kMetadataFileName;
  if (path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
    path.resize(path.size() - suffix.size());
  }
  return path;
}

FsCheckpointStorage::FsCheckpointStorage(std::string root_dir, std::string job_id, int32_t num_retained,
                                         std::string savepoint_dir)
    : root_dir_(localFileSystemPath(std::move(root_dir))),
      job_id_(std::move(job_id)),
      num_retained_(num_retained),
      savepoint_dir_(std::move(savepoint_dir)) {
  if (root_dir_.empty()) {
    throw ConfigError("'execution.checkpointing.dir' is empty: checkpoint storage needs a directory");
  }
  if (num_retained_ < 1) {
    throw ConfigError(
        fmt::format("'execution.checkpointing.num-retained' must be at least 1, got {}", num_retained_));
  }
  SLUICE_CHECK(!job_id_.empty() && job_id_.find('/') == std::string::npos && job_id_ != "." && job_id_ != "..",
               "job id '{}' is not a directory name", job_id_);
  job_dir_ = (fs::path(root_dir_) / job_id_).string();
  createDirectories(fs::path(job_dir_) / kSharedStateDir, "execution.checkpointing.dir");
  createDirectories(fs::path(job_dir_) / kTaskOwnedStateDir, "execution.checkpointing.dir");
}

std::string FsCheckpointStorage::checkpointDirectory(int64_t checkpoint_id) const {
  return (fs::path(job_dir_) / fmt::format("{}{}", kCheckpointDirPrefix, checkpoint_id)).string();
}

std::string FsCheckpointStorage::store(const CompletedCheckpoint& checkpoint) {
  if (isSavepoint(checkpoint.kind)) return storeSavepoint(checkpoint, "");
  SLUICE_CHECK(checkpoint.checkpoint_id >= 0, "negative checkpoint id {}", checkpoint.checkpoint_id);
  const fs::path dir = checkpointDirectory(checkpoint.checkpoint_id);
  createDirectories(dir, "execution.checkpointing.dir");
  const fs::path file = dir / kMetadataFileName;
  writeFileAtomically(file, serializeCheckpointMetadata(checkpoint));

  referenced_files_[checkpoint.checkpoint_id] = incrementalFilesOf(checkpoint);

  // Retention: everything older than the oldest of the newest `num_retained` completed checkpoints goes,
  // including directories of checkpoints that never completed; then the shared files no retained
  // checkpoint references any more (Flink's SharedStateRegistry).
  const std::vector<int64_t> completed = listCheckpointIds(job_dir_, /*complete_only=*/true);
  if (completed.size() > static_cast<size_t>(num_retained_)) {
    const int64_t oldest_kept = completed[completed.size() - static_cast<size_t>(num_retained_)];
    std::set<std::string> candidates;
    for (const int64_t id : completed) {
      if (id >= oldest_kept) continue;
      const std::set<std::string>& files = filesOf(id);
      candidates.insert(files.begin(), files.end());
    }
    for (const int64_t id : listCheckpointIds(job_dir_, /*complete_only=*/false)) {
      if (id < oldest_kept) {
        discard(id);
        referenced_files_.erase(id);
      }
    }
    std::set<std::string> retained;
    for (const int64_t id : completed) {
      if (id < oldest_kept) continue;
      const std::set<std::string>& files = filesOf(id);
      retained.insert(files.begin(), files.end());
    }
    for (const std::string& path : candidates) {
      if (retained.count(path) != 0 || !ownsFile(path)) continue;
      std::error_code ec;
      fs::remove(path, ec);
      if (ec) throw InputError(fmt::format("cannot delete the unreferenced shared state file '{}': {}", path, ec.message()));
    }
  }
  return file.string();
}

std::set<std::string> FsCheckpointStorage::incrementalFilesOf(const CompletedCheckpoint& checkpoint) {
  std::set<std::string> files;
  for (const auto& [uid, op] : checkpoint.operators) {
    for (const OperatorSubtaskState& s : op.subtasks) {
      for (const IncrementalKeyedStateHandle& h : s.incremental) {
        for (const IncrementalStateFile& f : h.shared_files) files.insert(f.path);
        for (const IncrementalStateFile& f : h.private_files) files.insert(f.path);
      }
    }
  }
  return files;
}

const std::set<std::string>& FsCheckpointStorage::filesOf(int64_t checkpoint_id) {
  auto it = referenced_files_.find(checkpoint_id);
  if (it != referenced_files_.end()) return it->second;
  // Written by an earlier instance for this job directory: read what it references.
  const fs::path file = fs::path(checkpointDirectory(checkpoint_id)) / kMetadataFileName;
  std::set<std::string> files;
  try {
    files = incrementalFilesOf(load(file.string()));
  } catch (const InputError&) {
    // Unreadable: its files are never deleted (a leak, never a loss).
  }
  return referenced_files_.emplace(checkpoint_id, std::move(files)).first->second;
}

bool FsCheckpointStorage::ownsFile(const std::string& path) const {
  // Only files of this job's shared/ and taskowned/ directories, never another job's a restore reused.
  const fs::path parent = fs::path(path).parent_path();
  return parent == fs::path(job_dir_) / kSharedStateDir || parent == fs::path(job_dir_) / kTaskOwnedStateDir;
}

std::string FsCheckpointStorage::sharedStateDirectory() const { return (fs::path(job_dir_) / kSharedStateDir).string(); }
std::string FsCheckpointStorage::taskOwnedStateDirectory() const {
  return (fs::path(job_dir_) / kTaskOwnedStateDir).string();
}

std::string FsCheckpointStorage::storeSavepoint(const CompletedCheckpoint& savepoint, const std::string& target_dir) {
  return storeSavepointInto(savepoint, job_id_, target_dir.empty() ? savepoint_dir_ : target_dir);
}

std::string FsCheckpointStorage::storeSavepointInto(const CompletedCheckpoint& savepoint, const std::string& job_id,
                                                    const std::string& target_dir) {
  SLUICE_CHECK(!job_id.empty(), "a savepoint needs its job's id");
  const std::string base = localFileSystemPath(target_dir);
  if (base.empty()) {
    throw ConfigError(
        "no savepoint directory: give a target directory or set 'execution.checkpointing.savepoint-dir'");
  }
  createDirectories(base, "execution.checkpointing.savepoint-dir");
  // Flink's AbstractFsCheckpointStorageAccess.createSavepointDirectory: a fresh random name, retried on a clash.
  for (int attempt = 0; attempt < 10; ++attempt) {
    const std::string name =
        fmt::format("savepoint-{}-{:012x}", job_id.substr(0, 6), randomBits() & 0xffffffffffffULL);
    const fs::path dir = fs::path(base) / name;
    std::error_code ec;
    if (!fs::create_directory(dir, ec)) {
      if (ec) {
        throw InputError(fmt::format("cannot create the savepoint directory '{}': {}", dir.string(), ec.message()));
      }
      continue;
    }
    const fs::path file = dir / kMetadataFileName;
    writeFileAtomically(file, serializeCheckpointMetadata(savepoint));
    return file.string();
  }
  throw InputError(fmt::format("cannot create a savepoint directory under '{}': every random name was taken", base));
}

void FsCheckpointStorage::discard(int64_t checkpoint_id) {
  const std::string dir = checkpointDirectory(checkpoint_id);
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec) throw InputError(fmt::format("cannot discard the checkpoint directory '{}': {}", dir, ec.message()));
}

std::vector<int64_t> FsCheckpointStorage::completedCheckpointIds() const {
  return listCheckpointIds(job_dir_, /*complete_only=*/true);
}

CompletedCheckpoint FsCheckpointStorage::load(const std::string& path) {
  std::error_code ec;
  const fs::path given(localFileSystemPath(path));
  const fs::file_status status = fs::status(given, ec);
  if (!fs::exists(status)) {
    throw InputError(fmt::format("checkpoint metadata '{}' does not exist", path));
  }
  const fs::path file = fs::is_directory(status) ? given / kMetadataFileName : given;
  if (!fs::is_regular_file(file, ec)) {
    throw InputError(fmt::format("checkpoint metadata '{}' does not exist (no {} in the directory '{}')",
                                 file.string(), kMetadataFileName, path));
  }
  std::FILE* f = std::fopen(file.c_str(), "rb");
  if (f == nullptr) {
    throw InputError(fmt::format("cannot open the checkpoint metadata '{}': {}", file.string(), errnoText(errno)));
  }
  // Read to the end rather than trusting the size reported beforehand: the file may change under us.
  std::string bytes;
  char chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), f)) > 0) bytes.append(chunk, n);
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (failed) {
    throw InputError(fmt::format("cannot read the checkpoint metadata '{}': {}", file.string(), errnoText(err)));
  }
  CompletedCheckpoint checkpoint = deserializeCheckpointMetadata(bytes, file.string());
  checkpoint.external_pointer = file.parent_path().string();
  return checkpoint;
}

std::optional<CompletedCheckpoint> FsCheckpointStorage::findLatestCheckpoint(const std::string& job_dir) {
  const std::vector<int64_t> ids = listCheckpointIds(job_dir, /*complete_only=*/true);
  for (auto it = ids.rbegin(); it != ids.rend(); ++it) {
    const fs::path file = fs::path(job_dir) / fmt::format("{}{}", kCheckpointDirPrefix, *it) / kMetadataFileName;
    try {
      return load(file.string());
    } catch (const InputError&) {
      // A torn or corrupt file: fall back to the next older checkpoint, as Flink's store recovery does.
    }
  }
  return std::nullopt;
}

std::optional<CompletedCheckpoint> FsCheckpointStorage::findLatest(const std::string& root_dir,
                                                                  const std::string& job_id) {
  return findLatestCheckpoint((fs::path(root_dir) / job_id).string());
}

}  // namespace sluice::runtime::checkpoint
