// Report section: the configuration matrix, every value each axis took.
#include <fmt/format.h>

#include "reports/sections/section.hpp"
#include "reports/sections/section_util.hpp"
#include "reports/table.hpp"

namespace attn {

namespace {

std::string join_ints(std::vector<std::int64_t> v) {
  std::sort(v.begin(), v.end());
  std::string s;
  for (const auto x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

}  // namespace

std::string matrix_section(const ReportContext& ctx) {
  const ResultSet& set = ctx.set;
  std::vector<std::string> kernels, dtypes, masks, passes;
  std::vector<std::int64_t> b, hq, hkv, sq, sk, d, dv;
  std::vector<Problem> problems;
  for (const CaseResult& c : set.cases) {
    const Problem& p = c.problem;
    add_unique(kernels, variant_label(c));
    add_unique(dtypes, std::string(to_string(p.dtype)));
    add_unique(masks, p.mask_label());
    add_unique(passes, std::string(to_string(p.pass)));
    add_unique(b, p.batch);
    add_unique(hq, p.heads_q);
    add_unique(hkv, p.heads_kv);
    add_unique(sq, p.seq_q);
    add_unique(sk, p.seq_kv);
    add_unique(d, p.head_dim);
    add_unique(dv, p.head_dim_v);
    add_unique(problems, p);
  }
  std::string out = "## Configuration matrix\n\n";
  out +=
      fmt::format("{} cases: {} distinct problems x {} kernels (not every kernel takes every problem).\n\n",
                  set.cases.size(), problems.size(), kernels.size());
  Table t({{"axis"}, {"values"}});
  t.add_row({"kernels", backticked(kernels)});
  t.add_row({"baseline", ctx.baseline.empty() ? std::string("none") : fmt::format("`{}`", ctx.baseline)});
  t.add_row({"dtype", backticked(dtypes)});
  t.add_row({"mask", backticked(masks)});
  if (passes.size() > 1 || passes.front() != "fwd") t.add_row({"pass", backticked(passes)});
  t.add_row({"batch B", join_ints(b)});
  t.add_row({"query heads Hq", join_ints(hq)});
  t.add_row({"key/value heads Hkv", join_ints(hkv)});
  t.add_row({"query length Sq", join_ints(sq)});
  t.add_row({"key length Sk", join_ints(sk)});
  t.add_row({"head dim D", join_ints(d)});
  t.add_row({"value head dim Dv", join_ints(dv)});
  return out + t.markdown() + "\n";
}

}  // namespace attn
