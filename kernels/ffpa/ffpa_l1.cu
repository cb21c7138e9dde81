// ffpa.l1: registry entries of the split-D large-head-dim kernels (kernels/ffpa/): ffpa.l1.acc_f32
// (fp32 MMA accumulation, fp16 and bf16) and ffpa.l1.acc_f16 (fp16 MMA accumulation, fp16 only),
// each with knobs stages (1 = one chunk in flight while one is computed, 2 = two) and q_resident
// (0 = Q streamed with K, shared memory constant in D; 1 = Q kept in shared memory).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/api/launch_checks.hpp"
#include "kernels/common/cuda_check.hpp"
#include "kernels/common/mma_sync_device.hpp"
#include "kernels/ffpa/ffpa_accuracy.hpp"
#include "kernels/ffpa/ffpa_launch.hpp"
#include "kernels/ffpa/ffpa_params.hpp"
#include "kernels/ffpa/ffpa_traits.hpp"

namespace attn {

namespace {

using ffpa::FfpaParams;

// smem_limit: the device's opt-in bytes a block (prepare); the H100's where no device is at hand
// (why_not, which only range-checks the knob).
int stages_of(const Knobs& k, int d, bool acc_f16, int smem_limit = 227 * 1024) {
  if (knob_value(k, "stages") != 0) return knob_value(k, "stages");
  return ffpa::default_stages(d, acc_f16, knob_value(k, "q_resident") == 1, smem_limit);
}

std::string ffpa_why_not(const Problem& p, const Knobs& knobs, bool acc_f16) {
  const char* id = acc_f16 ? "ffpa.l1.acc_f16" : "ffpa.l1.acc_f32";
  if (std::string why =
          first_reason({acc_f16 ? acc_f16_dtype_why_not(p, id, "mma.sync", "ffpa.l1.acc_f32") : "",
                        half_dtype_why_not(p, id), same_head_dims_why_not(p, id)});
      !why.empty())
    return why;
  if (!ffpa::is_supported_head_dim(static_cast<int>(p.head_dim)))
    return "head_dim = " + std::to_string(p.head_dim) + ": " + id + " takes multiples of 32 from " +
           std::to_string(ffpa::kMinHeadDim) + " to " + std::to_string(ffpa::kMaxHeadDim);
  if (std::string why = grid_shape_why_not(p, id); !why.empty()) return why;
  const int stages = stages_of(knobs, static_cast<int>(p.head_dim), acc_f16);
  if (stages < 1 || stages > ffpa::kMaxStages)
    return "knob stages = " + std::to_string(stages) + ": " + id + " is compiled for 1 and 2";
  return knob_choice_why_not(knobs, "q_resident", {0, 1}, id,
                             "takes 0 (Q streamed) or 1 (Q in shared memory)");
}

template <DType kType, bool kAccF16>
void dispatch_capacity(const FfpaParams& prm, int stages, bool q_resident, void* stream) {
  if (ffpa::capacity_for(prm.head_dim) == 512)
    ffpa::run_ffpa<kType, kAccF16, 512>(prm, stages, q_resident, stream);
  else
    ffpa::run_ffpa<kType, kAccF16, 1024>(prm, stages, q_resident, stream);
}

class FfpaL1Kernel final : public PreparedKernel {
 public:
  FfpaL1Kernel(const Problem& p, int stages, bool q_resident, bool acc_f16)
      : m_problem(p), m_stages(stages), m_q_resident(q_resident), m_acc_f16(acc_f16) {}

  bool writes_lse() const override { return true; }

  void run(const AttentionArgs& a) override {
    const Problem& pr = m_problem;
    check_scale(a, "ffpa.l1");
    check_io_aligned(a, "ffpa.l1", "cp.async");
    FfpaParams prm;
    fa2::fill_params(prm, pr, a);
    prm.head_dim = static_cast<int>(pr.head_dim);
    if (m_acc_f16)
      dispatch_capacity<DType::fp16, true>(prm, m_stages, m_q_resident, a.stream);
    else if (pr.dtype == DType::fp16)
      dispatch_capacity<DType::fp16, false>(prm, m_stages, m_q_resident, a.stream);
    else
      dispatch_capacity<DType::bf16, false>(prm, m_stages, m_q_resident, a.stream);
  }

 private:
  Problem m_problem;
  int m_stages;
  bool m_q_resident;
  bool m_acc_f16;
};

std::unique_ptr<PreparedKernel> ffpa_prepare(const Problem& p, const Knobs& knobs, bool acc_f16) {
  require_supported(ffpa_why_not(p, knobs, acc_f16));
  const int smem_optin = mma_sync_device("ffpa.l1").smem_optin;
  const int stages = stages_of(knobs, static_cast<int>(p.head_dim), acc_f16, smem_optin);
  const bool q_resident = knob_value(knobs, "q_resident") == 1;
  const ffpa::FfpaTiles t = ffpa::choose_tiles(static_cast<int>(p.head_dim), acc_f16).tiles;
  const int smem = ffpa::smem_bytes(t, stages, q_resident, static_cast<int>(p.head_dim));
  if (smem > smem_optin)
    throw Unsupported("tiles " + ffpa::to_string(t) + " with stages = " + std::to_string(stages) +
                      (q_resident ? " and Q resident" : "") + " need " + std::to_string(smem) +
                      " bytes of shared memory at head_dim " + std::to_string(p.head_dim) +
                      ", this GPU allows " + std::to_string(smem_optin) + " a block" +
                      (q_resident && stages == 2 ? ": use stages=1 (or q_resident=0)" : ""));
  return std::make_unique<FfpaL1Kernel>(p, stages, q_resident, acc_f16);
}

KernelSpec make_ffpa_spec(bool acc_f16) {
  KernelSpec s;
  s.id = acc_f16 ? "ffpa.l1.acc_f16" : "ffpa.l1.acc_f32";
  s.description = acc_f16
                      ? "FFPA-style split-D attention, fp16 MMA accumulation (S and P.V), fp16 O kept "
                        "normalised, fp32 softmax state; smem constant in D; D 32..1024; fp16"
                      : "FFPA-style split-D attention, fp32 MMA accumulation; smem constant in D (Q, K, V "
                        "streamed in 128-column chunks); D 32..1024; fp16/bf16";
  s.backend = Backend::cuda;
  s.knobs = {
      {"stages",
       {0, 1, 2},
       0,
       "chunk loads in flight while one chunk is computed: 1 or 2 (0 = traits default: 2; with Q resident 1 "
       "for acc_f16: at D <= 512 2 costs the second CTA an SM, above 768 Q and 2 stages exceed 227 KiB; "
       "1 wherever 2 does not fit the GPU's shared memory a block)"},
      {"q_resident",
       {0, 1},
       0,
       "1 = Q loaded once into shared memory (Br*D*2 bytes, grows with D), only K/V streamed; 0 = Q streamed "
       "with K (shared memory constant in D)"},
  };
  s.why_not = [acc_f16](const Problem& p, const Knobs& k) { return ffpa_why_not(p, k, acc_f16); };
  s.prepare = [acc_f16](const Problem& p, const Knobs& k) { return ffpa_prepare(p, k, acc_f16); };
  if (acc_f16) s.stated_bound = ffpa::acc_f16_error_bound;
  return s;
}

}  // namespace

KernelSpec make_ffpa_l1_acc_f32_spec() { return make_ffpa_spec(false); }
KernelSpec make_ffpa_l1_acc_f16_spec() { return make_ffpa_spec(true); }

}  // namespace attn
