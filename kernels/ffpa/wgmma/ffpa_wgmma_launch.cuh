// ffpa.wgmma launch template: the grid (row blocks x passes, heads, batch), the shared-memory
// opt-in, and the switch over Q residency, warpgroups a CTA and the form (passes recomputing S, the
// wide kernels, cluster mode with the passes of a row block one cluster, the split form). Included
// only by the instantiation files in inst/.
#pragma once
#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/common/cluster_launch.hpp"
#include "kernels/common/cuda_check.hpp"
#include "kernels/ffpa/wgmma/ffpa_wgmma_kernel.cuh"
#include "kernels/ffpa/wgmma/ffpa_wgmma_launch.hpp"
#include "kernels/ffpa/wgmma/ffpa_wgmma_traits.hpp"

namespace attn::ffpa_wgmma {

template <typename T, bool kAccF16, bool kQResident, int kWGs, Form kForm = Form::passes>
void launch_wgmma(const WgmmaParams& p, cudaStream_t stream) {
  static_assert(kForm == Form::passes || kForm == Form::wide, "cluster and split forms launch below");
  const auto kernel = ffpa_wgmma_kernel<T, kAccF16, kQResident, kWGs, kForm>;
  constexpr int kBcKeys = bc_of(kForm, kAccF16);
  // Once per kernel, to the most any head dim it serves needs (prepare() checked the GPU allows it).
  static const cudaError_t attr_status = cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, max_smem_bytes(kQResident, kWGs, kBcKeys));
  ATTN_CUDA_CHECK(attr_status);
  const int m_blocks = (p.seq_q + rows_of(kWGs) - 1) / rows_of(kWGs);
  const dim3 grid(static_cast<unsigned>(m_blocks * p.n_passes), static_cast<unsigned>(p.heads_q),
                  static_cast<unsigned>(p.batch));
  kernel<<<grid, threads_of(kWGs), smem_bytes(p.head_dim, kQResident, kWGs, kBcKeys), stream>>>(p);
  ATTN_CUDA_CHECK_LAUNCH("ffpa.wgmma ffpa_wgmma_kernel");
}

// Cluster mode: the n_passes CTAs of a row block, adjacent in x, form one cluster (their rank is
// their pass).
template <typename T, bool kAccF16, bool kQResident>
void launch_wgmma_cluster(const WgmmaParams& p, cudaStream_t stream) {
  const auto kernel = ffpa_wgmma_kernel<T, kAccF16, kQResident, 2, Form::cluster>;
  // Once per kernel: its ring grows into whatever sm_90's shared memory leaves (prepare() checked this GPU).
  static const cudaError_t attr_status = cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem::kSm90Optin));
  ATTN_CUDA_CHECK(attr_status);
  const int m_blocks = (p.seq_q + rows_of(2) - 1) / rows_of(2);
  const ClusterLaunch launch(dim3(static_cast<unsigned>(m_blocks * p.n_passes),
                                  static_cast<unsigned>(p.heads_q), static_cast<unsigned>(p.batch)),
                             dim3(threads_of(2)),
                             static_cast<std::size_t>(cluster_smem_bytes(p.head_dim, kAccF16, kQResident)),
                             stream, static_cast<unsigned>(p.n_passes));
  ATTN_CUDA_CHECK(cudaLaunchKernelEx(&launch.config, kernel, p));
  ATTN_CUDA_CHECK_LAUNCH("ffpa.wgmma ffpa_wgmma_kernel (cluster)");
}

// The split form: 64-row CTAs of two warpgroups, Q resident, the ring as large as fits (p.ring_slots).
template <typename T, bool kAccF16>
void launch_wgmma_split(const WgmmaParams& p, cudaStream_t stream) {
  const auto kernel = ffpa_wgmma_kernel<T, kAccF16, true, 2, Form::split>;
  // Once per kernel: its ring grows into whatever sm_90's shared memory leaves (prepare() checked this GPU).
  static const cudaError_t attr_status = cudaFuncSetAttribute(
      kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem::kSm90Optin));
  ATTN_CUDA_CHECK(attr_status);
  const int m_blocks = (p.seq_q + rows_of(1) - 1) / rows_of(1);
  const dim3 grid(static_cast<unsigned>(m_blocks * p.n_passes), static_cast<unsigned>(p.heads_q),
                  static_cast<unsigned>(p.batch));
  kernel<<<grid, threads_of(2), split_smem_bytes(p.head_dim, kAccF16), stream>>>(p);
  ATTN_CUDA_CHECK_LAUNCH("ffpa.wgmma ffpa_wgmma_kernel (split)");
}

template <DType kType, bool kAccF16>
void run_wgmma(const WgmmaParams& p, bool q_resident, int wgs, Form form, void* stream) {
  using T = std::conditional_t<kType == DType::fp16, __half, __nv_bfloat16>;
  static_assert(kType == DType::fp16 || kType == DType::bf16, "ffpa.wgmma takes fp16 and bf16");
  static_assert(!kAccF16 || kType == DType::fp16, "fp16 accumulation takes fp16 inputs");
  const auto st = static_cast<cudaStream_t>(stream);
  if (form == Form::split) {
    if (!is_supported_head_dim(p.head_dim) || wgs != 2 || !q_resident || !split_fits(p.head_dim, kAccF16) ||
        p.ring_slots != split_ring_slots(p.head_dim, kAccF16))
      throw KernelError("ffpa.wgmma: head_dim " + std::to_string(p.head_dim) + " split over " +
                        std::to_string(wgs) + " warpgroups" + (q_resident ? "" : " with Q streamed") +
                        " is not compiled (two warpgroups, Q resident, D above 64)");
    launch_wgmma_split<T, kAccF16>(p, st);
    return;
  }
  if (form == Form::wide) {
    if (!is_supported_head_dim(p.head_dim) || wgs != 2 ||
        (q_resident && p.head_dim > max_resident_head_dim(bc_of(Form::wide, kAccF16))))
      throw KernelError("ffpa.wgmma: head_dim " + std::to_string(p.head_dim) + " in " +
                        std::to_string(wide_pass_cols(kAccF16)) + "-column passes with " +
                        std::to_string(wgs) + " warpgroups is not compiled (two warpgroups)");
    if (q_resident)
      launch_wgmma<T, kAccF16, true, 2, Form::wide>(p, st);
    else
      launch_wgmma<T, kAccF16, false, 2, Form::wide>(p, st);
    return;
  }
  if (form == Form::cluster && p.n_passes > 1) {
    // A cluster CTA keeps only its own chunks of Q: resident wherever prepare() found it fits.
    if (!is_supported_head_dim(p.head_dim) || wgs != 2 || p.n_passes > kMaxClusterPasses)
      throw KernelError("ffpa.wgmma: head_dim " + std::to_string(p.head_dim) + " in cluster mode with " +
                        std::to_string(wgs) + " warpgroups is not compiled (2 warpgroups, up to " +
                        std::to_string(kMaxClusterPasses) + " passes)");
    if (q_resident)
      launch_wgmma_cluster<T, kAccF16, true>(p, st);
    else
      launch_wgmma_cluster<T, kAccF16, false>(p, st);
    return;
  }
  if (!is_supported_head_dim(p.head_dim) || (q_resident && (p.head_dim > kMaxResidentHeadDim || wgs != 2)) ||
      (wgs != 1 && wgs != 2))
    throw KernelError("ffpa.wgmma: head_dim " + std::to_string(p.head_dim) + " with " + std::to_string(wgs) +
                      " warpgroups" + (q_resident ? " and Q resident" : "") + " is not compiled");
  if (wgs == 1)
    launch_wgmma<T, kAccF16, false, 1>(p, st);
  else if (q_resident)
    launch_wgmma<T, kAccF16, true, 2>(p, st);
  else
    launch_wgmma<T, kAccF16, false, 2>(p, st);
}

}  // namespace attn::ffpa_wgmma
