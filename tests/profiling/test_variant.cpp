// Kernel variants ("cpu.flash@block_q=16+block_k=32"): syntax and its errors, registry checks,
// labels, planning one case per (variant, problem) with the default variant's id unchanged, the
// --kernels flag and preset lists, and the case knobs reaching the kernel through the engine.
#include <gtest/gtest.h>

#include <set>

#include "kernels/registry.hpp"
#include "profiling/engine/engine.hpp"
#include "profiling/sweep/overrides.hpp"
#include "profiling/sweep/plan.hpp"
#include "profiling/sweep/preset.hpp"
#include "profiling/sweep/variant.hpp"
#include "tests/support/spec_error.hpp"

namespace attn {
namespace {

using test::error_of;

// What try_parse_kernel_variant says about `text` ("" when it parses).
std::string parse_problem(std::string_view text) {
  AxisProblem p;
  return try_parse_kernel_variant(text, p) ? std::string() : p.what;
}

AxisProblem resolve_problem(std::string_view text) {
  AxisProblem p;
  EXPECT_FALSE(try_resolve_kernel_variant(text, p).has_value()) << text;
  return p;
}

TEST(Variant, ParsesIdAndKnobSettings) {
  AxisProblem p;
  const auto plain = try_parse_kernel_variant("fa2.mma", p);
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->kernel, "fa2.mma");
  EXPECT_TRUE(plain->knobs.empty());
  const auto v = try_parse_kernel_variant("fa2.mma@br=64+bc=32+stages=-1", p);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->kernel, "fa2.mma");
  EXPECT_EQ(v->knobs, (Knobs{{"br", 64}, {"bc", 32}, {"stages", -1}}));
  // Canonical text: knobs in name order, so two spellings compare equal.
  EXPECT_EQ(variant_text(*v), "fa2.mma@bc=32+br=64+stages=-1");
  EXPECT_EQ(canonical_variant_text("fa2.mma@br=64+bc=32"), canonical_variant_text("fa2.mma@bc=32+br=64"));
  EXPECT_EQ(canonical_variant_text("not @ valid"), "not @ valid");  // unparsable text stays as is
}

TEST(Variant, MalformedTextSaysWhatIsWrong) {
  EXPECT_EQ(parse_problem(""), "empty kernel id");
  EXPECT_EQ(parse_problem("@br=64"), "no kernel id before '@'");
  EXPECT_EQ(parse_problem("fa2.mma@"), "nothing after '@'; give knob=value settings or drop the '@'");
  EXPECT_EQ(parse_problem("fa2.mma@br"), "knob setting 'br' has no '='");
  EXPECT_EQ(parse_problem("fa2.mma@=64"), "knob setting '=64' has no knob name");
  EXPECT_EQ(parse_problem("fa2.mma@br=64+"), "empty knob setting (a '+' with nothing on one side)");
  EXPECT_EQ(parse_problem("fa2.mma@br=64++bc=32"), "empty knob setting (a '+' with nothing on one side)");
  EXPECT_EQ(parse_problem("fa2.mma@br=6x4"), "value '6x4' of knob 'br' is not an integer");
  EXPECT_EQ(parse_problem("fa2.mma@br="), "value '' of knob 'br' is not an integer");
  EXPECT_EQ(parse_problem("fa2.mma@br=99999999999"), "value '99999999999' of knob 'br' is not an integer");
  EXPECT_EQ(parse_problem("fa2.mma@br=64+br=128"), "knob 'br' is set twice");
  EXPECT_EQ(parse_problem("fa2.mma@b-r=64"), "knob name 'b-r' may hold only letters, digits and '_'");
  EXPECT_EQ(parse_problem("fa2.mma@br=64@bc=32"), "a second '@'; join knob settings with '+'");
  EXPECT_EQ(parse_problem("fa2.mma+br=64"),
            "kernel id 'fa2.mma+br=64' holds '+' or '='; knobs come after '@'");
  EXPECT_EQ(parse_problem("fa2.mma@br=64,bc=32"),
            "'fa2.mma@br=64,bc=32' holds a space or ','; knob settings are joined by '+'");
  AxisProblem p;
  try_parse_kernel_variant("fa2.mma@br", p);
  EXPECT_EQ(p.allowed, kVariantAllowed);
}

TEST(Variant, ResolvesAgainstTheRegistry) {
  AxisProblem p;
  const auto d = try_resolve_kernel_variant("cpu.flash", p);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->spec, find_kernel("cpu.flash"));
  EXPECT_EQ(d->knobs, default_knobs(*find_kernel("cpu.flash")));
  EXPECT_EQ(d->label, "cpu.flash");
  const auto v = try_resolve_kernel_variant("cpu.flash@block_q=16", p);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->knobs, (Knobs{{"block_q", 16}, {"block_k", 64}}));  // unset knobs keep their default
  EXPECT_EQ(v->label, "cpu.flash@block_q=16");
  // A knob set to its default is the default variant.
  const auto same = try_resolve_kernel_variant("cpu.flash@block_k=64", p);
  ASSERT_TRUE(same);
  EXPECT_EQ(same->label, "cpu.flash");

  const AxisProblem unknown_knob = resolve_problem("cpu.flash@block_m=16");
  EXPECT_EQ(unknown_knob.what, "cpu.flash has no knob 'block_m'");
  EXPECT_EQ(unknown_knob.allowed, "knobs of cpu.flash: block_q, block_k");
  const AxisProblem bad_value = resolve_problem("cpu.flash@block_q=48");
  EXPECT_EQ(bad_value.what, "knob 'block_q' of cpu.flash = 48 is not one of its compiled values");
  EXPECT_EQ(bad_value.allowed, "block_q in {16, 32, 64, 128} (default 64; query rows per tile (Br))");
  const AxisProblem no_knobs = resolve_problem("cpu.reference@block_q=16");
  EXPECT_EQ(no_knobs.what, "cpu.reference has no knob 'block_q'");
  EXPECT_EQ(no_knobs.allowed, "the plain id cpu.reference (it has no knobs)");
  const AxisProblem no_kernel = resolve_problem("cpu.flashy@block_q=16");
  EXPECT_EQ(no_kernel.what.rfind("unknown kernel 'cpu.flashy'", 0), 0u) << no_kernel.what;
  EXPECT_NE(no_kernel.allowed.find("registered kernel ids: cpu.reference, cpu.flash"), std::string::npos);
  EXPECT_EQ(resolve_problem("cpu.flash@block_q").what, "knob setting 'block_q' has no '='");
}

TEST(Variant, LabelListsOnlyNonDefaultKnobsInNameOrder) {
  const KernelSpec& flash = *find_kernel("cpu.flash");
  EXPECT_EQ(variant_label(flash, default_knobs(flash)), "cpu.flash");
  EXPECT_EQ(variant_label(flash, {}), "cpu.flash");
  EXPECT_EQ(variant_label(flash, {{"block_q", 16}, {"block_k", 64}}), "cpu.flash@block_q=16");
  EXPECT_EQ(variant_label(flash, {{"block_q", 16}, {"block_k", 32}}), "cpu.flash@block_k=32+block_q=16");
  EXPECT_EQ(variant_label(flash, {{"zeta", 1}, {"block_q", 64}}), "cpu.flash@zeta=1");  // undeclared: listed
  EXPECT_EQ(variant_label("cpu.flash", {{"block_k", 128}}), "cpu.flash@block_k=128");
  EXPECT_EQ(variant_label("not.registered", {{"x", 1}}), "not.registered");
  EXPECT_EQ(variant_label_of("cpu.flash@block_k=64+block_q=16"), "cpu.flash@block_q=16");
  EXPECT_EQ(variant_label_of("cpu.flash@block_k=64"), "cpu.flash");
  EXPECT_TRUE(same_variant("cpu.flash", "cpu.flash@block_q=64"));
  EXPECT_TRUE(same_variant("cpu.flash@block_q=16+block_k=32", "cpu.flash@block_k=32+block_q=16"));
  EXPECT_FALSE(same_variant("cpu.flash", "cpu.flash@block_q=16"));
  EXPECT_TRUE(same_variant("fa9.x@a=1+b=2", "fa9.x@b=2+a=1"));  // unregistered: by canonical text
}

TEST(Variant, LabelMismatchChecksARecordsLabelAgainstItsKnobs) {
  const Knobs knobs{{"block_q", 16}, {"block_k", 64}};
  EXPECT_EQ(variant_label_mismatch("cpu.flash@block_q=16", "cpu.flash", knobs), "");
  EXPECT_EQ(variant_label_mismatch("cpu.flash@block_q=32", "cpu.flash", knobs),
            "sets block_q=32 but the record's knobs have block_q=16");
  EXPECT_EQ(variant_label_mismatch("cpu.flash@block_m=16", "cpu.flash", knobs),
            "sets knob 'block_m', which the record's knobs lack");
  EXPECT_EQ(variant_label_mismatch("fa2.mma@block_q=16", "cpu.flash", knobs),
            "names kernel 'fa2.mma', not the record's 'cpu.flash'");
  EXPECT_EQ(variant_label_mismatch("cpu.flash", "cpu.flash", knobs),
            "sets no knob; a kernel at its default knobs has no variant label");
  EXPECT_EQ(variant_label_mismatch("cpu.flash@block_q", "cpu.flash", knobs),
            "knob setting 'block_q' has no '='");
}

// The problem of the pinned case id in test_plan.cpp (CaseId.PinnedValue).
SweepSpec pinned_problem_spec() {
  SweepSpec s;
  s.source = "test";
  SweepGroup g;
  g.batch = {2};
  g.heads = {8};
  g.heads_kv = {2};
  g.seq_q = {128};
  g.seq_kv = {256};
  g.head_dim = {64};
  g.dtype = {DType::fp16};
  g.causal = {1};
  s.groups = {g};
  return s;
}

TEST(Variant, PlanGivesOneCasePerVariantAndTheDefaultKeepsItsId) {
  SweepSpec s = pinned_problem_spec();
  s.kernels = {"cpu.flash"};
  const auto alone = plan(s, Backend::cpu);
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(alone[0].case_id, "c89f8f99bd446b91");  // the pinned id: defaults hash as before

  s.kernels = {"cpu.flash", "cpu.flash@block_q=16+block_k=32", "cpu.flash@block_q=128"};
  s.groups[0].seq_q = {128, 256};
  s.groups[0].seq_kv.clear();
  s.groups[0].dtype = {DType::fp32};
  const auto cases = plan(s, Backend::cpu);
  ASSERT_EQ(cases.size(), 6u);  // 2 problems x 3 variants, problem-major
  std::set<std::string> ids;
  for (const Case& c : cases) {
    EXPECT_EQ(c.kernel, "cpu.flash");
    EXPECT_EQ(c.skip_reason, "");
    EXPECT_EQ(c.case_id, make_case_id(c.kernel, c.knobs, c.problem));
    EXPECT_TRUE(ids.insert(c.case_id).second) << c.case_id;
  }
  EXPECT_EQ(cases[0].knobs, (Knobs{{"block_q", 64}, {"block_k", 64}}));
  EXPECT_EQ(cases[1].knobs, (Knobs{{"block_q", 16}, {"block_k", 32}}));
  EXPECT_EQ(cases[2].knobs, (Knobs{{"block_q", 128}, {"block_k", 64}}));
  EXPECT_EQ(cases[3].problem, cases[5].problem);
  EXPECT_EQ(cases[3].problem.seq_q, 256);
  s.kernels = {"cpu.flash"};
  const auto defaults = plan(s, Backend::cpu);
  ASSERT_EQ(defaults.size(), 2u);
  EXPECT_EQ(defaults[0].case_id, cases[0].case_id);
  EXPECT_EQ(defaults[1].case_id, cases[3].case_id);
}

TEST(Variant, PlanErrorsNameTheEntry) {
  SweepSpec s = pinned_problem_spec();
  s.kernels = {"cpu.flash", "cpu.flash@block_q=64"};
  EXPECT_EQ(
      error_of([&] { plan(s, Backend::cpu); }),
      "test: kernels 'cpu.flash' and 'cpu.flash@block_q=64' are the same variant (cpu.flash); list it once");
  s.kernels = {"cpu.flash@block_q=16+block_k=32", "cpu.flash@block_k=32+block_q=16"};
  EXPECT_EQ(error_of([&] { plan(s, Backend::cpu); }),
            "test: kernels 'cpu.flash@block_q=16+block_k=32' and 'cpu.flash@block_k=32+block_q=16' are the "
            "same variant (cpu.flash@block_k=32+block_q=16); list it once");
  s.kernels = {"cpu.flash@block_q=24"};
  EXPECT_EQ(
      error_of([&] { plan(s, Backend::cpu); }),
      "test: kernel 'cpu.flash@block_q=24': knob 'block_q' of cpu.flash = 24 is not one of its compiled "
      "values; allowed: block_q in {16, 32, 64, 128} (default 64; query rows per tile (Br))");
  s.kernels = {"cpu.flash@tile=16"};
  EXPECT_EQ(error_of([&] { plan(s, Backend::cpu); }),
            "test: kernel 'cpu.flash@tile=16': cpu.flash has no knob 'tile'; allowed: knobs of cpu.flash: "
            "block_q, block_k");
  s.kernels = {"cpu.flash@block_q=16+"};
  EXPECT_EQ(error_of([&] {
              plan(s, Backend::cpu);
            }).rfind("test: kernel 'cpu.flash@block_q=16+': empty knob setting", 0),
            0u);
  s.kernels = {"fa9.magic@x=1"};
  EXPECT_EQ(
      error_of([&] { plan(s, Backend::cpu); }).rfind("test: unknown kernel 'fa9.magic'; registered:", 0), 0u);

  // The baseline is one of the variants, however it is spelt.
  s.kernels = {"cpu.flash", "cpu.flash@block_q=16+block_k=32"};
  s.baseline = "cpu.flash@block_k=32+block_q=16";
  EXPECT_EQ(plan(s, Backend::cpu).size(), 2u);
  s.baseline = "cpu.flash@block_k=64";  // = the default variant
  EXPECT_EQ(plan(s, Backend::cpu).size(), 2u);
  s.baseline = "cpu.flash@block_q=32";
  EXPECT_EQ(error_of([&] { plan(s, Backend::cpu); }),
            "test: baseline 'cpu.flash@block_q=32' is not one of the kernels of this run");
}

TEST(Variant, KernelsFlagTakesVariantsAndChecksThemUpFront) {
  SweepSpec s;
  SweepOverrides o;
  o.kernels = "cpu.reference, cpu.flash@block_q=16+block_k=32,cpu.flash";
  o.baseline = "cpu.flash@block_k=32+block_q=16";
  apply_overrides(s, o);
  EXPECT_EQ(s.kernels,
            (std::vector<std::string>{"cpu.reference", "cpu.flash@block_q=16+block_k=32", "cpu.flash"}));
  EXPECT_EQ(s.baseline, "cpu.flash@block_k=32+block_q=16");

  auto flag_error = [](const std::string& kernels) {
    SweepSpec spec;
    SweepOverrides bad;
    bad.kernels = kernels;
    return error_of([&] { apply_overrides(spec, bad); });
  };
  EXPECT_EQ(
      flag_error("cpu.flash@block_q=20"),
      "--kernels 'cpu.flash@block_q=20': 'cpu.flash@block_q=20': knob 'block_q' of cpu.flash = 20 is not "
      "one of its compiled values; expected block_q in {16, 32, 64, 128} (default 64; query rows per "
      "tile (Br))");
  EXPECT_EQ(flag_error("cpu.flash@bq=16"),
            "--kernels 'cpu.flash@bq=16': 'cpu.flash@bq=16': cpu.flash has no knob 'bq'; expected knobs of "
            "cpu.flash: block_q, block_k");
  EXPECT_EQ(flag_error("cpu.flash@block_q"),
            std::string("--kernels 'cpu.flash@block_q': 'cpu.flash@block_q': knob setting 'block_q' has no "
                        "'='; expected ") +
                kVariantAllowed);
  EXPECT_EQ(flag_error("cpu.flash@block_q=16,cpu.flash@block_q=16"),
            "--kernels 'cpu.flash@block_q=16,cpu.flash@block_q=16': 'cpu.flash@block_q=16' and "
            "'cpu.flash@block_q=16' are the same variant (cpu.flash@block_q=16); expected each variant once");
  const std::string same = flag_error("cpu.flash,cpu.flash@block_k=64");  // block_k=64 is the default
  EXPECT_NE(same.find("'cpu.flash' and 'cpu.flash@block_k=64' are the same variant (cpu.flash)"),
            std::string::npos)
      << same;
  const std::string unknown = flag_error("cpu.flashy@block_q=16");
  EXPECT_EQ(unknown.rfind("--kernels 'cpu.flashy@block_q=16': unknown kernel 'cpu.flashy'", 0), 0u)
      << unknown;

  // A --baseline that is not one of the variants; a preset baseline dropped with its variant.
  SweepSpec t;
  SweepOverrides b;
  b.kernels = "cpu.flash@block_q=16";
  b.baseline = "cpu.flash";
  EXPECT_EQ(
      error_of([&] { apply_overrides(t, b); }).rfind("--baseline 'cpu.flash': not one of the kernels", 0),
      0u);
  SweepSpec u;
  u.kernels = {"cpu.flash@block_q=16"};
  u.baseline = "cpu.flash@block_q=16";
  SweepOverrides keep;
  keep.kernels = "cpu.reference,cpu.flash@block_q=16";
  apply_overrides(u, keep);
  EXPECT_EQ(u.baseline, "cpu.flash@block_q=16");
  SweepOverrides drop;
  drop.kernels = "cpu.reference";
  apply_overrides(u, drop);
  EXPECT_EQ(u.baseline, "");
}

TEST(Variant, PresetListsVariantsAndChecksTheirSyntax) {
  const SweepSpec s = parse_preset(R"(
kernels = ["cpu.reference", "cpu.flash@block_q=16+block_k=32", "fa2.mma@br=64+bc=64"]
baseline = "cpu.flash@block_k=32+block_q=16"
[sweep]
batch = 1
heads = 2
seq = 64
head_dim = 32
)",
                                   "v.toml");
  EXPECT_EQ(s.kernels, (std::vector<std::string>{"cpu.reference", "cpu.flash@block_q=16+block_k=32",
                                                 "fa2.mma@br=64+bc=64"}));
  EXPECT_EQ(s.baseline, "cpu.flash@block_k=32+block_q=16");

  auto preset_error = [](const std::string& kernels) {
    return error_of([&] { parse_preset("kernels = " + kernels + "\n", "v.toml"); });
  };
  const std::string malformed = preset_error(R"(["cpu.flash@block_q"])");
  EXPECT_EQ(
      malformed.rfind("v.toml:1:12: field 'kernels' = 'cpu.flash@block_q': knob setting 'block_q' has no "
                      "'='; allowed: ",
                      0),
      0u)
      << malformed;
  const std::string twice =
      preset_error(R"(["cpu.flash@block_q=16+block_k=32", "cpu.flash@block_k=32+block_q=16"])");
  EXPECT_NE(
      twice.find("field 'kernels' = 'cpu.flash@block_k=32+block_q=16': 'cpu.flash@block_q=16+block_k=32' "
                 "and 'cpu.flash@block_k=32+block_q=16' are the same variant"),
      std::string::npos)
      << twice;
  const std::string baseline = error_of(
      [] { parse_preset("kernels = [\"cpu.flash@block_q=16\"]\nbaseline = \"cpu.flash\"\n", "v.toml"); });
  EXPECT_NE(baseline.find("field 'baseline' = 'cpu.flash': not one of the preset's kernels"),
            std::string::npos)
      << baseline;
}

TEST(Variant, EngineRunsTheCaseKnobsAndRecordsTheLabel) {
  Protocol protocol;
  protocol.warmup_ms = 1;
  protocol.min_samples = 3;
  protocol.max_time_s = 0.01;
  const auto engine = make_engine(Backend::cpu, protocol);
  SweepSpec s;
  s.source = "test";
  s.kernels = {"cpu.flash", "cpu.flash@block_q=16+block_k=32"};
  SweepGroup g;
  g.batch = {1};
  g.heads = {1};
  g.seq_q = {48};
  g.head_dim = {16};
  s.groups = {g};
  const auto cases = plan(s, Backend::cpu);
  ASSERT_EQ(cases.size(), 2u);
  const CaseResult d = engine->run(cases[0]);
  const CaseResult v = engine->run(cases[1]);
  EXPECT_EQ(d.status, Status::ok) << d.reason;
  EXPECT_EQ(v.status, Status::ok) << v.reason;
  EXPECT_EQ(d.variant, "");
  EXPECT_EQ(variant_label(d), "cpu.flash");
  EXPECT_EQ(v.knobs, (Knobs{{"block_q", 16}, {"block_k", 32}}));
  EXPECT_EQ(v.variant, "cpu.flash@block_k=32+block_q=16");
  EXPECT_EQ(variant_label(v), "cpu.flash@block_k=32+block_q=16");
  EXPECT_EQ(v.case_id, cases[1].case_id);
  EXPECT_EQ(d.nvtx_range, "cpu.flash/1x1x48x16/fp32/full");
  EXPECT_EQ(v.nvtx_range, "cpu.flash@block_k=32+block_q=16/1x1x48x16/fp32/full");
  // Skipped and supervisor records carry the label too.
  EXPECT_EQ(planned_skip_record(cases[1]).variant, "cpu.flash@block_k=32+block_q=16");
}

}  // namespace
}  // namespace attn
