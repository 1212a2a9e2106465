#include "cli/result_view.h"

#include <algorithm>
#include <chrono>
#include <list>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "table/functions/time_zone.h"
#include "types/logical_type.h"
#include "types/row_batch.h"
#include "types/value_format.h"

namespace sluice::cli {

const ConfigOption<int32_t> kMaxColumnWidth("sql-client.display.max-column-width", ConfigType::kInt, "30",
                                            "Widest column `sluice sql` shows; longer values are cut with '...'",
                                            int64_t{4});

namespace {

using types::LogicalType;
using types::TypeId;

constexpr std::string_view kNull = "<NULL>";
constexpr std::string_view kCut = "...";

/// Decodes the UTF-8 code point at `s[i]` and advances `i` (a malformed byte counts as one point).
uint32_t nextCodePoint(std::string_view s, size_t& i) {
  const auto b = static_cast<unsigned char>(s[i]);
  size_t len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 1;
  if (i + len > s.size()) len = 1;
  uint32_t cp = len == 1 ? b : b & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += len;
  return cp;
}

/// East Asian Wide and Fullwidth code points take two columns (Unicode TR 11), as Flink's tableau counts.
bool isFullWidth(uint32_t cp) {
  return (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF && cp != 0x303F) ||
         (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFE30 && cp <= 0xFE4F) ||
         (cp >= 0xFF00 && cp <= 0xFF60) || (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1F64F) ||
         (cp >= 0x20000 && cp <= 0x3FFFD);
}

int displayWidth(std::string_view s) {
  int w = 0;
  for (size_t i = 0; i < s.size();) w += isFullWidth(nextCodePoint(s, i)) ? 2 : 1;
  return w;
}

/// "| v1 | v2 |": each value right-aligned in its width, cut to width - 3 and "..." when longer.
std::string tableauRow(const std::vector<std::string>& cells, const std::vector<int>& widths) {
  std::string line = "|";
  for (size_t c = 0; c < cells.size(); ++c) {
    line += ' ';
    const std::string& v = cells[c];
    const int w = displayWidth(v);
    if (w <= widths[c]) {
      line.append(static_cast<size_t>(widths[c] - w), ' ');
      line += v;
    } else {
      const int target = widths[c] - static_cast<int>(kCut.size());
      size_t i = 0, end = 0;
      int passed = 0;
      while (i < v.size()) {
        const int cw = isFullWidth(nextCodePoint(v, i)) ? 2 : 1;
        if (passed + cw > target) break;
        passed += cw;
        end = i;
      }
      line.append(static_cast<size_t>(std::max(0, target - passed)), ' ');
      line.append(v, 0, end);
      line += kCut;
    }
    line += " |";
  }
  return line + "\n";
}

std::string borderLine(const std::vector<int>& widths) {
  std::string line = "+";
  for (int w : widths) line.append(static_cast<size_t>(w) + 2, '-') += '+';
  return line + "\n";
}

/// PrintUtils.columnWidthsByType (Flink's tableau view of a streaming result).
int widthOfType(const LogicalType& t, int max_column_width) {
  switch (t.id) {
    case TypeId::kTinyInt: return 4;
    case TypeId::kSmallInt: return 6;
    case TypeId::kInt: return 11;
    case TypeId::kBigInt: return 20;
    case TypeId::kDecimal: return t.precision + 2;
    case TypeId::kBoolean: return 5;
    case TypeId::kDate: return 10;
    case TypeId::kTime: return t.precision == 0 ? 8 : t.precision + 9;
    case TypeId::kTimestamp:
    case TypeId::kTimestampLtz:
      return t.precision == 0 ? 19 : t.precision <= 3 ? 23 : t.precision <= 6 ? 26 : 29;
    default: return max_column_width;
  }
}

std::vector<std::string> cellsOf(const types::RowBatch& batch, size_t row, const table::ZoneRules& zone) {
  std::vector<std::string> cells(batch.numColumns());
  for (size_t c = 0; c < batch.numColumns(); ++c) {
    const types::Column& col = batch.column(c);
    if (col.isNull(row)) cells[c] = kNull;
    else if (col.type().id == TypeId::kTimestampLtz)
      types::formatTimestampSql(zone.toLocal(col.getLong(row)), col.type().precision, cells[c]);
    else types::formatSqlString(col, row, cells[c]);
  }
  return cells;
}

std::string rowTerm(int64_t n) { return n > 1 ? "rows" : "row"; }

class ViewBase : public ResultView {
 protected:
  explicit ViewBase(std::FILE* out, const std::string& zone = "UTC") : out_(out), zone_(table::ZoneRules::resolve(zone)) {}
  std::vector<std::string> cells(const types::RowBatch& batch, size_t row) const { return cellsOf(batch, row, zone_); }
  void write(const std::string& text) {
    std::fwrite(text.data(), 1, text.size(), out_);
    std::fflush(out_);
  }
  std::FILE* out_;
  table::ZoneRules zone_;
  std::mutex mu_;
};

class TableauView final : public ViewBase {
 public:
  TableauView(std::FILE* out, int max_column_width, const std::string& zone)
      : ViewBase(out, zone), max_width_(max_column_width) {}
  void begin(const types::RowType& schema) override {
    std::lock_guard<std::mutex> lock(mu_);
    widths_ = {2};
    std::vector<std::string> names = {"op"};
    for (size_t i = 0; i < schema.size(); ++i) {
      const int by_type = std::max(widthOfType(schema.types[i], max_width_), static_cast<int>(kNull.size()));
      widths_.push_back(std::max(displayWidth(schema.names[i]), by_type));
      names.push_back(schema.names[i]);
    }
    border_ = borderLine(widths_);
    rows_ = 0;
    write(border_ + tableauRow(names, widths_) + border_);
  }
  void add(const types::RowBatch& batch) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::string text;
    for (size_t r = 0; r < batch.numRows(); ++r) {
      std::vector<std::string> cells = this->cells(batch, r);
      cells.insert(cells.begin(), std::string(types::shortString(batch.kind(r))));
      text += tableauRow(cells, widths_);
    }
    rows_ += static_cast<int64_t>(batch.numRows());
    write(text);
  }
  void end(bool cancelled) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled) {
      write(fmt::format("Query terminated, received a total of {} {}\n", rows_, rowTerm(rows_)));
      return;
    }
    write(fmt::format("{}Received a total of {} {}\n", rows_ > 0 ? border_ : "", rows_, rowTerm(rows_)));
  }

 private:
  int max_width_;
  std::vector<int> widths_;
  std::string border_;
  int64_t rows_ = 0;
};

class ChangelogView final : public ViewBase {
 public:
  explicit ChangelogView(std::FILE* out) : ViewBase(out) {}
  void begin(const types::RowType&) override {}
  void add(const types::RowBatch& batch) override {
    std::lock_guard<std::mutex> lock(mu_);
    std::string text;
    for (size_t r = 0; r < batch.numRows(); ++r) {
      types::formatRow(batch, r, text);
      text += '\n';
    }
    write(text);
  }
  void end(bool cancelled) override {
    if (cancelled) write("Query terminated.\n");
  }
};

class TableView final : public ViewBase {
 public:
  TableView(std::FILE* out, int max_column_width, int64_t max_rows, bool redraw, const std::string& zone)
      : ViewBase(out, zone), max_width_(max_column_width), max_rows_(max_rows), redraw_(redraw) {}
  void begin(const types::RowType& schema) override {
    std::lock_guard<std::mutex> lock(mu_);
    names_ = schema.names;
    rows_.clear();
    index_.clear();
    shown_lines_ = 0;
  }
  void add(const types::RowBatch& batch) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t r = 0; r < batch.numRows(); ++r) {
      std::vector<std::string> cells = this->cells(batch, r);
      std::string key;
      for (const std::string& c : cells) (key += c) += '\x1f';
      if (types::isAccumulate(batch.kind(r))) {
        rows_.push_back(std::move(cells));
        index_[key].push_back(std::prev(rows_.end()));
        if (static_cast<int64_t>(rows_.size()) > max_rows_) {  // the oldest row goes first
          std::string front_key;
          for (const std::string& c : rows_.front()) (front_key += c) += '\x1f';
          auto& at = index_[front_key];
          at.erase(at.begin());
          if (at.empty()) index_.erase(front_key);
          rows_.pop_front();
        }
      } else {  // retracts the latest equal row
        auto it = index_.find(key);
        if (it == index_.end()) continue;
        rows_.erase(it->second.back());
        it->second.pop_back();
        if (it->second.empty()) index_.erase(it);
      }
    }
    // Redrawn at most every 200 ms: a large result must not spend its time repainting.
    const auto now = std::chrono::steady_clock::now();
    if (redraw_ && now - last_draw_ >= std::chrono::milliseconds(200)) {
      last_draw_ = now;
      show();
    }
  }
  void end(bool) override {
    std::lock_guard<std::mutex> lock(mu_);
    show();
  }

 private:
  /// PrintUtils.printAsTableauForm of a batch result: widths from the names and values, at most the
  /// max column width.
  void show() {
    std::string text;
    if (redraw_ && shown_lines_ > 0) text += fmt::format("\033[{}A\033[J", shown_lines_);
    size_t lines = 0;
    if (rows_.empty()) {
      text += "Empty set\n";
      lines = 1;
    } else {
      std::vector<int> widths;
      for (const std::string& n : names_) widths.push_back(std::min(displayWidth(n), max_width_));
      for (const auto& row : rows_)
        for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], std::min(displayWidth(row[c]), max_width_));
      const std::string border = borderLine(widths);
      text += border + tableauRow(names_, widths) + border;
      for (const auto& row : rows_) text += tableauRow(row, widths);
      text += border + fmt::format("{} {} in set\n", rows_.size(), rowTerm(static_cast<int64_t>(rows_.size())));
      lines = rows_.size() + 5;
    }
    shown_lines_ = lines;
    write(text);
  }

  int max_width_;
  int64_t max_rows_;
  bool redraw_;
  std::vector<std::string> names_;
  using Rows = std::list<std::vector<std::string>>;
  Rows rows_;
  std::unordered_map<std::string, std::vector<Rows::iterator>> index_;  ///< equal rows, oldest first
  size_t shown_lines_ = 0;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace

std::unique_ptr<ResultView> makeResultView(ResultMode mode, std::FILE* out, int max_column_width, int64_t max_rows,
                                           bool redraw, const std::string& time_zone) {
  switch (mode) {
    case ResultMode::kTableau: return std::make_unique<TableauView>(out, max_column_width, time_zone);
    case ResultMode::kChangelog: return std::make_unique<ChangelogView>(out);
    case ResultMode::kTable: break;
  }
  return std::make_unique<TableView>(out, max_column_width, max_rows, redraw, time_zone);
}

void printTableResult(std::FILE* out, const types::RowType& schema, const types::RowBatch& rows, int max_column_width) {
  auto view = makeResultView(ResultMode::kTable, out, max_column_width, std::max<int64_t>(1, static_cast<int64_t>(rows.numRows())), false);
  view->begin(schema);
  view->add(rows);
  view->end(false);
}

}  // namespace sluice::cli
