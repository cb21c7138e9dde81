// The pieces both cuDNN SDPA graphs (the forward in cudnn_sdpa.cpp, the backward in
// cudnn_sdpa_backward.cpp) are built from: how a Problem's mask maps onto cuDNN's diagonal band,
// and a builder that owns the descriptors of one operation graph, adds matmul / pointwise /
// reduction / reshape operations and the band-mask subtrees, and finalizes the first execution plan
// an engine accepts.
#pragma once
#include <cudnn.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kernels/api/problem.hpp"
#include "kernels/cudnn/cudnn_graph.hpp"

namespace attn::cudnn {

// How a Problem maps onto the graph cuDNN sees. With a right bound (causal, or window.right >= 0)
// and seq_q > seq_kv, the leading query rows i < seq_q - seq_kv - right see no key; cuDNN's
// bottom-right band refuses seq_q > seq_kv, so the forward cuts those rows off (Q and O start
// `skipped` rows later, same strides) and writes them itself: O = 0, LSE = -inf. Cutting leading
// rows keeps every remaining row's diagonal, since diag(i) = i + seq_kv - seq_q is unchanged when
// both i and seq_q drop by `skipped`.
struct MaskPlan {
  std::int64_t skipped = 0;  // leading query rows with no visible key
  std::int64_t seq_q = 0;    // query rows cuDNN computes
  bool right = false;        // keep key j iff j <= i + (seq_kv - seq_q) + right_shift
  std::int64_t right_shift = 0;
  bool left = false;  // keep key j iff j >= i + (seq_kv - seq_q) - left_keys
  std::int64_t left_keys = 0;
  // A plain causal mask of a square problem, written as the top-left mask row >= col (the same keys).
  bool top_left_causal = false;
};
MaskPlan plan_mask(const Problem& p);

// "9.14.0" from cudnnGetVersion()'s 91400.
std::string version_text(std::size_t v);

std::vector<std::int64_t> packed_strides(const std::vector<std::int64_t>& dims);

// Unique ids of the mask's by-value scalars in a graph, and the values their variant pack points at.
struct MaskScalars {
  std::int64_t seq_kv_uid = 0, seq_q_uid = 0, right_shift_uid = 0, neg_inf_right_uid = 0, left_bound_uid = 0,
               neg_inf_left_uid = 0;
  std::int32_t seq_kv = 0, seq_q = 0, right_shift = 0;
  float left_bound = 0.0f;
  float neg_inf = 0.0f;  // -inf, set by the builder
};

// A run's variant pack: (unique id, pointer) pairs for at most N tensors, on the stack (a run is a
// timed launch). Callable as pack(uid, ptr), the form add_mask_scalars takes.
template <std::size_t N>
class VariantPack {
 public:
  void operator()(std::int64_t uid, const void* ptr) {
    m_uids[m_n] = uid;
    m_ptrs[m_n] = const_cast<void*>(ptr);  // cuDNN's variant pack takes void*; inputs are only read
    ++m_n;
  }
  std::span<const std::int64_t> uids() const { return {m_uids.data(), m_n}; }
  std::span<void* const> ptrs() const { return {m_ptrs.data(), m_n}; }

 private:
  std::array<std::int64_t, N> m_uids{};
  std::array<void*, N> m_ptrs{};
  std::size_t m_n = 0;
};

// Adds the by-value scalars of `m`'s mask subtrees to a variant pack through add(uid, const void*).
template <class Add>
void add_mask_scalars(const MaskPlan& m, const MaskScalars& s, Add&& add) {
  if (m.top_left_causal) {
    add(s.neg_inf_right_uid, &s.neg_inf);
    return;
  }
  if (m.right) {
    add(s.seq_kv_uid, &s.seq_kv);
    add(s.seq_q_uid, &s.seq_q);
    if (m.right_shift != 0) add(s.right_shift_uid, &s.right_shift);
    add(s.neg_inf_right_uid, &s.neg_inf);
  }
  if (m.left) {
    add(s.left_bound_uid, &s.left_bound);
    add(s.neg_inf_left_uid, &s.neg_inf);
  }
}

class GraphBuilder {
 public:
  enum class Kind { real, virt, by_value };
  // Virtual tensors take unique ids from `first_virtual_uid` up.
  explicit GraphBuilder(std::int64_t first_virtual_uid) : m_next_uid(first_virtual_uid) {}

  // `ragged`: an int32 [B + 1, 1, 1, 1] tensor of each batch's first element, which takes the place
  // of the batch stride (a packed varlen layout; the graph then needs a padding mask).
  const Descriptor& tensor(const std::string& name, cudnnDataType_t dt, const std::vector<std::int64_t>& dims,
                           const std::vector<std::int64_t>& strides, std::int64_t uid, Kind kind,
                           const Descriptor* ragged = nullptr);
  const Descriptor& virt(const std::string& name, cudnnDataType_t dt, const std::vector<std::int64_t>& dims);
  // A virtual tensor with the given strides (a transposed view: cuDNN's reshape output).
  const Descriptor& virt_strided(const std::string& name, cudnnDataType_t dt,
                                 const std::vector<std::int64_t>& dims,
                                 const std::vector<std::int64_t>& strides);
  // A [1,1,1,1] scalar passed by value: the variant pack carries a host pointer to it.
  const Descriptor& scalar(const std::string& name, cudnnDataType_t dt, std::int64_t uid);

  // C = A B; m, n, k (optional) are the per-batch GEMM size override tensors of a padded graph.
  void matmul(const std::string& name, const Descriptor& a, const Descriptor& b, const Descriptor& c,
              const Descriptor* m = nullptr, const Descriptor* n = nullptr, const Descriptor* k = nullptr);
  // y = mode(x[, b][, t]); for BINARY_SELECT y = t ? x : b. axis >= 0 only for GEN_INDEX.
  void pointwise(const std::string& name, cudnnPointwiseMode_t mode, cudnnDataType_t prec,
                 const Descriptor& x, const Descriptor* b, const Descriptor* t, const Descriptor& y,
                 std::int64_t axis = -1);
  void reduction(const std::string& name, cudnnReduceTensorOp_t mode, const Descriptor& x,
                 const Descriptor& y);
  void reshape(const std::string& name, const Descriptor& x, const Descriptor& y);

  // The diagonal-band masks in the shape cudnn-frontend's composite lowering uses (its note: the
  // fused engines are tuned for exactly these subtrees): `scores` with the masked entries set to
  // -inf. Fills the scalars' values in `s` from `m` and the problem's lengths.
  const Descriptor& band_mask(const Descriptor& scores, const std::vector<std::int64_t>& dims,
                              const MaskPlan& m, std::int64_t seq_q, std::int64_t seq_kv, MaskScalars& s);

  // cudnn-frontend's padding mask: keeps S where row < seq_len_q and col < seq_len_kv (int32
  // [B,1,1,1] device tensors), -inf (the by-value scalar `neg_inf_uid`) elsewhere.
  const Descriptor& padding_mask(const Descriptor& scores, const std::vector<std::int64_t>& dims,
                                 const Descriptor& seq_len_q, const Descriptor& seq_len_kv,
                                 std::int64_t neg_inf_uid);

  // Finalizes the operation graph and the first execution plan an engine accepts (heuristics mode A,
  // then fallback); Unsupported naming the last refusal when none does.
  void build_plan(cudnnHandle_t handle, const char* kernel_id);
  std::int64_t plan_workspace() const { return m_plan_workspace; }

  // Runs the plan with the variant pack (uids, pointers) and `workspace` (plan_workspace() bytes).
  void execute(cudnnHandle_t handle, std::span<const std::int64_t> uids, std::span<void* const> ptrs,
               void* workspace) const;

 private:
  const Descriptor& mask_right(const Descriptor& scores, const std::vector<std::int64_t>& dims,
                               const MaskPlan& m, const MaskScalars& s);
  const Descriptor& mask_left(const Descriptor& scores, const std::vector<std::int64_t>& dims,
                              const MaskScalars& s);
  void add_op(Descriptor& op);

  // Every tensor, op and graph descriptor the plan was built from; a deque keeps references stable.
  std::deque<Descriptor> m_descs;
  std::vector<cudnnBackendDescriptor_t> m_ops;
  std::optional<Descriptor> m_plan;
  std::int64_t m_next_uid;
  std::int64_t m_plan_workspace = 0;
};

}  // namespace attn::cudnn
