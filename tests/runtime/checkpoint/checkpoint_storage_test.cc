#include "runtime/checkpoint/checkpoint_storage.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include "common/error.h"
#include "checkpoint_fixtures.h"

namespace sluice::runtime::checkpoint {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::expectSameCheckpoint;
using testing::TempDir;
using testing::twoOperatorCheckpoint;

constexpr const char* kJob = "a1b2c3d4e5f60718293a4b5c6d7e8f90";

std::string readAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeAll(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::string> namesIn(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// The message of the InputError `f` throws (fails the test when it throws nothing or something else).
template <typename F>
std::string inputErrorOf(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not an InputError: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(FsCheckpointStorageTest, StoreThenLoadRoundTripsEveryField) {
  TempDir tmp;
  FsCheckpointStorage storage(tmp.path().string(), kJob);
  const CompletedCheckpoint original = twoOperatorCheckpoint(7);
  const std::string path = storage.store(original);
  EXPECT_EQ(path, (tmp.path() / kJob / "chk-7" / "_metadata").string());

  const CompletedCheckpoint loaded = FsCheckpointStorage::load(path);
  expectSameCheckpoint(original, loaded);
  EXPECT_EQ(loaded.external_pointer, (tmp.path() / kJob / "chk-7").string());
  // Keyed: 2+3+3+3 bytes in subtask 0, 3+3+3+5 in subtask 1; operator state: a b c x, d e y.
  EXPECT_EQ(loaded.stateSize(), 32);

  // Flink's -s accepts the directory as well as the file.
  const CompletedCheckpoint by_dir = FsCheckpointStorage::load((tmp.path() / kJob / "chk-7").string());
  expectSameCheckpoint(original, by_dir);
}

TEST(FsCheckpointStorageTest, LayoutHasSharedAndTaskOwnedDirectoriesAndNoTemporaryFiles) {
  TempDir tmp;
  FsCheckpointStorage storage(tmp.path().string(), kJob);
  EXPECT_TRUE(fs::is_directory(tmp.path() / kJob / "shared"));
  EXPECT_TRUE(fs::is_directory(tmp.path() / kJob / "taskowned"));
  storage.store(twoOperatorCheckpoint(1));
  EXPECT_EQ(namesIn(tmp.path() / kJob), (std::vector<std::string>{"chk-1", "shared", "taskowned"}));
  EXPECT_EQ(namesIn(tmp.path() / kJob / "chk-1"), (std::vector<std::string>{"_metadata"}));
  EXPECT_TRUE(fs::is_empty(tmp.path() / kJob / "shared"));
  EXPECT_TRUE(fs::is_empty(tmp.path() / kJob / "taskowned"));
}

TEST(FsCheckpointStorageTest, SavepointGoesToARandomlyNamedDirectoryAndIsNotSubsumed) {
  TempDir tmp;
  const fs::path savepoints = tmp.path() / "savepoints";
  FsCheckpointStorage storage((tmp.path() / "chk").string(), kJob, 1, savepoints.string());
  CompletedCheckpoint sp = twoOperatorCheckpoint(3);
  sp.kind = CheckpointKind::kSavepoint;
  const std::string path = storage.store(sp);
  storage.store(twoOperatorCheckpoint(4));
  storage.store(twoOperatorCheckpoint(5));

  const std::vector<std::string> dirs = namesIn(savepoints);
  ASSERT_EQ(dirs.size(), 1u);
  // savepoint-<first 6 chars of the job id>-<12 hex digits>
  EXPECT_THAT(dirs[0], ::testing::MatchesRegex("savepoint-a1b2c3-[0-9a-f]{12}"));
  EXPECT_EQ(path, (savepoints / dirs[0] / "_metadata").string());
  EXPECT_EQ(FsCheckpointStorage::load(path).kind, CheckpointKind::kSavepoint);
  EXPECT_EQ(namesIn(savepoints / dirs[0]), (std::vector<std::string>{"_metadata"}));

  FsCheckpointStorage no_default((tmp.path() / "chk2").string(), kJob);
  EXPECT_THROW(no_default.storeSavepoint(sp, ""), ConfigError);
  const std::string explicit_path = no_default.storeSavepoint(sp, (tmp.path() / "elsewhere").string());
  EXPECT_EQ(fs::path(explicit_path).parent_path().parent_path(), tmp.path() / "elsewhere");
}

TEST(FsCheckpointStorageTest, SavepointIntoATargetDirectoryNeedsNoCheckpointDirectory) {
  TempDir tmp;
  CompletedCheckpoint sp = twoOperatorCheckpoint(7);
  sp.kind = CheckpointKind::kSavepointSuspend;
  const fs::path target = tmp.path() / "only" / "savepoints";  // created with its parents
  const std::string path = FsCheckpointStorage::storeSavepointInto(sp, kJob, "file://" + target.string());
  const std::vector<std::string> dirs = namesIn(target);
  ASSERT_EQ(dirs.size(), 1u);
  EXPECT_THAT(dirs[0], ::testing::MatchesRegex("savepoint-a1b2c3-[0-9a-f]{12}"));
  EXPECT_EQ(path, (target / dirs[0] / "_metadata").string());
  // Nothing but the savepoint: no job directory, no shared/ or taskowned/.
  EXPECT_EQ(namesIn(tmp.path()), (std::vector<std::string>{"only"}));
  const CompletedCheckpoint loaded = FsCheckpointStorage::load(path);
  EXPECT_EQ(loaded.checkpoint_id, 7);
  EXPECT_EQ(loaded.kind, CheckpointKind::kSavepointSuspend);
  EXPECT_EQ(loaded.operators.size(), sp.operators.size());
  EXPECT_THROW(FsCheckpointStorage::storeSavepointInto(sp, kJob, ""), ConfigError);
}

TEST(FsCheckpointStorageTest, RetentionKeepsExactlyTheNewestN) {
  TempDir tmp;
  FsCheckpointStorage one(tmp.path().string(), "job-one");
  for (int64_t id = 1; id <= 3; ++id) one.store(twoOperatorCheckpoint(id));
  EXPECT_EQ(one.completedCheckpointIds(), (std::vector<int64_t>{3}));
  EXPECT_EQ(namesIn(tmp.path() / "job-one"), (std::vector<std::string>{"chk-3", "shared", "taskowned"}));

  FsCheckpointStorage three(tmp.path().string(), "job-three", 3);
  // An abandoned directory of a checkpoint that never completed, older than everything kept.
  fs::create_directories(tmp.path() / "job-three" / "chk-2");
  for (int64_t id = 3; id <= 7; ++id) three.store(twoOperatorCheckpoint(id));
  EXPECT_EQ(three.completedCheckpointIds(), (std::vector<int64_t>{5, 6, 7}));
  EXPECT_EQ(namesIn(tmp.path() / "job-three"),
            (std::vector<std::string>{"chk-5", "chk-6", "chk-7", "shared", "taskowned"}));

  three.discard(6);
  EXPECT_EQ(three.completedCheckpointIds(), (std::vector<int64_t>{5, 7}));
  three.discard(42);  // absent: nothing to do

  EXPECT_THROW(FsCheckpointStorage(tmp.path().string(), "job", 0), ConfigError);
  EXPECT_THROW(FsCheckpointStorage("", "job"), ConfigError);
}

// Flink's SharedStateRegistry: a shared file goes when the last retained checkpoint referencing it goes.
TEST(FsCheckpointStorageTest, RetentionDeletesOnlySharedFilesNoRetainedCheckpointReferences) {
  TempDir tmp;
  FsCheckpointStorage storage(tmp.path().string(), "job", 1);
  const fs::path shared = tmp.path() / "job" / "shared";
  const fs::path owned = tmp.path() / "job" / "taskowned";
  const fs::path foreign = tmp.path() / "other-job-a.sst";  // e.g. a restored checkpoint's file
  for (const fs::path& p : {shared / "a.sst", shared / "b.sst", shared / "c.sst", owned / "1-CURRENT",
                            owned / "2-CURRENT", foreign}) {
    writeAll(p, "x");
  }
  const auto checkpointWith = [](int64_t id, std::vector<fs::path> sst, fs::path current) {
    CompletedCheckpoint c = twoOperatorCheckpoint(id);
    IncrementalKeyedStateHandle h;
    h.backend_id = "b";
    h.checkpoint_id = id;
    h.key_group_start = 0;
    h.key_group_end = 63;
    for (const fs::path& p : sst) h.shared_files.push_back({p.filename().string(), p.string(), 1, 0});
    h.private_files.push_back({"CURRENT", current.string(), 1, 0});
    c.operators["agg"].subtasks[0].incremental.push_back(h);
    return c;
  };
  storage.store(checkpointWith(1, {shared / "a.sst", shared / "b.sst", foreign}, owned / "1-CURRENT"));
  storage.store(checkpointWith(2, {shared / "b.sst", shared / "c.sst"}, owned / "2-CURRENT"));
  EXPECT_EQ(storage.completedCheckpointIds(), (std::vector<int64_t>{2}));
  // a and 1-CURRENT were only in checkpoint 1; b is still in 2; the foreign file is not the job's.
  EXPECT_EQ(namesIn(shared), (std::vector<std::string>{"b.sst", "c.sst"}));
  EXPECT_EQ(namesIn(owned), (std::vector<std::string>{"2-CURRENT"}));
  EXPECT_TRUE(fs::exists(foreign));

  // A new instance for the same directory (a restarted coordinator) reads what chk-2 references.
  FsCheckpointStorage again(tmp.path().string(), "job", 1);
  writeAll(owned / "3-CURRENT", "x");
  again.store(checkpointWith(3, {shared / "c.sst"}, owned / "3-CURRENT"));
  EXPECT_EQ(namesIn(shared), (std::vector<std::string>{"c.sst"}));
  EXPECT_EQ(namesIn(owned), (std::vector<std::string>{"3-CURRENT"}));
  EXPECT_EQ(FsCheckpointStorage::incrementalFilesOf(FsCheckpointStorage::load((tmp.path() / "job" / "chk-3").string())),
            (std::set<std::string>{(shared / "c.sst").string(), (owned / "3-CURRENT").string()}));
}

TEST(FsCheckpointStorageTest, FlippedPayloadByteIsAChecksumMismatchNamingThePath) {
  TempDir tmp;
  FsCheckpointStorage storage(tmp.path().string(), kJob);
  const fs::path file = storage.store(twoOperatorCheckpoint(1));
  std::string bytes = readAll(file);
  bytes[20] = static_cast<char>(bytes[20] ^ 0x01);  // inside the payload (the header is 16 bytes)
  writeAll(file, bytes);
  const std::string message = inputErrorOf([&] { FsCheckpointStorage::load(file.string()); });
  EXPECT_THAT(message, HasSubstr(file.string()));
  EXPECT_THAT(message, HasSubstr("checksum mismatch"));
  EXPECT_THAT(message, HasSubstr(fmt::format("at byte {}", bytes.size() - 4)));
}

TEST(FsCheckpointStorageTest, TruncatedFileIsAnInputErrorAtEveryLength) {
  TempDir tmp;
  FsCheckpointStorage storage(tmp.path().string(), kJob);
  const fs::path file = storage.store(twoOperatorCheckpoint(1));
  const std::string bytes = readAll(file);
  ASSERT_GT(bytes.size(), 40u);
  for (const size_t length : {size_t{0}, size_t{2}, size_t{4}, size_t{10}, size_t{16}, size_t{17},
                              bytes.size() / 2, bytes.size() - 4, bytes.size() - 1}) {
    writeAll(file, bytes.substr(0, length));
    const std::string message = inputErrorOf([&] { FsCheckpointStorage::load(file.string()); });
    EXPECT_THAT(message, HasSubstr(file.string())) << "length " << length;
    EXPECT_THAT(message, HasSubstr("truncated")) << "length " << length;
  }
}

TEST(FsCheckpointStorageTest, BadMagicMissingFileAndVersionAreInputErrors) {
  TempDir tmp;
  FsCheckpointStorage storage(tmp.path().string(), kJob);
  const fs::path file = storage.store(twoOperatorCheckpoint(1));
  const std::string bytes = readAll(file);

  std::string bad_magic = bytes;
  bad_magic[0] = 'X';
  writeAll(file, bad_magic);
  std::string message = inputErrorOf([&] { FsCheckpointStorage::load(file.string()); });
  EXPECT_THAT(message, HasSubstr(file.string()));
  EXPECT_THAT(message, HasSubstr("bad magic number at byte 0"));

  std::string version = bytes;
  version[4] = 9;
  writeAll(file, version);
  message = inputErrorOf([&] { FsCheckpointStorage::load(file.string()); });
  EXPECT_THAT(message, HasSubstr("unsupported format version 9 at byte 4"));

  const fs::path missing = tmp.path() / "nowhere" / "_metadata";
  message = inputErrorOf([&] { FsCheckpointStorage::load(missing.string()); });
  EXPECT_THAT(message, HasSubstr(missing.string()));
  EXPECT_THAT(message, HasSubstr("does not exist"));

  fs::create_directories(tmp.path() / "empty-dir");
  message = inputErrorOf([&] { FsCheckpointStorage::load((tmp.path() / "empty-dir").string()); });
  EXPECT_THAT(message, HasSubstr((tmp.path() / "empty-dir" / "_metadata").string()));
}

TEST(FsCheckpointStorageTest, FindLatestSkipsMissingAndTornMetadata) {
  TempDir tmp;
  FsCheckpointStorage storage(tmp.path().string(), kJob, 5);
  for (int64_t id = 1; id <= 3; ++id) storage.store(twoOperatorCheckpoint(id));
  // chk-5: a directory whose _metadata never appeared (a crash before the rename) except as a temp file.
  fs::create_directories(tmp.path() / kJob / "chk-5");
  writeAll(tmp.path() / kJob / "chk-5" / "._metadata.0123456789abcdef.inprogress", "partial");
  // chk-4: a torn _metadata (half of a real one).
  const std::string good = readAll(tmp.path() / kJob / "chk-3" / "_metadata");
  fs::create_directories(tmp.path() / kJob / "chk-4");
  writeAll(tmp.path() / kJob / "chk-4" / "_metadata", good.substr(0, good.size() / 2));
  // Not checkpoint directories at all.
  fs::create_directories(tmp.path() / kJob / "chk-x9");
  fs::create_directories(tmp.path() / kJob / "chk-");

  const std::optional<CompletedCheckpoint> latest = FsCheckpointStorage::findLatest(tmp.path().string(), kJob);
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->checkpoint_id, 3);
  EXPECT_EQ(latest->external_pointer, (tmp.path() / kJob / "chk-3").string());

  EXPECT_FALSE(FsCheckpointStorage::findLatest(tmp.path().string(), "no-such-job").has_value());
  EXPECT_FALSE(FsCheckpointStorage::findLatestCheckpoint((tmp.path() / kJob / "shared").string()).has_value());
}

TEST(FsCheckpointStorageTest, StoringAnIdTwiceIsAnErrorAndKeepsTheFirstFile) {
  TempDir tmp;
  FsCheckpointStorage storage(tmp.path().string(), kJob, 2);
  const std::string path = storage.store(twoOperatorCheckpoint(1));
  CompletedCheckpoint again = twoOperatorCheckpoint(1);
  again.trigger_timestamp_ms = 5;
  const std::string message = inputErrorOf([&] { storage.store(again); });
  EXPECT_THAT(message, HasSubstr("already exists"));
  EXPECT_EQ(FsCheckpointStorage::load(path).trigger_timestamp_ms, 1700000000001);
  EXPECT_EQ(namesIn(fs::path(path).parent_path()), (std::vector<std::string>{"_metadata"}));
}

}  // namespace
}  // namespace sluice::runtime::checkpoint
