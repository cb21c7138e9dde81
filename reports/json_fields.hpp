// Typed access to JSON fields for the record codecs (result_json.cpp): readers that name the
// field's path ("case.timing.median_ms") in every error, and the writer of doubles that keeps
// non-finite values as strings ("nan", "inf", "-inf").
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace attn::json_fields {

using nlohmann::json;

// ---- writing
json number(double v);
void put_opt(json& j, const char* key, const std::optional<double>& v);
void put_opt(json& j, const char* key, const std::optional<std::int64_t>& v);

// ---- reading: each throws ResultsFormatError naming `path`
[[noreturn]] void fail(const std::string& path, std::string_view what);
std::string child(const std::string& path, std::string_view key);
std::string type_of(const json& v);
// The member `key` of object `obj`, or nullptr when absent or null.
const json* find(const json& obj, std::string_view key);
const json& require_object(const json& v, const std::string& path);
double as_double(const json& v, const std::string& path);
std::int64_t as_int64(const json& v, const std::string& path);
int as_int(const json& v, const std::string& path);
bool as_bool(const json& v, const std::string& path);
std::string as_string(const json& v, const std::string& path);

// Field readers: `get_*` keep `out` when the key is absent; `req` throws; `opt_*` return nullopt.
void get_double(const json& obj, std::string_view key, const std::string& path, double& out);
void get_int(const json& obj, std::string_view key, const std::string& path, int& out);
void get_int64(const json& obj, std::string_view key, const std::string& path, std::int64_t& out);
void get_bool(const json& obj, std::string_view key, const std::string& path, bool& out);
void get_string(const json& obj, std::string_view key, const std::string& path, std::string& out);
const json& req(const json& obj, std::string_view key, const std::string& path);
std::optional<double> opt_double(const json& obj, std::string_view key, const std::string& path);
std::optional<std::int64_t> opt_int64(const json& obj, std::string_view key, const std::string& path);

}  // namespace attn::json_fields
