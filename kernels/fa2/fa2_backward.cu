// fa2.mma's backward, host side: which problems it takes, its workspace, and the launches (the
// kernels are in fa2_backward_kernel.cuh; head dims 32-128 are instantiated here, 160-256 in
// fa2_backward_wide.cu, to keep each translation unit's build short).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "kernels/fa2/fa2_backward.hpp"
#include "kernels/fa2/fa2_backward_kernel.cuh"

namespace attn::fa2 {

namespace bwd {
#define ATTN_FA2_BWD_WIDE(D)                                                                   \
  extern template void launch<__half, D>(const Problem&, const BwdParams&, int, cudaStream_t); \
  extern template void launch<__nv_bfloat16, D>(const Problem&, const BwdParams&, int, cudaStream_t);
ATTN_FA2_BWD_WIDE(160)
ATTN_FA2_BWD_WIDE(192)
ATTN_FA2_BWD_WIDE(224)
ATTN_FA2_BWD_WIDE(256)
#undef ATTN_FA2_BWD_WIDE
}  // namespace bwd

using bwd::BwdParams;
using bwd::launch;

namespace {
// The head dims the backward is compiled for (instantiated here and in fa2_backward_wide.cu): the
// refusal and the launch both read this one list.
template <int... Ds>
struct HeadDims {
  static bool contains(int d) { return ((d == Ds) || ...); }
  static std::string text() {  // "32, 64, ... and 256"
    std::string s;
    std::size_t i = 0;
    ((s += (i++ == 0 ? "" : i == sizeof...(Ds) ? " and " : ", ") + std::to_string(Ds)), ...);
    return s;
  }
  // Calls f(std::integral_constant<int, D>) for the D equal to d; false when d is not compiled.
  template <class F>
  static bool with(int d, F&& f) {
    return ((d == Ds && (f(std::integral_constant<int, Ds>{}), true)) || ...);
  }
};
using BackwardHeadDims = HeadDims<32, 64, 96, 128, 160, 192, 224, 256>;

// Every compiled head dim's tiles fit sm_90's shared memory a block (the GPU they are tuned for).
template <int... Ds>
constexpr bool fit_sm90(HeadDims<Ds...>) {
  return ((bwd::smem_bytes<Ds>() <= smem::kSm90Optin) && ...);
}
static_assert(fit_sm90(BackwardHeadDims{}), "a head dim's backward tiles exceed sm_90's 227 KiB a block");

// dQ's accumulator order: every element of a warp's tile has one place in its query block's region,
// and dq_acc_cell finds the element again (the conversion reads the region through it).
template <int D>
constexpr bool dq_acc_order_round_trips() {
  using Ti = bwd::Tiles<D>;
  bool seen[Ti::kQueries * D] = {};
  for (int warp = 0; warp < bwd::kWarps; ++warp)
    for (int mt = 0; mt < Ti::kDqM; ++mt)
      for (int half = 0; half < 2; ++half)
        for (int nt = 0; nt < 2 * Ti::kDqN; ++nt)
          for (int lane = 0; lane < 32; ++lane)
            for (int e = 0; e < 2; ++e) {
              const int at = bwd::dq_acc_index<D>(warp, mt, half, nt, lane) + e;
              if (at < 0 || at >= Ti::kQueries * D || seen[at]) return false;
              seen[at] = true;
              int row = 0, col = 0;
              bwd::dq_acc_cell<D>(at, row, col);
              if (row != (warp % Ti::kDqRowWarps) * Ti::kDqM * 16 + 16 * mt + lane / 4 + 8 * half ||
                  col != ((nt / 2) * Ti::kDqColWarps + warp / Ti::kDqRowWarps) * 16 + nt % 2 * 8 +
                             2 * (lane % 4) + e)
                return false;
            }
  return true;
}
template <int... Ds>
constexpr bool dq_acc_orders_round_trip(HeadDims<Ds...>) {
  return (dq_acc_order_round_trips<Ds>() && ...);
}
static_assert(dq_acc_orders_round_trip(BackwardHeadDims{}), "dQ's accumulator order does not invert");

// The interleaved column warps of the dK/dV and dQ grids cover each of D's columns once, and for every
// chunk the key-block kernel addresses through chunk_addr's aligned form (S and dP's operands from
// column 0, dK/dV's and dQ's B operands from a column warp's first block, each n-pair's offset) that
// form equals the plain swizzle: the low bits of the lane's chunk and of each offset stay disjoint.
template <int D>
constexpr bool interleaved_columns_hold() {
  using Ti = bwd::Tiles<D>;
  const auto same = [](int chunk, int ct, int row8) {
    return bwd::chunk_addr<true, true>(0, row8, chunk, ct) ==
           bwd::chunk_addr<true, false>(0, row8, chunk, ct);
  };
  // One [rows x D] grid (dK/dV or dQ): col_of(wc, nt) for `col_warps` column warps of `n_pairs` n-pairs,
  // whose B operands are read transposed from the warp's first block, an n-pair 2 col_warps chunks on.
  const auto grid_holds = [&](int col_warps, int n_pairs, auto col_of) {
    bool seen[D] = {};
    for (int wc = 0; wc < col_warps; ++wc)
      for (int nt = 0; nt < 2 * n_pairs; ++nt)
        for (int c = 0; c < 8; ++c) {
          const int col = col_of(wc, nt) + c;
          if (col >= D || seen[col]) return false;
          seen[col] = true;
        }
    for (int col = 0; col < D; ++col)
      if (!seen[col]) return false;
    for (int lane = 0; lane < 32; ++lane)
      for (int row8 = 0; row8 < 8; ++row8)
        for (int wc = 0; wc < col_warps; ++wc)
          for (int np = 0; np < n_pairs; ++np)
            if (!same(col_of(wc, 0) / 8 + lane / 16, 2 * np * col_warps, row8)) return false;
    return true;
  };
  for (int lane = 0; lane < 32; ++lane)  // S, dP: A by lane / 16, B by (lane / 8) % 2, from column 0
    for (int row8 = 0; row8 < 8; ++row8)
      for (int kk = 0; kk < D / 16; ++kk)
        if (!same(lane / 16, 2 * kk, row8) || !same((lane / 8) % 2, 2 * kk, row8)) return false;
  return grid_holds(Ti::kKvColWarps, Ti::kKvN, [](int wc, int nt) { return Ti::kv_col(wc, nt); }) &&
         grid_holds(Ti::kDqColWarps, Ti::kDqN, [](int wc, int nt) { return Ti::dq_col(wc, nt); });
}
template <int... Ds>
constexpr bool interleaved_columns_hold(HeadDims<Ds...>) {
  return (interleaved_columns_hold<Ds>() && ...);
}
static_assert(interleaved_columns_hold(BackwardHeadDims{}),
              "a column warp's blocks miss a column, or the aligned chunk addresses differ from the swizzle");
}  // namespace

std::string backward_why_not(const Problem& p) {
  if (BackwardHeadDims::contains(static_cast<int>(p.head_dim))) return {};
  return "head_dim = " + std::to_string(p.head_dim) + ": fa2.mma's backward is compiled for " +
         BackwardHeadDims::text();
}

BackwardTiles backward_tiles(const Problem& p, int requested, std::size_t smem_optin) {
  BackwardTiles t;
  BackwardHeadDims::with(static_cast<int>(p.head_dim), [&](auto d) {
    constexpr int kD = decltype(d)::value;
    constexpr std::size_t kDouble = bwd::smem_bytes<kD, bwd::kDoubleBuffer>(),
                          kSingle = bwd::smem_bytes<kD, bwd::kSingleBuffer>();
    constexpr bool kLean = bwd::lean_compiled<kD>();
    const std::string dim = "fa2.mma's backward at head_dim " + std::to_string(kD);
    if (requested == bwd::kSingleBuffer && !kLean) {
      t.why_not = "knob bwd_buffers = 1: " + dim +
                  " has no lean tiles (its double-buffered ones fit every GPU from sm_80 that fits it)";
    } else if (requested != bwd::kSingleBuffer && kDouble <= smem_optin) {
      t = {bwd::kDoubleBuffer, kDouble, {}};
    } else if (requested != bwd::kDoubleBuffer && kLean && kSingle <= smem_optin) {
      t = {bwd::kSingleBuffer, kSingle, {}};
    } else {
      const std::size_t need = requested == bwd::kDoubleBuffer || !kLean ? kDouble : kSingle;
      t.why_not = dim + " needs " + std::to_string(need) + " bytes of shared memory a block" +
                  (requested == bwd::kDoubleBuffer ? " (knob bwd_buffers = 2)" : "") + "; this GPU allows " +
                  std::to_string(smem_optin);
    }
  });
  return t;
}

namespace {
std::size_t aligned_256(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

template <int D>
void launch_dtype(bool half, const Problem& pr, const BwdParams& prm, int buffers, cudaStream_t stream) {
  if (half)
    launch<__half, D>(pr, prm, buffers, stream);
  else
    launch<__nv_bfloat16, D>(pr, prm, buffers, stream);
}

// dQ's accumulator: per query head, the tokens and up to kMaxQueries rows of padding a sequence.
constexpr std::int64_t kMaxQueries = 128;  // the largest Tiles<D>::kQueries
std::size_t accumulator_bytes(const Problem& p) {
  return static_cast<std::size_t>(p.heads_q * (p.total_q() + p.batch * kMaxQueries) * p.head_dim) *
         sizeof(float);
}

// The workspace: dQ's accumulator, the row sums, LSE log2(e) (byte offsets; each part 256-aligned).
struct WorkspaceLayout {
  std::size_t row_sums, lse_log2, total;
};
WorkspaceLayout workspace_layout(const Problem& p) {
  const std::size_t rows = static_cast<std::size_t>(p.lse_elems()) * sizeof(float);
  const std::size_t row_sums = aligned_256(accumulator_bytes(p)), lse_log2 = row_sums + aligned_256(rows);
  return {row_sums, lse_log2, lse_log2 + rows};
}
}  // namespace

std::size_t backward_workspace_bytes(const Problem& p) { return workspace_layout(p).total; }

void run_backward(const Problem& pr, const BackwardArgs& a, int buffers, const int* cu_q, const int* cu_kv,
                  const int* seq_order) {
  const WorkspaceLayout layout = workspace_layout(pr);
  if (a.workspace_bytes < layout.total) throw KernelError("fa2.mma backward: workspace too small");
  if (pr.varlen.active() != (cu_q != nullptr && cu_kv != nullptr && seq_order != nullptr))
    throw KernelError("fa2.mma backward: a varlen batch needs its prefix sums, a dense one none");
  for (const void* ptr : {a.q, a.k, a.v, a.d_o})
    if (ptr == nullptr || reinterpret_cast<std::uintptr_t>(ptr) % 16 != 0)
      throw KernelError("fa2.mma backward: Q, K, V and dO must be non-null and 16-byte aligned (cp.async)");
  BwdParams prm{};
  prm.q = a.q, prm.k = a.k, prm.v = a.v, prm.o = a.o, prm.d_o = a.d_o, prm.lse = a.lse;
  prm.dq = a.dq, prm.dk = a.dk, prm.dv = a.dv;
  auto* ws = static_cast<char*>(a.workspace);
  prm.dq_acc = reinterpret_cast<float*>(ws);
  prm.row_sums = reinterpret_cast<float*>(ws + layout.row_sums);
  prm.lse_log2 = reinterpret_cast<float*>(ws + layout.lse_log2);
  prm.mask = make_device_mask(pr);
  prm.batch = static_cast<int>(pr.batch), prm.heads_q = static_cast<int>(pr.heads_q);
  prm.heads_kv = static_cast<int>(pr.heads_kv), prm.group = static_cast<int>(pr.heads_q / pr.heads_kv);
  prm.seq_q = static_cast<int>(pr.seq_q), prm.seq_kv = static_cast<int>(pr.seq_kv);
  prm.scale = a.scale;
  prm.cu_q = cu_q;
  prm.cu_kv = cu_kv;
  prm.seq_order = seq_order;
  prm.total_q = pr.total_q();
  auto stream = static_cast<cudaStream_t>(a.stream);
  const bool half = pr.dtype == DType::fp16;
  const bool launched = BackwardHeadDims::with(static_cast<int>(pr.head_dim), [&](auto d) {
    constexpr int kD = decltype(d)::value;
    static_assert(bwd::Tiles<kD>::kQueries <= kMaxQueries);
    prm.acc_rows = prm.total_q + pr.batch * bwd::Tiles<kD>::kQueries;
    if (buffers == bwd::kSingleBuffer && !bwd::lean_compiled<kD>())
      throw KernelError("fa2.mma backward: head_dim " + std::to_string(kD) + " has no lean tiles");
    launch_dtype<kD>(half, pr, prm, buffers, stream);
  });
  if (!launched)
    throw KernelError("fa2.mma backward: head_dim " + std::to_string(pr.head_dim) + " is not compiled");
}

}  // namespace attn::fa2
