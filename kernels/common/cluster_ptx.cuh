// Thread-block clusters (sm_90): the split-phase cluster barrier, and bulk copies into another CTA's
// shared memory that complete on its mbarrier (distributed shared memory). Device code for sm_90 and
// later only.
#pragma once
#include <cstdint>

namespace attn::cluster {

// Every thread of every CTA of the cluster arrives, then waits. Release on arrive makes this thread's
// earlier shared-memory accesses visible to (and finished before) the other CTAs' accesses after their
// wait; acquire on wait orders this thread's later accesses after the others' earlier ones. A thread
// alternates arrive and wait.
__device__ __forceinline__ void arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// This CTA's rank in its cluster.
__device__ __forceinline__ int cta_rank() {
  std::uint32_t r = 0;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return static_cast<int>(r);
}

// One arrival on an mbarrier of another CTA of the cluster (`remote`: a shared::cluster address from
// map_shared), with the default CTA-scope release: for a slot read by the tensor cores (async proxy,
// finished by the wgmma wait) there are no generic writes to publish.
__device__ __forceinline__ void mbar_arrive_remote(std::uint32_t remote) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote) : "memory");
}

// The address of `local` (a shared::cta address of this CTA) in CTA `rank`'s shared memory.
__device__ __forceinline__ std::uint32_t map_shared(std::uint32_t local, int rank) {
  std::uint32_t out = 0;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(out) : "r"(local), "r"(rank));
  return out;
}

// Copies `bytes` (a multiple of 16) of this CTA's shared memory at `src` into another CTA's at `remote`
// (a shared::cluster address) with the bulk-copy engine, completing the bytes on that CTA's mbarrier
// `remote_bar` (also mapped). Generic-proxy writes of `src` need fence.proxy.async first.
__device__ __forceinline__ void copy_to_remote(std::uint32_t remote, std::uint32_t src, std::uint32_t bytes,
                                               std::uint32_t remote_bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
          remote),
      "r"(src), "r"(bytes), "r"(remote_bar)
      : "memory");
}

__device__ __forceinline__ void store_local_16(std::uint32_t addr, uint4 v) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(v.x), "r"(v.y), "r"(v.z),
               "r"(v.w)
               : "memory");
}

__device__ __forceinline__ uint4 load_local_16(std::uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}

}  // namespace attn::cluster
