#pragma once
/// Helpers that read and validate connector WITH options (Flink's FactoryUtil and the typed
/// ConfigOptions of each connector). Every error is a UserError naming the table and the option key.
/// Pure functions; safe from any thread.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "types/logical_type.h"

namespace sluice::connectors {

/// The WITH options of one table, keys as written.
using OptionMap = std::map<std::string, std::string>;

/// The value of `key`, or nullopt when the option is absent.
std::optional<std::string> findOption(const OptionMap& options, const std::string& key);

/// Reads a boolean option ("true"/"false", case-insensitive, as Flink's ConfigOption<Boolean>).
/// Returns `fallback` when absent. Throws UserError naming `table` and `key` on any other value.
bool boolOption(const OptionMap& options, const std::string& key, bool fallback, const std::string& table);

/// Reads a 64-bit integer option; `fallback` when absent. Throws UserError on a non-integer.
int64_t longOption(const OptionMap& options, const std::string& key, int64_t fallback, const std::string& table);

/// Reads a double option; `fallback` when absent. Throws UserError on a non-number.
double doubleOption(const OptionMap& options, const std::string& key, double fallback, const std::string& table);

/// Reads a Flink duration option ("100 ms", "1 min", "10s", a bare number = ms) in milliseconds;
/// `fallback` when absent. Throws UserError naming table and key on a bad value.
int64_t durationOption(const OptionMap& options, const std::string& key, int64_t fallback, const std::string& table);

/// Parses a parallelism option such as `scan.parallelism` or `sink.parallelism` (FLIP-367): nullopt when
/// absent, else a positive integer. Throws UserError "Could not parse value 'x' for key 'scan.parallelism' of
/// table 't': expected an integer." or, for a value <= 0, Flink's "Invalid configured parallelism 0 for
/// table 't' (option 'scan.parallelism').".
std::optional<int> parallelismOption(const OptionMap& options, const std::string& key, const std::string& table);

/// Decodes Java escapes as Flink's StringEscapeUtils.unescapeJava does for single-character format
/// options: "\\t" -> tab, "\\n", "\\r", "\\\\", "\\'", "\\\"", "\\b", "\\f", "\\0" (octal), "\\u0001".
/// Other text is returned unchanged. Throws UserError naming `key` on a malformed \\u escape.
std::string unescapeJava(const std::string& value, const std::string& key);

/// Reads an option that must be exactly one character after unescapeJava (csv.field-delimiter,
/// csv.quote-character, csv.escape-character). Throws UserError naming table and key otherwise, as
/// Flink's "Option 'csv.field-delimiter' must be a string with single character, but was: ...".
std::optional<char> charOption(const OptionMap& options, const std::string& key, const std::string& table);

/// Checks a projection handed to ScanTableSource::applyProjection: non-empty, ascending, within
/// `arity`. A bad one is a planner bug: throws InternalError naming the connector and table.
void checkProjection(const std::vector<int>& fields, size_t arity, const std::string& connector,
                     const std::string& table);
/// The fields of `row_type` at `projection` (all of it when `projection` is empty).
types::RowType projectRowType(const types::RowType& row_type, const std::vector<int>& projection);

}  // namespace sluice::connectors
