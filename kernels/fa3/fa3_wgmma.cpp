// fa3.wgmma: the registry entry of the FlashAttention-3 class Hopper forward (kernels/fa3/, sm_90a):
// TMA loads into an mbarrier-guarded K/V ring fed by a producer warpgroup, two or three consumer
// warpgroups taking turns to issue their wgmmas, Q K^T of tile j overlapped with the softmax and P V
// of tile j - 1, persistent CTAs drawing a heaviest-first work list, K/V tiles multicast to clusters of
// two CTAs for full masks. Knobs bn, warpgroups and cluster pick a compiled tile (fa3_traits.hpp says
// why the defaults); cta_per_item and section_heads change the work order (fa3_work_order.hpp). fp16
// and bf16, D 64/128/256 (Dv = D), causal, windows, GQA/MQA, Sq != Sk, any S.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/api/launch_checks.hpp"
#include "kernels/common/bshd_tensor_map.hpp"
#include "kernels/common/cuda_check.hpp"
#include "kernels/common/device_int32_array.hpp"
#include "kernels/common/mma_sync_device.hpp"
#include "kernels/fa2/fa2_params.hpp"
#include "kernels/fa3/fa3_launch.hpp"
#include "kernels/fa3/fa3_params.hpp"
#include "kernels/fa3/fa3_traits.hpp"
#include "kernels/fa3/fa3_work_order.hpp"

namespace attn {

namespace {

constexpr const char* kId = "fa3.wgmma";

using fa3::Tile;

bool has_band(const Problem& p) { return p.causal || p.window.active(); }

// The tile the knobs ask for: a zero knob takes the default's value.
Tile requested_tile(const Problem& p, const Knobs& k) {
  const Tile def = fa3::default_tile(static_cast<int>(p.head_dim), has_band(p), static_cast<int>(p.seq_kv));
  Tile t = def;
  if (const int bn = knob_value(k, "bn")) t.bn = bn;
  if (const int wgs = knob_value(k, "warpgroups")) t.wgs = wgs;
  if (const int cluster = knob_value(k, "cluster"))
    t.cluster = cluster;
  else if (t.bn != def.bn || t.wgs != def.wgs)  // the default's cluster goes with the default's tile only
    t.cluster = 1;
  if (const int q_buffers = knob_value(k, "q_buffers"))
    t.q_buffers = q_buffers;
  else if (t.bn != def.bn || t.wgs != def.wgs || t.cluster != def.cluster)  // likewise the Q buffers
    t.q_buffers = 1;
  if (const int epilogue = knob_value(k, "epilogue"))
    t.tma_store = epilogue == 2;
  else if (t.bn != def.bn || t.wgs != def.wgs || t.cluster != def.cluster || t.q_buffers != def.q_buffers)
    t.tma_store = false;  // and the epilogue
  for (const Tile& c : fa3::compiled_tiles(static_cast<int>(p.head_dim)))
    if (c.bn == t.bn && c.wgs == t.wgs && c.cluster == t.cluster && c.q_buffers == t.q_buffers &&
        c.tma_store == t.tma_store)
      return c;  // the compiled stage count
  t.stages = 0;
  return t;
}

std::string cluster_why_not(const Problem& p, const Knobs& k) {
  const int cluster = knob_value(k, "cluster");
  if (cluster < 2 || !has_band(p)) return {};
  return "knob cluster = " + std::to_string(cluster) + ": " + kId +
         " clusters adjacent row blocks that share every K/V tile, which needs a full mask; this problem "
         "has " +
         (p.causal ? "a causal mask" : "a window") + " (use cluster = 0 or 1)";
}

std::string tile_why_not(const Problem& p, const Knobs& k) {
  const Tile t = requested_tile(p, k);
  if (t.stages != 0) return {};
  std::string why = "knobs bn = ";
  why += std::to_string(t.bn);
  why += ", warpgroups = ";
  why += std::to_string(t.wgs);
  why += ", cluster = ";
  why += std::to_string(t.cluster);
  why += ", q_buffers = ";
  why += std::to_string(t.q_buffers);
  why += ", epilogue = ";
  why += t.tma_store ? "2 (TMA stores)" : "1 (registers)";
  why += ": fa3.wgmma at D=";
  why += std::to_string(p.head_dim);
  why += " is compiled for (bn, warpgroups, cluster, q_buffers) in";
  for (const Tile& c : fa3::compiled_tiles(static_cast<int>(p.head_dim))) {
    why += " (";
    why += std::to_string(c.bn);
    why += ", ";
    why += std::to_string(c.wgs);
    why += ", ";
    why += std::to_string(c.cluster);
    why += ", ";
    why += std::to_string(c.q_buffers);
    if (c.tma_store) why += ", TMA stores";
    why += ')';
  }
  why += " (0 = the default)";
  return why;
}

std::string fa3_why_not(const Problem& p, const Knobs& knobs) {
  if (!ATTNSCOPE_HAS_FA3_WGMMA)
    return std::string(kId) +
           " is not in this build: CMAKE_CUDA_ARCHITECTURES has no 90a target (TMA and wgmma need sm_90a)";
  if (std::string why = first_reason({half_dtype_why_not(p, kId), same_head_dims_why_not(p, kId)});
      !why.empty())
    return why;
  if (!fa3::is_supported_head_dim(static_cast<int>(p.head_dim)))
    return "head_dim = " + std::to_string(p.head_dim) + ": " + kId + " is compiled for 64, 128 and 256";
  if (std::string why = first_reason(
          {grid_shape_why_not(p, kId), cluster_why_not(p, knobs), tile_why_not(p, knobs),
           knob_choice_why_not(knobs, "cta_per_item", {0, 1}, kId,
                               "takes 0 (one CTA an SM drawing work items) or 1 (one CTA a work item)"),
           knob_choice_why_not(knobs, "section_heads", {0, 1, 2, 4, 8, 16, 32, 64}, kId,
                               "takes 0 (the L2 rule) or a power of two up to 64")});
      !why.empty())
    return why;
  // One grid dimension holds every (row block, head, batch).
  const Tile t = requested_tile(p, knobs);
  const std::int64_t blocks = (p.seq_q + fa3::rows_of(t) - 1) / fa3::rows_of(t) * p.heads_q * p.batch;
  if (blocks > std::numeric_limits<int>::max())
    return "batch x heads_q x seq_q / " + std::to_string(fa3::rows_of(t)) + " = " + std::to_string(blocks) +
           " row blocks: " + kId + " launches at most 2^31 - 1";
  return {};
}

class Fa3Kernel final : public PreparedKernel {
 public:
  Fa3Kernel(const Problem& p, const Tile& tile, int sm_count, const Knobs& knobs)
      : m_problem(p),
        m_tile(tile),
        m_sm_count(sm_count),
        m_persistent(knob_value(knobs, "cta_per_item") == 0),
        m_section_heads(knob_value(knobs, "section_heads")),
        m_work_counter({0, 0}) {}

  bool writes_lse() const override { return true; }

  void run(const AttentionArgs& a) override {
    check_scale(a, kId);
    check_io_aligned(a, kId, "TMA");
    fa2::fill_params(m_params, m_problem, a);
    m_params.max_ctas = m_persistent ? m_sm_count : 0;
    m_params.work_counter = reinterpret_cast<unsigned*>(m_work_counter.get());
    m_params.section_heads =
        m_section_heads > 0
            ? static_cast<int>(std::min<std::int64_t>(m_section_heads, m_problem.heads_q * m_problem.batch))
            : fa3::section_heads(m_problem.seq_kv, static_cast<int>(m_problem.head_dim), m_params.group,
                                 m_problem.heads_q * m_problem.batch);
    // The maps hold the base addresses: encoded again only when the buffers move.
    const void* o_mapped = m_tile.tma_store ? a.o : nullptr;  // O's map only for the TMA-store epilogue
    if (a.q != m_q || a.k != m_k || a.v != m_v || o_mapped != m_o) {
      const Problem& pr = m_problem;
      // In a cluster each CTA loads its share of a K/V tile's keys.
      tma_map::encode_qkv_maps(m_params.q_map, m_params.k_map, m_params.v_map, pr, a, fa3::rows_of(m_tile),
                               m_tile.bn / m_tile.cluster, kId);
      // The TMA-store epilogue writes O by 64-row boxes, a consumer warpgroup's rows.
      if (o_mapped != nullptr)
        tma_map::encode_bshd_map(m_params.o_map, o_mapped, pr.dtype,
                                 tma_map::bshd_boxes(pr.batch, pr.seq_q, pr.heads_q, pr.head_dim, 64), kId);
      m_q = a.q;
      m_k = a.k;
      m_v = a.v;
      m_o = o_mapped;
    }
#if ATTNSCOPE_HAS_FA3_WGMMA
    const bool bf16 = m_problem.dtype == DType::bf16;
    switch (m_problem.head_dim) {
      case 64:
        bf16 ? fa3::run_fa3<DType::bf16, 64>(m_params, m_tile, a.stream)
             : fa3::run_fa3<DType::fp16, 64>(m_params, m_tile, a.stream);
        break;
      case 128:
        bf16 ? fa3::run_fa3<DType::bf16, 128>(m_params, m_tile, a.stream)
             : fa3::run_fa3<DType::fp16, 128>(m_params, m_tile, a.stream);
        break;
      default:
        bf16 ? fa3::run_fa3<DType::bf16, 256>(m_params, m_tile, a.stream)
             : fa3::run_fa3<DType::fp16, 256>(m_params, m_tile, a.stream);
    }
#else
    throw KernelError("fa3.wgmma is not in this build (no sm_90a target)");  // why_not refuses first
#endif
  }

 private:
  Problem m_problem;
  Tile m_tile;
  int m_sm_count;
  bool m_persistent;
  int m_section_heads;  // 0: the traits' rule
  DeviceInt32Array m_work_counter;
  fa3::Fa3Params m_params{};
  const void* m_q = nullptr;
  const void* m_k = nullptr;
  const void* m_v = nullptr;
  const void* m_o = nullptr;
};

std::unique_ptr<PreparedKernel> fa3_prepare(const Problem& p, const Knobs& knobs) {
  require_supported(fa3_why_not(p, knobs));
  const MmaSyncDevice dev = mma_sync_device(kId);
  if (dev.major != 9 || dev.minor != 0)
    throw Unsupported("compute capability " + std::to_string(dev.major) + "." + std::to_string(dev.minor) +
                      ": " + kId + " is built for sm_90a (TMA, wgmma) only; use fa2.mma");
  const Tile tile = requested_tile(p, knobs);
  const int need = fa3::smem_bytes(static_cast<int>(p.head_dim), tile);
  if (need > dev.smem_optin)
    throw Unsupported(std::string(kId) + " needs " + std::to_string(need) +
                      " bytes of shared memory a block; this GPU allows " + std::to_string(dev.smem_optin));
  int device = 0, sm_count = 0;
  ATTN_CUDA_CHECK(cudaGetDevice(&device));
  ATTN_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  return std::make_unique<Fa3Kernel>(p, tile, sm_count, knobs);
}

}  // namespace

KernelSpec make_fa3_wgmma_spec() {
  KernelSpec s;
  s.id = kId;
  s.description =
      "FlashAttention-3 class Hopper forward (sm_90a): TMA K/V ring on mbarriers, producer warpgroup, 2-3 "
      "consumer warpgroups taking turns at the tensor cores, softmax overlapped with wgmma; D 64/128/256; "
      "fp16/bf16";
  s.backend = Backend::cuda;
  s.knobs = {
      {"bn",
       {0, 64, 80, 128, 176},
       0,
       "keys a tile (0 = default: D=64 128; D=128 176 without a mask band from 4096 keys up, else 128; "
       "D=256 80); compiled: D=64 128, D=128 128/176, D=256 64/80"},
      {"warpgroups",
       {0, 2, 3},
       0,
       "consumer warpgroups of 64 query rows (0 = default: 3 at D=64, else 2); 3 is compiled for D=64"},
      {"cluster",
       {0, 1, 2},
       0,
       "CTAs a thread-block cluster (0 = default: 2 at D=128 and 256 without a mask band, else 1); 2 = two "
       "adjacent row blocks of a head, each CTA loading half of every K/V tile into both by TMA multicast "
       "(full masks only; static work order); compiled for D=128 bn 176 and 128, D=256 bn 80"},
      {"q_buffers",
       {0, 1, 2},
       0,
       "Q buffers (0 = default: 2 at D=64 and at D=128 bn 128, else 1); 2 = the producer loads the next work "
       "item's Q while the consumers still read this one's, instead of after their last Q K^T; compiled for "
       "D=64 bn 128 warpgroups 3 and D=128 bn 128 (cluster 1 and 2)"},
      {"epilogue",
       {0, 1, 2},
       0,
       "how O is written: 1 = stores from registers, 2 = through a shared-memory tile and TMA stores (0 = "
       "default: 2 on D=128 bn 128 with two Q buffers, else 1); 2 is compiled for those tiles (cluster 1 "
       "and 2) and D=64's default"},
      {"cta_per_item",
       {0, 1},
       0,
       "0 = persistent: one CTA an SM drawing work items from a counter (default); 1 = one CTA a work item, "
       "dispatched by the hardware in the same order"},
      {"section_heads",
       {0, 1, 2, 4, 8, 16, 32, 64},
       0,
       "(batch, head) pairs a section of the work order, heaviest row block first inside it (0 = as many "
       "as keep their K and V within 16 MiB of L2; 1 = one head's row blocks after another)"},
  };
  s.why_not = fa3_why_not;
  s.prepare = fa3_prepare;
  return s;
}

}  // namespace attn
