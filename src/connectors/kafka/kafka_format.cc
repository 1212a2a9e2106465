#include "connectors/kafka/kafka_format.h"

#include <fmt/format.h>

#include "common/error.h"

namespace sluice::connectors::kafka {

namespace {

// The options under `prefix` with the prefix removed ("value.json.x" -> "json.x").
OptionMap stripPrefix(const OptionMap& options, const std::string& prefix) {
  if (prefix.empty()) return options;
  OptionMap out;
  for (const auto& [k, v] : options)
    if (k.size() > prefix.size() && k.compare(0, prefix.size(), prefix) == 0) out[k.substr(prefix.size())] = v;
  return out;
}

// The decoders name an empty place: drop that prefix ("<where>: " with where = "").
std::string stripWhere(const std::string& msg, const std::string& prefix) {
  return msg.rfind(prefix, 0) == 0 ? msg.substr(prefix.size()) : msg;
}

void checkRaw(const types::RowType& row_type, const char* what) {
  if (row_type.size() != 1 ||
      (row_type.types[0].id != types::TypeId::kVarchar && row_type.types[0].id != types::TypeId::kChar))
    throw UserError(fmt::format("The 'raw' format {} exactly one STRING column, but the row type is {}", what,
                                row_type.toString()));
}

class CsvDecoder final : public FormatDecoder {
 public:
  CsvDecoder(const types::RowType& t, const CsvFormatOptions& o) : d_(t, o) {}
  size_t decode(const std::string_view* message, types::RowBatch& out) override {
    if (message == nullptr) return 0;  // Flink's csv returns null for a null message: no row
    const size_t before = out.numRows();
    try {
      d_.parseLine(*message, out, "", 0);
    } catch (const InputError& e) {
      throw InputError(stripWhere(e.what(), ":0: "));
    }
    return out.numRows() - before;
  }
  int64_t parseErrors() const override { return d_.parseErrors(); }

 private:
  CsvRowDeserializer d_;
};

class JsonDecoder final : public FormatDecoder {
 public:
  JsonDecoder(const types::RowType& t, const JsonFormatOptions& o, JsonFlavor f) : d_(t, o, f) {}
  size_t decode(const std::string_view* message, types::RowBatch& out) override {
    if (message == nullptr) return 0;
    try {
      return d_.deserialize(*message, out, "");
    } catch (const InputError& e) {
      throw InputError(stripWhere(e.what(), ": "));
    }
  }
  int64_t parseErrors() const override { return d_.parseErrors(); }

 private:
  JsonRowDeserializer d_;
};

class RawDecoder final : public FormatDecoder {
 public:
  size_t decode(const std::string_view* message, types::RowBatch& out) override {
    if (message == nullptr) {
      out.column(0).appendNull();
    } else {
      out.column(0).appendString(*message);
    }
    out.kinds().push_back(types::RowKind::kInsert);
    return 1;
  }
  int64_t parseErrors() const override { return 0; }
};

class CsvEncoder final : public FormatEncoder {
 public:
  CsvEncoder(const types::RowType& t, const CsvFormatOptions& o) : s_(t, o) {}
  bool encode(const types::RowBatch& batch, size_t row, std::string& out) override {
    out.clear();
    s_.appendRow(batch, row, out);
    if (!out.empty() && out.back() == '\n') out.pop_back();  // a record is one line without its terminator
    return true;
  }

 private:
  CsvRowSerializer s_;
};

class JsonEncoder final : public FormatEncoder {
 public:
  JsonEncoder(const types::RowType& t, const JsonFormatOptions& o, JsonFlavor f) : s_(t, o, f) {}
  bool encode(const types::RowBatch& batch, size_t row, std::string& out) override {
    out.clear();
    s_.serialize(batch, row, out);
    return true;
  }

 private:
  JsonRowSerializer s_;
};

class RawEncoder final : public FormatEncoder {
 public:
  bool encode(const types::RowBatch& batch, size_t row, std::string& out) override {
    out.clear();
    if (batch.column(0).isNull(row)) return false;
    out.assign(batch.column(0).getString(row));
    return true;
  }
};

}  // namespace

KafkaFormat parseKafkaFormat(const OptionMap& options, const std::string& format_key, const std::string& option_prefix,
                             const std::string& table) {
  auto name = findOption(options, format_key);
  if (!name) throw UserError(fmt::format("Could not find required option '{}' for table '{}'.", format_key, table));
  KafkaFormat f;
  f.name = *name;
  const OptionMap own = stripPrefix(options, option_prefix);
  if (f.name == "csv") {
    f.csv = parseCsvFormatOptions(own, table);
  } else if (f.name == "json") {
    f.json = parseJsonFormatOptions(own, JsonFlavor::kJson, table);
  } else if (f.name == "debezium-json") {
    f.json = parseJsonFormatOptions(own, JsonFlavor::kDebezium, table);
  } else if (f.name != "raw") {
    throw UserError(fmt::format("Could not find any format factory for identifier '{}' (table '{}', option '{}'). "
                                "Available format identifiers are: {}",
                                f.name, table, format_key, kKafkaFormats));
  }
  return f;
}

std::set<std::string> kafkaFormatOptionKeys(const std::string& option_prefix) {
  std::set<std::string> out;
  for (const auto& k : csvFormatOptionKeys()) out.insert(option_prefix + k);
  for (const auto& k : jsonFormatOptionKeys()) out.insert(option_prefix + k);
  for (const char* k : {"raw.charset", "raw.endianness"}) out.insert(option_prefix + k);
  return out;
}

std::unique_ptr<FormatDecoder> FormatDecoder::create(const KafkaFormat& format, const types::RowType& row_type) {
  if (format.name == "csv") return std::make_unique<CsvDecoder>(row_type, format.csv);
  if (format.name == "json") return std::make_unique<JsonDecoder>(row_type, format.json, JsonFlavor::kJson);
  if (format.name == "debezium-json")
    return std::make_unique<JsonDecoder>(row_type, format.json, JsonFlavor::kDebezium);
  checkRaw(row_type, "reads");
  return std::make_unique<RawDecoder>();
}

std::unique_ptr<FormatEncoder> FormatEncoder::create(const KafkaFormat& format, const types::RowType& row_type) {
  if (format.name == "csv") return std::make_unique<CsvEncoder>(row_type, format.csv);
  if (format.name == "json") return std::make_unique<JsonEncoder>(row_type, format.json, JsonFlavor::kJson);
  if (format.name == "debezium-json")
    return std::make_unique<JsonEncoder>(row_type, format.json, JsonFlavor::kDebezium);
  checkRaw(row_type, "writes");
  return std::make_unique<RawEncoder>();
}

}  // namespace sluice::connectors::kafka
