#pragma once
// A hand-written checkpoint of two operators with two subtasks each, shared by the checkpoint tests, and
// a field-by-field comparison (the state structs have no operator==).

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "runtime/checkpoint/completed_checkpoint.h"

namespace sluice::runtime::checkpoint::testing {

inline OperatorListState listState(OperatorStateMode mode, std::vector<std::string> elements) {
  OperatorListState s;
  s.mode = mode;
  s.elements = std::move(elements);
  return s;
}

/// "agg": keyed state only, maxP 128; subtask 0 owns key groups [0, 63], subtask 1 [64, 127].
/// "src": operator state only: a split list "offsets" and a union list "splits".
inline CompletedCheckpoint twoOperatorCheckpoint(int64_t id) {
  CompletedCheckpoint c;
  c.checkpoint_id = id;
  c.job_id = "a1b2c3d4e5f60718293a4b5c6d7e8f90";
  c.kind = CheckpointKind::kCheckpoint;
  c.trigger_timestamp_ms = 1700000000000 + id;
  c.completion_timestamp_ms = 1700000000250 + id;

  OperatorState agg;
  agg.parallelism = 2;
  agg.max_parallelism = 128;
  agg.subtasks.resize(2);
  agg.subtasks[0].keyed = {{0, "k0"}, {31, "k31"}, {32, "k32"}, {63, "k63"}};
  agg.subtasks[1].keyed = {{64, "k64"}, {95, "k95"}, {96, "k96"}, {127, std::string("k\0" "127", 5)}};
  c.operators["agg"] = agg;

  OperatorState src;
  src.parallelism = 2;
  src.max_parallelism = 128;
  src.subtasks.resize(2);
  src.subtasks[0].operator_state["offsets"] = listState(OperatorStateMode::kSplitDistribute, {"a", "b", "c"});
  src.subtasks[0].operator_state["splits"] = listState(OperatorStateMode::kUnion, {"x"});
  src.subtasks[1].operator_state["offsets"] = listState(OperatorStateMode::kSplitDistribute, {"d", "e"});
  src.subtasks[1].operator_state["splits"] = listState(OperatorStateMode::kUnion, {"y"});
  c.operators["src"] = src;
  return c;
}

/// twoOperatorCheckpoint plus a RocksDB incremental handle in "agg" subtask 1 (two SST files, one shared
/// with a second handle of subtask 0).
inline CompletedCheckpoint incrementalCheckpoint(int64_t id) {
  CompletedCheckpoint c = twoOperatorCheckpoint(id);
  IncrementalKeyedStateHandle h;
  h.backend_id = "0123456789abcdef0123456789abcdef";
  h.checkpoint_id = id;
  h.key_group_start = 64;
  h.key_group_end = 127;
  h.states = {{"accState", 0}, {"m", 2}};
  h.shared_files = {{"000009.sst", "/ck/j/shared/0123-000009.sst", 1234, 0xdeadbeef},
                    {"000011.sst", "/ck/j/shared/0123-000011.sst", 99, 7}};
  h.private_files = {{"CURRENT", "/ck/j/taskowned/0123-5-CURRENT", 16, 0x12345678}};
  h.checkpointed_size = 115;
  c.operators["agg"].subtasks[1].incremental.push_back(h);
  h.key_group_start = 0;
  h.key_group_end = 63;
  h.shared_files.pop_back();
  c.operators["agg"].subtasks[0].incremental.push_back(h);
  return c;
}

/// twoOperatorCheckpoint with channel state (an unaligned checkpoint): "src" subtask 0 overtook records
/// to subtask 1 of its output 0; "agg" subtask 1 recorded input from producer 0 of its input 0.
inline CompletedCheckpoint unalignedCheckpoint(int64_t id) {
  CompletedCheckpoint c = twoOperatorCheckpoint(id);
  c.operators["src"].subtasks[0].channel.output.push_back(OutputChannelStateEntry{0, 1, std::string("out\0b", 5)});
  c.operators["agg"].subtasks[1].channel.input.push_back(InputChannelStateEntry{0, 0, "in"});
  c.operators["agg"].subtasks[1].channel.input.push_back(InputChannelStateEntry{0, 1, "in2"});
  return c;
}

inline void expectSameSubtask(const OperatorSubtaskState& a, const OperatorSubtaskState& b) {
  EXPECT_EQ(a.keyed, b.keyed);
  EXPECT_TRUE(a.incremental == b.incremental);
  EXPECT_EQ(a.channel, b.channel);
  ASSERT_EQ(a.operator_state.size(), b.operator_state.size());
  for (const auto& [name, list] : a.operator_state) {
    const auto it = b.operator_state.find(name);
    ASSERT_NE(it, b.operator_state.end()) << name;
    EXPECT_EQ(list.mode, it->second.mode) << name;
    EXPECT_EQ(list.elements, it->second.elements) << name;
  }
}

inline void expectSameCheckpoint(const CompletedCheckpoint& a, const CompletedCheckpoint& b) {
  EXPECT_EQ(a.checkpoint_id, b.checkpoint_id);
  EXPECT_EQ(a.job_id, b.job_id);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.trigger_timestamp_ms, b.trigger_timestamp_ms);
  EXPECT_EQ(a.completion_timestamp_ms, b.completion_timestamp_ms);
  ASSERT_EQ(a.operators.size(), b.operators.size());
  for (const auto& [uid, op] : a.operators) {
    const auto it = b.operators.find(uid);
    ASSERT_NE(it, b.operators.end()) << uid;
    EXPECT_EQ(op.parallelism, it->second.parallelism) << uid;
    EXPECT_EQ(op.max_parallelism, it->second.max_parallelism) << uid;
    ASSERT_EQ(op.subtasks.size(), it->second.subtasks.size()) << uid;
    for (size_t i = 0; i < op.subtasks.size(); ++i) expectSameSubtask(op.subtasks[i], it->second.subtasks[i]);
  }
}

/// A fresh directory under the system temp directory, removed with its contents at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "sluice-chk-XXXXXX").string();
    if (mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + templ);
    path_ = templ;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace sluice::runtime::checkpoint::testing
