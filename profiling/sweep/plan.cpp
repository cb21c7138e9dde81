// Expands a SweepSpec into cases (see plan.hpp).
#include "profiling/sweep/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <string_view>
#include <unordered_set>

#include "kernels/api/select_file.hpp"
#include "kernels/registry.hpp"
#include "profiling/engine/host_memory.hpp"
#include "profiling/sweep/variant.hpp"
#include "profiling/sweep/varlen_axis.hpp"

namespace attn {

namespace {

std::string registered_ids() {
  std::string list;
  for (const auto& k : kernel_registry()) list += (list.empty() ? "" : ", ") + k.id;
  if (!built_with_cuda())
    list += " (this build has no CUDA kernels: configure with -DATTNSCOPE_ENABLE_CUDA=ON)";
  return list;
}

// An axis with its default filled in: `fallback` when the group leaves it empty.
template <class T>
std::vector<T> or_default(const std::vector<T>& axis, T fallback) {
  return axis.empty() ? std::vector<T>{fallback} : axis;
}

[[noreturn]] void too_many_cases(const std::string& where) {
  throw SpecError(where + ": the sweep expands to more than " + std::to_string(kMaxPlannedCases) +
                  " cases; narrow an axis");
}

std::size_t checked_product(std::size_t acc, std::size_t n, const std::string& where) {
  if (n != 0 && acc > kMaxPlannedCases / n) too_many_cases(where);
  return acc * n;
}

// A group's axes with their defaults filled in, in planning order (outermost first).
// A selected branch's index tensor from a file: read and checked against the problem's shape once
// the rest of it is valid (else validate() names what is wrong), its hash and pairs recorded.
void read_index_file(Problem& p, const std::string& gw) {
  Problem shape = p;
  shape.select.file_sha256 = "-";  // only the other rules
  if (!shape.validate().empty()) return;
  try {
    const SelectFileTable t = read_select_file(p.select.file, p);
    p.select.file_sha256 = t.sha256;
    p.select.file_pairs = t.pairs;
  } catch (const SelectFileError& e) {
    throw SpecError(gw + ": " + e.what());
  }
}

class GroupAxes {
 public:
  enum Axis {
    dtype,
    causal,
    window,
    compress,
    select,
    varlen,
    batch,
    heads,
    heads_kv,
    head_dim,
    head_dim_v,
    seq_q,
    seq_kv,
    pass,
    kAxes
  };

  GroupAxes(const SweepGroup& g, DType default_dtype, std::uint64_t run_seed)
      : m_g(g),
        m_run_seed(run_seed),
        // A derived axis (tokens, hidden) stands as one placeholder value 0, resolved per problem.
        m_batch(g.tokens ? std::vector<std::int64_t>{0} : g.batch),
        m_heads(g.hidden ? std::vector<std::int64_t>{0} : g.heads),
        m_heads_kv(or_default<std::int64_t>(g.heads_kv, 0)),      // 0 = same as heads
        m_seq_kv(or_default<std::int64_t>(g.seq_kv, 0)),          // 0 = same as seq_q (or derived)
        m_head_dim_v(or_default<std::int64_t>(g.head_dim_v, 0)),  // 0 = same as head_dim
        m_dtype(or_default(g.dtype, default_dtype)),
        m_causal(or_default(g.causal, 0)),
        m_window(or_default(g.window, Window{})),
        m_compress(or_default(g.compress, Compress{})),
        m_select(or_default(g.select, Select{})),
        m_varlen(or_default(g.varlen, VarLenSpec{})),
        m_pass(or_default(g.pass, Pass::fwd)) {}

  std::array<std::size_t, kAxes> sizes() const {
    return {m_dtype.size(),      m_causal.size(),  m_window.size(), m_compress.size(), m_select.size(),
            m_varlen.size(),     m_batch.size(),   m_heads.size(),  m_heads_kv.size(), m_g.head_dim.size(),
            m_head_dim_v.size(), m_g.seq_q.size(), m_seq_kv.size(), m_pass.size()};
  }

  // The problem at `point` of the product (the last axis varying fastest), derived axes resolved.
  Problem problem_at(std::size_t point, const std::string& gw) const {
    std::array<std::size_t, kAxes> at{};
    const auto n = sizes();
    for (std::size_t a = n.size(); a-- > 0;) {
      at[a] = point % n[a];
      point /= n[a];
    }
    const std::int64_t sq = m_g.seq_q[at[seq_q]], sk = m_seq_kv[at[seq_kv]], d = m_g.head_dim[at[head_dim]];
    const std::int64_t dv = m_head_dim_v[at[head_dim_v]];
    Problem p;
    p.dtype = m_dtype[at[dtype]];
    p.causal = m_causal[at[causal]] != 0;
    p.window = m_window[at[window]];
    p.compress = m_compress[at[compress]];
    p.select = m_select[at[select]];
    p.pass = m_pass[at[pass]];
    p.seq_q = sq;
    p.seq_kv = sk ? sk : sq;
    if (p.compress.active() && !sk) {
      if (sq < p.compress.block)
        throw SpecError(gw + ": seq_q = " + std::to_string(sq) +
                        " is shorter than the compressed block l = " + std::to_string(p.compress.block) +
                        " (no query would see a block); use seq >= l");
      p.seq_kv = p.compress.blocks_at(sq - 1);  // the blocks of the whole sequence
    }
    p.head_dim = d;
    p.head_dim_v = dv ? dv : d;
    if (m_g.tokens) {
      if (*m_g.tokens % sq != 0)
        throw SpecError(gw + ": tokens = " + std::to_string(*m_g.tokens) + " is not divisible by seq_q = " +
                        std::to_string(sq) + " (batch = tokens / seq_q); pick seq values that divide tokens");
      p.batch = *m_g.tokens / sq;
    } else {
      p.batch = m_batch[at[batch]];
    }
    if (m_g.hidden) {
      if (*m_g.hidden % d != 0)
        throw SpecError(gw + ": hidden = " + std::to_string(*m_g.hidden) +
                        " is not divisible by head_dim = " + std::to_string(d) +
                        " (heads = hidden / head_dim); pick head_dim values that divide hidden");
      p.heads_q = *m_g.hidden / d;
    } else {
      p.heads_q = m_heads[at[heads]];
    }
    const std::int64_t hkv = m_heads_kv[at[heads_kv]];
    p.heads_kv = hkv ? hkv : p.heads_q;
    if (const VarLenSpec& v = m_varlen[at[varlen]]; v.active()) {
      if (sk)
        throw SpecError(gw + ": seq_kv = " + std::to_string(sk) +
                        " with varlen: a varlen batch draws Sq = Sk per sequence, up to seq; drop seq_kv");
      // Sequence lengths up to the group's seq; the problem's Sq and Sk are the longest.
      p.varlen.q = draw_lengths(v, p.batch, sq, m_run_seed, gw);
      p.varlen.kv = p.varlen.q;
      // A compressed branch: each sequence's keys are its own blocks (at least one key row, which a
      // sequence shorter than l never sees).
      if (p.compress.active())
        for (std::int64_t& kv : p.varlen.kv) kv = p.compress.key_rows(kv);
      p.seq_q = *std::max_element(p.varlen.q.begin(), p.varlen.q.end());
      p.seq_kv = *std::max_element(p.varlen.kv.begin(), p.varlen.kv.end());
    }
    if (p.select.from_file()) read_index_file(p, gw);
    return p;
  }

 private:
  const SweepGroup& m_g;
  std::uint64_t m_run_seed;
  std::vector<std::int64_t> m_batch, m_heads, m_heads_kv, m_seq_kv, m_head_dim_v;
  std::vector<DType> m_dtype;
  std::vector<int> m_causal;
  std::vector<Window> m_window;
  std::vector<Compress> m_compress;
  std::vector<Select> m_select;
  std::vector<VarLenSpec> m_varlen;
  std::vector<Pass> m_pass;
};

}  // namespace

Knobs default_knobs(const KernelSpec& k) {
  Knobs knobs;
  for (const auto& s : k.knobs) knobs[s.name] = s.default_value;
  return knobs;
}

std::string canonical_case_text(const std::string& kernel, const Knobs& knobs, const Problem& p) {
  std::string t = "case.v1|kernel=" + kernel + "|knobs=";
  bool first = true;
  for (const auto& [name, value] : knobs) {  // std::map: sorted by name
    t += (first ? "" : ",") + name + ":" + std::to_string(value);
    first = false;
  }
  t += "|b=" + std::to_string(p.batch) + "|hq=" + std::to_string(p.heads_q) +
       "|hkv=" + std::to_string(p.heads_kv) + "|sq=" + std::to_string(p.seq_q) +
       "|sk=" + std::to_string(p.seq_kv) + "|d=" + std::to_string(p.head_dim) +
       "|dv=" + std::to_string(p.head_dim_v) + "|dtype=" + std::string(to_string(p.dtype)) +
       "|causal=" + (p.causal ? "1" : "0") + "|window=" + std::to_string(p.window.left) + "," +
       std::to_string(p.window.right) + "|layout=bshd";
  // Appended only when present, so that the ids of every problem without them stay as they were.
  if (p.compress.active())
    t += "|compress=" + std::to_string(p.compress.block) + "," + std::to_string(p.compress.stride);
  if (p.select.active())
    t += "|select=" + std::to_string(p.select.block) + "," + std::to_string(p.select.count) + "," +
         std::to_string(p.select.seed);
  if (p.select.from_file()) t += "|select_file=" + p.select.file_sha256;  // the content, not the path
  if (p.varlen.active()) {  // the lengths themselves: a file or a seed may change them
    t += "|varlen=";
    for (std::size_t i = 0; i < p.varlen.q.size(); ++i) {  // appended piece by piece: GCC 12's -Wrestrict
      if (i) t += ',';
      t += std::to_string(p.varlen.q[i]);
      t += '/';
      t += std::to_string(p.varlen.kv[i]);
    }
  }
  if (p.pass != Pass::fwd) t += "|pass=" + std::string(to_string(p.pass));  // forward ids stay as they were
  return t;
}

namespace {

struct Fnv1a64 {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a 64 offset basis
  void add(std::string_view text) {
    for (const unsigned char c : text) {
      h ^= c;
      h *= 1099511628211ull;  // FNV-1a 64 prime
    }
  }
  std::string hex() const {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
  }
};

}  // namespace

std::string make_case_id(const std::string& kernel, const Knobs& knobs, const Problem& p) {
  Fnv1a64 f;
  f.add(canonical_case_text(kernel, knobs, p));
  return f.hex();
}

std::string plan_fingerprint(const std::vector<Case>& whole_plan) {
  Fnv1a64 f;
  f.add("plan.v1");
  for (const Case& c : whole_plan) {
    f.add("|");
    f.add(c.case_id);
  }
  return f.hex();
}

std::vector<Case> plan(const SweepSpec& spec, Backend backend) {
  const std::string where = spec.source.empty() ? std::string("sweep") : spec.source;
  if (spec.kernels.empty())
    throw SpecError(where + ": no kernels to run; set kernels = [...] in the preset or pass --kernels " +
                    "(registered: " + registered_ids() + ")");
  std::vector<const KernelSpec*> kernels;
  std::vector<Knobs> knobs;
  for (std::size_t n = 0; n < spec.kernels.size(); ++n) {
    const std::string& text = spec.kernels[n];
    // A preset names the kernel's own line; --kernels the sweep.
    const std::string at = n < spec.kernel_where.size() ? spec.kernel_where[n] : where + ": ";
    AxisProblem problem;
    const auto v = try_resolve_kernel_variant(text, problem);
    if (!v) {
      AxisProblem syntax;
      const auto parsed = try_parse_kernel_variant(text, syntax);
      if (parsed && !find_kernel(parsed->kernel))
        throw SpecError(at + "unknown kernel '" + parsed->kernel + "'; registered: " + registered_ids());
      throw SpecError(at + "kernel '" + text + "': " + problem.what + "; allowed: " + problem.allowed);
    }
    for (std::size_t i = 0; i < kernels.size(); ++i)
      if (kernels[i] == v->spec && knobs[i] == v->knobs)
        throw SpecError(where + ": kernels '" + spec.kernels[i] + "' and '" + text +
                        "' are the same variant (" + v->label + "); list it once");
    kernels.push_back(v->spec);
    knobs.push_back(v->knobs);
  }
  if (!spec.baseline.empty()) {
    AxisProblem ignored;
    const auto b = try_resolve_kernel_variant(spec.baseline, ignored);
    bool found = false;
    for (std::size_t i = 0; b && i < kernels.size(); ++i)
      found = found || (kernels[i] == b->spec && knobs[i] == b->knobs);
    if (!found)
      throw SpecError(where + ": baseline '" + spec.baseline + "' is not one of the kernels of this run");
  }
  if (spec.groups.empty())
    throw SpecError(where +
                    ": no sweep axes; add a [sweep] table to the preset or pass --batch, --heads, "
                    "--seq and --head-dim");

  const DType default_dtype = backend == Backend::cpu ? DType::fp32 : DType::fp16;

  std::vector<Case> cases;
  std::unordered_set<std::string> seen;
  std::size_t total = 0;
  for (std::size_t gi = 0; gi < spec.groups.size(); ++gi) {
    const SweepGroup& g = spec.groups[gi];
    const std::string gw = where + ": group[" + std::to_string(gi) + "]";
    auto require = [&](bool ok, const char* what, const char* how) {
      if (!ok) throw SpecError(gw + ": no " + what + " values; set " + how);
    };
    require(!g.batch.empty() || g.tokens, "batch", "batch (or tokens) in the preset, or pass --batch");
    require(!g.heads.empty() || g.hidden, "heads", "heads (or hidden) in the preset, or pass --heads");
    require(!g.seq_q.empty(), "seq", "seq (or seq_q) in the preset, or pass --seq");
    require(!g.head_dim.empty(), "head_dim", "head_dim in the preset, or pass --head-dim");

    const GroupAxes axes(g, default_dtype, spec.protocol.seed);
    std::size_t n = kernels.size();
    for (std::size_t s : axes.sizes()) n = checked_product(n, s, gw);
    total += n;
    if (total > kMaxPlannedCases) too_many_cases(where);

    for (std::size_t point = 0; point < n / std::max<std::size_t>(kernels.size(), 1); ++point) {
      const Problem p = axes.problem_at(point, gw);
      const std::string invalid = p.validate();
      if (!invalid.empty() && spec.shapes_from_flags)
        throw SpecError(where + ": " + invalid + "; every combination of the axis flags must be " +
                        "a valid shape (" + p.full_label() + ")");
      if (invalid.empty() && p.tensor_bytes() > kMaxProblemBytes)
        throw SpecError(fmt::format(
            "{}: {} needs {} for Q, K, V and O; the limit is {} (no device holds more); narrow the sizes", gw,
            p.full_label(), format_bytes(p.tensor_bytes()), format_bytes(kMaxProblemBytes)));
      for (std::size_t ki = 0; ki < kernels.size(); ++ki) {
        const KernelSpec& k = *kernels[ki];
        Case cs;
        cs.kernel = k.id;
        cs.knobs = knobs[ki];
        cs.problem = p;
        cs.case_id = make_case_id(cs.kernel, cs.knobs, p);
        if (!seen.insert(cs.case_id).second) continue;
        if (!invalid.empty()) {
          cs.skip_reason = invalid;
        } else if (k.backend != backend) {
          cs.skip_reason = "needs the " + std::string(to_string(k.backend)) + " backend; this run uses " +
                           std::string(to_string(backend));
        } else {
          cs.skip_reason = kernel_why_not(k, p, cs.knobs);
        }
        if (cs.skip_reason.empty() && has_backward(p.pass)) cs.skip_reason = backward_why_not(k, p, cs.knobs);
        cases.push_back(std::move(cs));
      }
    }
  }
  return cases;
}

std::string nothing_to_run(const std::vector<Case>& cases, const std::string& note) {
  if (cases.empty()) return "nothing to run: the sweep plans no cases";
  std::map<std::string, std::size_t> reasons;  // "kernel: reason" -> count
  for (const Case& c : cases) {
    if (c.skip_reason.empty()) return {};
    ++reasons[c.kernel + ": " + c.skip_reason];
  }
  std::string out = fmt::format("nothing to run: all {} planned cases are skipped", cases.size());
  std::size_t shown = 0;
  for (const auto& [reason, n] : reasons) {
    if (shown++ == 4) {
      out += fmt::format("; and {} other reasons", reasons.size() - 4);
      break;
    }
    out += fmt::format("{} {} x {}", shown == 1 ? ":" : ";", n, reason);
  }
  if (!note.empty()) out += " (" + note + ")";
  return out;
}

}  // namespace attn
