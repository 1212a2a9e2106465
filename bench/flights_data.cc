#include "flights_data.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <string_view>

namespace sluice::bench {
namespace {

constexpr int kDaysInMonth2015[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

// Day of year (1-based) of 2015 -> month (1..12) and day of month.
void monthDay(int day_of_year, int& month, int& day) {
  month = 1;
  while (month <= 12 && day_of_year > kDaysInMonth2015[month - 1]) {
    day_of_year -= kDaysInMonth2015[month - 1];
    ++month;
  }
  if (month > 12) throw std::runtime_error("day of year outside 2015");
  day = day_of_year;
}

// Splits off the next comma-separated field of `line` starting at `pos`.
std::string_view nextField(std::string_view line, size_t& pos) {
  size_t comma = line.find(',', pos);
  if (comma == std::string_view::npos) throw std::runtime_error("flights row with fewer than 5 fields");
  std::string_view field = line.substr(pos, comma - pos);
  pos = comma + 1;
  return field;
}

}  // namespace

std::string readWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::string data(static_cast<size_t>(in.tellg()), '\0');
  in.seekg(0);
  if (!in.read(data.data(), static_cast<std::streamsize>(data.size()))) throw std::runtime_error("cannot read " + path);
  return data;
}

MappedFile::MappedFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) throw std::runtime_error("cannot open " + path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot stat " + path);
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      throw std::runtime_error("cannot map " + path);
    }
    ::madvise(p, size_, MADV_SEQUENTIAL);
    data_ = static_cast<const char*>(p);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
}

int64_t writeRepeatedFlights(const std::string& source_path, const std::string& target_path, int copies) {
  const std::string data = readWholeFile(source_path);
  std::ofstream out(target_path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + target_path);
  std::string buffer;
  buffer.reserve(data.size() + data.size() / 8);
  int64_t rows = 0;
  for (int k = 0; k < copies; ++k) {
    buffer.clear();
    size_t start = 0;
    while (start < data.size()) {
      size_t end = data.find('\n', start);
      if (end == std::string::npos) end = data.size();
      std::string_view line(data.data() + start, end - start);
      start = end + 1;
      if (line.empty()) continue;
      size_t pos = 0;
      std::string_view year = nextField(line, pos);
      std::string_view month = nextField(line, pos);
      std::string_view day = nextField(line, pos);
      std::string_view dow = nextField(line, pos);
      if (year != "2015" || month != "1" || day.size() != 1 || day[0] < '1' || day[0] > '4' || dow.size() != 1)
        throw std::runtime_error("unexpected date in flights row: " + std::string(line.substr(0, 20)));
      int new_month = 0, new_day = 0;
      monthDay(day[0] - '0' + 4 * k, new_month, new_day);
      const int new_dow = (dow[0] - '1' + 4 * k) % 7 + 1;
      buffer += "2015,";
      buffer += std::to_string(new_month);
      buffer += ',';
      buffer += std::to_string(new_day);
      buffer += ',';
      buffer += static_cast<char>('0' + new_dow);
      buffer += ',';
      buffer.append(line.substr(pos));
      buffer += '\n';
      ++rows;
    }
    out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  }
  out.close();
  if (!out) throw std::runtime_error("error writing " + target_path);
  return rows;
}

}  // namespace sluice::bench
