// JSON functions. Queries follow Flink's defaults (SQL/JSON paths, strict unless written 'lax'): JSON_VALUE gives the scalar at
// the path as a string (NULL ON EMPTY, NULL ON ERROR: no match, an object/array, several matches or
// invalid JSON give NULL); JSON_QUERY gives the object/array at the path as compact JSON (a path with
// a wildcard: the array of its matches; WITHOUT ARRAY WRAPPER, so a scalar is an error and NULL, unless
// WITH [CONDITIONAL | UNCONDITIONAL] ARRAY WRAPPER wraps it); JSON_EXISTS is FALSE ON ERROR. JSON_OBJECT is NULL
// ON NULL by default, JSON_ARRAY ABSENT ON NULL; numbers keep their SQL text (DECIMAL 1.50 stays 1.50),
// other non-string values become JSON strings in the print format.
#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "common/error.h"
#include "table/functions/builtins.h"
#include "types/value_format.h"

namespace sluice::table::internal {

using types::Column;
using types::LogicalType;
using types::TypeId;
using Json = nlohmann::ordered_json;

namespace {

struct PathStep {
  enum Kind { kKey, kAnyKey, kIndex, kAnyIndex } kind;
  std::string key;
  int64_t index = 0;
};

struct JsonPath {
  bool strict = false;
  bool wildcard = false;  ///< a [*] or .* step: the path is indefinite
  std::vector<PathStep> steps;
};

/// Whether `p` starts with `word` (any case) and a blank.
bool startsWithMode(std::string_view p, std::string_view word) {
  if (p.size() <= word.size() || !std::isspace(static_cast<unsigned char>(p[word.size()]))) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(p[i])) != word[i]) return false;
  }
  return true;
}

/// Parses "[lax|strict] $ steps"; false on a syntax error. Without a mode the path is strict, as Flink's
/// SqlJsonUtils reads it (so a missing member is an error, ON ERROR, not an empty result).
bool parsePath(std::string_view p, JsonPath& out) {
  auto skipWs = [&]() { while (!p.empty() && std::isspace(static_cast<unsigned char>(p[0]))) p.remove_prefix(1); };
  skipWs();
  out.strict = true;
  if (startsWithMode(p, "strict")) {
    p.remove_prefix(6);
  } else if (startsWithMode(p, "lax")) {
    out.strict = false;
    p.remove_prefix(3);
  }
  skipWs();
  if (p.empty() || p[0] != '$') return false;
  p.remove_prefix(1);
  while (!p.empty()) {
    if (p[0] == '.') {
      p.remove_prefix(1);
      if (!p.empty() && p[0] == '*') {
        out.steps.push_back({PathStep::kAnyKey, "", 0});
        out.wildcard = true;
        p.remove_prefix(1);
      } else if (!p.empty() && p[0] == '"') {
        const size_t end = p.find('"', 1);
        if (end == std::string_view::npos) return false;
        out.steps.push_back({PathStep::kKey, std::string(p.substr(1, end - 1)), 0});
        p.remove_prefix(end + 1);
      } else {
        size_t n = 0;
        while (n < p.size() && (std::isalnum(static_cast<unsigned char>(p[n])) || p[n] == '_' || p[n] == '$' ||
                                static_cast<unsigned char>(p[n]) >= 0x80))
          ++n;
        if (n == 0) return false;
        out.steps.push_back({PathStep::kKey, std::string(p.substr(0, n)), 0});
        p.remove_prefix(n);
      }
    } else if (p[0] == '[') {
      const size_t end = p.find(']');
      if (end == std::string_view::npos) return false;
      std::string_view inner = p.substr(1, end - 1);
      while (!inner.empty() && inner[0] == ' ') inner.remove_prefix(1);
      while (!inner.empty() && inner.back() == ' ') inner.remove_suffix(1);
      if (inner == "*") {
        out.steps.push_back({PathStep::kAnyIndex, "", 0});
        out.wildcard = true;
      } else {
        int64_t idx = 0;
        if (!types::parseInt64(inner, idx) || idx < 0) return false;
        out.steps.push_back({PathStep::kIndex, "", idx});
      }
      p.remove_prefix(end + 1);
    } else if (std::isspace(static_cast<unsigned char>(p[0]))) {
      p.remove_prefix(1);
    } else {
      return false;
    }
  }
  return true;
}

/// The items the path selects; false on a strict-mode structural error. In strict mode only a step whose
/// upstream path is definite (no wildcard before it) fails; after a wildcard a missing member or index is
/// skipped, as the JSON path engine under Flink's functions does ('$.a[*].c' selects the c members there are).
bool evalPath(const JsonPath& path, const Json& root, std::vector<const Json*>& out) {
  std::vector<const Json*> cur{&root}, next;
  bool definite = true;
  for (const PathStep& step : path.steps) {
    const bool fail = path.strict && definite;  // else a strict mismatch is skipped
    if (step.kind == PathStep::kAnyKey || step.kind == PathStep::kAnyIndex) definite = false;
    next.clear();
    for (const Json* j : cur) {
      switch (step.kind) {
        case PathStep::kKey: case PathStep::kAnyKey: {
          // Lax mode looks into the elements of an array for a member.
          std::vector<const Json*> objects;
          if (j->is_object()) {
            objects.push_back(j);
          } else if (j->is_array() && !path.strict) {
            for (const Json& e : *j)
              if (e.is_object()) objects.push_back(&e);
          } else if (fail) {
            return false;
          }
          for (const Json* o : objects) {
            if (step.kind == PathStep::kAnyKey) {
              for (const auto& kv : o->items()) next.push_back(&kv.value());
            } else {
              auto it = o->find(step.key);
              if (it != o->end()) next.push_back(&*it);
              else if (fail) return false;
            }
          }
          break;
        }
        case PathStep::kIndex: case PathStep::kAnyIndex: {
          if (!j->is_array()) {
            // Lax mode treats a non-array as an array of itself.
            if (fail) return false;
            if (path.strict) break;
            if (step.kind == PathStep::kAnyIndex || step.index == 0) next.push_back(j);
            break;
          }
          if (step.kind == PathStep::kAnyIndex) {
            for (const Json& e : *j) next.push_back(&e);
          } else if (step.index < static_cast<int64_t>(j->size())) {
            next.push_back(&(*j)[static_cast<size_t>(step.index)]);
          } else if (fail) {
            return false;
          }
          break;
        }
      }
    }
    cur.swap(next);
  }
  out = cur;
  return true;
}

/// JSON_QUERY's WITHOUT / WITH CONDITIONAL / WITH UNCONDITIONAL ARRAY WRAPPER (Calcite's
/// SqlJsonQueryWrapperBehavior, which Flink runs): conditional wraps whatever is not an array.
enum class Wrapper { kWithout, kConditional, kUnconditional };
Wrapper wrapperOf(const std::string& text) {
  if (text == "CONDITIONAL") return Wrapper::kConditional;
  if (text == "UNCONDITIONAL") return Wrapper::kUnconditional;
  return Wrapper::kWithout;
}

std::string scalarText(const Json& j) {
  if (j.is_string()) return j.get<std::string>();
  return j.dump();
}

/// The path argument: parsed once when constant.
class PathArg {
 public:
  explicit PathArg(const NodePtr& node) {
    if (!node->isConst()) return;
    constant_ = true;
    valid_ = parsePath(constString(*node), path_);
  }
  bool get(const RowArgs& a, JsonPath& scratch, const JsonPath*& out) const {
    if (constant_) {
      out = &path_;
      return valid_;
    }
    scratch = JsonPath{};
    out = &scratch;
    return parsePath(a.s(1), scratch);
  }

 private:
  bool constant_ = false, valid_ = false;
  JsonPath path_;
};

/// Appends the JSON form of argument k.
void appendValue(const RowArgs& a, size_t k, bool raw, std::string& out) {
  const Column& c = *a.cols[k];
  const size_t row = a.row(k);
  const LogicalType& t = c.type();
  if (t.isString()) {
    if (raw) out.append(a.s(k));
    else out += Json(std::string(a.s(k))).dump();
    return;
  }
  std::string text;
  types::formatField(c, row, text);
  if (t.isNumeric() && !(t.isApproximate() && !std::isfinite(c.getDouble(row)))) out += text;
  else if (t.id == TypeId::kBoolean) out += c.getLong(row) ? "true" : "false";
  else out += Json(text).dump();
}

RowFn jsonKernel(ScalarOp op, const std::vector<NodePtr>& args, std::vector<bool> raw) {
  switch (op) {
    case ScalarOp::kJsonValue: case ScalarOp::kJsonQuery: case ScalarOp::kJsonExists: {
      auto path = std::make_shared<PathArg>(args[1]);
      // ON EMPTY / ON ERROR behaviours: Flink's defaults unless the call carries them (args 2..5).
      const bool exists = op == ScalarOp::kJsonExists;
      std::array<std::string, 2> modes = {"NULL", exists ? "FALSE" : "NULL"};
      if (args.size() >= 6) modes = {constString(*args[2]), constString(*args[4])};
      const Wrapper wrapper = args.size() == 7 ? wrapperOf(constString(*args[6])) : Wrapper::kWithout;
      const char* name = scalarOpName(op);
      return [op, path, modes, name, exists, wrapper](const RowArgs& a, Column& out, size_t i) {
        if (!a.valid(0) || !a.valid(1)) return false;
        // Applies behaviour `which` (0 ON EMPTY, 1 ON ERROR); returns the row's validity.
        const auto behave = [&](int which, const std::string& why) {
          const std::string& m = modes[static_cast<size_t>(which)];
          if (m == "ERROR")
            throw UserError(fmt::format("{}: {} (path '{}', {} ON {})", name, why, a.s(1), m, which ? "ERROR" : "EMPTY"));
          if (m == "DEFAULT") {
            const size_t k = which ? 5 : 3;
            if (!a.valid(k)) return false;
            setString(out, i, a.s(k));
            return true;
          }
          if (m == "EMPTY ARRAY" || m == "EMPTY OBJECT") {
            setString(out, i, m == "EMPTY ARRAY" ? "[]" : "{}");
            return true;
          }
          if (m == "TRUE" || m == "FALSE") {
            out.longs()[i] = m == "TRUE";
            return true;
          }
          return false;  // NULL, UNKNOWN
        };
        JsonPath scratch;
        const JsonPath* p = nullptr;
        if (!path->get(a, scratch, p)) return behave(1, "the path is not a valid JSON path");
        const Json doc = Json::parse(a.s(0), nullptr, false);
        if (doc.is_discarded()) return behave(1, "the input is not valid JSON");
        std::vector<const Json*> found;
        if (!evalPath(*p, doc, found)) return behave(1, "the strict path does not match the document");
        if (exists) {
          out.longs()[i] = !found.empty();
          return true;
        }
        // What the path gives, as Calcite's JsonFunctions (which Flink runs) sees it: a path with a wildcard
        // selects the array of its matches (Flink's 'lax $.a[*].c' gives '["c1","c2"]', an empty array when
        // nothing matches); nothing, or a JSON null, is empty.
        const bool wildcard = p->wildcard;
        if (!wildcard && found.size() > 1) return behave(1, fmt::format("the path selects {} values", found.size()));
        if (!wildcard && (found.empty() || found[0]->is_null())) return behave(0, "the result is empty");
        Json value;
        if (wildcard) {
          value = Json::array();
          for (const Json* f : found) value.push_back(*f);
        } else {
          value = *found[0];
        }
        // A result of the wrong kind: in lax mode an empty result, in strict mode an error.
        const auto wrongKind = [&](const char* why) { return p->strict ? behave(1, why) : behave(0, why); };
        if (op == ScalarOp::kJsonValue) {
          if (value.is_structured()) return wrongKind("the value at the path is not a scalar");
          setString(out, i, scalarText(value));
          return true;
        }
        if (wrapper == Wrapper::kUnconditional || (wrapper == Wrapper::kConditional && !value.is_array())) {
          value = Json::array({std::move(value)});
        }
        if (!value.is_structured()) return wrongKind("the value at the path is not an object or array");
        setString(out, i, value.dump());
        return true;
      };
    }
    case ScalarOp::kJsonObject: case ScalarOp::kJsonArray: {
      const bool object = op == ScalarOp::kJsonObject;
      const bool absent_on_null = constString(*args[0]) == "ABSENT";
      return [object, absent_on_null, raw](const RowArgs& a, Column& out, size_t i) {
        std::string s(1, object ? '{' : '[');
        bool first = true;
        for (size_t k = 1; k < a.size(); k += object ? 2 : 1) {
          const size_t v = object ? k + 1 : k;
          if (object && !a.valid(k)) throw UserError("JSON_OBJECT: a key is NULL");
          if (!a.valid(v) && absent_on_null) continue;
          if (!first) s += ',';
          first = false;
          if (object) {
            s += Json(std::string(a.s(k))).dump();
            s += ':';
          }
          if (a.valid(v)) appendValue(a, v, raw[v], s);
          else s += "null";
        }
        s += object ? '}' : ']';
        setString(out, i, s);
        return true;
      };
    }
    default:
      throw InternalError(fmt::format("not a JSON function: {}", scalarOpName(op)));
  }
}

}  // namespace

bool isJson(ScalarOp op) {
  return static_cast<int>(op) >= static_cast<int>(ScalarOp::kJsonValue) &&
         static_cast<int>(op) <= static_cast<int>(ScalarOp::kJsonArray);
}

LogicalType inferJsonType(ScalarOp op, std::vector<ExprPtr>& args) {
  const char* name = scalarOpName(op);
  const size_t n = args.size();
  if (op == ScalarOp::kJsonObject || op == ScalarOp::kJsonArray) {
    // args[0] is the ON NULL mode written by the parser.
    if (op == ScalarOp::kJsonObject) {
      if (n % 2 != 1) throw UserError("JSON_OBJECT takes KEY ... VALUE ... pairs");
      for (size_t k = 1; k < n; k += 2) {
        if (isNullLiteral(args[k])) throw UserError("JSON_OBJECT: a key must not be NULL");
        requireString(op, args, k, "'JSON_OBJECT(KEY <STRING> VALUE <ANY>, ...)'");
      }
    }
    for (size_t k = 1; k < n; ++k)
      if (isNullLiteral(args[k])) args[k] = typedNull(LogicalType::string());
    return LogicalType::string(false);
  }
  checkArity(op, n, 2, 7);
  if (n != 2 && n != 6 && !(n == 7 && op == ScalarOp::kJsonQuery))
    throw InternalError(fmt::format("{} with {} arguments", name, n));
  const std::string forms = fmt::format("'{}(<STRING>, <STRING>)'", name);
  requireString(op, args, 0, forms);
  requireString(op, args, 1, forms);
  if (n >= 6) {
    // ON EMPTY / ON ERROR behaviours written by the parser: check that the function allows them.
    for (size_t k : {size_t{2}, size_t{4}}) {
      const std::string mode = std::get<std::string>(args[k]->literal);
      const bool on_error = k == 4;
      bool ok = mode == "NULL" || mode == "ERROR";
      if (op == ScalarOp::kJsonValue) ok = ok || mode == "DEFAULT";
      if (op == ScalarOp::kJsonQuery) ok = ok || mode == "EMPTY ARRAY" || mode == "EMPTY OBJECT";
      if (op == ScalarOp::kJsonExists)
        ok = on_error ? mode == "ERROR" || mode == "TRUE" || mode == "FALSE" || mode == "UNKNOWN" : mode == "NULL";
      if (!ok)
        throw UserError(fmt::format("{} ON {} is not allowed in {}", mode, on_error ? "ERROR" : "EMPTY", name));
      // A DEFAULT value is the function's result, so it becomes a STRING (CAST as written).
      if (isNullLiteral(args[k + 1])) args[k + 1] = typedNull(LogicalType::string());
      else if (!args[k + 1]->type.isString()) args[k + 1] = makeCast(args[k + 1], LogicalType::string());
    }
  }
  const Expr& p = *args[1];
  JsonPath parsed;
  if (p.kind == ExprKind::kLiteral && std::holds_alternative<std::string>(p.literal) &&
      !parsePath(std::get<std::string>(p.literal), parsed))
    throw UserError(fmt::format("Invalid JSON path expression '{}' in {}", std::get<std::string>(p.literal), name));
  if (op == ScalarOp::kJsonExists)
    return LogicalType::boolean(args[0]->type.nullable || args[1]->type.nullable ||
                                (n >= 6 && std::get<std::string>(args[4]->literal) == "UNKNOWN"));
  return LogicalType::string(true);
}

NodePtr makeJsonNode(ScalarOp op, const LogicalType& type, std::vector<NodePtr> args, const std::vector<bool>& raw,
                     int reg) {
  // Queries check their own NULLs (a DEFAULT value may be NULL); ERROR ON ... may throw per row.
  const bool constructor = op == ScalarOp::kJsonObject || op == ScalarOp::kJsonArray;
  bool may_throw = op == ScalarOp::kJsonObject;
  if (!constructor && args.size() >= 6) may_throw = constString(*args[2]) == "ERROR" || constString(*args[4]) == "ERROR";
  RowFn fn = jsonKernel(op, args, raw);
  return makeRowFunctionNode(type, std::move(args), false, may_throw, std::move(fn), reg);
}

}  // namespace sluice::table::internal
