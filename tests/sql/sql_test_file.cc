#include "sql_test_file.h"

#include <algorithm>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace sluice::sqltest {

namespace {

bool isBlank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t'; });
}

std::string trimRight(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}

std::string trim(const std::string& s) {
  size_t b = 0;
  while (b < s.size() && (s[b] == ' ' || s[b] == '\t')) ++b;
  return trimRight(s.substr(b));
}

std::vector<std::string> splitWords(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  std::string w;
  while (in >> w) words.push_back(w);
  return words;
}

std::string joinLines(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out += '\n';
    out += lines[i];
  }
  return out;
}

// Reads lines from `i` up to a blank line, EOF, or (when `stop_at_dashes`) a "----" line, which is
// consumed; `saw_dashes` tells which one ended the block.
std::vector<std::string> readBlock(const std::vector<std::string>& lines, size_t& i, bool stop_at_dashes,
                                   bool& saw_dashes) {
  std::vector<std::string> block;
  saw_dashes = false;
  while (i < lines.size() && !isBlank(lines[i])) {
    if (stop_at_dashes && trim(lines[i]) == "----") {
      saw_dashes = true;
      ++i;
      return block;
    }
    block.push_back(lines[i]);
    ++i;
  }
  return block;
}

int parseParallelismCondition(const std::string& word, const std::string& where) {
  const std::string prefix = "parallelism=";
  if (word.compare(0, prefix.size(), prefix) != 0) {
    throw std::runtime_error(fmt::format("{}: expected 'parallelism=N', got '{}'", where, word));
  }
  try {
    return std::stoi(word.substr(prefix.size()));
  } catch (const std::exception&) {
    throw std::runtime_error(fmt::format("{}: bad parallelism in '{}'", where, word));
  }
}

}  // namespace

std::vector<Record> parseTestFile(const std::string& text, const std::string& file_name) {
  std::vector<std::string> lines;
  {
    std::string cur;
    for (char c : text) {
      if (c == '\n') {
        if (!cur.empty() && cur.back() == '\r') cur.pop_back();
        lines.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    if (!cur.empty()) lines.push_back(cur);
  }

  std::vector<Record> records;
  std::optional<int> only_p;
  std::optional<int> skip_p;
  size_t i = 0;
  while (i < lines.size()) {
    const std::string& header_line = lines[i];
    if (isBlank(header_line) || trim(header_line)[0] == '#') {
      ++i;
      continue;
    }
    const std::string where = fmt::format("{}:{}", file_name, i + 1);
    const std::vector<std::string> words = splitWords(header_line);
    Record rec;
    rec.line = static_cast<int>(i) + 1;
    ++i;
    bool dashes = false;

    if (words[0] == "onlyif" || words[0] == "skipif") {
      if (words.size() != 2) throw std::runtime_error(where + ": expected '" + words[0] + " parallelism=N'");
      (words[0] == "onlyif" ? only_p : skip_p) = parseParallelismCondition(words[1], where);
      continue;
    }
    rec.only_parallelism = only_p;
    rec.skip_parallelism = skip_p;
    only_p.reset();
    skip_p.reset();

    if (words[0] == "statement") {
      if (words.size() < 2) throw std::runtime_error(where + ": expected 'statement ok' or 'statement error'");
      if (words[1] == "ok" && words.size() == 2) {
        rec.kind = RecordKind::kStatementOk;
        rec.sql = joinLines(readBlock(lines, i, true, dashes));
        if (dashes) throw std::runtime_error(where + ": 'statement ok' takes no '----' block");
      } else if (words[1] == "error" && words.size() <= 3) {
        rec.kind = RecordKind::kStatementError;
        if (words.size() == 3) {
          int l = 0, c = 0;
          char colon = 0;
          std::istringstream in(words[2]);
          if (!(in >> l >> colon >> c) || colon != ':' || l <= 0 || c <= 0) {
            throw std::runtime_error(where + ": expected 'statement error LINE:COLUMN', got '" + words[2] + "'");
          }
          rec.error_line = l;
          rec.error_column = c;
        }
        rec.sql = joinLines(readBlock(lines, i, true, dashes));
        if (dashes) rec.message = joinLines(readBlock(lines, i, false, dashes));
      } else {
        throw std::runtime_error(where + ": unknown record '" + trim(header_line) + "'");
      }
      if (isBlank(rec.sql)) throw std::runtime_error(where + ": the statement is empty");
    } else if (words[0] == "query") {
      const bool streaming_too = words.size() == 3 && words[1] == "rows" && words[2] == "streaming";
      if (words.size() != 2 && !streaming_too)
        throw std::runtime_error(where + ": expected 'query changelog|rows|rows streaming|ordered|error'");
      if (words[1] == "changelog") {
        rec.kind = RecordKind::kQueryChangelog;
      } else if (words[1] == "rows") {
        rec.kind = RecordKind::kQueryRows;
        rec.also_streaming = streaming_too;
      } else if (words[1] == "ordered") {
        rec.kind = RecordKind::kQueryOrdered;
      } else if (words[1] == "error") {
        rec.kind = RecordKind::kQueryError;
      } else {
        throw std::runtime_error(where + ": unknown query mode '" + words[1] + "'");
      }
      rec.sql = joinLines(readBlock(lines, i, true, dashes));
      if (!dashes) throw std::runtime_error(where + ": the query has no '----' line before its result");
      if (isBlank(rec.sql)) throw std::runtime_error(where + ": the query is empty");
      std::vector<std::string> expected = readBlock(lines, i, false, dashes);
      if (rec.kind == RecordKind::kQueryError) {
        rec.message = joinLines(expected);
      } else {
        for (auto& e : expected) rec.lines.push_back(trim(e));
      }
    } else if (words[0] == "input") {
      if (words.size() != 2) throw std::runtime_error(where + ": expected 'input NAME'");
      rec.kind = RecordKind::kInput;
      rec.name = words[1];
      rec.lines = readBlock(lines, i, false, dashes);
    } else if (words[0] == "set") {
      if (words.size() < 3) throw std::runtime_error(where + ": expected 'set KEY VALUE'");
      rec.kind = RecordKind::kSet;
      rec.name = words[1];
      const std::string rest = trim(header_line);
      const size_t key_at = rest.find(words[1], 3);
      rec.sql = trim(rest.substr(key_at + words[1].size()));
    } else {
      throw std::runtime_error(where + ": unknown record '" + trim(header_line) + "'");
    }
    records.push_back(std::move(rec));
  }
  return records;
}

std::string substituteVariables(const std::string& text, const std::map<std::string, std::string>& vars) {
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t at = text.find("${", pos);
    if (at == std::string::npos) {
      out.append(text, pos, std::string::npos);
      return out;
    }
    const size_t end = text.find('}', at + 2);
    if (end == std::string::npos) throw std::runtime_error("unterminated '${' in: " + text);
    const std::string name = text.substr(at + 2, end - at - 2);
    const auto it = vars.find(name);
    if (it == vars.end()) throw std::runtime_error("unknown variable '${" + name + "}' (no 'input " + name + "' before)");
    out.append(text, pos, at - pos);
    out += it->second;
    pos = end + 1;
  }
}

bool splitChangelogLine(const std::string& line, std::string& kind, std::string& row) {
  if (line.size() < 4 || line[2] != '[') return false;
  kind = line.substr(0, 2);
  if (kind != "+I" && kind != "-U" && kind != "+U" && kind != "-D") return false;
  row = line.substr(2);
  return true;
}

std::string normalizeExpectedRow(const std::string& line) {
  std::string kind, row;
  if (splitChangelogLine(line, kind, row) && kind == "+I") return row;
  if (!line.empty() && line.front() == '[' && line.back() == ']') return line;
  return "[" + line + "]";
}

std::vector<std::string> materialize(const std::vector<std::string>& changelog, std::vector<std::string>& problems) {
  std::multiset<std::string> rows;
  for (const auto& line : changelog) {
    std::string kind, row;
    if (!splitChangelogLine(line, kind, row)) {
      problems.push_back("not a changelog line: " + line);
      continue;
    }
    if (kind == "+I" || kind == "+U") {
      rows.insert(row);
    } else {
      const auto it = rows.find(row);
      if (it == rows.end()) {
        problems.push_back(kind + " of a row that is not in the result: " + row);
      } else {
        rows.erase(it);
      }
    }
  }
  return std::vector<std::string>(rows.begin(), rows.end());
}

std::vector<std::string> sortedDifference(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

}  // namespace sluice::sqltest
