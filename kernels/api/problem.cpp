// Counting and validation for Problem.
#include "kernels/api/problem.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <sstream>
#include <vector>

namespace attn {

namespace {

// 128-bit so that no size a record or a plan can hold overflows while counting.
__extension__ typedef __int128 Wide;

// value = slope * d + intercept, slope in {-1, 0, 1}.
struct Line {
  Wide slope, intercept;
  Wide at(Wide d) const { return slope * d + intercept; }
};

Wide floor_div2(Wide x) { return x >= 0 ? x / 2 : -((-x + 1) / 2); }

// Sum over integers d in [lo, hi) of max(0, min over `lines`). The minimum of lines is concave and
// piecewise linear: split [lo, hi) where two lines cross or a line crosses zero (both sides of a
// half-integer crossing), then each piece is one line of one sign, an arithmetic series.
Wide sum_clamped_min(const std::vector<Line>& lines, Wide lo, Wide hi) {
  if (hi <= lo) return 0;
  std::vector<Wide> cuts{lo, hi};
  auto cut_near = [&](Wide num, Wide den) {  // the integers around num / den (den = 1 or 2)
    const Wide f = den == 1 ? num : floor_div2(num);
    for (const Wide c : {f, f + 1})
      if (c > lo && c < hi) cuts.push_back(c);
  };
  for (std::size_t a = 0; a < lines.size(); ++a) {
    if (lines[a].slope != 0) cut_near(-lines[a].intercept * lines[a].slope, 1);  // zero of the line
    for (std::size_t b = a + 1; b < lines.size(); ++b) {
      const Wide ds = lines[a].slope - lines[b].slope;
      if (ds == 0) continue;
      const Wide di = lines[b].intercept - lines[a].intercept;  // crossing at d = di / ds
      if (ds == 1 || ds == -1)
        cut_near(di * ds, 1);
      else
        cut_near(di * (ds > 0 ? 1 : -1), 2);  // |ds| = 2
    }
  }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  Wide total = 0;
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
    const Wide p = cuts[k], q = cuts[k + 1] - 1;  // integers p..q; no crossing strictly inside
    const Line* best = &lines.front();
    for (const Line& l : lines)
      if (l.at(p) + l.at(q) < best->at(p) + best->at(q)) best = &l;
    const Wide vp = best->at(p), vq = best->at(q);
    const Wide n = q - p + 1;  // n * (vp + vq) is even; halve first so 2^63-sized inputs fit
    if (vp >= 0 && vq >= 0) total += n % 2 == 0 ? n / 2 * (vp + vq) : (vp + vq) / 2 * n;
  }
  return total;
}

// The compressed branch's pairs: sum over rows i of min(Sk, num_cmp(i)). With u = i + 1 - l over
// [0, U], U = Sq - l, num_cmp = floor(u / d) + 1 takes each value k + 1 on d consecutive u (fewer on
// the last), and is capped at Sk from k = Sk - 1 on.
Wide compressed_pairs(const Problem& p) {
  const Wide l = p.compress.block, d = p.compress.stride, sk = p.seq_kv;
  const Wide top = Wide(p.seq_q) - l;  // U
  if (top < 0) return 0;
  const Wide groups = top / d;  // K: the last u's k
  if (groups + 1 <= sk) return d * groups * (groups + 1) / 2 + (top - groups * d + 1) * (groups + 1);
  return d * sk * (sk - 1) / 2 + sk * (top + 1 - (sk - 1) * d);
}

// The selected branch's pairs (Problem::Select): the rows of the first n query blocks see every
// causal key, R (R + 1) / 2 with R = min(S, n l'); each later row sees n - 1 whole blocks and its
// diagonal block up to itself, T (n - 1) l' over the T rows past n l', plus a triangle per query
// block (F whole ones of l' rows and one of the remaining r).
Wide selected_pairs(const Problem& p) {
  // A file's table: the mean over (batch, KV head) of its pairs, which may differ between them.
  if (p.select.from_file()) return Wide(p.select.file_pairs) / (Wide(p.batch) * p.heads_kv);
  const Wide l = p.select.block, n = p.select.count, s = p.seq_q;
  const Wide dense_rows = std::min(s, n * l);
  Wide pairs = dense_rows * (dense_rows + 1) / 2;
  const Wide rest = s - dense_rows;
  if (rest > 0) {
    const Wide whole = rest / l, r = rest % l;
    pairs += rest * (n - 1) * l + whole * (l * (l + 1) / 2) + r * (r + 1) / 2;
  }
  return pairs;
}

// The exact pair count of one (batch, head). Row i sees keys [max(0, d - L), min(Sk, d + A)) with
// d = i + Sk - Sq, A = 1 (causal), R + 1 (right window) or none; its count is max(0, min of the
// lines Sk, Sk + L - d, d + A, A + L) (each line kept only where its bounds exist).
Wide exact_pairs(const Problem& p) {
  if (p.compress.active()) return compressed_pairs(p);
  if (p.select.active()) return selected_pairs(p);
  const bool has_left = p.window.left >= 0;
  std::optional<Wide> reach;  // A: keys visible past the diagonal, + 1
  if (p.causal) reach = 1;
  if (p.window.right >= 0) {
    const Wide r = Wide(p.window.right) + 1;
    reach = reach ? std::min(*reach, r) : r;
  }
  const Wide sk = p.seq_kv, left = p.window.left;
  std::vector<Line> lines{{0, sk}};
  if (has_left) lines.push_back({-1, sk + left});
  if (reach) lines.push_back({1, *reach});
  if (has_left && reach) lines.push_back({0, *reach + left});
  const Wide offset = Wide(p.seq_kv) - p.seq_q;
  return sum_clamped_min(lines, offset, offset + p.seq_q);
}

// One head's pairs summed over a varlen batch's sequences.
Wide varlen_pairs(const Problem& p) {
  Wide sum = 0;
  for (std::size_t b = 0; b < p.varlen.q.size(); ++b) {
    const Problem s = p.sequence(static_cast<std::int64_t>(b));
    if (s.seq_q >= 1 && s.seq_kv >= 1) sum += exact_pairs(s);
  }
  return sum;
}

}  // namespace

std::int64_t Problem::total_q() const { return q_start(batch); }
std::int64_t Problem::total_kv() const { return kv_start(batch); }

Problem Problem::sequence(std::int64_t b) const {
  Problem s = *this;
  s.varlen = {};
  s.batch = 1;
  if (varlen.active()) {
    s.seq_q = varlen.q[static_cast<std::size_t>(b)];
    s.seq_kv = varlen.kv[static_cast<std::size_t>(b)];
  }
  return s;
}

// Rows before sequence b: the sum of the first b lengths.
static std::int64_t rows_before(const std::vector<std::int64_t>& lengths, std::int64_t b) {
  return std::accumulate(lengths.begin(), lengths.begin() + b, std::int64_t{0});
}

std::int64_t Problem::q_start(std::int64_t b) const {
  return varlen.active() ? rows_before(varlen.q, b) : b * seq_q;
}
std::int64_t Problem::kv_start(std::int64_t b) const {
  return varlen.active() ? rows_before(varlen.kv, b) : b * seq_kv;
}

std::int64_t Problem::visible_pairs_per_head() const {
  if (seq_q < 1 || seq_kv < 1) return 0;
  if (varlen.active()) {
    const Wide pairs = varlen_pairs(*this);
    const Wide cap = std::numeric_limits<std::int64_t>::max();
    return static_cast<std::int64_t>(pairs > cap ? cap : pairs);
  }
  const Wide pairs = exact_pairs(*this);
  const Wide cap = std::numeric_limits<std::int64_t>::max();
  return static_cast<std::int64_t>(pairs > cap ? cap : pairs);  // saturates past 2^63 - 1 pairs
}

double Problem::flops() const { return forward_flops() * pass_flop_factor(pass); }

double Problem::forward_flops() const {
  if (select.from_file())  // the table's exact pairs, each KV head's counted for its query heads
    return 2.0 * static_cast<double>(heads_q / std::max<std::int64_t>(heads_kv, 1)) *
           static_cast<double>(head_dim + head_dim_v) * static_cast<double>(select.file_pairs);
  if (varlen.active())
    return 2.0 * static_cast<double>(heads_q) * static_cast<double>(head_dim + head_dim_v) *
           static_cast<double>(varlen_pairs(*this));
  const double pairs = seq_q < 1 || seq_kv < 1 ? 0.0 : static_cast<double>(exact_pairs(*this));
  return 2.0 * static_cast<double>(batch) * static_cast<double>(heads_q) *
         static_cast<double>(head_dim + head_dim_v) * pairs;
}

double Problem::tensor_bytes() const {
  const double tq = varlen.active() ? static_cast<double>(total_q())
                                    : static_cast<double>(batch) * static_cast<double>(seq_q),
               tk = varlen.active() ? static_cast<double>(total_kv())
                                    : static_cast<double>(batch) * static_cast<double>(seq_kv),
               hq = static_cast<double>(heads_q), hkv = static_cast<double>(heads_kv),
               d = static_cast<double>(head_dim), dv = static_cast<double>(head_dim_v);
  const double forward = tq * hq * (d + dv) + tk * hkv * (d + dv);
  return (has_backward(pass) ? 2.0 * forward : forward) * static_cast<double>(dtype_bytes(dtype));
}

std::int64_t Problem::min_bytes(bool with_lse) const {
  const auto e = static_cast<std::int64_t>(dtype_bytes(dtype));
  const std::int64_t qkvo = (q_elems() + k_elems() + v_elems() + o_elems()) * e;
  std::int64_t bytes = 0;
  if (has_forward(pass)) bytes += qkvo + (with_lse || has_backward(pass) ? lse_elems() * 4 : 0);
  // Q, K, V, O and dO (the size of O) read, LSE read, dQ, dK and dV (the sizes of Q, K, V) written.
  if (has_backward(pass))
    bytes += qkvo + o_elems() * e + lse_elems() * 4 + (q_elems() + k_elems() + v_elems()) * e;
  return bytes;
}

double Problem::default_scale() const { return 1.0 / std::sqrt(static_cast<double>(head_dim)); }

std::string Problem::validate() const {
  if (std::string bad = validate_sizes(); !bad.empty()) return bad;
  if (heads_q % heads_kv != 0)
    return "heads_kv = " + std::to_string(heads_kv) + ": must divide heads_q = " + std::to_string(heads_q) +
           " (GQA/MQA groups query heads evenly)";
  if (compress.active() && (causal || window.active()))
    return "compress = (" + std::to_string(compress.block) + "," + std::to_string(compress.stride) +
           ") with " +
           (causal ? std::string("causal = 1")
                   : "window = (" + std::to_string(window.left) + "," + std::to_string(window.right) + ")") +
           ": the compressed branch is its own causal rule; set causal = 0 and no window";
  if (select.active()) {
    const std::string sel =
        "select = (" + std::to_string(select.block) + "," + std::to_string(select.count) + ")";
    if (varlen.active())
      return sel + " with varlen: the selected branch of a variable-length batch is not supported yet";
    if (compress.active())
      return sel + " with compress: a problem is one NSA branch; sweep them as two cases";
    if (causal || window.active())
      return sel + " with " +
             (causal
                  ? std::string("causal = 1")
                  : "window = (" + std::to_string(window.left) + "," + std::to_string(window.right) + ")") +
             ": the selected branch is its own causal rule; set causal = 0 and no window";
    if (seq_q != seq_kv)
      return sel + " with seq_q = " + std::to_string(seq_q) + ", seq_kv = " + std::to_string(seq_kv) +
             ": the selected branch is self-attention over one sequence; make seq_kv = seq_q";
    if (select.from_file() && (select.file_sha256.empty() || select.file_pairs < 0))
      return sel + " from file '" + select.file +
             "': not read yet (planning records its sha256 and pair count)";
  }
  return {};
}

std::string Problem::validate_sizes() const {
  std::ostringstream err;
  auto positive = [&](const char* name, std::int64_t v) {
    if (v < 1 && err.tellp() == 0) err << name << " = " << v << ": must be >= 1";
  };
  positive("batch", batch);
  positive("heads_q", heads_q);
  positive("heads_kv", heads_kv);
  positive("seq_q", seq_q);
  positive("seq_kv", seq_kv);
  positive("head_dim", head_dim);
  positive("head_dim_v", head_dim_v);
  if (err.tellp() != 0) return err.str();
  if (window.left < -1 || window.right < -1)
    return "window = (" + std::to_string(window.left) + "," + std::to_string(window.right) +
           "): each side must be >= 0, or -1 for unbounded";
  if (compress.block < 0 || (compress.active() && compress.stride < 1) ||
      (!compress.active() && compress.stride != 0))
    return "compress = (" + std::to_string(compress.block) + "," + std::to_string(compress.stride) +
           "): block l and stride d must both be >= 1 (or both 0: no compressed branch)";
  if (select.block < 0 || (select.active() && select.count < 1) || (!select.active() && select.count != 0))
    return "select = (" + std::to_string(select.block) + "," + std::to_string(select.count) +
           "): block l' and count n must both be >= 1 (or both 0: no selected branch)";
  if (!varlen.active()) {
    if (!varlen.kv.empty()) return "varlen: kv lengths without q lengths";
    return {};
  }
  if (std::ssize(varlen.q) != batch || std::ssize(varlen.kv) != batch)
    return "varlen: " + std::to_string(varlen.q.size()) + " q and " + std::to_string(varlen.kv.size()) +
           " kv lengths for batch = " + std::to_string(batch) + "; give one of each per sequence";
  std::int64_t max_q = 0, max_kv = 0;
  for (std::size_t b = 0; b < varlen.q.size(); ++b) {
    if (varlen.q[b] < 1 || varlen.kv[b] < 1)
      return "varlen: sequence " + std::to_string(b) + " has q = " + std::to_string(varlen.q[b]) +
             ", kv = " + std::to_string(varlen.kv[b]) + "; every length must be >= 1";
    max_q = std::max(max_q, varlen.q[b]);
    max_kv = std::max(max_kv, varlen.kv[b]);
  }
  if (max_q != seq_q || max_kv != seq_kv)
    return "varlen: seq_q = " + std::to_string(seq_q) + ", seq_kv = " + std::to_string(seq_kv) +
           " must be the longest lengths (" + std::to_string(max_q) + ", " + std::to_string(max_kv) + ")";
  return {};
}

std::string Problem::shape_label() const {
  std::ostringstream s;
  s << batch << 'x' << heads_q << 'x' << seq_q << 'x' << head_dim;
  return s.str();
}

std::string Problem::mask_label() const {
  if (compress.active())
    return "cmp" + std::to_string(compress.block) + "," + std::to_string(compress.stride);
  if (select.active()) {  // appended piece by piece: GCC 12's -Wrestrict
    std::string m = "sel";
    m += std::to_string(select.block);
    m += 'x';
    m += std::to_string(select.count);
    if (select.seed != 0) {
      m += 's';
      m += std::to_string(select.seed);
    }
    return m;
  }
  std::string m = causal ? "causal" : "";
  if (window.active()) {
    if (!m.empty()) m += "+";
    m += "win" + std::to_string(window.left) + "," + std::to_string(window.right);
  }
  return m.empty() ? "full" : m;
}

std::string Problem::full_label() const {
  std::ostringstream s;
  s << "B=" << batch << " Hq=" << heads_q;
  if (heads_kv != heads_q) s << " Hkv=" << heads_kv;
  s << " Sq=" << seq_q;
  if (seq_kv != seq_q) s << " Sk=" << seq_kv;
  s << " D=" << head_dim;
  if (head_dim_v != head_dim) s << " Dv=" << head_dim_v;
  s << ' ' << to_string(dtype) << ' ' << mask_label();
  if (varlen.active()) {
    const auto [lo, hi] = std::minmax_element(varlen.q.begin(), varlen.q.end());
    s << " varlen " << *lo << ".." << *hi << " (" << total_q() << " tokens)";
  }
  if (pass != Pass::fwd) s << ' ' << to_string(pass);
  return s.str();
}

}  // namespace attn
