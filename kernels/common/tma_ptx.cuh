// Hopper's asynchronous copy machinery (sm_90): shared-memory mbarriers with transaction counts, the
// tensor-memory-accelerator (TMA) tile load that completes on one, the named barriers warpgroups
// hand turns over with, and the register reallocation between producer and consumer warpgroups.
// Device code for sm_90a only; the tensor maps are encoded on the host (kernels/common/bshd_tensor_map.hpp).
#pragma once
#include <cuda.h>

#include <cstdint>

namespace attn::tma {

// An mbarrier expecting `arrivals` arrive operations per phase (plus, with expect_tx, the bytes).
__device__ __forceinline__ void mbar_init(std::uint32_t bar, std::uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals) : "memory");
}
// Makes initialised barriers visible to the async proxy (the TMA unit) before the block syncs.
__device__ __forceinline__ void fence_mbar_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// One arrival that also raises the phase's expected transaction bytes (the TMA loads it guards).
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Waits until the phase of parity `parity` has completed. A fresh barrier is in phase 0, so a wait
// on parity 1 returns at once: producers start their "slot is free" waits there.
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (done == 0);
}

// A 4-D tile of `map` at element coordinates (c0 innermost .. c3) into shared memory at `dst`;
// completes `bar`'s transaction bytes. Coordinates past the tensor's extent read as zeros.
__device__ __forceinline__ void load_tile_4d(std::uint32_t dst, const CUtensorMap* map, std::uint32_t bar,
                                             int c0, int c1, int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5, "
      "%6}], "
      "[%2];\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}
// The same tile written at `dst`'s offset into the shared memory of every CTA of the cluster named in
// `cta_mask`, completing the bytes on the mbarrier at `bar`'s offset in each of them: one L2 read
// feeds them all.
__device__ __forceinline__ void load_tile_4d_multicast(std::uint32_t dst, const CUtensorMap* map,
                                                       std::uint32_t bar, int c0, int c1, int c2, int c3,
                                                       std::uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
      "[%0], [%1, {%3, %4, %5, %6}], [%2], %7;\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "h"(cta_mask)
      : "memory");
}
// A 4-D tile of shared memory at `src` stored to `map` at element coordinates (c0 innermost .. c3), in
// the issuing thread's bulk group; coordinates past the tensor's extent are not written. The shared
// memory's writes must be made visible to the async proxy first (wgmma::fence_proxy_async_smem), and
// `src` stays untouched until store_wait_read().
__device__ __forceinline__ void store_tile_4d(const CUtensorMap* map, std::uint32_t src, int c0, int c1,
                                              int c2, int c3) {
  asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
               : "memory");
}
__device__ __forceinline__ void store_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Until the thread's committed stores have read their shared memory (it may then be written again).
__device__ __forceinline__ void store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}
// Until the thread's committed stores are complete.
__device__ __forceinline__ void store_wait_all() {
  asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}
__device__ __forceinline__ void st_shared_u32(std::uint32_t addr, std::uint32_t v) {
  asm volatile("st.shared.u32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ void prefetch_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}

// Named barriers (ids 1..15; 0 is __syncthreads): `threads` counts the syncing and arriving threads.
__device__ __forceinline__ void named_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Moves registers between warpgroups: every thread of the warpgroup executes it.
template <int Regs>
__device__ __forceinline__ void regs_release() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Regs));
}
template <int Regs>
__device__ __forceinline__ void regs_claim() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Regs));
}

}  // namespace attn::tma
