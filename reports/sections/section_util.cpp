// Helpers shared by the report's sections (section_util.hpp).
#include "reports/sections/section_util.hpp"

#include <fmt/format.h>

#include <cmath>

#include "reports/case_query.hpp"
#include "reports/text_format.hpp"

namespace attn {

std::string or_missing(const std::string& s, const char* missing) {
  return s.empty() ? std::string(missing) : s;
}

std::string si(double v) {
  if (!std::isfinite(v)) return format_fixed4(v);
  static constexpr std::array<const char*, 5> kUnit{"", " k", " M", " G", " T"};
  std::size_t i = 0;
  while (std::fabs(v) >= 999.5 && i + 1 < kUnit.size()) v /= 1000.0, ++i;
  return format_fixed4(v) + kUnit[i];
}

std::string gib(std::int64_t bytes) {
  return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1u << 30));
}
std::string mib(std::int64_t bytes) {
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1u << 20));
}

std::string display_name(const std::filesystem::path& f) {
  if (f.filename() == "results.jsonl" && f.has_parent_path() && !f.parent_path().filename().empty())
    return (f.parent_path().filename() / f.filename()).string();
  return f.filename().string();
}

std::string regime_of(const Problem& p) { return std::string(to_string(p.dtype)) + " " + p.mask_label(); }

std::string backticked(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "`" : ", `") + x + "`";
  return s;
}

std::vector<const CaseResult*> ordered(const std::vector<CaseResult>& cases, DType dtype, bool timed) {
  std::vector<Problem> problems;
  std::vector<std::string> kernels;
  std::vector<const CaseResult*> out;
  for (const CaseResult& c : cases) {
    add_unique(problems, c.problem);
    add_unique(kernels, variant_label(c));
    if (c.problem.dtype == dtype && (timed ? timed_median_ms(c).has_value() : !is_measured(c)))
      out.push_back(&c);
  }
  auto rank = [](const auto& v, const auto& x) { return std::find(v.begin(), v.end(), x) - v.begin(); };
  std::stable_sort(out.begin(), out.end(), [&](const CaseResult* x, const CaseResult* y) {
    const auto px = rank(problems, x->problem), py = rank(problems, y->problem);
    if (px != py) return px < py;
    return rank(kernels, variant_label(*x)) < rank(kernels, variant_label(*y));
  });
  return out;
}

}  // namespace attn
