// TOML preset reader: strict keys and types, every error located as file:line:col.
#include "profiling/sweep/preset.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "kernels/api/python_entry.hpp"
#include "kernels/api/source_kernel.hpp"
#include "profiling/sweep/axis_parse.hpp"
#include "profiling/sweep/protocol_fields.hpp"
#include "profiling/sweep/variant.hpp"
#include "profiling/sweep/varlen_axis.hpp"

namespace attn {

namespace {

constexpr const char* kTopKeys =
    "name, description, plugins, kernel_sources, python_kernels, kernels, baseline, backend, sweep, group, "
    "protocol";
constexpr const char* kAxisKeys =
    "batch, tokens, heads, hidden, heads_kv, seq, seq_q, seq_kv, head_dim, head_dim_v, dtype, causal, "
    "window, compress, select, varlen, pass";

// Edit distance, to suggest the key a typo was meant to be.
std::size_t distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::vector<std::string> split_list(std::string_view list) {
  std::vector<std::string> out;
  std::stringstream s{std::string(list)};
  std::string item;
  while (std::getline(s, item, ',')) {
    item.erase(0, item.find_first_not_of(' '));
    out.push_back(item);
  }
  return out;
}

// A value as the user wrote it, for messages: top-level strings bare, arrays as [64, "x"].
std::string render(const toml::node& n, bool nested = false) {
  if (const auto* s = n.as_string()) return nested ? "\"" + s->get() + "\"" : s->get();
  if (const auto* a = n.as_array()) {
    std::string r = "[";
    for (std::size_t i = 0; i < a->size(); ++i) {
      if (i) r += ", ";
      r += render(*a->get(i), true);
    }
    return r + "]";
  }
  std::ostringstream os;
  n.visit([&](const auto& x) { os << x; });
  std::string r = os.str();
  std::replace(r.begin(), r.end(), '\n', ' ');
  return r;
}

class Reader {
 public:
  explicit Reader(std::string source) : m_source(std::move(source)) {}

  [[noreturn]] void fail(const toml::source_region& where, const std::string& field, const std::string& value,
                         const AxisProblem& p) const {
    throw SpecError(location(where) + format_field_error(field, value, p));
  }
  [[noreturn]] void fail(const toml::node& n, const std::string& field, const AxisProblem& p) const {
    fail(n.source(), field, render(n), p);
  }

  std::string location(const toml::source_region& where) const {
    return m_source + ":" + std::to_string(where.begin.line) + ":" + std::to_string(where.begin.column) +
           ": ";
  }

  // Rejects keys outside `allowed` (a comma-separated list), suggesting the closest one.
  void check_keys(const toml::table& t, const std::string& prefix, const char* allowed) const {
    const auto names = split_list(allowed);
    for (const auto& [key, node] : t) {
      const std::string k(key.str());
      if (std::find(names.begin(), names.end(), k) != names.end()) continue;
      std::string what = "unknown key";
      std::string best;
      std::size_t best_d = 3;  // suggest only near misses (<= 2 edits)
      for (const auto& n : names)
        if (const std::size_t d = distance(k, n); d < best_d) best_d = d, best = n;
      if (!best.empty()) what += " (did you mean '" + best + "'?)";
      fail(key.source(), prefix + k, render(node), {what, allowed});
    }
  }

  std::string string(const toml::node& n, const std::string& field, const char* allowed) const {
    if (const auto* s = n.as_string()) return s->get();
    fail(n, field, {"expected a string", allowed});
  }

  std::int64_t positive_int(const toml::node& n, const std::string& field) const {
    const auto* i = n.as_integer();
    if (!i) fail(n, field, {"expected an integer", "an integer >= 1"});
    if (i->get() < 1) fail(n, field, {std::to_string(i->get()) + " is below 1", "an integer >= 1"});
    return i->get();
  }

  // An integer, a string in axis syntax, or an array of both.
  std::vector<std::int64_t> int_axis(const toml::node& n, const std::string& field) const {
    std::vector<std::int64_t> out;
    auto add = [&](const toml::node& e) {
      if (e.is_integer()) {
        out.push_back(positive_int(e, field));
      } else if (const auto* s = e.as_string()) {
        std::vector<std::int64_t> part;
        AxisProblem p;
        if (!try_parse_int_axis(s->get(), part, p)) fail(e, field, p);
        out.insert(out.end(), part.begin(), part.end());
      } else {
        fail(e, field, {"expected an integer or a range string", kIntAxisAllowed});
      }
      if (out.size() > kMaxAxisValues)
        fail(n, field, {"more than " + std::to_string(kMaxAxisValues) + " values", kIntAxisAllowed});
    };
    for_each_item(n, field, kIntAxisAllowed, add);
    return out;
  }

  std::vector<DType> dtype_axis(const toml::node& n, const std::string& field) const {
    std::vector<DType> out;
    for_each_item(n, field, kDTypeAxisAllowed, [&](const toml::node& e) {
      const std::string s = string(e, field, kDTypeAxisAllowed);
      std::vector<DType> part;
      AxisProblem p;
      if (!try_parse_dtype_axis(s, part, p)) fail(e, field, p);
      out.insert(out.end(), part.begin(), part.end());
    });
    return out;
  }

  std::vector<Pass> pass_axis(const toml::node& n, const std::string& field) const {
    std::vector<Pass> out;
    for_each_item(n, field, kPassAxisAllowed, [&](const toml::node& e) {
      const std::string s = string(e, field, kPassAxisAllowed);
      std::vector<Pass> part;
      AxisProblem p;
      if (!try_parse_pass_axis(s, part, p)) fail(e, field, p);
      out.insert(out.end(), part.begin(), part.end());
    });
    return out;
  }

  std::vector<int> bool_axis(const toml::node& n, const std::string& field) const {
    std::vector<int> out;
    for_each_item(n, field, kBoolAxisAllowed, [&](const toml::node& e) {
      if (const auto* b = e.as_boolean()) {
        out.push_back(b->get() ? 1 : 0);
      } else if (const auto* i = e.as_integer()) {
        if (i->get() != 0 && i->get() != 1)
          fail(e, field, {std::to_string(i->get()) + " is not 0 or 1", kBoolAxisAllowed});
        out.push_back(static_cast<int>(i->get()));
      } else if (const auto* s = e.as_string()) {
        std::vector<int> part;
        AxisProblem p;
        if (!try_parse_bool_axis(s->get(), part, p)) fail(e, field, p);
        out.insert(out.end(), part.begin(), part.end());
      } else {
        fail(e, field, {"expected 0, 1, true or false", kBoolAxisAllowed});
      }
    });
    return out;
  }

  // "64,0;128,128", [64, 0] (one window: a flat array of integers), [[64,0],[128,128]],
  // or an array mixing [L,R] arrays, "L,R" strings and single integers L (= L,0).
  std::vector<Window> window_axis(const toml::node& n, const std::string& field) const {
    std::vector<Window> out;
    if (const auto* s = n.as_string()) {
      AxisProblem p;
      if (!try_parse_window_axis(s->get(), out, p)) fail(n, field, p);
      return out;
    }
    const auto* arr = n.as_array();
    if (!arr || arr->empty()) fail(n, field, {"expected a non-empty array or a string", kWindowAxisAllowed});
    const bool flat =
        std::all_of(arr->begin(), arr->end(), [](const toml::node& e) { return e.is_integer(); });
    if (flat) {
      out.push_back(window_from_ints(*arr, field));
      return out;
    }
    for (const toml::node& e : *arr) {
      if (const auto* inner = e.as_array()) {
        if (inner->empty() ||
            !std::all_of(inner->begin(), inner->end(), [](const toml::node& x) { return x.is_integer(); }))
          fail(e, field, {"a window array holds one or two integers", kWindowAxisAllowed});
        out.push_back(window_from_ints(*inner, field));
      } else if (const auto* s = e.as_string()) {
        Window w;
        AxisProblem p;
        if (!try_parse_window(s->get(), w, p)) fail(e, field, p);
        out.push_back(w);
      } else if (const auto* i = e.as_integer()) {
        if (i->get() < -1) fail(e, field, {std::to_string(i->get()) + " is below -1", kWindowAxisAllowed});
        out.push_back(i->get() == -1 ? Window{} : Window{i->get(), 0});
      } else {
        fail(e, field, {"expected [L, R], \"L,R\" or an integer L", kWindowAxisAllowed});
      }
    }
    return out;
  }

  // How an axis of small integer tuples reads (the compressed and selected branches).
  template <class T>
  struct TupleAxis {
    const char* allowed;
    const char* arity;    // the error for an integer array of the wrong size
    const char* element;  // the error for an element that is neither an array nor a string
    std::size_t min_ints, max_ints;
    bool (*parse_axis)(std::string_view, std::vector<T>&, AxisProblem&);
    bool (*parse_one)(std::string_view, T&, AxisProblem&);
  };

  // "a,b;c,d" (a string of items), [a, b] (one item: a flat integer array), [[a,b],[c,d]], or an array
  // mixing integer arrays and "a,b" / "none" strings; each integer array reads as its text "a,b".
  template <class T>
  std::vector<T> tuple_axis(const toml::node& n, const std::string& field, const TupleAxis<T>& how) const {
    std::vector<T> out;
    if (const auto* s = n.as_string()) {
      AxisProblem p;
      if (!how.parse_axis(s->get(), out, p)) fail(n, field, p);
      return out;
    }
    const auto* arr = n.as_array();
    if (!arr || arr->empty()) fail(n, field, {"expected a non-empty array or a string", how.allowed});
    auto all_ints = [](const toml::array& a) {
      return std::all_of(a.begin(), a.end(), [](const toml::node& e) { return e.is_integer(); });
    };
    auto from_text = [&](const toml::node& at, std::string_view text) {
      T v{};
      AxisProblem p;
      if (!how.parse_one(text, v, p)) fail(at, field, p);
      return v;
    };
    auto from_ints = [&](const toml::node& at, const toml::array& a) {
      if (a.size() < how.min_ints || a.size() > how.max_ints || !all_ints(a))
        fail(at, field, {how.arity, how.allowed});
      std::string text;
      for (const toml::node& e : a) {  // appended piece by piece: GCC 12's -Wrestrict
        if (!text.empty()) text += ',';
        text += std::to_string(e.value<std::int64_t>().value_or(0));
      }
      return from_text(at, text);
    };
    if (all_ints(*arr)) {
      out.push_back(from_ints(n, *arr));
      return out;
    }
    for (const toml::node& e : *arr) {
      if (const auto* inner = e.as_array())
        out.push_back(from_ints(e, *inner));
      else if (const auto* s = e.as_string())
        out.push_back(from_text(e, s->get()));
      else
        fail(e, field, {how.element, how.allowed});
    }
    return out;
  }

  std::vector<Compress> compress_axis(const toml::node& n, const std::string& field) const {
    return tuple_axis<Compress>(
        n, field,
        {kCompressAxisAllowed, "a compressed branch is two integers [l, d]", "expected [l, d] or \"l,d\"", 2,
         2, try_parse_compress_axis, try_parse_compress});
  }

  std::vector<Select> select_axis(const toml::node& n, const std::string& field) const {
    return tuple_axis<Select>(
        n, field,
        {kSelectAxisAllowed, "a selected branch is two or three integers [l', n] or [l', n, seed]",
         "expected [l', n] or \"l',n\"", 2, 3, try_parse_select_axis, try_parse_select});
  }

  // "uniform;lognormal:512:0.6" or an array of such strings.
  std::vector<VarLenSpec> varlen_axis(const toml::node& n, const std::string& field) const {
    std::vector<VarLenSpec> out;
    AxisProblem p;
    if (const auto* s = n.as_string()) {
      if (!try_parse_varlen_axis(s->get(), out, p)) fail(n, field, p);
      return out;
    }
    const auto* arr = n.as_array();
    if (!arr || arr->empty())
      fail(n, field, {"expected a non-empty array of strings or a string", kVarLenAxisAllowed});
    for (const toml::node& e : *arr) {
      const auto* s = e.as_string();
      if (!s) fail(e, field, {"expected a string like \"uniform\"", kVarLenAxisAllowed});
      VarLenSpec v;
      if (!try_parse_varlen(s->get(), v, p)) fail(e, field, p);
      out.push_back(std::move(v));
    }
    return out;
  }

  // Reads the axes of one [sweep] or [[group]] table over `g` (which holds the inherited values).
  void axes(const toml::table& t, const std::string& prefix, SweepGroup& g) const {
    check_keys(t, prefix, kAxisKeys);
    exclusive(t, prefix, "batch", "tokens");
    exclusive(t, prefix, "heads", "hidden");
    exclusive(t, prefix, "seq", "seq_q");
    auto at = [&](const char* key) -> const toml::node* { return t.get(key); };
    auto field = [&](const char* key) { return prefix + key; };
    // batch/tokens and heads/hidden are one axis each: setting either replaces both.
    if (const auto* n = at("batch")) g.batch = int_axis(*n, field("batch")), g.tokens.reset();
    if (const auto* n = at("tokens")) g.tokens = positive_int(*n, field("tokens")), g.batch.clear();
    if (const auto* n = at("heads")) g.heads = int_axis(*n, field("heads")), g.hidden.reset();
    if (const auto* n = at("hidden")) g.hidden = positive_int(*n, field("hidden")), g.heads.clear();
    if (const auto* n = at("heads_kv")) g.heads_kv = int_axis(*n, field("heads_kv"));
    // `seq` is the square case: seq_kv falls back to its default (= seq_q) unless given too.
    if (const auto* n = at("seq")) g.seq_q = int_axis(*n, field("seq")), g.seq_kv.clear();
    if (const auto* n = at("seq_q")) g.seq_q = int_axis(*n, field("seq_q"));
    if (const auto* n = at("seq_kv")) g.seq_kv = int_axis(*n, field("seq_kv"));
    if (const auto* n = at("head_dim")) g.head_dim = int_axis(*n, field("head_dim"));
    if (const auto* n = at("head_dim_v")) g.head_dim_v = int_axis(*n, field("head_dim_v"));
    if (const auto* n = at("dtype")) g.dtype = dtype_axis(*n, field("dtype"));
    if (const auto* n = at("causal")) g.causal = bool_axis(*n, field("causal"));
    if (const auto* n = at("window")) g.window = window_axis(*n, field("window"));
    if (const auto* n = at("compress")) g.compress = compress_axis(*n, field("compress"));
    if (const auto* n = at("select")) g.select = select_axis(*n, field("select"));
    if (const auto* n = at("varlen")) g.varlen = varlen_axis(*n, field("varlen"));
    if (const auto* n = at("pass")) g.pass = pass_axis(*n, field("pass"));
  }

  void protocol(const toml::table& t, Protocol& p) const {
    std::string keys;
    for (const auto& f : protocol_fields()) keys += (keys.empty() ? "" : ", ") + std::string(f.key);
    check_keys(t, "protocol.", keys.c_str());
    for (const auto& [key, node] : t) {
      const ProtocolField* f = find_protocol_field(key.str());
      const std::string field = "protocol." + std::string(key.str());
      std::string text;
      switch (f->kind) {
        case FieldKind::number:
          if (const auto* i = node.as_integer()) {
            text = std::to_string(i->get());
          } else if (node.is_floating_point()) {
            text = render(node);
          } else {
            fail(node, field, {"expected a number", f->allowed});
          }
          break;
        case FieldKind::integer:
          if (!node.is_integer()) fail(node, field, {"expected an integer", f->allowed});
          text = render(node);
          break;
        case FieldKind::boolean:
          if (!node.is_boolean()) fail(node, field, {"expected true or false", f->allowed});
          text = render(node);
          break;
        case FieldKind::choice:
          text = string(node, field, f->allowed);
          break;
      }
      AxisProblem problem;
      if (!try_set_protocol_field(p, f->key, text, problem)) fail(node, field, problem);
    }
    if (const std::string c = protocol_consistency_problem(p); !c.empty()) {
      // Point at whichever of the two this table sets (max_samples when both).
      const char* key = t.get("max_samples") ? "max_samples" : "min_samples";
      fail(*t.get(key), std::string("protocol.") + key, {c, "max_samples >= min_samples"});
    }
  }

  std::vector<std::string> kernels(const toml::node& n, std::vector<std::string>& where) const {
    const char* allowed =
        "an array of kernel ids like [\"cudnn.sdpa\", \"cublas.unfused\"]; ID@knob=value+knob=value sets "
        "knobs (e.g. \"fa2.mma@br=64+bc=64\")";
    std::vector<std::string> out;
    const auto* arr = n.as_array();
    if (!arr) fail(n, "kernels", {"expected an array of strings", allowed});
    for (const toml::node& e : *arr) {
      std::string id = string(e, "kernels", allowed);
      if (id.empty()) fail(e, "kernels", {"empty kernel id", allowed});
      // Syntax here; kernel ids, knob names and values are checked when planning (registry).
      AxisProblem problem;
      if (!try_parse_kernel_variant(id, problem)) fail(e, "kernels", problem);
      for (const std::string& prior : out)
        if (canonical_variant_text(prior) == canonical_variant_text(id))
          fail(e, "kernels",
               {prior == id ? "kernel '" + id + "' is listed twice"
                            : "'" + prior + "' and '" + id + "' are the same variant",
                allowed});
      out.push_back(std::move(id));
      where.push_back(location(e.source()));
    }
    return out;
  }

 private:
  template <class F>
  void for_each_item(const toml::node& n, const std::string& field, const char* allowed, F&& f) const {
    if (const auto* arr = n.as_array()) {
      if (arr->empty()) fail(n, field, {"empty array", allowed});
      for (const toml::node& e : *arr) f(e);
    } else {
      f(n);
    }
  }

  Window window_from_ints(const toml::array& a, const std::string& field) const {
    if (a.size() > 2)
      fail(a, field,
           {"a window has one or two integers, not " + std::to_string(a.size()), kWindowAxisAllowed});
    std::int64_t side[2] = {a[0].value_or<std::int64_t>(0),
                            a.size() == 2 ? a[1].value_or<std::int64_t>(0) : 0};
    for (std::size_t i = 0; i < a.size(); ++i)
      if (side[i] < -1)
        fail(*a.get(i), field, {std::to_string(side[i]) + " is below -1", kWindowAxisAllowed});
    if (a.size() == 1 && side[0] == -1) side[1] = -1;
    return Window{side[0], side[1]};
  }

  void exclusive(const toml::table& t, const std::string& prefix, const char* a, const char* b) const {
    if (t.get(a) && t.get(b))
      fail(*t.get(b), prefix + b,
           {std::string("'") + a + "' and '" + b + "' set the same axis; give one",
            std::string(a) + " or " + b + ", not both"});
  }

  std::string m_source;
};

}  // namespace

SweepSpec parse_preset(std::string_view toml_text, const std::string& source) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    throw SpecError(source + ":" + std::to_string(e.source().begin.line) + ":" +
                    std::to_string(e.source().begin.column) +
                    ": TOML syntax error: " + std::string(e.description()));
  }
  const Reader r(source);
  r.check_keys(root, "", kTopKeys);

  SweepSpec spec;
  spec.source = source;
  spec.name = std::filesystem::path(source).stem().string();
  if (const auto* n = root.get("name")) spec.name = r.string(*n, "name", "a string");
  if (const auto* n = root.get("description")) spec.description = r.string(*n, "description", "a string");
  // Plug-in libraries and kernel sources (a .cu in `plugins` is a kernel source too).
  for (const char* key : {"plugins", "kernel_sources"}) {
    const auto* n = root.get(key);
    if (!n) continue;
    const bool sources = std::string_view(key) == "kernel_sources";
    const char* allowed =
        sources ? "an array of .cu paths (absolute, or relative to the preset's folder)"
                : "an array of shared-library paths (absolute, or relative to the preset's folder)";
    const auto* arr = n->as_array();
    if (!arr) r.fail(*n, key, {"expected an array of strings", allowed});
    const std::filesystem::path dir = std::filesystem::path(source).parent_path();
    for (const toml::node& e : *arr) {
      const std::string path = r.string(e, key, allowed);
      if (path.empty()) r.fail(e, key, {"empty path", allowed});
      if (sources && !is_kernel_source(path)) r.fail(e, key, {"not a .cu file", allowed});
      const std::filesystem::path p(path);
      spec.plugins.push_back(p.is_absolute() ? path : (dir / p).lexically_normal().string());
    }
  }
  if (const auto* n = root.get("python_kernels")) {
    const char* allowed =
        "an array of \"FILE.py:FUNC[=ID]\" (FILE absolute, or relative to the preset's folder) or adapter "
        "ids (torch.flash, ...)";
    const auto* arr = n->as_array();
    if (!arr) r.fail(*n, "python_kernels", {"expected an array of strings", allowed});
    const std::string dir = std::filesystem::path(source).parent_path().string();
    for (const toml::node& e : *arr) {
      const std::string text = r.string(e, "python_kernels", allowed);
      try {
        spec.plugins.push_back(python_entry_text(text, dir, "python_kernels"));
      } catch (const std::exception& ex) {
        r.fail(e, "python_kernels", {ex.what(), allowed});
      }
    }
  }
  if (const auto* n = root.get("kernels")) spec.kernels = r.kernels(*n, spec.kernel_where);
  if (const auto* n = root.get("baseline")) {
    spec.baseline = r.string(*n, "baseline", "one of the preset's kernels");
    if (!spec.kernels.empty() &&
        std::none_of(spec.kernels.begin(), spec.kernels.end(),
                     [&](const std::string& k) { return same_variant(k, spec.baseline); })) {
      std::string list;
      for (const auto& k : spec.kernels) list += (list.empty() ? "" : ", ") + k;
      r.fail(*n, "baseline", {"not one of the preset's kernels", list});
    }
  }
  if (const auto* n = root.get("backend")) {
    const auto b = parse_backend(r.string(*n, "backend", "cpu or cuda"));
    if (!b) r.fail(*n, "backend", {"unknown backend", "cpu or cuda"});
    spec.backend = *b;
  }

  SweepGroup base;
  if (const auto* n = root.get("sweep")) {
    const auto* t = n->as_table();
    if (!t) r.fail(*n, "sweep", {"expected a table", "a [sweep] table of axes: " + std::string(kAxisKeys)});
    r.axes(*t, "sweep.", base);
  }
  if (const auto* n = root.get("group")) {
    const auto* arr = n->as_array();
    if (!arr || !arr->is_array_of_tables())
      r.fail(*n, "group",
             {"expected an array of tables", "[[group]] tables (double brackets), each holding axes"});
    for (std::size_t i = 0; i < arr->size(); ++i) {
      SweepGroup g = base;
      r.axes(*arr->get(i)->as_table(), "group[" + std::to_string(i) + "].", g);
      spec.groups.push_back(std::move(g));
    }
  } else if (root.get("sweep")) {
    spec.groups.push_back(std::move(base));
  }

  if (const auto* n = root.get("protocol")) {
    const auto* t = n->as_table();
    if (!t) r.fail(*n, "protocol", {"expected a table", "a [protocol] table"});
    r.protocol(*t, spec.protocol);
  }
  return spec;
}

SweepSpec load_preset(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw SpecError("preset file '" + file.string() + "' cannot be read (missing or not readable)");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_preset(text.str(), file.string());
}

std::vector<std::string> list_presets(const std::filesystem::path& presets_dir) {
  std::vector<std::string> names;
  std::error_code ec;
  if (!std::filesystem::is_directory(presets_dir, ec)) return names;
  for (const auto& e : std::filesystem::directory_iterator(presets_dir, ec))
    if (e.is_regular_file() && e.path().extension() == ".toml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::filesystem::path resolve_preset(std::string_view name_or_path,
                                     const std::filesystem::path& presets_dir) {
  const std::string s(name_or_path);
  if (s.empty())
    throw SpecError("--preset '': empty preset name; expected a name like quick or a .toml path");
  const bool is_path = s.find('/') != std::string::npos || s.ends_with(".toml");
  if (is_path) {
    if (!std::filesystem::is_regular_file(s)) throw SpecError("preset file '" + s + "' not found");
    return s;
  }
  const std::filesystem::path file = presets_dir / (s + ".toml");
  if (std::filesystem::is_regular_file(file)) return file;
  const auto names = list_presets(presets_dir);
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw SpecError("unknown preset '" + s + "'; available: " + (list.empty() ? "none" : list) + " (in " +
                  presets_dir.string() + ")");
}

}  // namespace attn
