// Engine problems in the plug-in ABI's terms (plugin_abi.hpp).
#include "kernels/api/plugin_abi.hpp"

namespace attn {

attn_problem to_abi(const Problem& p) {
  attn_problem a{};
  a.batch = p.batch, a.heads_q = p.heads_q, a.heads_kv = p.heads_kv;
  a.seq_q = p.seq_q, a.seq_kv = p.seq_kv, a.head_dim = p.head_dim, a.head_dim_v = p.head_dim_v;
  a.dtype = p.dtype == DType::fp16   ? ATTN_DTYPE_FP16
            : p.dtype == DType::bf16 ? ATTN_DTYPE_BF16
                                     : ATTN_DTYPE_FP32;
  a.causal = p.causal ? 1 : 0;
  a.window_left = p.window.left, a.window_right = p.window.right;
  a.layout = ATTN_LAYOUT_BSHD;
  a.scale = static_cast<float>(p.default_scale());
  auto bshd = [](std::int64_t(&s)[4], std::int64_t seq, std::int64_t heads, std::int64_t dim) {
    s[0] = seq * heads * dim, s[1] = heads * dim, s[2] = dim, s[3] = 1;
  };
  bshd(a.q_strides, p.seq_q, p.heads_q, p.head_dim);
  bshd(a.k_strides, p.seq_kv, p.heads_kv, p.head_dim);
  bshd(a.v_strides, p.seq_kv, p.heads_kv, p.head_dim_v);
  bshd(a.o_strides, p.seq_q, p.heads_q, p.head_dim_v);
  a.pass = p.pass == Pass::bwd ? ATTN_PASS_BWD : p.pass == Pass::fwd_bwd ? ATTN_PASS_FWD_BWD : ATTN_PASS_FWD;
  return a;
}

}  // namespace attn
