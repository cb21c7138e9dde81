// ffpa.wgmma: registry entries of the Hopper split-D large-head-dim kernels (sm_90a, wgmma):
// ffpa.wgmma.acc_f32 (fp32 accumulation, fp16 and bf16) and ffpa.wgmma.acc_f16 (fp16 accumulation,
// fp16 only; in every CUDA build, refusing with the reason where the sm_90a kernels are not built),
// each with the knobs q_stream (0 = Q resident where it fits, 1 = Q streamed with K),
// warpgroups (a CTA's 64-row warpgroups: 1 or 2; 0 = the traits' choice), cluster (how the passes
// of a wide D get S: 0 = the default, 1 = each recomputes it, 2 = a cluster shares it), pass_cols
// (O's columns a pass: acc_f16 512 or 640, acc_f32 256 or 320; 0 = the traits' choice) and split_d
// (what a CTA's two warpgroups split: 0 = the default, 1 = the rows, 2 = D over the same rows).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/api/launch_checks.hpp"
#include "kernels/common/bshd_tensor_map.hpp"
#include "kernels/common/mma_sync_device.hpp"
#include "kernels/fa2/fa2_params.hpp"
#include "kernels/ffpa/ffpa_accuracy.hpp"
#include "kernels/ffpa/wgmma/ffpa_wgmma_launch.hpp"
#include "kernels/ffpa/wgmma/ffpa_wgmma_params.hpp"
#include "kernels/ffpa/wgmma/ffpa_wgmma_traits.hpp"

namespace attn {

namespace {

namespace fw = ffpa_wgmma;

constexpr const char* wgmma_id(bool acc_f16) { return acc_f16 ? "ffpa.wgmma.acc_f16" : "ffpa.wgmma.acc_f32"; }

// split_d = 2 takes the split form's own columns, two warpgroups and Q resident: other knobs that ask
// for something else are refused by name.
std::string split_d_why_not(const Problem& p, const Knobs& knobs, bool acc_f16, const char* id) {
  if (std::string why = knob_choice_why_not(
          knobs, "split_d", {0, 1, 2}, id,
          "takes 0 (default), 1 (the two warpgroups split the rows) or 2 (they split D over the same rows)");
      !why.empty())
    return why;
  if (knob_value(knobs, "split_d") != 2) return "";
  const std::string head = std::string("split_d = 2 with ");
  for (const char* other : {"q_stream", "pass_cols"})
    if (knob_value(knobs, other) != 0)
      return head + other + " = " + std::to_string(knob_value(knobs, other)) + ": " + id +
             "'s split form keeps Q resident and owns " + std::to_string(fw::split_wg_cols(acc_f16)) +
             " columns a warpgroup (" + other + " = 0)";
  if (knob_value(knobs, "warpgroups") == 1 || knob_value(knobs, "cluster") == 2)
    return head + (knob_value(knobs, "warpgroups") == 1 ? "warpgroups = 1" : "cluster = 2") + ": " + id +
           "'s split form is two warpgroups of one CTA (warpgroups = 0 or 2, cluster = 0 or 1)";
  const int d = static_cast<int>(p.head_dim);
  if (!fw::split_fits(d, acc_f16))
    return head + "head_dim = " + std::to_string(d) + ": each warpgroup contracts over its own 64-column " +
           "chunks of D, so D must be above 64";
  return "";
}

std::string wgmma_why_not(const Problem& p, const Knobs& knobs, bool acc_f16) {
  const char* id = wgmma_id(acc_f16);
  if (!ATTNSCOPE_HAS_FFPA_WGMMA)
    return std::string(id) +
           " is not in this build: CMAKE_CUDA_ARCHITECTURES has no 90a target (wgmma needs sm_90a)";
  if (std::string why =
          first_reason({acc_f16 ? acc_f16_dtype_why_not(p, id, "wgmma", "ffpa.wgmma.acc_f32") : "",
                        half_dtype_why_not(p, id), same_head_dims_why_not(p, id)});
      !why.empty())
    return why;
  if (!fw::is_supported_head_dim(static_cast<int>(p.head_dim)))
    return "head_dim = " + std::to_string(p.head_dim) + ": " + id + " takes multiples of 32 from " +
           std::to_string(fw::kMinHeadDim) + " to " + std::to_string(fw::kMaxHeadDim);
  return first_reason(
      {grid_shape_why_not(p, id),
       knob_choice_why_not(knobs, "q_stream", {0, 1}, id,
                           "takes 0 (Q resident where it fits) or 1 (Q streamed with K)"),
       knob_choice_why_not(knobs, "warpgroups", {0, 1, 2}, id, "is compiled for 1 and 2 (0 = default)"),
       knob_choice_why_not(
           knobs, "cluster", {0, 1, 2}, id,
           "takes 0 (default), 1 (each pass recomputes S) or 2 (the passes share S in a cluster)"),
       knob_value(knobs, "cluster") == 2 && knob_value(knobs, "warpgroups") == 1
           ? std::string("cluster = 2 with warpgroups = 1: ") + id +
                 "'s cluster mode is compiled for two warpgroups a CTA (warpgroups = 0 or 2)"
           : std::string(),
       knob_choice_why_not(
           knobs, "pass_cols", {0, fw::max_pass_cols(acc_f16), fw::wide_pass_cols(acc_f16)}, id,
           acc_f16
               ? "takes 512 or 640 (O's fp16 columns a pass; 0 = 640 where that saves a pass)"
               : "takes 256 or 320 (O's fp32 columns a pass; 0 = 320 where that saves a pass, up to two)"),
       knob_value(knobs, "pass_cols") == fw::wide_pass_cols(acc_f16) && knob_value(knobs, "warpgroups") == 1
           ? "pass_cols = " + std::to_string(fw::wide_pass_cols(acc_f16)) + " with warpgroups = 1: " + id +
                 "'s wide kernel is compiled for two warpgroups a CTA (warpgroups = 0 or 2)"
           : std::string(),
       knob_value(knobs, "pass_cols") == fw::wide_pass_cols(acc_f16) && knob_value(knobs, "cluster") == 2
           ? "pass_cols = " + std::to_string(fw::wide_pass_cols(acc_f16)) + " with cluster = 2: " + id +
                 "'s cluster mode is compiled for " + std::to_string(fw::max_pass_cols(acc_f16)) +
                 "-column passes (pass_cols = 0 or " + std::to_string(fw::max_pass_cols(acc_f16)) + ")"
           : std::string(),
       split_d_why_not(p, knobs, acc_f16, id)});
}

class FfpaWgmmaKernel final : public PreparedKernel {
 public:
  FfpaWgmmaKernel(const Problem& p, bool q_resident, int wgs, fw::Form form, bool acc_f16)
      : m_problem(p), m_q_resident(q_resident), m_wgs(wgs), m_form(form), m_acc_f16(acc_f16) {}

  bool writes_lse() const override { return true; }

  void run(const AttentionArgs& a) override {
    const Problem& pr = m_problem;
    const char* id = wgmma_id(m_acc_f16);
    check_scale(a, id);
    check_io_aligned(a, id, "TMA");
    fw::WgmmaParams& prm = m_params;
    fa2::fill_params(prm, pr, a);
    prm.head_dim = static_cast<int>(pr.head_dim);
    prm.n_passes = fw::passes_of(prm.head_dim, m_acc_f16, m_form);
    prm.pass_chunks = fw::pass_chunks(prm.head_dim, m_acc_f16, m_form);
    if (m_form == fw::Form::cluster)
      prm.ring_slots = fw::cluster_ring_slots(prm.head_dim, m_acc_f16, m_q_resident);
    if (m_form == fw::Form::split) prm.ring_slots = fw::split_ring_slots(prm.head_dim, m_acc_f16);
    // The maps hold the base addresses: encoded again only when the buffers move. Q's boxes are a CTA's
    // rows, K's and V's a key tile.
    if (a.q != m_q || a.k != m_k || a.v != m_v) {
      const int q_rows = m_form == fw::Form::split ? fw::rows_of(1) : fw::rows_of(m_wgs);
      const int kv_rows = fw::bc_of(m_form, m_acc_f16);
      tma_map::encode_qkv_maps(prm.q_map, prm.k_map, prm.v_map, pr, a, q_rows, kv_rows, id);
      m_q = a.q;
      m_k = a.k;
      m_v = a.v;
    }
#if ATTNSCOPE_HAS_FFPA_WGMMA
    if (m_acc_f16)
      fw::run_wgmma<DType::fp16, true>(prm, m_q_resident, m_wgs, m_form, a.stream);
    else if (pr.dtype == DType::fp16)
      fw::run_wgmma<DType::fp16, false>(prm, m_q_resident, m_wgs, m_form, a.stream);
    else
      fw::run_wgmma<DType::bf16, false>(prm, m_q_resident, m_wgs, m_form, a.stream);
#else
    throw KernelError("ffpa.wgmma is not in this build (no sm_90a target)");  // why_not refuses first
#endif
  }

 private:
  Problem m_problem;
  bool m_q_resident;
  int m_wgs;
  fw::Form m_form;  // how the warpgroups and the CTAs of a row block cover its rows and O's columns
  bool m_acc_f16;
  fw::WgmmaParams m_params;  // the tensor maps of the buffers last run on (m_q, m_k, m_v)
  const void* m_q = nullptr;
  const void* m_k = nullptr;
  const void* m_v = nullptr;
};

std::unique_ptr<PreparedKernel> wgmma_prepare(const Problem& p, const Knobs& knobs, bool acc_f16) {
  require_supported(wgmma_why_not(p, knobs, acc_f16));
  const MmaSyncDevice dev = mma_sync_device("ffpa.wgmma");  // refuses below sm_80 (cp.async)
  const int optin = dev.smem_optin;
  if (dev.major != 9 || dev.minor != 0)
    throw Unsupported("compute capability " + std::to_string(dev.major) + "." + std::to_string(dev.minor) +
                      ": ffpa.wgmma is built for sm_90a (wgmma) only; use ffpa.l1");
  const int d = static_cast<int>(p.head_dim);
  const int wgs =
      knob_value(knobs, "warpgroups") != 0 ? knob_value(knobs, "warpgroups") : fw::kDefaultWarpgroups;
  const fw::Form form = fw::form_of(d, acc_f16, wgs,
                                    {knob_value(knobs, "pass_cols"), knob_value(knobs, "cluster"),
                                     knob_value(knobs, "split_d"), knob_value(knobs, "q_stream")});
  const bool cluster = form == fw::Form::cluster;
  const bool q_stream = knob_value(knobs, "q_stream") == 1;
  // Cluster mode: Q resident unless that costs the ring slots that streaming it would keep (up to 4: two
  // items loading while one is computed). The split form always keeps it.
  const int resident_ring = fw::cluster_ring_slots(d, acc_f16, true);
  const bool q_resident =
      form == fw::Form::split ||
      (!q_stream && (cluster ? resident_ring >= std::min(4, fw::cluster_ring_slots(d, acc_f16, false))
                             : fw::q_resident_by_default(d, wgs, optin, fw::bc_of(form, acc_f16))));
  const int smem = cluster                   ? fw::cluster_smem_bytes(d, acc_f16, q_resident)
                   : form == fw::Form::split ? fw::split_smem_bytes(d, acc_f16)
                                             : fw::smem_bytes(d, q_resident, wgs, fw::bc_of(form, acc_f16));
  if (smem > optin)
    throw Unsupported("ffpa.wgmma needs " + std::to_string(smem) +
                      " bytes of shared memory a block; this GPU allows " + std::to_string(optin));
  return std::make_unique<FfpaWgmmaKernel>(p, q_resident, wgs, form, acc_f16);
}

KernelSpec make_wgmma_spec(bool acc_f16) {
  KernelSpec s;
  s.id = wgmma_id(acc_f16);
  s.description =
      std::string(
          "FFPA-style split-D attention on Hopper warpgroup MMAs (sm_90a): Q, K, V streamed in 64-column "
          "chunks, 128x128 tiles, ") +
      (acc_f16
           ? "fp16 accumulation (S and P.V), fp16 O kept normalised, fp32 softmax state; O in passes of "
             "512 columns (each recomputing S, or a cluster's CTAs sharing it), or of 640 on 96-key tiles "
             "where that saves a pass, or D split over two warpgroups of the same 64 rows (one pass to D "
             "1024); D 32..1024; fp16"
           : "fp32 accumulation; O in passes of 256 columns (each recomputing S, or a cluster's CTAs "
             "sharing it), or of 320 on 64-key tiles where that saves a pass, or D split over two "
             "warpgroups of the same 64 rows (passes of 640 columns); D 32..1024; fp16/bf16");
  s.backend = Backend::cuda;
  s.knobs = {
      {"q_stream",
       {0, 1},
       0,
       "0 = Q loaded once into shared memory where it fits beside the chunk ring (D <= 576; 640 and 704 "
       "beside the wide kernels' smaller slots), else streamed; "
       "1 = Q streamed with every K chunk (shared memory constant in D)"},
      {"warpgroups",
       {0, 1, 2},
       0,
       "64-row warpgroups a CTA: 2 = one CTA an SM, K/V shared by 128 rows, Q resident where it fits; 1 = "
       "two "
       "CTAs an SM, Q streamed, one CTA's softmax overlapping the other's wgmmas (0 = traits default)"},
      {"cluster",
       {0, 1, 2},
       0,
       "where D needs several passes over O's columns: 1 = each pass a CTA recomputing all of S; 2 = the "
       "passes of a row block one thread-block cluster, each forming S over its own columns of D and adding "
       "the others' partial S through distributed shared memory (two warpgroups a CTA); 0 = " +
           std::string(acc_f16 ? "2 from D 672, where two passes are needed (measured faster there), else 1"
                               : "1 (2 measured slower at every D)")},
      {"pass_cols",
       {0, fw::max_pass_cols(acc_f16), fw::wide_pass_cols(acc_f16)},
       0,
       acc_f16 ? "O's fp16 columns a pass (each pass a CTA recomputing S): 512 on 128-key tiles, or 640 on "
                 "96-key tiles (O 160 registers a thread, two warpgroups); 0 = 640 where that saves a pass "
                 "(D 544..640), else 512"
               : "O's fp32 columns a pass (each pass a CTA recomputing S): 256 on 128-key tiles, or 320 on "
                 "64-key tiles (O 160 registers a thread, two warpgroups); 0 = 320 where that saves a pass "
                 "and leaves at most two (D 288..320, 544..640), else 256"},
      {"split_d",
       {0, 1, 2},
       0,
       std::string(
           "what a CTA's two warpgroups split: 1 = the rows (64 each, each forming S over all of D); "
           "2 = D, over the same 64 rows on 64-key tiles with Q resident: each forms a partial S over "
           "half of D's chunks, the two are added through shared memory, and each owns ") +
           std::to_string(fw::split_wg_cols(acc_f16)) + " of O's " + (acc_f16 ? "fp16" : "fp32") +
           " columns (one pass to D " + std::to_string(fw::max_pass_cols(acc_f16, fw::Form::split)) +
           "); 0 = " +
           (acc_f16 ? "1 (the split form measured slower at every D)"
                    : "2 at D 544..640 (one pass against two), else 1")},
  };
  s.why_not = [acc_f16](const Problem& p, const Knobs& k) { return wgmma_why_not(p, k, acc_f16); };
  s.prepare = [acc_f16](const Problem& p, const Knobs& k) { return wgmma_prepare(p, k, acc_f16); };
  if (acc_f16) s.stated_bound = ffpa::acc_f16_error_bound;
  return s;
}

}  // namespace

KernelSpec make_ffpa_wgmma_acc_f32_spec() { return make_wgmma_spec(false); }
KernelSpec make_ffpa_wgmma_acc_f16_spec() { return make_wgmma_spec(true); }

}  // namespace attn
