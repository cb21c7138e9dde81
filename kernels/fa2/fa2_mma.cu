// fa2.mma: the registry entry of the FlashAttention-2 class kernel family (kernels/fa2/).
// Variants (one per compiled tile, knobs br/bc/warps/stages; see fa2_traits.hpp for the list and the
// default per head dim). v1: one K and one V buffer in the FA2 order (V_j lands during QK_j,
// K_{j-1} during softmax and PV), padded smem rows. v2: stages = 2 K buffers (K_{j-1} issued with
// V_j at the top of tile j); stages = 1 kept where its smaller footprint buys a second CTA per SM.
// v7: the K/V head offset computed once. v9: S over the whole K tile, exp2 and PV in steps where S
// and O would not fit together; the "tight" D=128 128x64 tile has no band kernel, so causal and
// windowed problems there take 128x32. v10: lazy row max (O rescaled only when a row's max grows by
// more than 2^8). v11: XOR-swizzled smem rows for D a multiple of 64 except the tight tile (v12,
// swizzling it too, spilled on sm_80/89 and was reverted; docs/PERF.md has every version and its
// numbers).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/api/kernel_spec.hpp"
#include "kernels/api/launch_checks.hpp"
#include "kernels/api/selected_blocks.hpp"
#include "kernels/api/sequence_views.hpp"
#include "kernels/common/cuda_check.hpp"
#include "kernels/common/device_int32_array.hpp"
#include "kernels/common/mma_sync_device.hpp"
#include "kernels/fa2/fa2_backward.hpp"
#include "kernels/fa2/fa2_launch.hpp"
#include "kernels/fa2/fa2_params.hpp"
#include "kernels/fa2/fa2_traits.hpp"

namespace attn {

namespace {

using fa2::Fa2Params;
using fa2::TileConfig;

// The tiles the knobs ask for: a zero knob takes the default's value.
TileConfig requested_tiles(const Knobs& k, const TileConfig& dflt) {
  TileConfig t = dflt;
  if (const int v = knob_value(k, "br")) t.br = v;
  if (const int v = knob_value(k, "bc")) t.bc = v;
  if (const int v = knob_value(k, "warps")) t.warps = v;
  if (const int v = knob_value(k, "stages")) t.stages = v;
  return t;
}

std::string compiled_list(int d) {
  std::string s;
  for (const TileConfig& t : fa2::compiled_tiles(d)) {
    if (!s.empty()) s += ", ";
    s += fa2::to_string(t);
  }
  return s;
}

bool is_compiled(int d, const TileConfig& t) {
  for (const TileConfig& c : fa2::compiled_tiles(d))
    if (c == t) return true;
  return false;
}

// Causal, windowed or compressed: the kernel with the band test compiled in runs (fill_params' rule).
// So does a varlen batch, whose per-sequence key ends the band test follows, and the selected branch.
bool has_band(const Problem& p) {
  return p.causal || p.window.active() || p.compress.active() || p.varlen.active() || p.select.active();
}

// The selected branch runs its own tile (select_tiles: 64 rows, 64 keys), whose rows share one query
// block's list of key blocks and whose key tiles each lie in one key block.
std::string select_why_not(const Problem& p, int d, const Knobs& knobs) {
  const TileConfig st = fa2::select_tiles(d);
  if (const TileConfig t = requested_tiles(knobs, st); !(t == st))
    return "knobs br/bc/warps/stages = " + fa2::to_string(t) + ": the selected branch runs only tiles " +
           fa2::to_string(st) + " at D=" + std::to_string(d);
  const std::string sel =
      "select = (" + std::to_string(p.select.block) + "," + std::to_string(p.select.count) + ")";
  if (p.select.block % fa2::kSelectRows != 0)
    return sel +
           ": fa2.mma's selected-branch tile is 64 query rows x 64 keys, so l' must be a multiple of 64";
  if (p.select.count * (p.select.block / st.bc) > fa2::kMaxSelectTiles)
    return sel + ": a query block would visit " + std::to_string(p.select.count * (p.select.block / st.bc)) +
           " key tiles; fa2.mma lists at most " + std::to_string(fa2::kMaxSelectTiles) + " a CTA";
  return selected_table_why_not(p, "fa2.mma", std::int64_t{1} << 30);
}

// The varlen kernel indexes packed rows through int prefix sums.
std::string varlen_why_not(const Problem& p, int d, const TileConfig& t) {
  constexpr std::int64_t kMaxRows = std::numeric_limits<int>::max();
  if (p.total_q() > kMaxRows || p.total_kv() > kMaxRows)
    return "varlen: " + std::to_string(p.total_q()) + " query and " + std::to_string(p.total_kv()) +
           " key rows: fa2.mma's prefix sums are 32-bit, at most 2^31 - 1 rows each";
  if (!(t == fa2::varlen_tiles(d)))
    return "knobs br/bc/warps/stages = " + fa2::to_string(t) + ": varlen batches run only tiles " +
           fa2::to_string(fa2::varlen_tiles(d)) + " at D=" + std::to_string(d);
  return {};
}

// A varlen batch's prefix sums on the device, uploaded once at prepare: the kernel's launch
// arguments, like FlashAttention's cu_seqlens, so timing does not include them.
class DevicePrefixSums {
 public:
  explicit DevicePrefixSums(const Problem& p)
      : m_q(int32_sequence_starts(p.varlen.q)),
        m_kv(int32_sequence_starts(p.varlen.kv)),
        m_order(longest_first(p)) {}
  const int* q() const { return m_q.get(); }
  const int* kv() const { return m_kv.get(); }
  const int* order() const { return m_order.get(); }

 private:
  static std::vector<std::int32_t> longest_first(const Problem& p) {
    std::vector<std::int32_t> order(static_cast<std::size_t>(p.batch));
    for (std::size_t b = 0; b < order.size(); ++b) order[b] = static_cast<std::int32_t>(b);
    std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
      return p.varlen.q[static_cast<std::size_t>(a)] > p.varlen.q[static_cast<std::size_t>(b)];
    });
    return order;
  }
  DeviceInt32Array m_q, m_kv, m_order;
};

std::string fa2_why_not(const Problem& p, const Knobs& knobs) {
  if (std::string why =
          first_reason({half_dtype_why_not(p, "fa2.mma"), same_head_dims_why_not(p, "fa2.mma")});
      !why.empty())
    return why;
  if (!fa2::is_compiled_head_dim(static_cast<int>(p.head_dim)))
    return "head_dim = " + std::to_string(p.head_dim) +
           ": fa2.mma is compiled for 32, 64, 96, 128, 160, 192, 224, 256";
  if (std::string why = grid_shape_why_not(p, "fa2.mma"); !why.empty()) return why;
  if (p.compress.active() && p.seq_q > (std::int64_t{1} << 24))
    return "seq_q = " + std::to_string(p.seq_q) +
           ": fa2.mma takes NSA's compressed branch up to seq_q = 2^24 (its key x stride test is 32-bit)";
  if (const int b = knob_value(knobs, "bwd_buffers"); b != 0 && !has_backward(p.pass))
    return "knob bwd_buffers = " + std::to_string(b) +
           " sets the backward's tiles; pass = " + std::string(to_string(p.pass)) + " runs no backward";
  const int d = static_cast<int>(p.head_dim);
  if (p.select.active()) return select_why_not(p, d, knobs);
  const bool band = has_band(p);
  // The base the knobs modify: the default tile for this mask, shared memory aside (prepare checks it).
  const TileConfig t = requested_tiles(knobs, fa2::default_tiles(d, p.dtype, band, 0, 1 << 30).tiles);
  if (!is_compiled(d, t))
    return "knobs br/bc/warps/stages = " + fa2::to_string(t) + ": not compiled for D=" + std::to_string(d) +
           "; compiled: " + compiled_list(d);
  if (p.varlen.active()) return varlen_why_not(p, d, t);
  if (band && fa2::is_tight(d, t))
    return "knobs br/bc/warps/stages = " + fa2::to_string(t) +
           ": compiled without the band mask (S, O and the band's state do not fit 255 registers); " +
           "causal and windowed problems at D=" + std::to_string(d) +
           " take the other tiles: " + compiled_list(d);
  return {};
}

// Calls run_fa2<dtype, D> for the runtime (dtype, D): the one switch from values to templates.
template <DType kType>
void dispatch_head_dim(int d, const Fa2Params& prm, const TileConfig& t, bool band, void* stream) {
  switch (d) {
    case 32:
      return fa2::run_fa2<kType, 32>(prm, t, band, stream);
    case 64:
      return fa2::run_fa2<kType, 64>(prm, t, band, stream);
    case 96:
      return fa2::run_fa2<kType, 96>(prm, t, band, stream);
    case 128:
      return fa2::run_fa2<kType, 128>(prm, t, band, stream);
    case 160:
      return fa2::run_fa2<kType, 160>(prm, t, band, stream);
    case 192:
      return fa2::run_fa2<kType, 192>(prm, t, band, stream);
    case 224:
      return fa2::run_fa2<kType, 224>(prm, t, band, stream);
    case 256:
      return fa2::run_fa2<kType, 256>(prm, t, band, stream);
    default:
      throw KernelError("fa2.mma: head_dim " + std::to_string(d) + " is not compiled");
  }
}

class Fa2MmaKernel final : public PreparedKernel {
 public:
  Fa2MmaKernel(const Problem& p, const TileConfig& t, int bwd_buffers)
      : m_problem(p), m_tiles(t), m_bwd_buffers(bwd_buffers) {
    if (p.varlen.active()) m_prefix_sums = std::make_unique<DevicePrefixSums>(p);
    // The index tensor, uploaded once like cu_seqlens: an input of the problem, not timed work.
    if (p.select.active()) m_selected = std::make_unique<DeviceInt32Array>(selected_block_table(p));
  }

  bool writes_lse() const override { return true; }

  void run(const AttentionArgs& a) override {
    const Problem& pr = m_problem;
    check_scale(a, "fa2.mma", "the running max is taken on unscaled scores");
    check_io_aligned(a, "fa2.mma", "cp.async and 16-byte stores");
    Fa2Params prm;
    fa2::fill_params(prm, pr, a);
    if (m_prefix_sums) {
      prm.cu_q = m_prefix_sums->q();
      prm.cu_kv = m_prefix_sums->kv();
      prm.seq_order = m_prefix_sums->order();
    }
    if (m_selected) prm.sel = m_selected->get();
    const bool band = has_band(pr);
    const int d = static_cast<int>(pr.head_dim);
    if (pr.dtype == DType::fp16)
      dispatch_head_dim<DType::fp16>(d, prm, m_tiles, band, a.stream);
    else
      dispatch_head_dim<DType::bf16>(d, prm, m_tiles, band, a.stream);
  }
  std::size_t backward_workspace_bytes() const override { return fa2::backward_workspace_bytes(m_problem); }
  void run_backward(const BackwardArgs& a) override {
    const DevicePrefixSums* v = m_prefix_sums.get();
    fa2::run_backward(m_problem, a, m_bwd_buffers, v ? v->q() : nullptr, v ? v->kv() : nullptr,
                      v ? v->order() : nullptr);
  }

 private:
  Problem m_problem;
  TileConfig m_tiles;
  int m_bwd_buffers;  // the backward's Q/dO buffers (fa2::backward_tiles); 0 for a forward-only pass
  std::unique_ptr<DevicePrefixSums> m_prefix_sums;  // varlen batches only
  std::unique_ptr<DeviceInt32Array> m_selected;     // the selected branch's index tensor only
};

std::unique_ptr<PreparedKernel> fa2_prepare(const Problem& p, const Knobs& knobs) {
  require_supported(fa2_why_not(p, knobs));
  const MmaSyncDevice dev = mma_sync_device("fa2.mma");
  const int smem_optin = dev.smem_optin;
  const int d = static_cast<int>(p.head_dim);
  const fa2::TileChoice choice =
      fa2::default_tiles(d, p.dtype, has_band(p), dev.major * 10 + dev.minor, smem_optin);
  const TileConfig t = requested_tiles(knobs, p.select.active() ? fa2::select_tiles(d) : choice.tiles);
  const int list_bytes = p.select.active() ? fa2::select_list_bytes(fa2::kMaxSelectTiles) : 0;
  if (fa2::smem_bytes(d, t) + list_bytes > smem_optin)
    throw Unsupported("tiles " + fa2::to_string(t) + " need " +
                      std::to_string(fa2::smem_bytes(d, t) + list_bytes) +
                      " bytes of shared memory, this GPU allows " + std::to_string(smem_optin) + " a block");
  // The backward's tiles are its own (Tiles<D>, double- or single-buffered): a GPU that cannot give
  // them skips the case here, once, rather than at each timed launch.
  int bwd_buffers = 0;
  if (has_backward(p.pass)) {
    const fa2::BackwardTiles bt =
        fa2::backward_tiles(p, knob_value(knobs, "bwd_buffers"), static_cast<std::size_t>(smem_optin));
    if (!bt.why_not.empty()) throw Unsupported(bt.why_not);
    bwd_buffers = bt.buffers;
  }
  return std::make_unique<Fa2MmaKernel>(p, t, bwd_buffers);
}

}  // namespace

KernelSpec make_fa2_mma_spec() {
  KernelSpec s;
  s.id = "fa2.mma";
  s.description =
      "FlashAttention-2 forward: mma.sync m16n8k16 fp32-acc, ldmatrix, cp.async K/V overlap, online exp2 "
      "softmax, O in registers; causal/window/NSA compressed and selected/GQA/varlen; FA2 backward (D "
      "32-256, varlen too, dQ by fp32 atomics)";
  s.backward_why_not = [](const Problem& p, const Knobs& knobs) {
    if (std::string why = fa2::backward_why_not(p); !why.empty()) return why;
    // The knob against what is compiled (the GPU's shared memory is prepare's question).
    return fa2::backward_tiles(p, knob_value(knobs, "bwd_buffers"), std::numeric_limits<std::size_t>::max())
        .why_not;
  };
  s.backend = Backend::cuda;
  s.knobs = {
      {"br", {0, 64, 128}, 0, "query rows per CTA (0 = traits default for the head dim)"},
      {"bc", {0, 32, 64, 128}, 0, "keys per K/V tile (0 = traits default)"},
      {"warps", {0, 4, 8}, 0, "warps per CTA (0 = traits default)"},
      {"stages",
       {0, 1, 2},
       0,
       "K buffers: 1 = FA2 order, 2 = next K loads during the whole tile (0 = default)"},
      {"bwd_buffers",
       {0, 1, 2},
       0,
       "backward Q/dO buffers: 2 = the next query block loads during this one, 1 = the lean tiles (loads "
       "after dK/dV; what sm_80 runs at D 64-256) (0 = 2 where shared memory allows)"},
  };
  s.compressed_mask = true;
  s.selected_branch = true;
  s.varlen = true;
  s.why_not = fa2_why_not;
  s.prepare = fa2_prepare;
  return s;
}

}  // namespace attn
