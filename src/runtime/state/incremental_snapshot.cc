#include "runtime/state/incremental_snapshot.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "common/error.h"

namespace sluice::runtime::state {
namespace fs = std::filesystem;

namespace {

std::string errnoText(int err) { return std::strerror(err); }

/// Size and zlib CRC32 of a file; InputError naming it when it cannot be read.
void measure(const std::string& path, uint64_t* size, uint32_t* crc) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(fmt::format("cannot read '{}': {}", path, errnoText(errno)));
  std::vector<char> buf(1 << 20);
  uLong c = crc32(0L, Z_NULL, 0);
  uint64_t n = 0;
  for (;;) {
    const ssize_t got = ::read(fd, buf.data(), buf.size());
    if (got < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      throw InputError(fmt::format("cannot read '{}': {}", path, errnoText(err)));
    }
    if (got == 0) break;
    c = crc32(c, reinterpret_cast<const Bytef*>(buf.data()), static_cast<uInt>(got));
    n += static_cast<uint64_t>(got);
  }
  ::close(fd);
  *size = n;
  *crc = static_cast<uint32_t>(c);
}

void syncPath(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) throw InputError(fmt::format("cannot sync '{}': {}", path, errnoText(errno)));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw InputError(fmt::format("cannot sync '{}': {}", path, errnoText(err)));
}

/// `to` becomes a hard link of `from`, or a copy when links are impossible (another file system).
void linkOrCopy(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::remove(to, ec);
  fs::create_hard_link(from, to, ec);
  if (!ec) return;
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) throw InputError(fmt::format("cannot copy '{}' to '{}': {}", from, to, ec.message()));
}

bool isSstFile(const std::string& name) { return name.size() > 4 && name.compare(name.size() - 4, 4, ".sst") == 0; }

}  // namespace

std::string newBackendId() {
  std::random_device random;
  return fmt::format("{:08x}{:08x}{:08x}{:08x}", random(), random(), random(), random());
}

checkpoint::IncrementalKeyedStateHandle IncrementalSnapshotUploader::upload(const std::string& local_directory,
                                                                             const IncrementalCheckpointTarget& target,
                                                                             KeyGroupRange range,
                                                                             std::map<std::string, uint8_t> states) {
  checkpoint::IncrementalKeyedStateHandle h;
  h.backend_id = backend_id_;
  h.checkpoint_id = target.checkpoint_id;
  h.key_group_start = range.start;
  h.key_group_end = range.end;
  h.states = std::move(states);
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(local_directory)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  std::map<std::string, checkpoint::IncrementalStateFile> now;
  bool wrote_shared = false;
  bool wrote_private = false;
  for (const std::string& name : names) {
    const std::string local = (fs::path(local_directory) / name).string();
    const bool sst = isSstFile(name);
    if (sst) {
      auto reused = uploaded_.find(name);
      if (reused != uploaded_.end()) {
        h.shared_files.push_back(reused->second);
        now.emplace(name, reused->second);
        continue;
      }
    }
    checkpoint::IncrementalStateFile f;
    f.local_name = name;
    f.path = sst ? (fs::path(target.shared_directory) / fmt::format("{}-{}", backend_id_, name)).string()
                 : (fs::path(target.task_owned_directory) /
                    fmt::format("{}-{}-{}", backend_id_, target.checkpoint_id, name))
                       .string();
    // SST files are immutable: a link is an upload. The private files are rewritten by RocksDB, so
    // they are always copied.
    if (sst) {
      linkOrCopy(local, f.path);
    } else {
      std::error_code ec;
      fs::copy_file(local, f.path, fs::copy_options::overwrite_existing, ec);
      if (ec) throw InputError(fmt::format("cannot copy '{}' to '{}': {}", local, f.path, ec.message()));
    }
    syncPath(f.path, false);
    measure(f.path, &f.size, &f.crc32);
    h.checkpointed_size += f.size;
    if (sst) {
      wrote_shared = true;
      h.shared_files.push_back(f);
      now.emplace(name, f);
    } else {
      wrote_private = true;
      h.private_files.push_back(f);
    }
  }
  if (wrote_shared) syncPath(target.shared_directory, true);
  if (wrote_private) syncPath(target.task_owned_directory, true);
  uploaded_ = std::move(now);
  return h;
}

void downloadIncrementalFiles(const checkpoint::IncrementalKeyedStateHandle& handle, const std::string& directory) {
  const auto place = [&](const checkpoint::IncrementalStateFile& f) {
    std::error_code ec;
    if (!fs::is_regular_file(f.path, ec)) {
      throw InputError(fmt::format("RocksDB incremental checkpoint file '{}' (local name {}) is missing", f.path,
                                   f.local_name));
    }
    uint64_t size = 0;
    uint32_t crc = 0;
    measure(f.path, &size, &crc);
    if (size != f.size) {
      throw InputError(fmt::format("RocksDB incremental checkpoint file '{}' is torn: {} bytes, the checkpoint "
                                   "recorded {}",
                                   f.path, size, f.size));
    }
    if (crc != f.crc32) {
      throw InputError(fmt::format("RocksDB incremental checkpoint file '{}' is corrupt: CRC32 {:08x}, the "
                                   "checkpoint recorded {:08x}",
                                   f.path, crc, f.crc32));
    }
    const std::string local = (fs::path(directory) / f.local_name).string();
    if (isSstFile(f.local_name)) {
      linkOrCopy(f.path, local);
      return;
    }
    // RocksDB rewrites its private files: a link would let it change the checkpoint's copy.
    fs::copy_file(f.path, local, fs::copy_options::overwrite_existing, ec);
    if (ec) throw InputError(fmt::format("cannot copy '{}' to '{}': {}", f.path, local, ec.message()));
  };
  for (const auto& f : handle.shared_files) place(f);
  for (const auto& f : handle.private_files) place(f);
}

}  // namespace sluice::runtime::state
