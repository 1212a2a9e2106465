#include "runtime/sort/external_sorter.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <system_error>

#include "common/config.h"
#include "common/error.h"

namespace sluice::runtime::sort {

namespace {

// Run file layout: magic, then blocks [u32 payload bytes][u32 crc32 of payload][payload]; a payload holds
// whole entries [u32 key bytes][u32 value bytes][key][value]; the file ends with [u32 kFooterMark][u64 entries].
constexpr char kMagic[8] = {'S', 'L', 'S', 'O', 'R', 'T', '0', '1'};
constexpr uint32_t kFooterMark = 0xFFFFFFFFu;
constexpr size_t kBlockBytes = 64 * 1024;
constexpr size_t kEntryHeader = 8;
// The arena's offsets are 32 bits: a buffer is spilled before it reaches 4 GiB.
constexpr uint64_t kMaxArenaBytes = 0xFFFFFFFFull;

uint32_t loadU32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
void storeU32(char* p, uint32_t v) { std::memcpy(p, &v, 4); }

// Bytes [from, from + 8) of `key` as a big-endian number, zero padded: equal order to memcmp.
uint64_t prefixWord(std::string_view key, size_t from) {
  unsigned char b[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  if (key.size() > from) std::memcpy(b, key.data() + from, std::min<size_t>(8, key.size() - from));
  uint64_t v = 0;
  for (unsigned char c : b) v = (v << 8) | c;
  return v;
}

std::string errnoText() { return std::strerror(errno); }

// One index entry per buffered record: the first 16 key bytes normalized, the record's arena offset (so
// ties keep arrival order) and its key length.
struct IndexEntry {
  uint64_t p0;
  uint64_t p1;
  uint32_t offset;
  uint32_t key_length;
};

// Writes one run file.
class RunWriter {
 public:
  explicit RunWriter(std::string path) : path_(std::move(path)) {
    file_ = std::fopen(path_.c_str(), "wb");
    if (file_ == nullptr) {
      throw TransientError(fmt::format("cannot create the sort spill file '{}': {}", path_, errnoText()));
    }
    write(kMagic, sizeof(kMagic));
    block_.reserve(kBlockBytes);
  }
  ~RunWriter() {
    if (file_ != nullptr) std::fclose(file_);
  }
  void add(std::string_view key, std::string_view value) {
    const size_t n = kEntryHeader + key.size() + value.size();
    if (!block_.empty() && block_.size() + n > kBlockBytes) flushBlock();
    const size_t at = block_.size();
    block_.resize(at + kEntryHeader);
    storeU32(block_.data() + at, static_cast<uint32_t>(key.size()));
    storeU32(block_.data() + at + 4, static_cast<uint32_t>(value.size()));
    block_.append(key);
    block_.append(value);
    ++entries_;
  }
  /// Writes the footer and closes the file; returns the bytes written.
  int64_t finish() {
    if (!block_.empty()) flushBlock();
    char footer[12];
    storeU32(footer, kFooterMark);
    std::memcpy(footer + 4, &entries_, 8);
    write(footer, sizeof(footer));
    const int rc = std::fclose(file_);
    file_ = nullptr;
    if (rc != 0) throw TransientError(fmt::format("cannot write the sort spill file '{}': {}", path_, errnoText()));
    return bytes_;
  }

 private:
  void flushBlock() {
    char header[8];
    storeU32(header, static_cast<uint32_t>(block_.size()));
    storeU32(header + 4, static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(block_.data()),
                                                     static_cast<uInt>(block_.size()))));
    write(header, sizeof(header));
    write(block_.data(), block_.size());
    block_.clear();
  }
  void write(const char* p, size_t n) {
    if (std::fwrite(p, 1, n, file_) != n) {
      throw TransientError(fmt::format("cannot write the sort spill file '{}': {}", path_, errnoText()));
    }
    bytes_ += static_cast<int64_t>(n);
  }

  std::string path_;
  std::FILE* file_ = nullptr;
  std::string block_;
  uint64_t entries_ = 0;
  int64_t bytes_ = 0;
};

// Reads one run file back, a block at a time; every byte is checked (the file may have been changed).
class RunReader {
 public:
  explicit RunReader(std::string path) : path_(std::move(path)) {
    file_ = std::fopen(path_.c_str(), "rb");
    if (file_ == nullptr) {
      throw TransientError(fmt::format("cannot open the sort spill file '{}': {}", path_, errnoText()));
    }
    char magic[sizeof(kMagic)];
    if (!readExactly(magic, sizeof(magic)) || std::memcmp(magic, kMagic, sizeof(kMagic)) != 0) {
      corrupt(0, "not a sort spill file (bad magic)");
    }
  }
  ~RunReader() {
    if (file_ != nullptr) std::fclose(file_);
  }
  RunReader(const RunReader&) = delete;
  RunReader& operator=(const RunReader&) = delete;

  /// The next entry, or false at the footer.
  bool next(std::string_view& key, std::string_view& value) {
    while (pos_ == block_.size()) {
      if (!readBlock()) return false;
    }
    if (block_.size() - pos_ < kEntryHeader) corrupt(block_offset_ + 8 + pos_, "entry header cut by the block end");
    const uint32_t kl = loadU32(block_.data() + pos_);
    const uint32_t vl = loadU32(block_.data() + pos_ + 4);
    if (static_cast<uint64_t>(kl) + vl > block_.size() - pos_ - kEntryHeader) {
      corrupt(block_offset_ + 8 + pos_, fmt::format("entry of {} + {} bytes runs past its block", kl, vl));
    }
    key = std::string_view(block_.data() + pos_ + kEntryHeader, kl);
    value = std::string_view(block_.data() + pos_ + kEntryHeader + kl, vl);
    pos_ += kEntryHeader + kl + vl;
    ++entries_read_;
    return true;
  }
  const std::string& path() const { return path_; }

 private:
  bool readBlock() {
    if (done_) return false;
    block_offset_ = offset_;
    char header[8];
    if (!readExactly(header, 4)) corrupt(block_offset_, "file ends without its footer (truncated)");
    const uint32_t n = loadU32(header);
    if (n == kFooterMark) {
      uint64_t count = 0;
      if (!readExactly(reinterpret_cast<char*>(&count), 8)) corrupt(block_offset_, "footer cut short (truncated)");
      if (count != entries_read_) {
        corrupt(block_offset_, fmt::format("footer counts {} records, the blocks hold {}", count, entries_read_));
      }
      done_ = true;
      return false;
    }
    if (!readExactly(header + 4, 4)) corrupt(block_offset_, "block header cut short (truncated)");
    if (n == 0 || n > (1u << 31)) corrupt(block_offset_, fmt::format("impossible block size {}", n));
    block_.resize(n);
    if (!readExactly(block_.data(), n)) corrupt(block_offset_, fmt::format("block of {} bytes cut short (truncated)", n));
    const auto crc = static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(block_.data()), n));
    if (crc != loadU32(header + 4)) corrupt(block_offset_, "block checksum mismatch");
    pos_ = 0;
    return true;
  }
  bool readExactly(char* p, size_t n) {
    const size_t got = std::fread(p, 1, n, file_);
    offset_ += got;
    if (got == n) return true;
    if (std::ferror(file_)) {
      throw TransientError(fmt::format("cannot read the sort spill file '{}': {}", path_, errnoText()));
    }
    return false;
  }
  [[noreturn]] void corrupt(uint64_t at, const std::string& what) const {
    throw InputError(fmt::format("corrupt sort spill file '{}' at offset {}: {}", path_, at, what));
  }

  std::string path_;
  std::FILE* file_ = nullptr;
  std::string block_;
  size_t pos_ = 0;
  uint64_t offset_ = 0;
  uint64_t block_offset_ = 0;
  uint64_t entries_read_ = 0;
  bool done_ = false;
};

}  // namespace

int compareSortKeys(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  if (n > 0) {
    const int c = std::memcmp(a.data(), b.data(), n);
    if (c != 0) return c;
  }
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

SorterOptions SorterOptions::fromConfiguration(const Configuration& config) {
  SorterOptions o;
  o.memory_bytes = config.get(options::kSortedInputsMemory);
  if (o.memory_bytes < 1024) {
    throw ConfigError(fmt::format("Invalid value '{}' for configuration key '{}': must be at least 1 kb",
                                  o.memory_bytes, options::kSortedInputsMemory.key()));
  }
  o.max_fan = config.get(options::kSortMaxFan);
  if (o.max_fan < 2) {
    throw ConfigError(fmt::format("Invalid value '{}' for configuration key '{}': must be at least 2", o.max_fan,
                                  options::kSortMaxFan.key()));
  }
  o.spill_dirs = options::tmpDirectories(config);
  return o;
}

struct ExternalSorter::Impl {
  const SorterOptions& options;
  std::string arena;
  std::vector<IndexEntry> index;
  bool sorted = false;
  bool finished = false;
  std::string directory;  // created at the first spill
  std::vector<std::string> runs;  // spilled runs in arrival order
  int64_t run_counter = 0;

  // Merge sources: spilled runs (readers) and, last, the memory buffer (a cursor into the sorted index).
  struct Source {
    std::unique_ptr<RunReader> reader;  // null: the memory buffer
    size_t cursor = 0;
    std::string_view key;
    std::string_view value;
  };
  std::vector<Source> sources;
  std::vector<uint32_t> heap;  // indexes into sources; min-heap by (key, source index)
  int64_t advance = -1;        // the source whose record next() returned last
  size_t memory_cursor = 0;    // memory-only iteration

  explicit Impl(const SorterOptions& o) : options(o) {}

  bool fixedFast() const { return options.fixed_key_length >= 0 && options.fixed_key_length <= 16; }

  std::string_view keyAt(uint32_t offset) const {
    return std::string_view(arena.data() + offset + kEntryHeader, loadU32(arena.data() + offset));
  }
  std::string_view valueAt(uint32_t offset) const {
    const uint32_t kl = loadU32(arena.data() + offset);
    return std::string_view(arena.data() + offset + kEntryHeader + kl, loadU32(arena.data() + offset + 4));
  }

  void sortIndex() {
    if (sorted) return;
    sorted = true;
    if (fixedFast()) {
      // The whole key is in (p0, p1): the record bytes are never read.
      std::sort(index.begin(), index.end(), [](const IndexEntry& a, const IndexEntry& b) {
        if (a.p0 != b.p0) return a.p0 < b.p0;
        if (a.p1 != b.p1) return a.p1 < b.p1;
        return a.offset < b.offset;
      });
      return;
    }
    std::sort(index.begin(), index.end(), [this](const IndexEntry& a, const IndexEntry& b) {
      if (a.p0 != b.p0) return a.p0 < b.p0;
      if (a.p1 != b.p1) return a.p1 < b.p1;
      if (a.key_length <= 16 && b.key_length <= 16) {
        // Equal padded prefixes of short keys: the shorter key is the smaller one.
        if (a.key_length != b.key_length) return a.key_length < b.key_length;
      } else {
        const int c = compareSortKeys(keyAt(a.offset), keyAt(b.offset));
        if (c != 0) return c < 0;
      }
      return a.offset < b.offset;
    });
  }

  std::string newRunPath() {
    namespace fs = std::filesystem;
    if (directory.empty()) {
      std::error_code ec;
      fs::path base;
      if (options.spill_dirs.empty()) {
        base = fs::temp_directory_path(ec);
        if (ec) {
          throw ConfigError(
              fmt::format("no system temp directory for sort spill files ({}); set 'io.tmp.dirs'", ec.message()));
        }
      } else {
        base = options.spill_dirs.front();
      }
      std::string owner;
      for (char c : options.owner) owner += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      if (owner.size() > 40) owner.resize(40);
      std::random_device random;
      const fs::path dir = base / fmt::format("sluice-sort-{}-{:08x}", owner, random());
      fs::create_directories(dir, ec);
      if (ec) {
        throw ConfigError(fmt::format("cannot create the sort spill directory '{}': {} (check 'io.tmp.dirs')",
                                      dir.string(), ec.message()));
      }
      directory = dir.string();
    }
    return fmt::format("{}/run-{}.spill", directory, run_counter++);
  }

  // Sorts the buffer and writes it as the newest run.
  int64_t spillBuffer() {
    sortIndex();
    const std::string path = newRunPath();
    runs.push_back(path);
    RunWriter w(path);
    for (const IndexEntry& e : index) w.add(keyAt(e.offset), valueAt(e.offset));
    const int64_t bytes = w.finish();
    arena.clear();
    index.clear();
    sorted = false;
    return bytes;
  }

  bool sourceLess(uint32_t a, uint32_t b) const {
    const int c = compareSortKeys(sources[a].key, sources[b].key);
    return c != 0 ? c < 0 : a < b;  // the earlier run first: arrival order across runs
  }
  bool advanceSource(Source& s) {
    if (s.reader) return s.reader->next(s.key, s.value);
    if (s.cursor >= index.size()) return false;
    const uint32_t off = index[s.cursor++].offset;
    s.key = keyAt(off);
    s.value = valueAt(off);
    return true;
  }
  void siftDown(size_t i) {
    const size_t n = heap.size();
    while (true) {
      size_t smallest = i;
      const size_t l = 2 * i + 1;
      const size_t r = l + 1;
      if (l < n && sourceLess(heap[l], heap[smallest])) smallest = l;
      if (r < n && sourceLess(heap[r], heap[smallest])) smallest = r;
      if (smallest == i) return;
      std::swap(heap[i], heap[smallest]);
      i = smallest;
    }
  }
  void startMerge(const std::vector<std::string>& paths, bool with_memory) {
    sources.clear();
    heap.clear();
    for (const std::string& p : paths) {
      Source s;
      s.reader = std::make_unique<RunReader>(p);
      sources.push_back(std::move(s));
    }
    if (with_memory) sources.emplace_back();
    for (uint32_t i = 0; i < sources.size(); ++i) {
      if (advanceSource(sources[i])) heap.push_back(i);
    }
    for (size_t i = heap.size() / 2; i-- > 0;) siftDown(i);
    advance = -1;
  }
  bool mergeNext(std::string_view& key, std::string_view& value) {
    if (advance >= 0) {
      if (advanceSource(sources[static_cast<size_t>(advance)])) {
        siftDown(0);
      } else {
        heap[0] = heap.back();
        heap.pop_back();
        if (!heap.empty()) siftDown(0);
      }
      advance = -1;
    }
    if (heap.empty()) return false;
    const Source& top = sources[heap[0]];
    key = top.key;
    value = top.value;
    advance = heap[0];
    return true;
  }

  void removeFiles() {
    sources.clear();
    heap.clear();
    advance = -1;
    runs.clear();
    if (!directory.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(directory, ec);  // best effort: a leftover file must not fail the job's end
      directory.clear();
    }
  }
};

ExternalSorter::ExternalSorter(SorterOptions options)
    : options_(std::move(options)), impl_(std::make_unique<Impl>(options_)) {
  SLUICE_CHECK(options_.memory_bytes > 0 && options_.max_fan >= 2, "sorter '{}': memory {} bytes, fan {}",
               options_.owner, options_.memory_bytes, options_.max_fan);
}

ExternalSorter::~ExternalSorter() { impl_->removeFiles(); }

int64_t ExternalSorter::memoryInUse() const {
  return static_cast<int64_t>(impl_->arena.size() + impl_->index.size() * sizeof(IndexEntry));
}

const std::string& ExternalSorter::spillDirectory() const { return impl_->directory; }

void ExternalSorter::add(std::string_view key, std::string_view value) {
  Impl& m = *impl_;
  SLUICE_CHECK(!m.finished, "sorter '{}': add after finish", options_.owner);
  SLUICE_CHECK(options_.fixed_key_length < 0 || key.size() == static_cast<size_t>(options_.fixed_key_length),
               "sorter '{}': key of {} bytes, fixed length {}", options_.owner, key.size(), options_.fixed_key_length);
  const size_t n = kEntryHeader + key.size() + value.size();
  if (!m.index.empty()) {
    const uint64_t after = m.arena.size() + n + (m.index.size() + 1) * sizeof(IndexEntry);
    if (after > static_cast<uint64_t>(options_.memory_bytes) || m.arena.size() + n > kMaxArenaBytes) {
      bytes_spilled_ += m.spillBuffer();
      ++spilled_runs_total_;
    }
  }
  SLUICE_CHECK(n <= kMaxArenaBytes, "sorter '{}': a record of {} bytes", options_.owner, n);
  const auto offset = static_cast<uint32_t>(m.arena.size());
  m.arena.resize(m.arena.size() + kEntryHeader);
  storeU32(m.arena.data() + offset, static_cast<uint32_t>(key.size()));
  storeU32(m.arena.data() + offset + 4, static_cast<uint32_t>(value.size()));
  m.arena.append(key);
  m.arena.append(value);
  m.index.push_back(IndexEntry{prefixWord(key, 0), prefixWord(key, 8), offset, static_cast<uint32_t>(key.size())});
  m.sorted = false;
  ++num_records_;
}

void ExternalSorter::finish() {
  Impl& m = *impl_;
  SLUICE_CHECK(!m.finished, "sorter '{}': finish twice", options_.owner);
  m.finished = true;
  m.sortIndex();
  m.memory_cursor = 0;
  if (m.runs.empty()) return;
  // Every run plus the memory buffer must fit one merge: spill the buffer too and merge in passes when not.
  if (m.runs.size() + 1 > static_cast<size_t>(options_.max_fan)) {
    if (!m.index.empty()) {
      bytes_spilled_ += m.spillBuffer();
      ++spilled_runs_total_;
    }
    while (m.runs.size() > static_cast<size_t>(options_.max_fan)) {
      // Merge the oldest runs into one that takes their place: arrival order across runs is kept.
      const size_t fan = static_cast<size_t>(options_.max_fan);
      std::vector<std::string> group(m.runs.begin(), m.runs.begin() + static_cast<std::ptrdiff_t>(fan));
      m.startMerge(group, false);
      const std::string path = m.newRunPath();
      RunWriter w(path);
      std::string_view k;
      std::string_view v;
      while (m.mergeNext(k, v)) w.add(k, v);
      bytes_spilled_ += w.finish();
      m.sources.clear();
      for (const std::string& p : group) {
        std::error_code ec;
        std::filesystem::remove(p, ec);
      }
      m.runs.erase(m.runs.begin(), m.runs.begin() + static_cast<std::ptrdiff_t>(fan));
      m.runs.insert(m.runs.begin(), path);
    }
  }
  m.startMerge(m.runs, !m.index.empty());
}

bool ExternalSorter::peek(std::string_view& key, std::string_view& value) {
  if (!peeked_) {
    if (!next(peeked_key_, peeked_value_)) return false;
    peeked_ = true;
  }
  key = peeked_key_;
  value = peeked_value_;
  return true;
}

bool ExternalSorter::next(std::string_view& key, std::string_view& value) {
  Impl& m = *impl_;
  SLUICE_CHECK(m.finished, "sorter '{}': next before finish", options_.owner);
  if (peeked_) {
    peeked_ = false;
    key = peeked_key_;
    value = peeked_value_;
    return true;
  }
  if (m.runs.empty()) {
    if (m.memory_cursor >= m.index.size()) return false;
    const uint32_t off = m.index[m.memory_cursor++].offset;
    key = m.keyAt(off);
    value = m.valueAt(off);
    return true;
  }
  return m.mergeNext(key, value);
}

void ExternalSorter::reset() {
  Impl& m = *impl_;
  m.removeFiles();
  m.arena.clear();
  m.index.clear();
  m.sorted = false;
  m.finished = false;
  m.memory_cursor = 0;
  num_records_ = 0;
  peeked_ = false;
}

void ExternalSorter::close() {
  reset();
  impl_->arena.shrink_to_fit();
  impl_->index.shrink_to_fit();
}

}  // namespace sluice::runtime::sort
