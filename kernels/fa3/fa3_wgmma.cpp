// fa3.wgmma: the registry entry of the FlashAttention-3 class Hopper forward (kernels/fa3/, sm_90a):
// TMA loads into an mbarrier-guarded K/V ring fed by a producer warpgroup, two consumer warpgroups
// ping-ponging their wgmmas, Q K^T of tile j overlapped with the softmax and P V of tile j - 1.
// fp16 and bf16, D 64/128/256 (Dv = D), causal, windows, GQA/MQA, Sq != Sk, any S.
#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/api/launch_checks.hpp"
#include "kernels/common/mma_sync_device.hpp"
#include "kernels/fa2/fa2_params.hpp"
#include "kernels/fa3/fa3_launch.hpp"
#include "kernels/fa3/fa3_params.hpp"
#include "kernels/fa3/fa3_tensor_maps.hpp"
#include "kernels/fa3/fa3_traits.hpp"

namespace attn {

namespace {

constexpr const char* kId = "fa3.wgmma";

std::string fa3_why_not(const Problem& p, const Knobs& /*knobs*/) {
  if (!ATTNSCOPE_HAS_FA3_WGMMA)
    return std::string(kId) +
           " is not in this build: CMAKE_CUDA_ARCHITECTURES has no 90a target (TMA and wgmma need sm_90a)";
  if (std::string why = first_reason({half_dtype_why_not(p, kId), same_head_dims_why_not(p, kId)}); !why.empty())
    return why;
  if (!fa3::is_supported_head_dim(static_cast<int>(p.head_dim)))
    return "head_dim = " + std::to_string(p.head_dim) + ": " + kId + " is compiled for 64, 128 and 256";
  return grid_shape_why_not(p, kId);
}

class Fa3Kernel final : public PreparedKernel {
 public:
  explicit Fa3Kernel(const Problem& p) : m_problem(p) {}

  bool writes_lse() const override { return true; }

  void run(const AttentionArgs& a) override {
    check_scale(a, kId);
    check_io_aligned(a, kId, "TMA");
    fa2::fill_params(m_params, m_problem, a);
    // The maps hold the base addresses: encoded again only when the buffers move.
    if (a.q != m_q || a.k != m_k || a.v != m_v) {
      const Problem& pr = m_problem;
      const fa3::Tile tile = fa3::default_tile(static_cast<int>(pr.head_dim));
      fa3::encode_bshd_map(m_params.q_map, a.q, pr.dtype,
                           fa3::bshd_boxes(pr.batch, pr.seq_q, pr.heads_q, pr.head_dim, fa3::kBlockM));
      fa3::encode_bshd_map(m_params.k_map, a.k, pr.dtype,
                           fa3::bshd_boxes(pr.batch, pr.seq_kv, pr.heads_kv, pr.head_dim, tile.bn));
      fa3::encode_bshd_map(m_params.v_map, a.v, pr.dtype,
                           fa3::bshd_boxes(pr.batch, pr.seq_kv, pr.heads_kv, pr.head_dim, tile.bn));
      m_q = a.q;
      m_k = a.k;
      m_v = a.v;
    }
#if ATTNSCOPE_HAS_FA3_WGMMA
    const bool bf16 = m_problem.dtype == DType::bf16;
    switch (m_problem.head_dim) {
      case 64:
        return bf16 ? fa3::run_fa3<DType::bf16, 64>(m_params, a.stream)
                    : fa3::run_fa3<DType::fp16, 64>(m_params, a.stream);
      case 128:
        return bf16 ? fa3::run_fa3<DType::bf16, 128>(m_params, a.stream)
                    : fa3::run_fa3<DType::fp16, 128>(m_params, a.stream);
      default:
        return bf16 ? fa3::run_fa3<DType::bf16, 256>(m_params, a.stream)
                    : fa3::run_fa3<DType::fp16, 256>(m_params, a.stream);
    }
#else
    throw KernelError("fa3.wgmma is not in this build (no sm_90a target)");  // why_not refuses first
#endif
  }

 private:
  Problem m_problem;
  fa3::Fa3Params m_params{};
  const void* m_q = nullptr;
  const void* m_k = nullptr;
  const void* m_v = nullptr;
};

std::unique_ptr<PreparedKernel> fa3_prepare(const Problem& p, const Knobs& knobs) {
  require_supported(fa3_why_not(p, knobs));
  const MmaSyncDevice dev = mma_sync_device(kId);
  if (dev.major != 9 || dev.minor != 0)
    throw Unsupported("compute capability " + std::to_string(dev.major) + "." + std::to_string(dev.minor) + ": " +
                      kId + " is built for sm_90a (TMA, wgmma) only; use fa2.mma");
  const int d = static_cast<int>(p.head_dim);
  const int need = fa3::smem_bytes(d, fa3::default_tile(d));
  if (need > dev.smem_optin)
    throw Unsupported(std::string(kId) + " needs " + std::to_string(need) +
                      " bytes of shared memory a block; this GPU allows " + std::to_string(dev.smem_optin));
  return std::make_unique<Fa3Kernel>(p);
}

}  // namespace

KernelSpec make_fa3_wgmma_spec() {
  KernelSpec s;
  s.id = kId;
  s.description =
      "FlashAttention-3 class Hopper forward (sm_90a): TMA K/V ring on mbarriers, producer warpgroup, two "
      "ping-ponging consumer warpgroups, softmax overlapped with wgmma; D 64/128/256; fp16/bf16";
  s.backend = Backend::cuda;
  s.why_not = fa3_why_not;
  s.prepare = fa3_prepare;
  return s;
}

}  // namespace attn
