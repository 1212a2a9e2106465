#include "connectors/filesystem_connector.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <random>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/config.h"
#include "common/error.h"
#include "connectors/connector_options.h"
#include "connectors/filesystem_partition.h"
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

bool isPartitionKey(const std::vector<int>& keys, size_t field) {
  return std::find(keys.begin(), keys.end(), static_cast<int>(field)) != keys.end();
}

constexpr size_t kSinkFlushBytes = 1 << 20;
/// Part files a sink subtask keeps open at once (one per partition being written).
constexpr size_t kMaxOpenBuckets = 64;

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
  const types::RowType file_type = spec_->fileType();
  const std::vector<int> file_projection = spec_->fileProjection();
  if (spec_->format != "csv") {
    json_deserializer_ = std::make_unique<JsonRowDeserializer>(
        file_type, spec_->json, spec_->format == "json" ? JsonFlavor::kJson : JsonFlavor::kDebezium, file_projection);
  }
  deserializer_ = file_projection.empty()
                      ? std::make_unique<CsvRowDeserializer>(file_type, spec_->csv)
                      : std::make_unique<CsvRowDeserializer>(file_type, spec_->csv, file_projection);
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
  partition_values_.clear();
  if (!spec_->partition_keys.empty()) {
    // The partition values of this file: its `k=v` directories below the table's path.
    std::error_code ec;
    const std::string rel = fs::relative(u.open_path, spec_->absolute_path, ec).string();
    const auto partition_spec = partitionSpecOf(ec ? std::string() : rel);
    std::vector<int> fields = spec_->projection;
    if (fields.empty())
      for (size_t i = 0; i < spec_->row_type.size(); ++i) fields.push_back(static_cast<int>(i));
    for (int f : fields) {
      if (!isPartitionKey(spec_->partition_keys, static_cast<size_t>(f))) continue;
      const std::string& name = spec_->row_type.names[static_cast<size_t>(f)];
      std::optional<std::string> value;
      for (const auto& [k, v] : partition_spec)
        if (k == name) value = v;
      if (value && *value == spec_->default_partition_name) value.reset();
      types::Column col(spec_->row_type.types[static_cast<size_t>(f)]);
      if (!appendPartitionValue(value, col))
        throw UserError(fmt::format("File '{}' of table '{}': the partition value '{}' of column '{}' is not a {}",
                                    u.display_path, spec_->table_name, *value, name, col.type().toString()));
      partition_values_.push_back(std::move(col));
    }
  }
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
      // A batch of a partitioned table holds the rows of one file (one set of partition values).
      if (!spec_->partition_keys.empty() && rows > 0) break;
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
        output.collect(withPartitions(std::move(batch)));
      }
      throw;
    }
  }
  parse_errors_.store(json_deserializer_ ? json_deserializer_->parseErrors() : deserializer_->parseErrors(),
                      std::memory_order_relaxed);
  if (finished) closeFile();
  if (rows > 0) {
    rows_emitted_.fetch_add(static_cast<int64_t>(rows), std::memory_order_relaxed);
    output.collect(withPartitions(std::move(batch)));
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

types::RowType FileSystemSourceSpec::fileType() const {
  types::RowType out;
  for (size_t i = 0; i < row_type.size(); ++i) {
    if (isPartitionKey(partition_keys, i)) continue;
    out.names.push_back(row_type.names[i]);
    out.types.push_back(row_type.types[i]);
  }
  return out;
}

std::vector<int> FileSystemSourceSpec::fileProjection() const {
  if (partition_keys.empty() || projection.empty()) return projection;
  std::vector<int> out;
  for (int f : projection) {
    if (isPartitionKey(partition_keys, static_cast<size_t>(f))) continue;
    int file_index = 0;
    for (int i = 0; i < f; ++i) file_index += isPartitionKey(partition_keys, static_cast<size_t>(i)) ? 0 : 1;
    out.push_back(file_index);
  }
  // Only partition keys projected: the files are still read for their row count (every field).
  return out;
}

types::RowBatch FileSystemSourceReader::withPartitions(types::RowBatch&& file_rows) const {
  if (spec_->partition_keys.empty()) return std::move(file_rows);
  const size_t n = file_rows.numRows();
  std::vector<int> fields = spec_->projection;
  if (fields.empty())
    for (size_t i = 0; i < spec_->row_type.size(); ++i) fields.push_back(static_cast<int>(i));
  types::RowBatch out;
  size_t next_file_column = 0;
  size_t next_partition = 0;
  for (int f : fields) {
    if (isPartitionKey(spec_->partition_keys, static_cast<size_t>(f))) {
      const types::Column& value = partition_values_[next_partition++];
      types::Column col(value.type());
      col.reserve(n);
      for (size_t r = 0; r < n; ++r) col.appendFrom(value, 0);
      out.columns().push_back(std::move(col));
    } else {
      out.columns().push_back(std::move(file_rows.column(next_file_column++)));
    }
  }
  out.kinds() = std::move(file_rows.kinds());
  return out;
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

types::RowType FileSystemSinkSpec::dataType() const {
  types::RowType out;
  for (size_t i = 0; i < row_type.size(); ++i) {
    if (std::find(partition_keys.begin(), partition_keys.end(), static_cast<int>(i)) != partition_keys.end()) continue;
    out.names.push_back(row_type.names[i]);
    out.types.push_back(row_type.types[i]);
  }
  return out;
}

FileSystemSinkOperator::FileSystemSinkOperator(std::shared_ptr<const FileSystemSinkSpec> spec)
    : spec_(std::move(spec)) {}

FileSystemSinkOperator::~FileSystemSinkOperator() { discardUncommitted(); }

std::string FileSystemSinkOperator::relativeName(int counter, const std::string& partition, bool hidden) const {
  // The leading '.' hides an in-progress file from the filesystem source (Flink's DefaultFileFilter).
  std::string name = hidden ? fmt::format(".part-{}-{}-{}{}.inprogress", spec_->run_id, ctx_.subtask_index, counter,
                                          extension_)
                            : fmt::format("part-{}-{}-{}{}", spec_->run_id, ctx_.subtask_index, counter, extension_);
  return partition.empty() ? name : partition + "/" + name;
}

std::string FileSystemSinkOperator::partFilePath(int counter, const std::string& partition) const {
  return joinPath(spec_->absolute_path, relativeName(counter, partition, false));
}

std::string FileSystemSinkOperator::inProgressPath(int counter, const std::string& partition) const {
  return joinPath(spec_->absolute_path, relativeName(counter, partition, true));
}

namespace {

void createDirectories(const std::string& dir, const FileSystemSinkSpec& spec) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  // The subtasks of a job create it concurrently and a losing one may see an error although the
  // directory now exists: only a path that is still no directory is an error.
  if (ec && !fs::is_directory(dir)) {
    if (dir == spec.absolute_path && fs::exists(dir)) throw UserError(notADirectoryMessage(spec));
    throw UserError(fmt::format("Cannot create directory '{}' of table '{}': {}", dir == spec.absolute_path ? spec.path : dir,
                                spec.table_name, ec.message()));
  }
}

int64_t wallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void FileSystemSinkOperator::open(const runtime::OperatorContext& ctx, runtime::Output* output) {
  StreamOperator::open(ctx, output);
  const types::RowType data_type = spec_->dataType();
  data_columns_.clear();
  for (size_t i = 0; i < spec_->row_type.size(); ++i)
    if (std::find(spec_->partition_keys.begin(), spec_->partition_keys.end(), static_cast<int>(i)) ==
        spec_->partition_keys.end())
      data_columns_.push_back(static_cast<int>(i));
  if (spec_->format == "json") {
    json_serializer_ = std::make_unique<JsonRowSerializer>(data_type, spec_->json, JsonFlavor::kJson);
    extension_ = ".json";
  } else {
    serializer_ = std::make_unique<CsvRowSerializer>(data_type, spec_->csv);
    extension_ = ".csv";
  }
  std::error_code ec;
  fs::file_status st = fs::status(spec_->absolute_path, ec);
  if (fs::exists(st) && !fs::is_directory(st)) throw UserError(notADirectoryMessage(*spec_));
  createDirectories(spec_->absolute_path, *spec_);
  counter_ = 0;
  buckets_.clear();
  finished_.clear();
  committed_.clear();
  pending_.clear();
  created_.clear();
  visible_.clear();
  watermarks_.clear();
  watermark_ = INT64_MIN;
  commit_tag_ = 0;
  ended_ = false;
  final_marker_written_ = false;
  if (ctx_.state == nullptr) {
    own_state_ = std::make_unique<runtime::state::StreamOperatorStateContext>(
        ctx_.uid, runtime::state::KeyGroupRange::of(0, ctx_.max_parallelism - 1), ctx_.max_parallelism, nullptr);
    ctx_.state = own_state_.get();
  }
  pending_state_ = &ctx_.state->operatorStateBackend().getUnionListState(
      runtime::state::ListStateDescriptor<PendingFile>{"FileSinkPendingFiles"});
  run_ids_state_ = &ctx_.state->operatorStateBackend().getUnionListState(
      runtime::state::ListStateDescriptor<std::string>{"FileSinkRunIds"});
  partitions_state_ = &ctx_.state->operatorStateBackend().getUnionListState(
      runtime::state::ListStateDescriptor<PartitionEntry>{"FileSinkPartitions"});
  checkpoint_state_ = &ctx_.state->operatorStateBackend().getUnionListState(
      runtime::state::ListStateDescriptor<int64_t>{"FileSinkCheckpoint"});
  if (ctx_.state->isRestored()) restore();
  // The part-file prefixes of every run this sink's state has seen (kept by subtask 0), so a restore in a
  // later run (sluice run -s, which plans a new prefix) still finds the leftovers of the killed one.
  std::set<std::string> ids(run_ids_state_->get().begin(), run_ids_state_->get().end());
  ids.insert(spec_->run_id);
  run_ids_.assign(ids.begin(), ids.end());
  run_ids_state_->clear();
  if (ctx_.subtask_index == 0) run_ids_state_->update(run_ids_);
  // Announce this subtask to the partition commit (committed through the restored checkpoint).
  if (spec_->success_file && !spec_->partition_keys.empty()) commitPartitions(commit_tag_, false);
}

namespace {

// The subtask and counter of a part file name of sink `run_id`: "part-<run>-<j>-<c><ext>" (visible) or
// ".part-<run>-<j>-<c><ext>.inprogress" (hidden); nullopt for other names.
std::optional<std::pair<int, int>> partNumbers(const std::string& name, const std::string& run_id, bool hidden,
                                               const std::string& extension) {
  const std::string prefix = (hidden ? ".part-" : "part-") + run_id + "-";
  const std::string suffix = hidden ? extension + ".inprogress" : extension;
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

// The directory part of a relative file name ("dt=1/hm=2/part-x" -> "dt=1/hm=2"; "part-x" -> "").
std::string parentOf(const std::string& relative) {
  const size_t slash = relative.rfind('/');
  return slash == std::string::npos ? std::string() : relative.substr(0, slash);
}

std::string fileNameOf(const std::string& relative) {
  const size_t slash = relative.rfind('/');
  return slash == std::string::npos ? relative : relative.substr(slash + 1);
}

}  // namespace

void FileSystemSinkOperator::restore() {
  const int me = ctx_.subtask_index;
  const int p = std::max(1, ctx_.parallelism);
  for (int64_t id : checkpoint_state_->get()) commit_tag_ = std::max(commit_tag_, id);
  std::set<std::string> restored_hidden;
  for (const auto& [checkpoint_id, hidden, final_name] : pending_state_->get()) {
    (void)checkpoint_id;
    commit(hidden, final_name);
    restored_hidden.insert(hidden);
    if (auto n = partNumbers(fileNameOf(final_name), spec_->run_id, false, extension_); n && n->first == me)
      counter_ = std::max(counter_, n->second + 1);
  }
  // The partitions of the restored state wait for their commit here: those of old subtask j at j mod p,
  // and the partitions of the files just committed (every subtask commits every restored file).
  for (const PartitionEntry& e : partitions_state_->get())
    if (std::get<0>(e) % p == me) visible_.emplace_back(me, std::get<1>(e), std::get<2>(e), std::get<3>(e));
  if (spec_->success_file && !spec_->partition_keys.empty()) {
    for (const auto& [checkpoint_id, hidden, final_name] : pending_state_->get()) {
      (void)hidden;
      auto n = partNumbers(fileNameOf(final_name), spec_->run_id, false, extension_);
      if (n && n->first % p == me) visible_.emplace_back(me, checkpoint_id, wallClockMs(), parentOf(final_name));
    }
  }
  // Committed: the next checkpoint records only what this attempt writes.
  pending_state_->clear();
  partitions_state_->clear();
  std::set<std::string> run_ids(run_ids_state_->get().begin(), run_ids_state_->get().end());
  run_ids.insert(spec_->run_id);
  std::error_code ec;
  std::error_code entry_ec;
  if (me == 0) {
    // The partition commit directories of failed attempts (other tags) and of killed runs: their
    // partitions are in the restored state.
    const std::string current = fs::path(commitDirectory()).filename().string();
    for (fs::directory_iterator d(spec_->absolute_path, ec), end; !ec && d != end; d.increment(ec)) {
      const std::string name = d->path().filename().string();
      for (const std::string& run_id : run_ids)
        if (name != current && name.rfind(".partition-commit-" + run_id + "-", 0) == 0) fs::remove_all(d->path(), entry_ec);
    }
    ec.clear();
  }
  fs::recursive_directory_iterator it(spec_->absolute_path, ec);
  for (fs::recursive_directory_iterator end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_directory(entry_ec)) {
      // Part files live in the table's directory and in partition directories ("k=v"), never below a
      // hidden directory (the partition commit's).
      if (!name.empty() && name[0] == '.') it.disable_recursion_pending();
      continue;
    }
    if (auto n = partNumbers(name, spec_->run_id, false, extension_); n && n->first == me) {
      counter_ = std::max(counter_, n->second + 1);
      continue;
    }
    const std::string rel = fs::relative(it->path(), spec_->absolute_path, entry_ec).string();
    for (const std::string& run_id : run_ids) {
      auto n = partNumbers(name, run_id, true, extension_);
      if (!n || restored_hidden.count(rel) > 0) continue;
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

void FileSystemSinkOperator::processWatermark(runtime::Watermark mark) { watermark_ = mark.timestamp; }

void FileSystemSinkOperator::snapshotState(int64_t checkpoint_id) {
  finishAll();
  for (const Finished& f : finished_)
    pending_.emplace_back(checkpoint_id, relativeName(f.counter, f.partition, true),
                          relativeName(f.counter, f.partition, false));
  finished_.clear();
  pending_state_->update(pending_);
  partitions_state_->update(visible_);
  checkpoint_state_->update({checkpoint_id});
  watermarks_[checkpoint_id] = watermark_;
}

void FileSystemSinkOperator::notePartitionVisible(const std::string& final_name, int64_t checkpoint_id) {
  if (!spec_->success_file || spec_->partition_keys.empty()) return;
  const std::string partition = parentOf(final_name);
  auto c = created_.find(partition);
  const int64_t created = c != created_.end() ? c->second : wallClockMs();
  for (PartitionEntry& e : visible_) {
    if (std::get<3>(e) == partition) {
      std::get<1>(e) = std::max(std::get<1>(e), checkpoint_id);
      return;
    }
  }
  visible_.emplace_back(ctx_.subtask_index, checkpoint_id, created, partition);
}

void FileSystemSinkOperator::notifyCheckpointComplete(int64_t checkpoint_id) {
  std::vector<PendingFile> keep;
  for (const PendingFile& f : pending_) {
    if (std::get<0>(f) <= checkpoint_id) {
      commit(std::get<1>(f), std::get<2>(f));
      notePartitionVisible(std::get<2>(f), checkpoint_id);
    } else {
      keep.push_back(f);
    }
  }
  pending_ = std::move(keep);
  if (spec_->success_file && !spec_->partition_keys.empty()) {
    // The watermark of the completed checkpoint (Flink's PartitionTimeCommitTrigger keeps one per checkpoint).
    commitPartitions(checkpoint_id, ended_ && pending_.empty() && finished_.empty());
    watermarks_.erase(watermarks_.begin(), watermarks_.upper_bound(checkpoint_id - 1));
  }
}

std::string FileSystemSinkOperator::commitDirectory() const {
  return joinPath(spec_->absolute_path, fmt::format(".partition-commit-{}-{}", spec_->run_id, commit_tag_));
}

namespace {

/// What one subtask's file in the partition commit directory says.
struct CommitMarker {
  int64_t committed_through = 0;
  int64_t watermark = INT64_MIN;
  bool ended = false;
  std::vector<FileSystemSinkOperator::PartitionEntry> entries;
};

std::string encodeMarker(const CommitMarker& m) {
  std::string out = fmt::format("{} {} {}\n", m.committed_through, m.watermark, m.ended ? 1 : 0);
  // A partition directory has no '\n' (escaped as %0A), so it ends its line.
  for (const auto& e : m.entries)
    out += fmt::format("{} {} {} {}\n", std::get<0>(e), std::get<1>(e), std::get<2>(e), std::get<3>(e));
  return out;
}

std::optional<CommitMarker> readMarker(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  CommitMarker m;
  int ended = 0;
  if (!(in >> m.committed_through >> m.watermark >> ended)) return std::nullopt;
  m.ended = ended != 0;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    int32_t subtask = 0;
    int64_t checkpoint = 0, created = 0;
    if (!(fields >> subtask >> checkpoint >> created)) return std::nullopt;
    std::string partition;
    fields.get();  // the blank before the partition
    std::getline(fields, partition);
    m.entries.emplace_back(subtask, checkpoint, created, partition);
  }
  return m;
}

}  // namespace

void FileSystemSinkOperator::commitPartitions(int64_t committed_through, bool ended) {
  // After its ended file this subtask has nothing to add: the last subtask to end commits the rest (and
  // removes the directory, which a later call here would create again).
  if (final_marker_written_) return;
  final_marker_written_ = ended;
  const std::string dir = commitDirectory();
  createDirectories(dir, *spec_);
  CommitMarker mine;
  // An ended subtask has nothing left to make visible: it holds back no partition of the others.
  mine.committed_through = ended ? INT64_MAX : committed_through;
  auto wm = watermarks_.find(committed_through);
  mine.watermark = wm != watermarks_.end() ? wm->second : watermark_;
  mine.ended = ended;
  mine.entries = visible_;
  const std::string own = joinPath(dir, std::to_string(ctx_.subtask_index));
  // Returns false when the directory is gone (the last subtask removed it: everything is committed).
  auto writeMine = [&]() -> bool {
    const std::string tmp = joinPath(dir, fmt::format(".{}.tmp", ctx_.subtask_index));
    bool ok = true;
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << encodeMarker(mine);
      out.flush();
      ok = static_cast<bool>(out);
    }
    if (ok && ::rename(tmp.c_str(), own.c_str()) == 0) return true;
    const int err = errno;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return false;
    throw UserError(fmt::format("Cannot write '{}' of table '{}': {}", own, spec_->table_name, std::strerror(err)));
  };
  writeMine();
  // Written before read: of two subtasks finishing together, at least the later one sees both.
  std::vector<CommitMarker> all;
  for (int i = 0; i < std::max(1, ctx_.parallelism); ++i) {
    auto m = readMarker(joinPath(dir, std::to_string(i)));
    if (!m) return;  // a subtask not started yet, or everything committed already
    all.push_back(std::move(*m));
  }
  int64_t through = INT64_MAX;
  int64_t watermark = INT64_MAX;
  bool all_ended = true;
  for (const CommitMarker& m : all) {
    through = std::min(through, m.committed_through);
    if (!m.ended) watermark = std::min(watermark, m.watermark);
    all_ended = all_ended && m.ended;
  }
  const int64_t now = wallClockMs();
  auto due = [&](const PartitionEntry& e) {
    if (std::get<1>(e) > through) return false;
    if (all_ended) return true;  // Flink's committer commits every partition at the end of input
    if (spec_->trigger == static_cast<int>(PartitionCommitTrigger::kProcessTime))
      return now >= std::get<2>(e) + spec_->commit_delay_ms;
    std::optional<int64_t> t = extractPartitionTime(spec_->timestamp_pattern, partitionSpecOf(std::get<3>(e) + "/"));
    // A partition without a time (a default partition name) waits for the end of input.
    return t && watermark != INT64_MIN && watermark > *t + spec_->commit_delay_ms;
  };
  std::set<std::string> done;
  for (const CommitMarker& m : all) {
    for (const PartitionEntry& e : m.entries) {
      if (!due(e) || !done.insert(std::get<3>(e)).second) continue;
      // Flink's SuccessFileCommitPolicy: an empty file, overwritten when the partition is committed again.
      const std::string path = joinPath(joinPath(spec_->absolute_path, std::get<3>(e)), spec_->success_file_name);
      const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0 || ::close(fd) != 0)
        throw UserError(fmt::format("Cannot write the success file '{}' of table '{}': {}", path, spec_->table_name,
                                    std::strerror(errno)));
    }
  }
  if (all_ended) {
    // Every partition is committed: the directory has served (every subtask has written its last file).
    // The others may still be reading: a missing file tells them so.
    std::error_code ec;
    fs::remove_all(dir, ec);
    visible_.clear();
    return;
  }
  std::vector<PartitionEntry> keep;
  for (const PartitionEntry& e : visible_) {
    if (done.count(std::get<3>(e)) > 0) {
      created_.erase(std::get<3>(e));
    } else {
      keep.push_back(e);
    }
  }
  // An ended subtask does not write again: the last one may be removing the directory. Its stale
  // entries only make the last one write those success files once more.
  if (keep.size() != visible_.size() && !ended) {
    visible_ = std::move(keep);
    mine.entries = visible_;
    writeMine();
  }
}

FileSystemSinkOperator::Bucket& FileSystemSinkOperator::bucketFor(const std::string& partition) {
  auto it = buckets_.find(partition);
  if (it != buckets_.end() && it->second.fd >= 0) return it->second;
  // Flink keeps a bucket per partition; here at most kMaxOpenBuckets files are open at a time.
  if (buckets_.size() >= kMaxOpenBuckets) {
    auto oldest = std::min_element(buckets_.begin(), buckets_.end(),
                                   [](const auto& a, const auto& b) { return a.second.opened < b.second.opened; });
    finishBucket(oldest->first);
  }
  if (!partition.empty()) {
    createDirectories(joinPath(spec_->absolute_path, partition), *spec_);
    if (spec_->success_file) created_.emplace(partition, wallClockMs());
  }
  Bucket& b = buckets_[partition];
  b.counter = counter_++;
  b.bytes = 0;
  b.buffer.clear();
  b.opened = ++opened_;
  const std::string path = inProgressPath(b.counter, partition);
  // O_TRUNC: a restarted attempt of the same subtask of the same job starts its part over.
  b.fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (b.fd < 0) {
    const int err = errno;
    buckets_.erase(partition);
    throw UserError(fmt::format("Cannot open '{}' of table '{}' for writing: {}", path, spec_->table_name,
                                std::strerror(err)));
  }
  return b;
}

void FileSystemSinkOperator::appendRow(const types::RowBatch& data, size_t row, std::string& out) const {
  if (json_serializer_) {
    json_serializer_->serialize(data, row, out);
    out += '\n';
  } else {
    serializer_->appendRow(data, row, out);
  }
}

void FileSystemSinkOperator::writeRows(const std::string& partition, const types::RowBatch& data,
                                       const std::vector<uint32_t>* rows) {
  const size_t n = rows ? rows->size() : data.numRows();
  const int64_t limit = spec_->rolling_file_size;
  Bucket* b = nullptr;
  for (size_t k = 0; k < n; ++k) {
    // Flink's table rolling policy: roll before a row when the part file is already past the size.
    if (b != nullptr && b->bytes + static_cast<int64_t>(b->buffer.size()) > limit) {
      finishBucket(partition);
      b = nullptr;
    }
    if (b == nullptr) b = &bucketFor(partition);
    appendRow(data, rows ? (*rows)[k] : k, b->buffer);
  }
  if (b != nullptr && b->buffer.size() >= kSinkFlushBytes) flushBucket(partition, *b);
}

void FileSystemSinkOperator::processBatch(types::RowBatch&& batch) {
  const size_t n = batch.numRows();
  for (size_t r = 0; r < n; ++r)
    SLUICE_CHECK(batch.kind(r) == types::RowKind::kInsert,
                 "filesystem sink of table '{}' received a {} row; it accepts only inserts", spec_->table_name,
                 types::shortString(batch.kind(r)));
  if (spec_->partition_keys.empty()) {
    writeRows("", batch, nullptr);
    return;
  }
  // Rows by partition, each partition's rows in arrival order.
  std::map<std::string, std::vector<uint32_t>> by_partition;
  std::string last;
  std::vector<uint32_t>* rows = nullptr;
  for (size_t r = 0; r < n; ++r) {
    std::string p = partitionPath(batch, r, spec_->partition_keys, spec_->row_type, spec_->default_partition_name);
    if (rows == nullptr || p != last) {
      rows = &by_partition[p];
      last = std::move(p);
    }
    rows->push_back(static_cast<uint32_t>(r));
  }
  types::RowBatch data;
  for (int c : data_columns_) data.columns().push_back(std::move(batch.column(static_cast<size_t>(c))));
  data.kinds() = std::move(batch.kinds());
  for (const auto& [partition, part_rows] : by_partition) writeRows(partition, data, &part_rows);
}

void FileSystemSinkOperator::flushBucket(const std::string& partition, Bucket& b) {
  if (b.buffer.empty() || b.fd < 0) return;
  writeAll(b.fd, b.buffer.data(), b.buffer.size(), inProgressPath(b.counter, partition));
  b.bytes += static_cast<int64_t>(b.buffer.size());
  b.buffer.clear();
}

void FileSystemSinkOperator::finishBucket(const std::string& partition_ref) {
  // A copy: the caller may pass the key of the entry erased below.
  const std::string partition = partition_ref;
  auto it = buckets_.find(partition);
  if (it == buckets_.end()) return;
  Bucket b = std::move(it->second);
  buckets_.erase(it);
  if (b.fd < 0) return;
  const std::string path = inProgressPath(b.counter, partition);
  try {
    flushBucket(partition, b);
  } catch (...) {
    ::close(b.fd);
    ::unlink(path.c_str());
    throw;
  }
  if (::close(b.fd) != 0) {
    const int err = errno;
    ::unlink(path.c_str());
    throw UserError(fmt::format("Cannot write '{}': {}", path, std::strerror(err)));
  }
  if (b.bytes > 0) {
    finished_.push_back(Finished{partition, b.counter});
  } else {
    ::unlink(path.c_str());
  }
}

void FileSystemSinkOperator::finishAll() {
  while (!buckets_.empty()) finishBucket(buckets_.begin()->first);
}

void FileSystemSinkOperator::endInput() {
  finishAll();
  ended_ = true;
  // With checkpoints the task's final checkpoint commits the rest (notifyCheckpointComplete): committing
  // here could publish rows that a restore from an earlier checkpoint writes again.
  if (ctx_.checkpointing) return;
  for (const PendingFile& f : pending_) {
    commit(std::get<1>(f), std::get<2>(f));
    notePartitionVisible(std::get<2>(f), INT64_MAX);
  }
  pending_.clear();
  for (const Finished& f : finished_) {
    commit(relativeName(f.counter, f.partition, true), relativeName(f.counter, f.partition, false));
    // Visible at the end of input: due once every subtask has ended (no checkpoint covers it).
    notePartitionVisible(relativeName(f.counter, f.partition, false), INT64_MAX);
  }
  finished_.clear();
  if (spec_->success_file && !spec_->partition_keys.empty()) commitPartitions(INT64_MAX, true);
}

void FileSystemSinkOperator::discardUncommitted() {
  for (auto& [partition, b] : buckets_) {
    if (b.fd < 0) continue;
    ::close(b.fd);
    b.fd = -1;
    ::unlink(inProgressPath(b.counter, partition).c_str());
  }
  buckets_.clear();
  for (const Finished& f : finished_) ::unlink(inProgressPath(f.counter, f.partition).c_str());
  finished_.clear();
}

void FileSystemSinkOperator::close() { discardUncommitted(); }


FileSystemTableSink::FileSystemTableSink(std::shared_ptr<const FileSystemSinkSpec> spec, std::optional<int> parallelism)
    : spec_(std::move(spec)), parallelism_(parallelism) {}

std::shared_ptr<const runtime::StreamOperatorFactory> FileSystemTableSink::operatorFactory() const {
  auto spec = spec_;
  return runtime::makeOperatorFactory([spec] { return std::make_unique<FileSystemSinkOperator>(spec); });
}

std::string FileSystemTableSink::summary() const {
  std::string out = fmt::format("filesystem path={}, format={}", spec_->path, spec_->format);
  if (!spec_->partition_keys.empty()) {
    std::vector<std::string> keys;
    for (int k : spec_->partition_keys) keys.push_back(spec_->row_type.names[static_cast<size_t>(k)]);
    out += fmt::format(", partitioned by ({})", fmt::join(keys, ", "));
  }
  return out;
}

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
  const bool known = *format == "csv" || *format == "json" || (source && *format == "debezium-json");
  if (!known)
    throw UserError(fmt::format(
        "Could not find any format factory for identifier '{}' (table '{}', option 'format'). Available format "
        "identifiers are: {}",
        *format, table.name, source ? "csv, debezium-json, json" : "csv, json"));
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

// The partition columns of a PARTITIONED BY table: types the directory names can hold, and not every
// column. Throws UserError naming the column.
void checkPartitionColumns(const table::ResolvedTable& table) {
  for (int k : table.partition_keys) {
    const auto& type = table.physical_type.types[static_cast<size_t>(k)];
    if (!isPartitionType(type))
      throw UserError(fmt::format(
          "Partition column '{}' of table '{}' has type {}; the filesystem connector keeps partition values in "
          "directory names and supports partition columns of type CHAR, VARCHAR/STRING, BOOLEAN, TINYINT, SMALLINT, "
          "INT, BIGINT and DATE.",
          table.physical_type.names[static_cast<size_t>(k)], table.name, type.toString()));
  }
  if (!table.partition_keys.empty() && table.partition_keys.size() == table.physical_type.size())
    throw UserError(fmt::format("Every column of table '{}' is a partition column; the filesystem connector needs at "
                                "least one column to write into its files.",
                                table.name));
}

[[noreturn]] void badOption(const std::string& key, const std::string& value, const std::string& table,
                            const std::string& expected) {
  throw UserError(fmt::format("Invalid value '{}' for option '{}' of table '{}': {}", value, key, table, expected));
}

// Flink's partition options (FileSystemConnectorOptions) for the sink. Throws UserError naming the option.
void partitionOptions(const table::ResolvedTable& table, FileSystemSinkSpec& spec) {
  checkPartitionColumns(table);
  spec.partition_keys = table.partition_keys;
  const auto& o = table.options;
  if (auto v = findOption(o, "partition.default-name")) {
    if (v->empty()) badOption("partition.default-name", *v, table.name, "expected a non-empty directory name.");
    spec.default_partition_name = *v;
  }
  if (auto v = findOption(o, "sink.partition-commit.trigger")) {
    if (*v == "process-time") {
      spec.trigger = static_cast<int>(PartitionCommitTrigger::kProcessTime);
    } else if (*v == "partition-time") {
      spec.trigger = static_cast<int>(PartitionCommitTrigger::kPartitionTime);
    } else {
      badOption("sink.partition-commit.trigger", *v, table.name, "expected 'process-time' or 'partition-time'.");
    }
  }
  spec.commit_delay_ms = durationOption(o, "sink.partition-commit.delay", 0, table.name);
  if (spec.commit_delay_ms < 0)
    badOption("sink.partition-commit.delay", *findOption(o, "sink.partition-commit.delay"), table.name,
              "expected a duration of 0 or more.");
  if (auto v = findOption(o, "sink.partition-commit.success-file.name")) {
    if (v->empty() || v->find('/') != std::string::npos || *v == "." || *v == "..")
      badOption("sink.partition-commit.success-file.name", *v, table.name, "expected a file name.");
    spec.success_file_name = *v;
  }
  if (auto v = findOption(o, "sink.partition-commit.policy.kind")) {
    std::stringstream kinds(*v);
    std::string kind;
    bool any = false;
    while (std::getline(kinds, kind, ',')) {
      kind.erase(0, kind.find_first_not_of(' '));
      kind.erase(kind.find_last_not_of(' ') + 1);
      any = true;
      if (kind == "success-file") {
        spec.success_file = true;
      } else if (kind == "metastore") {
        throw UserError(fmt::format(
            "Option 'sink.partition-commit.policy.kind' of table '{}': the 'metastore' policy is not supported: a "
            "filesystem table has no metastore to add partitions to (Flink's Hive tables do); use 'success-file'.",
            table.name));
      } else if (kind == "custom") {
        throw UserError(fmt::format(
            "Option 'sink.partition-commit.policy.kind' of table '{}': the 'custom' policy is not supported (it names "
            "a Java class in 'sink.partition-commit.policy.class'); use 'success-file'.",
            table.name));
      } else {
        badOption("sink.partition-commit.policy.kind", *v, table.name,
                  "expected a comma-separated list of 'metastore', 'success-file' and 'custom'.");
      }
    }
    if (!any) badOption("sink.partition-commit.policy.kind", *v, table.name, "expected 'success-file'.");
  }
  if (auto v = findOption(o, "partition.time-extractor.kind"); v && *v != "default") {
    if (*v == "custom")
      throw UserError(fmt::format("Option 'partition.time-extractor.kind' of table '{}': the 'custom' extractor is "
                                  "not supported (it names a Java class); use 'default'.",
                                  table.name));
    badOption("partition.time-extractor.kind", *v, table.name, "expected 'default' or 'custom'.");
  }
  if (auto v = findOption(o, "partition.time-extractor.timestamp-formatter"); v && *v != "yyyy-MM-dd HH:mm:ss")
    throw UserError(fmt::format("Option 'partition.time-extractor.timestamp-formatter' of table '{}': only Flink's "
                                "default 'yyyy-MM-dd HH:mm:ss' is supported, not '{}'.",
                                table.name, *v));
  if (auto v = findOption(o, "sink.partition-commit.watermark-time-zone"); v && *v != "UTC")
    throw UserError(fmt::format("Option 'sink.partition-commit.watermark-time-zone' of table '{}': only 'UTC' (the "
                                "default) is supported, not '{}'.",
                                table.name, *v));
  if (auto v = findOption(o, "partition.time-extractor.timestamp-pattern")) {
    // Every $name must be a partition column (Flink would leave it in the text, and the time never parse).
    for (size_t at = v->find('$'); at != std::string::npos; at = v->find('$', at + 1)) {
      size_t end = at + 1;
      while (end < v->size() && (std::isalnum(static_cast<unsigned char>((*v)[end])) || (*v)[end] == '_')) ++end;
      const std::string name = v->substr(at + 1, end - at - 1);
      bool found = false;
      for (int k : spec.partition_keys)
        if (spec.row_type.names[static_cast<size_t>(k)] == name) found = true;
      if (!found)
        badOption("partition.time-extractor.timestamp-pattern", *v, table.name,
                  fmt::format("'${}' is not a partition column.", name));
    }
    spec.timestamp_pattern = *v;
  }
  if (spec.partition_keys.empty()) {
    // Flink commits partitions of partitioned tables only; a success file of an unpartitioned table would be
    // silently missing.
    if (spec.success_file)
      throw UserError(fmt::format("Option 'sink.partition-commit.policy.kind' of table '{}' needs a partitioned table "
                                  "(PARTITIONED BY); an unpartitioned filesystem table commits no partitions.",
                                  table.name));
  }
}

}  // namespace

std::unique_ptr<table::ScanTableSource> FileSystemTableFactory::createSource(const table::ResolvedTable& table,
                                                                              const Configuration&) const {
  CommonFs c = commonOptions(table, true);
  checkPartitionColumns(table);
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
  spec->partition_keys = table.partition_keys;
  if (auto v = findOption(table.options, "partition.default-name")) spec->default_partition_name = *v;
  // Fails early on a column type the format cannot read.
  if (c.format == "csv") {
    CsvRowDeserializer check(spec->fileType(), spec->csv);
  } else {
    const JsonFlavor flavor = c.format == "json" ? JsonFlavor::kJson : JsonFlavor::kDebezium;
    spec->json = parseJsonFormatOptions(table.options, flavor, table.name);
    JsonRowDeserializer check(spec->fileType(), spec->json, flavor);
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
  spec->format = c.format;
  if (c.format == "json") spec->json = parseJsonFormatOptions(table.options, JsonFlavor::kJson, table.name);
  partitionOptions(table, *spec);
  // Fails early on a column type the format cannot write.
  if (c.format == "json") {
    JsonRowSerializer check(spec->dataType(), spec->json, JsonFlavor::kJson);
  } else {
    CsvRowSerializer check(spec->dataType(), spec->csv);
  }
  std::error_code ec;
  fs::file_status st = fs::status(c.absolute, ec);
  if (fs::exists(st) && !fs::is_directory(st)) throw UserError(notADirectoryMessage(*spec));
  return std::make_unique<FileSystemTableSink>(std::move(spec),
                                               parallelismOption(table.options, "sink.parallelism", table.name));
}

}  // namespace sluice::connectors
