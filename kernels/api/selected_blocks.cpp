// The selected branch's deterministic block draw and its index tensor.
#include "kernels/api/selected_blocks.hpp"

#include <algorithm>
#include <limits>

#include "kernels/api/select_file.hpp"

namespace attn {

namespace {

// splitmix64's finaliser: a bijective mix, so distinct inputs never collide.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

std::vector<std::int64_t> selected_blocks(const Problem& p, std::int64_t b, std::int64_t g, std::int64_t qb) {
  const std::int64_t n = p.select.count;
  std::vector<std::int64_t> out;
  if (p.select.from_file()) {
    const std::int32_t* row =
        select_file_table(p).data() + ((b * p.heads_kv + g) * p.select.query_blocks(p.seq_q) + qb) * n;
    for (std::int64_t e = 0; e < n && row[e] >= 0; ++e) out.push_back(row[e]);
    return out;
  }
  if (qb + 1 <= n) {
    out.resize(static_cast<std::size_t>(qb + 1));
    for (std::int64_t k = 0; k <= qb; ++k) out[static_cast<std::size_t>(k)] = k;
    return out;
  }
  out.push_back(qb);
  if (n >= 2) out.push_back(0);
  // Floyd: m distinct values of 1..N, each subset equally likely, in m steps.
  const std::int64_t m = n - 2, big_n = qb - 1;
  const std::uint64_t key =
      mix(p.select.seed ^ mix(static_cast<std::uint64_t>(b) ^
                              mix(static_cast<std::uint64_t>(g) ^ mix(static_cast<std::uint64_t>(qb)))));
  const std::size_t fixed = out.size();
  for (std::int64_t j = big_n - m + 1; j <= big_n; ++j) {
    const std::int64_t t = 1 + static_cast<std::int64_t>(mix(key + static_cast<std::uint64_t>(j)) %
                                                         static_cast<std::uint64_t>(j));
    const bool taken = std::find(out.begin() + static_cast<std::ptrdiff_t>(fixed), out.end(), t) != out.end();
    out.push_back(taken ? j : t);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::int64_t selected_table_entries(const Problem& p) {
  return p.batch * p.heads_kv * p.select.query_blocks(p.seq_q) * p.select.count;
}

std::string selected_table_why_not(const Problem& p, const std::string& id, std::int64_t max_entries) {
  const double entries = static_cast<double>(p.batch) * static_cast<double>(p.heads_kv) *
                         static_cast<double>(p.select.query_blocks(p.seq_q)) *
                         static_cast<double>(p.select.count);
  const auto limit =
      static_cast<double>(std::min<std::int64_t>(max_entries, std::numeric_limits<std::int32_t>::max()));
  if (entries > limit)
    return "select = (" + std::to_string(p.select.block) + "," + std::to_string(p.select.count) +
           "): the index tensor B x Hkv x ceil(Sq/l') x n has " +
           std::to_string(static_cast<long long>(entries)) + " entries; " + id + " takes at most " +
           std::to_string(static_cast<long long>(limit)) + " (fewer blocks: a larger l' or a smaller n)";
  if (p.seq_q > std::numeric_limits<std::int32_t>::max())
    return "seq_q = " + std::to_string(p.seq_q) + ": " + id + " indexes selected blocks in 32 bits";
  return {};
}

std::vector<std::int32_t> selected_block_table(const Problem& p) {
  if (p.select.from_file()) return select_file_table(p);
  const std::int64_t n = p.select.count, nqb = p.select.query_blocks(p.seq_q);
  std::vector<std::int32_t> table(static_cast<std::size_t>(selected_table_entries(p)), -1);
  std::size_t row = 0;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t g = 0; g < p.heads_kv; ++g)
      for (std::int64_t qb = 0; qb < nqb; ++qb, row += static_cast<std::size_t>(n)) {
        const std::vector<std::int64_t> blocks = selected_blocks(p, b, g, qb);
        for (std::size_t k = 0; k < blocks.size(); ++k) table[row + k] = static_cast<std::int32_t>(blocks[k]);
      }
  return table;
}

}  // namespace attn
