// Kernel variants: a kernel id with some of its knobs set, as written in every kernel list
// (`--kernels`, a preset's `kernels = [...]`, the GUI form): "fa2.mma@br=64+bc=64". Parsing,
// validation against the registry, and the label that names a variant in every output.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "kernels/api/kernel_spec.hpp"
#include "profiling/sweep/axis_parse.hpp"

namespace attn {

// '@' starts the knob settings; '+' joins them. Neither clashes with the ',' of `--kernels` lists,
// the ':' of axis ranges, nor needs shell quoting.
inline constexpr char kVariantMark = '@';
inline constexpr char kVariantKnobJoin = '+';
inline constexpr const char* kVariantAllowed =
    "a kernel id, or ID@knob=value+knob=value to set knobs (e.g. fa2.mma@br=64+bc=64)";

// A variant as written: the kernel id and the knobs set after '@' (none for a plain id).
struct KernelVariant {
  std::string kernel;
  Knobs knobs;
};

// Syntax only (no registry): "ID" or "ID@k=v+k=v"; knob names are letters, digits and '_', values
// integers; a knob set twice, an empty setting, a missing '=' or value are errors. nullopt with
// `problem` filled ({what, kVariantAllowed}) when malformed.
std::optional<KernelVariant> try_parse_kernel_variant(std::string_view text, AxisProblem& problem);

// The written form with the knobs in name order: "fa2.mma@bc=64+br=64". Two texts that set the
// same knobs to the same values (in any order) give the same string.
std::string variant_text(const KernelVariant& v);

// The same canonical form of `text`, or `text` itself when it does not parse (callers compare
// kernel-list entries with it before the registry has checked them).
std::string canonical_variant_text(std::string_view text);

// Whether two kernel-list entries name one variant: the same kernel and knobs once resolved
// (so "fa2.mma" and "fa2.mma@stages=0" match), else the same canonical text.
bool same_variant(std::string_view a, std::string_view b);

// A variant checked against the registry.
struct ResolvedVariant {
  const KernelSpec* spec = nullptr;
  Knobs knobs;        // every knob of the kernel: its defaults overlaid with the written ones
  std::string label;  // variant_label(*spec, knobs)
};

// Checks that the kernel is registered (find_kernel: debug kernels included once registered), that
// each written knob is one of its knobs and that each value is one of the KnobSpec's compiled
// `values`. nullopt with `problem` filled ({what, allowed}) otherwise; `allowed` lists the
// registered ids, the kernel's knobs or the knob's values.
std::optional<ResolvedVariant> try_resolve_kernel_variant(std::string_view text, AxisProblem& problem);

// The name of a variant in outputs (series, table rows, baselines): the kernel id when `knobs` are
// the kernel's defaults, else "id@k=v+k=v" listing only the knobs that differ from their default,
// in name order. Knobs the spec does not declare are listed too.
std::string variant_label(const KernelSpec& spec, const Knobs& knobs);
// The same through find_kernel(kernel); a kernel the registry does not hold labels as its id.
std::string variant_label(const std::string& kernel, const Knobs& knobs);

// The label of a kernel-list entry (a baseline as written, "fa2.mma@stages=0" -> "fa2.mma"); the
// text itself when it does not resolve.
std::string variant_label_of(std::string_view text);

// Empty when `label` may stand as the variant label of a record with this kernel and these knobs:
// it parses, names `kernel`, sets at least one knob, and each knob it sets has that value in
// `knobs`. Otherwise why not (the readers of results and worker lines report it).
std::string variant_label_mismatch(std::string_view label, const std::string& kernel, const Knobs& knobs);

}  // namespace attn
