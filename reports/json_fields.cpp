// The path-named JSON field readers and the number writer of json_fields.hpp.
#include "reports/json_fields.hpp"

#include <cmath>
#include <limits>

#include "reports/result_json.hpp"

namespace attn::json_fields {

// ---- writing --------------------------------------------------------------------------------

json number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

void put_opt(json& j, const char* key, const std::optional<double>& v) {
  if (v) j[key] = number(*v);
}

void put_opt(json& j, const char* key, const std::optional<std::int64_t>& v) {
  if (v) j[key] = *v;
}

// ---- reading --------------------------------------------------------------------------------

[[noreturn]] void fail(const std::string& path, std::string_view what) {
  throw ResultsFormatError(path + ": " + std::string(what));
}

std::string child(const std::string& path, std::string_view key) { return path + "." + std::string(key); }

std::string type_of(const json& v) { return v.type_name(); }

// The member `key` of object `obj`, or nullptr when absent or null.
const json* find(const json& obj, std::string_view key) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

const json& require_object(const json& v, const std::string& path) {
  if (!v.is_object()) fail(path, "expected an object, got " + type_of(v));
  return v;
}

double as_double(const json& v, const std::string& path) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    fail(path, "expected a number or \"nan\"/\"inf\"/\"-inf\", got \"" + s + "\"");
  }
  fail(path, "expected a number, got " + type_of(v));
}

std::int64_t as_int64(const json& v, const std::string& path) {
  if (v.is_number_integer() && !v.is_number_unsigned()) return v.get<std::int64_t>();
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail(path, "integer " + std::to_string(u) + " does not fit in int64");
    return static_cast<std::int64_t>(u);
  }
  if (v.is_number_float()) {
    // Other tools may write 4096.0; accept integral values only, and only where exact.
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) return static_cast<std::int64_t>(d);
    fail(path, "expected an integer, got " + v.dump());
  }
  fail(path, "expected an integer, got " + type_of(v));
}

int as_int(const json& v, const std::string& path) {
  const std::int64_t x = as_int64(v, path);
  if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max())
    fail(path, "integer " + std::to_string(x) + " is out of range");
  return static_cast<int>(x);
}

bool as_bool(const json& v, const std::string& path) {
  if (!v.is_boolean()) fail(path, "expected true or false, got " + type_of(v));
  return v.get<bool>();
}

std::string as_string(const json& v, const std::string& path) {
  if (!v.is_string()) fail(path, "expected a string, got " + type_of(v));
  return v.get<std::string>();
}

// Field readers: `get_*` keep `out` when the key is absent; `req_*` throw; `opt_*` return nullopt.
void get_double(const json& obj, std::string_view key, const std::string& path, double& out) {
  if (const json* v = find(obj, key)) out = as_double(*v, child(path, key));
}
void get_int(const json& obj, std::string_view key, const std::string& path, int& out) {
  if (const json* v = find(obj, key)) out = as_int(*v, child(path, key));
}
void get_int64(const json& obj, std::string_view key, const std::string& path, std::int64_t& out) {
  if (const json* v = find(obj, key)) out = as_int64(*v, child(path, key));
}
void get_bool(const json& obj, std::string_view key, const std::string& path, bool& out) {
  if (const json* v = find(obj, key)) out = as_bool(*v, child(path, key));
}
void get_string(const json& obj, std::string_view key, const std::string& path, std::string& out) {
  if (const json* v = find(obj, key)) out = as_string(*v, child(path, key));
}

const json& req(const json& obj, std::string_view key, const std::string& path) {
  const json* v = find(obj, key);
  if (v == nullptr) fail(child(path, key), "required field is missing");
  return *v;
}

std::optional<double> opt_double(const json& obj, std::string_view key, const std::string& path) {
  if (const json* v = find(obj, key)) return as_double(*v, child(path, key));
  return std::nullopt;
}
std::optional<std::int64_t> opt_int64(const json& obj, std::string_view key, const std::string& path) {
  if (const json* v = find(obj, key)) return as_int64(*v, child(path, key));
  return std::nullopt;
}

}  // namespace attn::json_fields
