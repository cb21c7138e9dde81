// Kernel variant syntax, registry checks and labels (see variant.hpp).
#include "profiling/sweep/variant.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

#include "kernels/registry.hpp"
#include "profiling/sweep/quoted.hpp"

namespace attn {

namespace {

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool to_int(std::string_view s, int& v) {
  if (s.empty()) return false;
  if (s.front() == '+') s.remove_prefix(1);
  long long x = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
  if (ec != std::errc() || ptr != s.data() + s.size()) return false;
  if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max()) return false;
  v = static_cast<int>(x);
  return true;
}

std::string registered_ids() {
  std::string list;
  for (const auto& k : kernel_registry()) list += (list.empty() ? "" : ", ") + k.id;
  return list;
}

std::string values_text(const KnobSpec& s) {
  std::string list;
  for (const int v : s.values) list += (list.empty() ? "" : ", ") + std::to_string(v);
  return list;
}

std::string knob_names(const KernelSpec& k) {
  std::string list;
  for (const KnobSpec& s : k.knobs) list += (list.empty() ? "" : ", ") + s.name;
  return list;
}

std::nullopt_t fail(AxisProblem& problem, std::string what, std::string allowed = kVariantAllowed) {
  problem = {std::move(what), std::move(allowed)};
  return std::nullopt;
}

}  // namespace

std::optional<KernelVariant> try_parse_kernel_variant(std::string_view text, AxisProblem& problem) {
  if (text.empty()) return fail(problem, "empty kernel id");
  for (const char c : text)
    if (std::isspace(static_cast<unsigned char>(c)) || c == ',')
      return fail(problem, quoted(text) + " holds a space or ','; knob settings are joined by '+'");
  KernelVariant v;
  const std::size_t at = text.find(kVariantMark);
  v.kernel = std::string(text.substr(0, at));
  if (v.kernel.empty()) return fail(problem, "no kernel id before '@'");
  if (v.kernel.find_first_of("+=") != std::string::npos)
    return fail(problem, "kernel id " + quoted(v.kernel) + " holds '+' or '='; knobs come after '@'");
  if (at == std::string_view::npos) return v;
  std::string_view rest = text.substr(at + 1);
  if (rest.empty()) return fail(problem, "nothing after '@'; give knob=value settings or drop the '@'");
  if (rest.find(kVariantMark) != std::string_view::npos)
    return fail(problem, "a second '@'; join knob settings with '+'");
  while (true) {
    const std::size_t join = rest.find(kVariantKnobJoin);
    const std::string_view setting = rest.substr(0, join);
    if (setting.empty()) return fail(problem, "empty knob setting (a '+' with nothing on one side)");
    const std::size_t eq = setting.find('=');
    if (eq == std::string_view::npos) return fail(problem, "knob setting " + quoted(setting) + " has no '='");
    const std::string_view name = setting.substr(0, eq), value = setting.substr(eq + 1);
    if (name.empty()) return fail(problem, "knob setting " + quoted(setting) + " has no knob name");
    if (!std::all_of(name.begin(), name.end(), is_name_char))
      return fail(problem, "knob name " + quoted(name) + " may hold only letters, digits and '_'");
    int n = 0;
    if (!to_int(value, n))
      return fail(problem, "value " + quoted(value) + " of knob " + quoted(name) + " is not an integer");
    if (!v.knobs.emplace(std::string(name), n).second)
      return fail(problem, "knob " + quoted(name) + " is set twice");
    if (join == std::string_view::npos) break;
    rest = rest.substr(join + 1);
  }
  return v;
}

std::string variant_text(const KernelVariant& v) {
  std::string s = v.kernel;
  bool first = true;
  for (const auto& [name, value] : v.knobs) {  // std::map: name order
    s += first ? kVariantMark : kVariantKnobJoin;
    s += name + "=" + std::to_string(value);
    first = false;
  }
  return s;
}

std::string canonical_variant_text(std::string_view text) {
  AxisProblem ignored;
  const auto v = try_parse_kernel_variant(text, ignored);
  return v ? variant_text(*v) : std::string(text);
}

std::optional<ResolvedVariant> try_resolve_kernel_variant(std::string_view text, AxisProblem& problem) {
  const auto v = try_parse_kernel_variant(text, problem);
  if (!v) return std::nullopt;
  ResolvedVariant r;
  r.spec = find_kernel(v->kernel);
  if (!r.spec) {
    std::string what = "unknown kernel " + quoted(v->kernel);
    if (!built_with_cuda()) what += " (this build has no CUDA kernels)";
    return fail(problem, what, "registered kernel ids: " + registered_ids());
  }
  for (const KnobSpec& s : r.spec->knobs) r.knobs[s.name] = s.default_value;
  for (const auto& [name, value] : v->knobs) {
    if (name == kBucketKnob) {  // the execution knob every kernel takes (kernels/api/bucketing.hpp)
      if (value < 0 || value > kMaxBucket)
        return fail(problem, "knob " + quoted(name) + " of " + v->kernel + " = " + std::to_string(value),
                    "bucket = 0 (the kernel's own varlen path) or 1 to " + std::to_string(kMaxBucket) +
                        " (dense batches padded to multiples of that many rows, one launch each)");
      if (value != 0) r.knobs[name] = value;
      continue;
    }
    const auto it = std::find_if(r.spec->knobs.begin(), r.spec->knobs.end(),
                                 [&](const KnobSpec& s) { return s.name == name; });
    if (it == r.spec->knobs.end())
      return fail(problem, v->kernel + " has no knob " + quoted(name),
                  r.spec->knobs.empty() ? "the plain id " + v->kernel + " (it has no knobs)"
                                        : "knobs of " + v->kernel + ": " + knob_names(*r.spec));
    if (std::find(it->values.begin(), it->values.end(), value) == it->values.end())
      return fail(problem,
                  "knob " + quoted(name) + " of " + v->kernel + " = " + std::to_string(value) +
                      " is not one of its compiled values",
                  name + " in {" + values_text(*it) + "} (default " + std::to_string(it->default_value) +
                      "; " + it->help + ")");
    r.knobs[name] = value;
  }
  r.label = variant_label(*r.spec, r.knobs);
  return r;
}

bool same_variant(std::string_view a, std::string_view b) {
  AxisProblem ignored;
  const auto ra = try_resolve_kernel_variant(a, ignored);
  const auto rb = try_resolve_kernel_variant(b, ignored);
  if (ra && rb) return ra->spec == rb->spec && ra->knobs == rb->knobs;
  return canonical_variant_text(a) == canonical_variant_text(b);
}

std::string variant_label(const KernelSpec& spec, const Knobs& knobs) {
  KernelVariant shown{spec.id, {}};
  for (const auto& [name, value] : knobs) {
    const auto it =
        std::find_if(spec.knobs.begin(), spec.knobs.end(), [&](const KnobSpec& s) { return s.name == name; });
    if (it == spec.knobs.end() || it->default_value != value) shown.knobs[name] = value;
  }
  return variant_text(shown);
}

std::string variant_label(const std::string& kernel, const Knobs& knobs) {
  const KernelSpec* spec = find_kernel(kernel);
  return spec ? variant_label(*spec, knobs) : kernel;
}

std::string variant_label_of(std::string_view text) {
  AxisProblem ignored;
  const auto r = try_resolve_kernel_variant(text, ignored);
  return r ? r->label : std::string(text);
}

std::string variant_label_mismatch(std::string_view label, const std::string& kernel, const Knobs& knobs) {
  AxisProblem problem;
  const auto v = try_parse_kernel_variant(label, problem);
  if (!v) return problem.what;
  if (v->kernel != kernel)
    return "names kernel " + quoted(v->kernel) + ", not the record's " + quoted(kernel);
  if (v->knobs.empty()) return "sets no knob; a kernel at its default knobs has no variant label";
  for (const auto& [name, value] : v->knobs) {
    const auto it = knobs.find(name);
    if (it == knobs.end()) return "sets knob " + quoted(name) + ", which the record's knobs lack";
    if (it->second != value)
      return "sets " + name + "=" + std::to_string(value) + " but the record's knobs have " + name + "=" +
             std::to_string(it->second);
  }
  return {};
}

}  // namespace attn
