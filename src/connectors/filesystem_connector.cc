#include "connectors/filesystem_connector.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <random>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "common/config.h"
#include "common/error.h"
#include "connectors/connector_options.h"
#include "connectors/operator_util.h"

namespace sluice::connectors {

namespace fs = std::filesystem;

std::string stripFileScheme(const std::string& path) {
  if (path.rfind("file://", 0) == 0) return path.substr(7);
  if (path.rfind("file:/", 0) == 0) return path.substr(5);
  return path;
}

namespace {

std::string absolutePath(const std::string& path) {
  std::error_code ec;
  fs::path abs = fs::absolute(fs::path(path), ec);
  return ec ? path : abs.lexically_normal().string();
}

// Regular files under `dir`, relative paths sorted; hidden ('.', '_') entries skipped like Flink's
// DefaultFileFilter, also for directories. With `regex`, only the files whose absolute path it matches.
std::vector<std::string> listFiles(const std::string& dir, const std::regex* regex) {
  std::vector<std::string> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::follow_directory_symlink, ec);
  if (ec) throw UserError(fmt::format("Cannot list directory '{}': {}", dir, ec.message()));
  for (auto end = fs::recursive_directory_iterator(); it != end; it.increment(ec)) {
    if (ec) throw UserError(fmt::format("Cannot list directory '{}': {}", dir, ec.message()));
    const std::string name = it->path().filename().string();
    if (!name.empty() && (name[0] == '.' || name[0] == '_')) {
      if (it->is_directory(ec)) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    if (regex != nullptr && !std::regex_match(it->path().lexically_normal().string(), *regex)) continue;
    out.push_back(fs::relative(it->path(), dir, ec).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string joinPath(const std::string& dir, const std::string& rel) {
  if (dir.empty() || dir.back() == '/') return dir + rel;
  return dir + "/" + rel;
}

void writeAll(int fd, const char* data, size_t n, const std::string& path) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw UserError(fmt::format("Cannot write '{}': {}", path, std::strerror(errno)));
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
}

constexpr size_t kSinkFlushBytes = 1 << 20;

}  // namespace

// ---------------------------------------------------------------------------------------------
// Source

std::vector<std::vector<FileSplit>> FileSystemSource::splitsBySubtask(int parallelism) const {
  const int n = std::max(1, parallelism);
  std::vector<std::vector<FileSplit>> out(static_cast<size_t>(n));
  std::error_code ec;
  fs::file_status st = fs::status(spec_->absolute_path, ec);
  if (ec || !fs::exists(st))
    throw UserError(fmt::format("File or directory '{}' of table '{}' does not exist.", spec_->path, spec_->table_name));
  if (fs::is_directory(st)) {
    std::optional<std::regex> regex;
    if (!spec_->path_regex.empty()) regex.emplace(spec_->path_regex);  // validated by the factory
    std::vector<std::string> files = listFiles(spec_->absolute_path, regex ? &*regex : nullptr);
    for (size_t k = 0; k < files.size(); ++k) {
      out[k % static_cast<size_t>(n)].push_back(
          FileSplit{joinPath(spec_->absolute_path, files[k]), joinPath(spec_->path, files[k]), 0, -1});
    }
    return out;
  }
  if (spec_->format != "csv" || n == 1) {
    // A json file is not split: subtask 0 reads it.
    out[0].push_back(FileSplit{spec_->absolute_path, spec_->path, 0, -1});
    return out;
  }
  const uintmax_t size = fs::is_regular_file(st) ? fs::file_size(spec_->absolute_path, ec) : 0;
  if (ec || !fs::is_regular_file(st)) {
    // Size unknown (a pipe, a special file): one reader reads it whole.
    out[0].push_back(FileSplit{spec_->absolute_path, spec_->path, 0, -1});
    return out;
  }
  for (int i = 0; i < n; ++i) {
    // 128-bit products: size * i must not overflow for huge files.
    const auto from = static_cast<int64_t>(static_cast<unsigned __int128>(size) * static_cast<unsigned>(i) / n);
    const auto to = static_cast<int64_t>(static_cast<unsigned __int128>(size) * static_cast<unsigned>(i + 1) / n);
    out[static_cast<size_t>(i)].push_back(FileSplit{spec_->absolute_path, spec_->path, from, to});
  }
  return out;
}

std::unique_ptr<runtime::SplitEnumerator<FileSplit>> FileSystemSource::createEnumerator(int parallelism) const {
  return std::make_unique<SubtaskSplitEnumerator<FileSplit>>(splitsBySubtask(parallelism));
}

std::unique_ptr<runtime::SplitEnumerator<FileSplit>> FileSystemSource::restoreEnumerator(
    int parallelism, int checkpointed_parallelism) const {
  return std::make_unique<SubtaskSplitEnumerator<FileSplit>>(splitsBySubtask(checkpointed_parallelism), parallelism);
}

std::string FileSplit::splitId() const { return fmt::format("{}:{}:{}", open_path, from, to); }

std::vector<FileSplit> FileSystemSourceReader::snapshotState(int64_t) {
  std::vector<FileSplit> out;
  if (file_open_ && pos_ < range_end_ && pos_ < data_.size()) {
    FileSplit s = current_;
    s.offset = static_cast<int64_t>(pos_);
    s.line = line_number_;
    out.push_back(std::move(s));
  }
  out.insert(out.end(), splits_.begin(), splits_.end());
  return out;
}

std::unique_ptr<runtime::SourceReader<types::RowBatch, FileSplit>> FileSystemSource::createReader(
    const runtime::SourceReaderContext& ctx) const {
  return std::make_unique<FileSystemSourceReader>(spec_, ctx);
}

FileSystemSourceReader::FileSystemSourceReader(std::shared_ptr<const FileSystemSourceSpec> spec,
                                               const runtime::SourceReaderContext& ctx)
    : spec_(std::move(spec)) {
  runtime::OperatorContext octx;
  octx.config = ctx.config;
  batch_size_ = batchSizeOf(octx);
  if (spec_->format != "csv") {
    json_deserializer_ = std::make_unique<JsonRowDeserializer>(
        spec_->row_type, spec_->json, spec_->format == "json" ? JsonFlavor::kJson : JsonFlavor::kDebezium,
        spec_->projection);
  }
  deserializer_ = spec_->projection.empty()
                      ? std::make_unique<CsvRowDeserializer>(spec_->row_type, spec_->csv)
                      : std::make_unique<CsvRowDeserializer>(spec_->row_type, spec_->csv, spec_->projection);
}

FileSystemSourceReader::~FileSystemSourceReader() { closeFile(); }

void FileSystemSourceReader::addSplit(FileSplit split) { splits_.push_back(std::move(split)); }

void FileSystemSourceReader::closeFile() {
  if (map_ != nullptr) {
    ::munmap(const_cast<char*>(map_), map_size_);
    map_ = nullptr;
    map_size_ = 0;
  }
  owned_data_.clear();
  owned_data_.shrink_to_fit();
  data_ = {};
  file_open_ = false;
}

bool FileSystemSourceReader::openNextSplit() {
  closeFile();
  if (splits_.empty()) return false;
  const FileSplit u = std::move(splits_.front());
  splits_.pop_front();
  display_path_ = u.display_path;
  current_ = u;
  int fd = ::open(u.open_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw UserError(fmt::format("Cannot open file '{}' of table '{}': {}", u.display_path, spec_->table_name,
                                std::strerror(errno)));
  struct stat sb {};
  size_t size = 0;
  if (::fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) size = static_cast<size_t>(sb.st_size);
  if (size > 0) {
    void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m != MAP_FAILED) {
      ::madvise(m, size, MADV_SEQUENTIAL);
      map_ = static_cast<const char*>(m);
      map_size_ = size;
      data_ = std::string_view(map_, map_size_);
    }
  }
  if (map_ == nullptr && (size > 0 || !S_ISREG(sb.st_mode))) {
    // Not mappable (a pipe, a special file): read it whole.
    char buf[1 << 16];
    while (true) {
      ssize_t r = ::read(fd, buf, sizeof(buf));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        int err = errno;
        ::close(fd);
        throw UserError(fmt::format("Cannot read file '{}': {}", u.display_path, std::strerror(err)));
      }
      if (r == 0) break;
      owned_data_.append(buf, static_cast<size_t>(r));
    }
    data_ = owned_data_;
  }
  ::close(fd);
  file_open_ = true;
  if (u.offset >= 0) {
    // A restored split: its next line and that line's number were checkpointed.
    pos_ = std::min(static_cast<size_t>(u.offset), data_.size());
    range_end_ = u.to >= 0 ? static_cast<size_t>(u.to) : data_.size();
    line_number_ = u.line;
  } else if (u.to >= 0) {
    const size_t begin = std::min(static_cast<size_t>(u.from), data_.size());
    pos_ = alignToLineStart(data_, begin);
    range_end_ = static_cast<size_t>(u.to);
    line_number_ = countNewlines(data_, pos_) + 1;
  } else {
    pos_ = 0;
    range_end_ = data_.size();
    line_number_ = 1;
  }
  return true;
}

runtime::InputStatus FileSystemSourceReader::pollNext(runtime::ReaderOutput<types::RowBatch>& output) {
  types::RowBatch batch(json_deserializer_ ? json_deserializer_->producedType() : deserializer_->producedType());
  batch.reserve(batch_size_);
  size_t rows = 0;
  bool finished = false;
  while (rows < batch_size_) {
    if (!file_open_ || pos_ >= range_end_ || pos_ >= data_.size()) {
      if (!openNextSplit()) {
        finished = true;
        break;
      }
      continue;
    }
    try {
      if (json_deserializer_) {
        rows += readJsonLines(batch, batch_size_ - rows);
      } else {
        rows += readCsvLines(data_, pos_, range_end_, line_number_, *deserializer_, batch, batch_size_ - rows,
                             display_path_);
      }
    } catch (const UserError&) {
      // The rows before the bad line were read (the failing row is rolled back): pass them on first, so
      // the job fails exactly at the bad row and a sink has seen everything before it.
      if (batch.numRows() > 0) {
        rows_emitted_.fetch_add(static_cast<int64_t>(batch.numRows()), std::memory_order_relaxed);
        output.collect(std::move(batch));
      }
      throw;
    }
  }
  parse_errors_.store(json_deserializer_ ? json_deserializer_->parseErrors() : deserializer_->parseErrors(),
                      std::memory_order_relaxed);
  if (finished) closeFile();
  if (rows > 0) {
    rows_emitted_.fetch_add(static_cast<int64_t>(rows), std::memory_order_relaxed);
    output.collect(std::move(batch));
  }
  return finished ? runtime::InputStatus::kEndOfInput : runtime::InputStatus::kMoreAvailable;
}

size_t FileSystemSourceReader::readJsonLines(types::RowBatch& batch, size_t max_rows) {
  size_t rows = 0;
  // An update adds two rows, so a batch may end one row over `max_rows`.
  while (rows < max_rows && pos_ < range_end_ && pos_ < data_.size()) {
    size_t nl = data_.find('\n', pos_);
    const size_t end = nl == std::string_view::npos ? data_.size() : nl;
    rows += json_deserializer_->parseLine(data_.substr(pos_, end - pos_), batch, display_path_, line_number_);
    pos_ = end + 1;
    ++line_number_;
  }
  return rows;
}

void FileSystemSourceReader::close() { closeFile(); }

FileSystemTableSource::FileSystemTableSource(std::shared_ptr<const FileSystemSourceSpec> spec,
                                             std::optional<int> parallelism)
    : spec_(std::move(spec)), parallelism_(parallelism) {}

std::shared_ptr<const runtime::StreamOperatorFactory> FileSystemTableSource::operatorFactory() const {
  auto spec = spec_;
  return runtime::makeOperatorFactory([spec] { return std::make_unique<FileSystemSourceOperator>(spec); }, true);
}

std::string FileSystemTableSource::summary() const {
  return fmt::format("filesystem path={}, format={}", spec_->path, spec_->format);
}

table::ChangelogMode FileSystemTableSource::changelogMode() const {
  return spec_->format == "debezium-json" ? table::ChangelogMode::kAll : table::ChangelogMode::kInsertOnly;
}

bool FileSystemTableSource::applyProjection(const std::vector<int>& fields) {
  checkProjection(fields, spec_->row_type.size(), "filesystem", spec_->table_name);
  // The spec is shared read-only with operator factories made earlier: project a copy.
  auto spec = std::make_shared<FileSystemSourceSpec>(*spec_);
  spec->projection = fields;
  spec_ = std::move(spec);
  return true;
}

types::RowType FileSystemSourceSpec::producedType() const {
  return projectRowType(row_type, projection);
}

// ---------------------------------------------------------------------------------------------
// Sink

std::string randomUuid() {
  // random_device is not guaranteed thread-safe: one per call.
  std::random_device rd;
  std::array<uint8_t, 16> b{};
  for (size_t i = 0; i < b.size(); i += 4) {
    const uint32_t r = rd();
    for (size_t k = 0; k < 4; ++k) b[i + k] = static_cast<uint8_t>(r >> (8 * k));
  }
  b[6] = static_cast<uint8_t>((b[6] & 0x0F) | 0x40);  // version 4
  b[8] = static_cast<uint8_t>((b[8] & 0x3F) | 0x80);  // IETF variant
  std::string out;
  out.reserve(36);
  for (size_t i = 0; i < b.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", b[i]);
  }
  return out;
}

namespace {

std::string notADirectoryMessage(const FileSystemSinkSpec& spec) {
  return fmt::format("Path '{}' of table '{}' is a file; the filesystem sink writes part files into a directory.",
                     spec.path, spec.table_name);
}

}  // namespace

FileSystemSinkOperator::FileSystemSinkOperator(std::shared_ptr<const FileSystemSinkSpec> spec)
    : spec_(std::move(spec)) {}

FileSystemSinkOperator::~FileSystemSinkOperator() { discardUncommitted(); }

std::string FileSystemSinkOperator::partFilePath(int counter) const {
  return joinPath(spec_->absolute_path,
                  fmt::format("part-{}-{}-{}.csv", spec_->run_id, ctx_.subtask_index, counter));
}

std::string FileSystemSinkOperator::inProgressPath(int counter) const {
  // The leading '.' hides it from the filesystem source (Flink's DefaultFileFilter).
  return joinPath(spec_->absolute_path,
                  fmt::format(".part-{}-{}-{}.csv.inprogress", spec_->run_id, ctx_.subtask_index, counter));
}

void FileSystemSinkOperator::open(const runtime::OperatorContext& ctx, runtime::Output* output) {
  StreamOperator::open(ctx, output);
  serializer_ = std::make_unique<CsvRowSerializer>(spec_->row_type, spec_->csv);
  std::error_code ec;
  fs::file_status st = fs::status(spec_->absolute_path, ec);
  if (fs::exists(st) && !fs::is_directory(st)) throw UserError(notADirectoryMessage(*spec_));
  fs::create_directories(spec_->absolute_path, ec);
  // The subtasks of a job create it concurrently and a losing one may see an error although the
  // directory now exists: only a path that is still no directory is an error.
  if (ec && !fs::is_directory(spec_->absolute_path)) {
    if (fs::exists(spec_->absolute_path)) throw UserError(notADirectoryMessage(*spec_));
    throw UserError(fmt::format("Cannot create directory '{}' of table '{}': {}", spec_->path, spec_->table_name,
                                ec.message()));
  }
  counter_ = 0;
  part_bytes_ = 0;
  finished_.clear();
  committed_.clear();
  pending_.clear();
  if (ctx_.state == nullptr) {
    own_state_ = std::make_unique<runtime::state::StreamOperatorStateContext>(
        ctx_.uid, runtime::state::KeyGroupRange::of(0, ctx_.max_parallelism - 1), ctx_.max_parallelism, nullptr);
    ctx_.state = own_state_.get();
  }
  pending_state_ = &ctx_.state->operatorStateBackend().getUnionListState(
      runtime::state::ListStateDescriptor<PendingFile>{"FileSinkPendingFiles"});
  run_ids_state_ = &ctx_.state->operatorStateBackend().getUnionListState(
      runtime::state::ListStateDescriptor<std::string>{"FileSinkRunIds"});
  if (ctx_.state->isRestored()) restore();
  // The part-file prefixes of every run this sink's state has seen (kept by subtask 0), so a restore in a
  // later run (sluice run -s, which plans a new prefix) still finds the leftovers of the killed one.
  std::set<std::string> ids(run_ids_state_->get().begin(), run_ids_state_->get().end());
  ids.insert(spec_->run_id);
  run_ids_.assign(ids.begin(), ids.end());
  run_ids_state_->clear();
  if (ctx_.subtask_index == 0) run_ids_state_->update(run_ids_);
}

namespace {

// The subtask and counter of a part file name of sink `run_id`: "part-<run>-<j>-<c>.csv" (visible) or
// ".part-<run>-<j>-<c>.csv.inprogress" (hidden); nullopt for other names.
std::optional<std::pair<int, int>> partNumbers(const std::string& name, const std::string& run_id, bool hidden) {
  const std::string prefix = (hidden ? ".part-" : "part-") + run_id + "-";
  const std::string suffix = hidden ? ".csv.inprogress" : ".csv";
  if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::nullopt;
  const std::string middle = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  const size_t dash = middle.find('-');
  if (dash == std::string::npos || dash == 0 || dash + 1 == middle.size()) return std::nullopt;
  const std::string j = middle.substr(0, dash);
  const std::string c = middle.substr(dash + 1);
  auto digits = [](const std::string& t) {
    return t.size() <= 9 && std::all_of(t.begin(), t.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  };
  if (!digits(j) || !digits(c)) return std::nullopt;
  return std::make_pair(std::stoi(j), std::stoi(c));
}

}  // namespace

void FileSystemSinkOperator::restore() {
  const int me = ctx_.subtask_index;
  const int p = std::max(1, ctx_.parallelism);
  std::set<std::string> restored_hidden;
  for (const auto& [checkpoint_id, hidden, final_name] : pending_state_->get()) {
    (void)checkpoint_id;
    commit(hidden, final_name);
    restored_hidden.insert(hidden);
    if (auto n = partNumbers(final_name, spec_->run_id, false); n && n->first == me)
      counter_ = std::max(counter_, n->second + 1);
  }
  // Committed: the next checkpoint records only what this attempt writes.
  pending_state_->clear();
  std::set<std::string> run_ids(run_ids_state_->get().begin(), run_ids_state_->get().end());
  run_ids.insert(spec_->run_id);
  std::error_code ec;
  for (fs::directory_iterator it(spec_->absolute_path, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (auto n = partNumbers(name, spec_->run_id, false); n && n->first == me) {
      counter_ = std::max(counter_, n->second + 1);
      continue;
    }
    for (const std::string& run_id : run_ids) {
      auto n = partNumbers(name, run_id, true);
      if (!n || restored_hidden.count(name) > 0) continue;
      // Written by a failed attempt after its last completed checkpoint: never to be committed. Every old
      // subtask's files go to exactly one new subtask (old index mod new parallelism).
      if (n->first % p == me) ::unlink(it->path().c_str());
    }
  }
}

void FileSystemSinkOperator::commit(const std::string& hidden_name, const std::string& final_name) {
  const std::string from = joinPath(spec_->absolute_path, hidden_name);
  const std::string to = joinPath(spec_->absolute_path, final_name);
  if (::rename(from.c_str(), to.c_str()) != 0) {
    const int err = errno;
    std::error_code ec;
    // Committed before (a notification that arrived, or another subtask of a restore): idempotent.
    if (!(err == ENOENT && fs::exists(to, ec)))
      throw UserError(fmt::format("Cannot commit part file '{}' of table '{}' (rename from '{}'): {}", to,
                                  spec_->table_name, from, std::strerror(err)));
  }
  committed_.push_back(to);
}

void FileSystemSinkOperator::snapshotState(int64_t checkpoint_id) {
  finishPart();
  for (int c : finished_) {
    pending_.emplace_back(checkpoint_id, fs::path(inProgressPath(c)).filename().string(),
                          fs::path(partFilePath(c)).filename().string());
  }
  finished_.clear();
  pending_state_->update(pending_);
}

void FileSystemSinkOperator::notifyCheckpointComplete(int64_t checkpoint_id) {
  std::vector<PendingFile> keep;
  for (const PendingFile& f : pending_) {
    if (std::get<0>(f) <= checkpoint_id) {
      commit(std::get<1>(f), std::get<2>(f));
    } else {
      keep.push_back(f);
    }
  }
  pending_ = std::move(keep);
}

void FileSystemSinkOperator::openPart() {
  const std::string path = inProgressPath(counter_);
  // O_TRUNC: a restarted attempt of the same subtask of the same job starts its part over.
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw UserError(fmt::format("Cannot open '{}' of table '{}' for writing: {}", path, spec_->table_name,
                                std::strerror(errno)));
  part_bytes_ = 0;
}

void FileSystemSinkOperator::processBatch(types::RowBatch&& batch) {
  const size_t n = batch.numRows();
  const int64_t limit = spec_->rolling_file_size;
  for (size_t r = 0; r < n; ++r) {
    SLUICE_CHECK(batch.kind(r) == types::RowKind::kInsert,
                 "filesystem sink of table '{}' received a {} row; it accepts only inserts", spec_->table_name,
                 types::shortString(batch.kind(r)));
    // Flink's table rolling policy: roll before a row when the part file is already past the size.
    if (fd_ >= 0 && part_bytes_ + static_cast<int64_t>(buffer_.size()) > limit) finishPart();
    if (fd_ < 0) openPart();
    serializer_->appendRow(batch, r, buffer_);
  }
  if (buffer_.size() >= kSinkFlushBytes) flush();
}

void FileSystemSinkOperator::flush() {
  if (buffer_.empty() || fd_ < 0) return;
  writeAll(fd_, buffer_.data(), buffer_.size(), inProgressPath(counter_));
  part_bytes_ += static_cast<int64_t>(buffer_.size());
  buffer_.clear();
}

void FileSystemSinkOperator::finishPart() {
  flush();
  if (fd_ < 0) return;
  const int fd = fd_;
  const int c = counter_;
  fd_ = -1;
  ++counter_;  // the next part file, opened on the next row
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(inProgressPath(c).c_str());
    throw UserError(fmt::format("Cannot write '{}': {}", inProgressPath(c), std::strerror(err)));
  }
  if (part_bytes_ > 0) {
    finished_.push_back(c);
  } else {
    ::unlink(inProgressPath(c).c_str());
  }
}

void FileSystemSinkOperator::endInput() {
  finishPart();
  // With checkpoints the task's final checkpoint commits the rest (notifyCheckpointComplete): committing
  // here could publish rows that a restore from an earlier checkpoint writes again.
  if (ctx_.checkpointing) return;
  for (const PendingFile& f : pending_) commit(std::get<1>(f), std::get<2>(f));
  pending_.clear();
  for (int c : finished_) {
    commit(fs::path(inProgressPath(c)).filename().string(), fs::path(partFilePath(c)).filename().string());
  }
  finished_.clear();
}

void FileSystemSinkOperator::discardUncommitted() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
    ::unlink(inProgressPath(counter_).c_str());
  }
  for (int c : finished_) ::unlink(inProgressPath(c).c_str());
  finished_.clear();
  buffer_.clear();
}

void FileSystemSinkOperator::close() { discardUncommitted(); }

FileSystemTableSink::FileSystemTableSink(std::shared_ptr<const FileSystemSinkSpec> spec, std::optional<int> parallelism)
    : spec_(std::move(spec)), parallelism_(parallelism) {}

std::shared_ptr<const runtime::StreamOperatorFactory> FileSystemTableSink::operatorFactory() const {
  auto spec = spec_;
  return runtime::makeOperatorFactory([spec] { return std::make_unique<FileSystemSinkOperator>(spec); });
}

std::string FileSystemTableSink::summary() const { return fmt::format("filesystem path={}, format=csv", spec_->path); }

// ---------------------------------------------------------------------------------------------
// Factory

std::set<std::string> FileSystemTableFactory::supportedOptions() const {
  std::set<std::string> keys = {"path",
                                "format",
                                "source.monitor-interval",
                                "source.path.regex-pattern",
                                "partition.default-name",
                                "sink.rolling-policy.file-size",
                                "sink.rolling-policy.rollover-interval",
                                "sink.rolling-policy.check-interval",
                                "sink.rolling-policy.inactivity-interval",
                                "sink.shuffle-by-partition.enable",
                                "auto-compaction",
                                "compaction.file-size",
                                "compaction.parallelism",
                                "source.report-statistics",
                                "partition.time-extractor.kind",
                                "partition.time-extractor.timestamp-pattern",
                                "partition.time-extractor.timestamp-formatter",
                                "sink.partition-commit.trigger",
                                "sink.partition-commit.delay",
                                "sink.partition-commit.watermark-time-zone",
                                "sink.partition-commit.policy.kind",
                                "sink.partition-commit.policy.class",
                                "sink.partition-commit.success-file.name",
                                "scan.parallelism",
                                "sink.parallelism",
                                "lookup.join.cache.ttl"};
  for (const auto& k : csvFormatOptionKeys()) keys.insert(k);
  for (const auto& k : jsonFormatOptionKeys()) keys.insert(k);
  return keys;
}

namespace {

struct CommonFs {
  std::string path;
  std::string absolute;
  CsvFormatOptions csv;
  std::string format;
};

CommonFs commonOptions(const table::ResolvedTable& table, bool source) {
  auto path = findOption(table.options, "path");
  if (!path || path->empty())
    throw UserError(fmt::format("Missing required option 'path' for the filesystem table '{}'.", table.name));
  auto format = findOption(table.options, "format");
  if (!format)
    throw UserError(fmt::format("Could not find required option 'format' for the filesystem table '{}'.", table.name));
  const bool known = *format == "csv" || (source && (*format == "json" || *format == "debezium-json"));
  if (!known)
    throw UserError(fmt::format(
        "Could not find any format factory for identifier '{}' (table '{}', option 'format'). Available format "
        "identifiers are: {}",
        *format, table.name, source ? "csv, debezium-json, json" : "csv"));
  // Flink's source with a monitor interval is unbounded (it keeps listing the directory for new files);
  // reading the files once instead would end the job silently, so it is refused.
  if (source && durationOption(table.options, "source.monitor-interval", 0, table.name) > 0)
    throw UserError(fmt::format("Option 'source.monitor-interval' of table '{}': continuous monitoring of the "
                                "path is not supported yet; without the option the source reads the files that "
                                "exist when the job starts, once.",
                                table.name));
  CommonFs c;
  c.path = stripFileScheme(*path);
  c.absolute = absolutePath(c.path);
  c.csv = parseCsvFormatOptions(table.options, table.name);
  c.format = *format;
  return c;
}

}  // namespace

std::unique_ptr<table::ScanTableSource> FileSystemTableFactory::createSource(const table::ResolvedTable& table,
                                                                              const Configuration&) const {
  CommonFs c = commonOptions(table, true);
  std::error_code ec;
  if (!fs::exists(c.absolute, ec))
    throw UserError(fmt::format("File or directory '{}' of table '{}' does not exist.", c.path, table.name));
  auto spec = std::make_shared<FileSystemSourceSpec>();
  spec->table_name = table.name;
  spec->path = c.path;
  spec->absolute_path = c.absolute;
  spec->row_type = table.physical_type;
  spec->csv = c.csv;
  spec->format = c.format;
  spec->lookup_cache_ttl_ms = durationOption(table.options, "lookup.join.cache.ttl", spec->lookup_cache_ttl_ms, table.name);
  if (auto regex = findOption(table.options, "source.path.regex-pattern")) {
    try {
      std::regex check(*regex);
    } catch (const std::regex_error& e) {
      throw UserError(fmt::format("Invalid value '{}' for option 'source.path.regex-pattern' of table '{}': {}.",
                                  *regex, table.name, e.what()));
    }
    spec->path_regex = *regex;
  }
  // Fails early on a column type the format cannot read.
  if (c.format == "csv") {
    CsvRowDeserializer check(spec->row_type, spec->csv);
  } else {
    const JsonFlavor flavor = c.format == "json" ? JsonFlavor::kJson : JsonFlavor::kDebezium;
    spec->json = parseJsonFormatOptions(table.options, flavor, table.name);
    JsonRowDeserializer check(spec->row_type, spec->json, flavor);
  }
  return std::make_unique<FileSystemTableSource>(std::move(spec),
                                                 parallelismOption(table.options, "scan.parallelism", table.name));
}

std::unique_ptr<table::DynamicTableSink> FileSystemTableFactory::createSink(const table::ResolvedTable& table,
                                                                             const Configuration&) const {
  CommonFs c = commonOptions(table, false);
  auto spec = std::make_shared<FileSystemSinkSpec>();
  spec->table_name = table.name;
  spec->path = c.path;
  spec->absolute_path = c.absolute;
  spec->run_id = randomUuid();
  if (auto size = findOption(table.options, "sink.rolling-policy.file-size")) {
    const std::string key = "sink.rolling-policy.file-size";
    int64_t bytes = 0;
    try {
      bytes = parseMemorySize(key, *size);
    } catch (const ConfigError&) {
      bytes = 0;
    }
    if (bytes <= 0)
      throw UserError(fmt::format("Invalid value '{}' for option '{}' of table '{}': expected a positive memory "
                                  "size such as '128mb'.",
                                  *size, key, table.name));
    spec->rolling_file_size = bytes;
  }
  spec->row_type = table.physical_type;
  spec->csv = c.csv;
  std::error_code ec;
  fs::file_status st = fs::status(c.absolute, ec);
  if (fs::exists(st) && !fs::is_directory(st)) throw UserError(notADirectoryMessage(*spec));
  return std::make_unique<FileSystemTableSink>(std::move(spec),
                                               parallelismOption(table.options, "sink.parallelism", table.name));
}

}  // namespace sluice::connectors
