// Helpers shared by the report's sections: value formats, labels, and case orderings.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "profiling/result.hpp"

namespace attn {

inline constexpr std::array kAllStatuses{Status::ok,    Status::skipped, Status::mismatch, Status::oom,
                                         Status::fault, Status::timeout, Status::error};

template <class T>
void add_unique(std::vector<T>& v, const T& x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

// `s`, or `missing` when empty.
std::string or_missing(const std::string& s, const char* missing = "not recorded");
// 1234567 -> "1.23 M", with k/M/G/T steps of 1000.
std::string si(double v);
std::string gib(std::int64_t bytes);
std::string mib(std::int64_t bytes);
// "h100/results.jsonl": the run directory names a results file better than its fixed file name.
std::string display_name(const std::filesystem::path& f);
// "fp16 causal": the (dtype, mask) regime observations group by.
std::string regime_of(const Problem& p);
// "`a`, `b`".
std::string backticked(const std::vector<std::string>& v);

// Cases of one dtype, with a timed median (`timed`, whatever their status) or not measured, grouped by
// problem (first appearance), then by kernel variant (first appearance).
std::vector<const CaseResult*> ordered(const std::vector<CaseResult>& cases, DType dtype, bool timed);

}  // namespace attn
