// ffpa.wgmma's partial S added where D is split: the split form's two warpgroups through the CTA's
// shared memory, and cluster mode's CTAs through distributed shared memory (a reduce-scatter and an
// all-gather with the bulk-copy engine), so that every warpgroup of a row block holds the same S.
// Included by ffpa_wgmma_kernel.cuh.
#pragma once
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/common/cluster_ptx.cuh"
#include "kernels/common/tma_ptx.cuh"
#include "kernels/common/wgmma_ptx.cuh"

namespace attn::ffpa_wgmma {

// Two 16-byte groups of partial-S registers added: fp32 lanes, or packed fp16 pairs.
__device__ __forceinline__ uint4 add_partials(uint4 a, uint4 b, float) {
  return make_uint4(__float_as_uint(__uint_as_float(a.x) + __uint_as_float(b.x)),
                    __float_as_uint(__uint_as_float(a.y) + __uint_as_float(b.y)),
                    __float_as_uint(__uint_as_float(a.z) + __uint_as_float(b.z)),
                    __float_as_uint(__uint_as_float(a.w) + __uint_as_float(b.w)));
}
__device__ __forceinline__ std::uint32_t add_half2(std::uint32_t a, std::uint32_t b) {
  const __half2 s = __hadd2(*reinterpret_cast<const __half2*>(&a), *reinterpret_cast<const __half2*>(&b));
  return *reinterpret_cast<const std::uint32_t*>(&s);
}
__device__ __forceinline__ uint4 add_partials(uint4 a, uint4 b, std::uint32_t) {
  return make_uint4(add_half2(a.x, b.x), add_half2(a.y, b.y), add_half2(a.z, b.z), add_half2(a.w, b.w));
}
template <int N>
__device__ __forceinline__ uint4 group_of(const float (&s)[N], int q) {
  return make_uint4(__float_as_uint(s[4 * q]), __float_as_uint(s[4 * q + 1]), __float_as_uint(s[4 * q + 2]),
                    __float_as_uint(s[4 * q + 3]));
}
template <int N>
__device__ __forceinline__ uint4 group_of(const std::uint32_t (&s)[N], int q) {
  return make_uint4(s[4 * q], s[4 * q + 1], s[4 * q + 2], s[4 * q + 3]);
}
template <int N>
__device__ __forceinline__ void set_group(float (&s)[N], int q, uint4 v) {
  s[4 * q] = __uint_as_float(v.x), s[4 * q + 1] = __uint_as_float(v.y), s[4 * q + 2] = __uint_as_float(v.z),
        s[4 * q + 3] = __uint_as_float(v.w);
}
template <int N>
__device__ __forceinline__ void set_group(std::uint32_t (&s)[N], int q, uint4 v) {
  s[4 * q] = v.x, s[4 * q + 1] = v.y, s[4 * q + 2] = v.z, s[4 * q + 3] = v.w;
}

// The split form: the two warpgroups of a CTA hold partial S of the same 64 rows (each over its half of
// D), in the same register layout. Each stores its partial group-major in its own half of `buf`
// ([G][128] x 16 bytes: a warp's stores are whole 128-byte lines), and after one barrier adds the
// other's. Addition commutes, so both warpgroups hold the same S to the bit, and so the same softmax and
// P. The next tile's stores come after at least one item's __syncthreads, past every read of these.
template <typename Acc, int N>
__device__ __forceinline__ void add_other_warpgroup_s(Acc (&s)[N], std::uint32_t buf, int wg, int tid_in_wg) {
  constexpr int G = N / 4;
  constexpr std::uint32_t kHalfBytes = G * 128 * 16;
  const std::uint32_t mine = buf + static_cast<std::uint32_t>(wg) * kHalfBytes + tid_in_wg * 16;
  const std::uint32_t other = buf + static_cast<std::uint32_t>(1 - wg) * kHalfBytes + tid_in_wg * 16;
#pragma unroll
  for (int q = 0; q < G; ++q) cluster::store_local_16(mine + q * 128 * 16, group_of(s, q));
  __syncthreads();
#pragma unroll
  for (int q = 0; q < G; ++q)
    set_group(s, q, add_partials(group_of(s, q), cluster::load_local_16(other + q * 128 * 16), Acc{}));
}

// Cluster mode: S = the sum of the cluster's partial S, the same in every CTA. A thread's partial is
// G = N / 4 16-byte groups; CTA r owns groups [lo(r), lo(r + 1)), lo(r) = r G / C. Every CTA stages its
// partial in its stage buffer, group-major ([G][Threads] x 16 bytes, so one owner's groups are one
// block), and the bulk-copy engine moves each block to its owner's scatter buffer (reduce-scatter; a
// slot a sender: its rank, less one past the receiver's). The owner adds the C partials of its groups
// in rank order, writes the sums into its own stage buffer and copies them into the same place of
// every other CTA's stage buffer (all-gather), so each stage buffer ends up holding all of S. A peer
// writes a CTA's stage buffer only after it received that CTA's block of its part, so the block has
// been read. Each phase completes on the receiver's barrier, armed for a tile before the CTA arrives
// at the cluster barrier that lets the others send that tile. Per thread, 16-byte copies through
// st.async (one barrier update each) and remote loads (a round trip each) measured 2-3x slower than
// recomputing S (docs/PERF.md).
//
// Everything is derived from the exchange's base address (a constant past the ring), the CTA's rank
// and the parameter block's n_passes: the kernel sits at the register limit.
template <int G>
__device__ __forceinline__ int lo_of(int r, int ranks) {
  return r * G / ranks;
}
__device__ __forceinline__ int slot_of(int sender, int receiver) {
  return sender < receiver ? sender : sender - 1;
}
// Base layout: scatter barrier, gather barrier (8 bytes each), scatter buffer, stage buffer.
template <int Threads, int G>
struct ExchangeLayout {
  static constexpr std::uint32_t kGroupBytes = Threads * 16;
  std::uint32_t base;
  int ranks;
  __device__ std::uint32_t bar_scatter() const { return base; }
  __device__ std::uint32_t bar_gather() const { return base + 8; }
  __device__ int part_max() const { return (G + ranks - 1) / ranks; }
  __device__ std::uint32_t scatter() const { return base + 16; }
  __device__ std::uint32_t stage() const {
    return scatter() + static_cast<std::uint32_t>((ranks - 1) * part_max()) * kGroupBytes;
  }
  __device__ std::uint32_t end() const { return stage() + static_cast<std::uint32_t>(G) * kGroupBytes; }
  __device__ void arm(int rank) const {
    const int own = lo_of<G>(rank + 1, ranks) - lo_of<G>(rank, ranks);
    tma::mbar_arrive_expect_tx(bar_scatter(), static_cast<std::uint32_t>((ranks - 1) * own) * kGroupBytes);
    tma::mbar_arrive_expect_tx(bar_gather(), static_cast<std::uint32_t>(G - own) * kGroupBytes);
  }
};
// The exchange in three phases, so that the kernel can run the tile before's P V between them (the
// copies are in flight meanwhile): send (stage this CTA's partial, copy each owner its block), add
// (wait for the others' blocks, add this CTA's groups, copy the sums to every other CTA) and gather
// (wait for the others' sums and read them; arm the next tile's barriers and release this tile's
// buffers to the cluster). Every thread of the CTA calls each phase, in this order, once a tile.
template <int Threads, typename Acc, int N>
__device__ __forceinline__ void exchange_send(const Acc (&s)[N], const ExchangeLayout<Threads, N / 4>& x,
                                              int rank, int tid, int tile) {
  constexpr int G = N / 4;
  constexpr std::uint32_t kGroupBytes = ExchangeLayout<Threads, G>::kGroupBytes;
  const std::uint32_t mine = static_cast<std::uint32_t>(tid * 16);
  if (tile > 0) cluster::wait();  // every CTA has received and read the tile before
#pragma unroll
  for (int q = 0; q < G; ++q) cluster::store_local_16(x.stage() + q * kGroupBytes + mine, group_of(s, q));
  wgmma::fence_proxy_async_smem();
  __syncthreads();
  if (tid == 0)
    for (int r = 0; r < x.ranks; ++r)
      if (r != rank) {
        const int r_lo = lo_of<G>(r, x.ranks), r_hi = lo_of<G>(r + 1, x.ranks);
        cluster::copy_to_remote(cluster::map_shared(x.scatter(), r) +
                                    static_cast<std::uint32_t>(slot_of(rank, r) * x.part_max()) * kGroupBytes,
                                x.stage() + static_cast<std::uint32_t>(r_lo) * kGroupBytes,
                                static_cast<std::uint32_t>(r_hi - r_lo) * kGroupBytes,
                                cluster::map_shared(x.bar_scatter(), r));
      }
}
template <int Threads, typename Acc, int N>
__device__ __forceinline__ void exchange_add(Acc (&s)[N], const ExchangeLayout<Threads, N / 4>& x, int rank,
                                             int tid, int tile) {
  constexpr int G = N / 4;
  constexpr std::uint32_t kGroupBytes = ExchangeLayout<Threads, G>::kGroupBytes;
  const int lo = lo_of<G>(rank, x.ranks), hi = lo_of<G>(rank + 1, x.ranks);
  const std::uint32_t mine = static_cast<std::uint32_t>(tid * 16);
  tma::mbar_wait(x.bar_scatter(), static_cast<std::uint32_t>(tile & 1));
#pragma unroll
  for (int q = 0; q < G; ++q) {
    if (q < lo || q >= hi) continue;
    uint4 sum = group_of(s, q);
#pragma unroll 1
    for (int r = 0; r < x.ranks; ++r) {
      const uint4 v =
          r == rank ? group_of(s, q)
                    : cluster::load_local_16(
                          x.scatter() +
                          static_cast<std::uint32_t>(slot_of(r, rank) * x.part_max() + q - lo) * kGroupBytes +
                          mine);
      sum = r == 0 ? v : add_partials(sum, v, Acc{});
    }
    set_group(s, q, sum);
    cluster::store_local_16(x.stage() + q * kGroupBytes + mine, sum);
  }
  wgmma::fence_proxy_async_smem();
  __syncthreads();
  if (tid == 0)
    for (int r = 0; r < x.ranks; ++r)
      if (r != rank)
        cluster::copy_to_remote(
            cluster::map_shared(x.stage(), r) + static_cast<std::uint32_t>(lo) * kGroupBytes,
            x.stage() + static_cast<std::uint32_t>(lo) * kGroupBytes,
            static_cast<std::uint32_t>(hi - lo) * kGroupBytes, cluster::map_shared(x.bar_gather(), r));
}
template <int Threads, typename Acc, int N>
__device__ __forceinline__ void exchange_gather(Acc (&s)[N], const ExchangeLayout<Threads, N / 4>& x,
                                                int rank, int tid, int tile) {
  constexpr int G = N / 4;
  constexpr std::uint32_t kGroupBytes = ExchangeLayout<Threads, G>::kGroupBytes;
  const int lo = lo_of<G>(rank, x.ranks), hi = lo_of<G>(rank + 1, x.ranks);
  const std::uint32_t mine = static_cast<std::uint32_t>(tid * 16);
  tma::mbar_wait(x.bar_gather(), static_cast<std::uint32_t>(tile & 1));
#pragma unroll
  for (int q = 0; q < G; ++q)
    if (q < lo || q >= hi) set_group(s, q, cluster::load_local_16(x.stage() + q * kGroupBytes + mine));
  if (tid == 0) x.arm(rank);  // the next tile's phases
  cluster::arrive();
}

}  // namespace attn::ffpa_wgmma
