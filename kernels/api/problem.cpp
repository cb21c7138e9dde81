// Counting and validation for Problem.
#include "kernels/api/problem.hpp"

#include <cmath>
#include <sstream>

namespace attn {

std::int64_t Problem::visible_pairs_per_head() const {
  std::int64_t pairs = 0;
  for (std::int64_t i = 0; i < seq_q; ++i) pairs += visible_keys(i).size();
  return pairs;
}

double Problem::flops() const {
  return 2.0 * static_cast<double>(batch) * static_cast<double>(heads_q) *
         static_cast<double>(head_dim + head_dim_v) * static_cast<double>(visible_pairs_per_head());
}

std::int64_t Problem::min_bytes(bool with_lse) const {
  const auto e = static_cast<std::int64_t>(dtype_bytes(dtype));
  std::int64_t bytes = (q_elems() + k_elems() + v_elems() + o_elems()) * e;
  if (with_lse) bytes += lse_elems() * 4;
  return bytes;
}

double Problem::default_scale() const { return 1.0 / std::sqrt(static_cast<double>(head_dim)); }

std::string Problem::validate() const {
  std::ostringstream err;
  auto positive = [&](const char* name, std::int64_t v) {
    if (v < 1 && err.tellp() == 0) err << name << " = " << v << ": must be >= 1";
  };
  positive("batch", batch);
  positive("heads_q", heads_q);
  positive("heads_kv", heads_kv);
  positive("seq_q", seq_q);
  positive("seq_kv", seq_kv);
  positive("head_dim", head_dim);
  positive("head_dim_v", head_dim_v);
  if (err.tellp() != 0) return err.str();
  if (heads_q % heads_kv != 0)
    return "heads_kv = " + std::to_string(heads_kv) + ": must divide heads_q = " + std::to_string(heads_q) +
           " (GQA/MQA groups query heads evenly)";
  if (window.left < -1 || window.right < -1)
    return "window = (" + std::to_string(window.left) + "," + std::to_string(window.right) +
           "): each side must be >= 0, or -1 for unbounded";
  return {};
}

std::string Problem::shape_label() const {
  std::ostringstream s;
  s << batch << 'x' << heads_q << 'x' << seq_q << 'x' << head_dim;
  return s.str();
}

std::string Problem::mask_label() const {
  std::string m = causal ? "causal" : "";
  if (window.active()) {
    if (!m.empty()) m += "+";
    m += "win" + std::to_string(window.left) + "," + std::to_string(window.right);
  }
  return m.empty() ? "full" : m;
}

std::string Problem::full_label() const {
  std::ostringstream s;
  s << "B=" << batch << " Hq=" << heads_q;
  if (heads_kv != heads_q) s << " Hkv=" << heads_kv;
  s << " Sq=" << seq_q;
  if (seq_kv != seq_q) s << " Sk=" << seq_kv;
  s << " D=" << head_dim;
  if (head_dim_v != head_dim) s << " Dv=" << head_dim_v;
  s << ' ' << to_string(dtype) << ' ' << mask_label();
  return s.str();
}

}  // namespace attn
