#pragma once
/// Partitions of the `filesystem` connector (Flink's PartitionPathUtils, DefaultPartTimeExtractor and the
/// partition commit options of FileSystemConnectorOptions). A PARTITIONED BY table keeps its partition
/// values in directory names, `<path>/k1=v1/k2=v2/`, in the declared order; the files hold the other
/// columns. Pure functions of their arguments; safe from any thread.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "types/logical_type.h"
#include "types/row_batch.h"

namespace sluice::connectors {

/// Flink's PartitionPathUtils#escapePathName: each byte below 0x20, 0x7F and each of `"#%'*/:=?\{}[]^` as
/// `%XX` (upper-case hex); every other byte (UTF-8 included) unchanged. "00:00" -> "00%3A00".
std::string escapePathName(std::string_view name);

/// Flink's unescapePathName: "%XX" (two hex digits) -> that byte; anything else unchanged.
std::string unescapePathName(std::string_view name);

/// Flink's default `partition.default-name`: the directory name of a NULL or empty partition value.
inline constexpr const char* kDefaultPartitionName = "__DEFAULT_PARTITION__";

/// True for the types a partition column may have: the values become directory names and are read back
/// from them (Flink's PartitionPathUtils#convertStringToInternalValue): CHAR, VARCHAR/STRING, BOOLEAN,
/// TINYINT, SMALLINT, INT, BIGINT, DATE.
bool isPartitionType(const types::LogicalType& type);

/// The text of row `row` of `column` (a partition type) as Flink's partition computer writes it: strings
/// as they are, BOOLEAN "true"/"false", integers in decimal, DATE "yyyy-MM-dd". nullopt for NULL.
std::optional<std::string> partitionValueText(const types::Column& column, size_t row);

/// Appends the partition value `text` (unescaped; nullopt for NULL) to `column` (a partition type) as
/// Flink's convertStringToInternalValue reads it. Returns false when the text does not convert (the caller
/// names the file).
bool appendPartitionValue(const std::optional<std::string>& text, types::Column& column);

/// The partition directory of row `row`: "k1=v1/k2=v2" (escaped), NULL or empty values as `default_name`.
std::string partitionPath(const types::RowBatch& batch, size_t row, const std::vector<int>& keys,
                          const types::RowType& row_type, const std::string& default_name);

/// The (unescaped) values of the `k=v` directories of `relative_path` (a file's path relative to the
/// table's directory; the file name itself is not looked at), by key.
std::vector<std::pair<std::string, std::string>> partitionSpecOf(std::string_view relative_path);

/// `sink.partition-commit.trigger`.
enum class PartitionCommitTrigger {
  kProcessTime,    ///< `process-time`: commit once processing time passes the partition's creation + delay
  kPartitionTime,  ///< `partition-time`: commit once the watermark passes the partition's time + delay
};

/// Flink's DefaultPartTimeExtractor: the partition's time in ms since the epoch, read as UTC (the default
/// `sink.partition-commit.watermark-time-zone`). `pattern` (`partition.time-extractor.timestamp-pattern`)
/// has `$key` for partition values, e.g. "$dt $hm:00"; empty = the first key's value. The result must read
/// as "yyyy-M-d" or "yyyy-M-d H:m:s[.fraction]" (Flink's default formatter, 'yyyy-MM-dd HH:mm:ss').
/// nullopt when it does not.
std::optional<int64_t> extractPartitionTime(const std::string& pattern,
                                            const std::vector<std::pair<std::string, std::string>>& spec);

}  // namespace sluice::connectors
