// GUI model tests (label gui, no display needed): the sweep form's overrides and presets, the
// settings file, and the result store's once-per-frame snapshot.
#include <gtest/gtest.h>

#include <fstream>

#include "app/gui/persistence.hpp"
#include "app/gui/result_store.hpp"
#include "app/gui/sweep_form.hpp"
#include "profiling/sweep/preset.hpp"
#include "tests/support/test_paths.hpp"

namespace attn::gui {

namespace {
namespace fs = std::filesystem;
const std::string kPresets = attn::test::source_dir() + "/assets/presets";
}  // namespace

TEST(GuiForm, FieldsBecomeTheSameOverridesAsFlags) {
  SweepForm f;
  f.preset = "cpu-quick";
  f.seq = "64,128";
  f.head_dim = "32";
  f.noise = "5";
  f.metrics = "none";
  const SweepOverrides o = to_overrides(f);
  ASSERT_TRUE(o.seq && o.head_dim && o.noise && o.metrics);
  EXPECT_EQ(*o.seq, "64,128");
  EXPECT_FALSE(o.batch.has_value());
  const SweepSpec spec = form_spec(f, kPresets);
  EXPECT_EQ(spec.kernels, (std::vector<std::string>{"cpu.reference", "cpu.flash"}));
  for (const SweepGroup& g : spec.groups) EXPECT_EQ(g.seq_q, (std::vector<std::int64_t>{64, 128}));
  EXPECT_DOUBLE_EQ(spec.protocol.noise_pct, 5.0);
  EXPECT_EQ(command_line(f),
            "attnscope run --preset cpu-quick --seq 64,128 --head-dim 32 --noise 5 --metrics none");
}

TEST(GuiForm, WorkerListDevicesAndShardBecomeRunFlags) {
  SweepForm f;
  f.preset = "cpu-quick";
  f.workers = "local\n  ssh gpu7 attnscope worker \n\n";
  f.devices = "0,1";
  f.shard = "1/2";
  EXPECT_EQ(worker_commands(f), (std::vector<std::string>{"", "ssh gpu7 attnscope worker"}));
  EXPECT_EQ(command_line(f),
            "attnscope run --preset cpu-quick --devices 0,1 --worker-cmd '' --worker-cmd 'ssh gpu7 attnscope "
            "worker' --shard 1/2");
  f.workers = " local \n";  // one local worker is the default: no flag
  EXPECT_TRUE(worker_commands(f).empty());
  const SweepForm back = form_from_json(form_to_json(f));
  EXPECT_EQ(back.workers, f.workers);
  EXPECT_EQ(back.devices, f.devices);
  EXPECT_EQ(back.shard, f.shard);
}

// Issue 20: the pass is a form field like any axis: it plans fwd/bwd cases, names --pass in the
// command to copy, persists, and a bad value names the flag and what is allowed.
TEST(GuiForm, ThePassFieldPlansBackwardCases) {
  SweepForm f;
  f.preset = "cpu-quick";
  f.pass = "fwd,bwd";
  const SweepSpec spec = form_spec(f, kPresets);
  for (const SweepGroup& g : spec.groups) EXPECT_EQ(g.pass, (std::vector<Pass>{Pass::fwd, Pass::bwd}));
  EXPECT_EQ(command_line(f), "attnscope run --preset cpu-quick --pass fwd,bwd");
  EXPECT_EQ(form_from_json(form_to_json(f)).pass, "fwd,bwd");
  f.pass = "fwd,sideways";
  try {
    form_spec(f, kPresets);
    FAIL() << "expected SpecError";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("--pass 'fwd,sideways': 'sideways' is not a pass"),
              std::string::npos)
        << e.what();
  }
}

TEST(GuiForm, BadFieldNamesTheFlag) {
  SweepForm f;
  f.preset = "cpu-quick";
  f.head_dim = "64,abc";
  try {
    form_spec(f, kPresets);
    FAIL() << "expected SpecError";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("--head-dim"), std::string::npos) << e.what();
  }
}

TEST(GuiForm, HintsShowThePresetValuesPerGroup) {
  const SweepSpec s = load_preset(fs::path(kPresets) / "cpu-quick.toml");
  EXPECT_EQ(spec_field_text(s, "heads"), "4 | 8");
  EXPECT_EQ(spec_field_text(s, "seq"), "64,128,256,512 | 128,256,512 | 64,128,256");
  EXPECT_EQ(spec_field_text(s, "seq_q"), "32,64,128");
  EXPECT_EQ(spec_field_text(s, "window"), "32,0");
  EXPECT_EQ(spec_field_text(s, "noise"), "2");
}

TEST(GuiSettings, RoundTripAndLenientRead) {
  const fs::path file =
      fs::temp_directory_path() / ("attnscope-gui-settings-" + std::to_string(::getpid()) + ".json");
  GuiSettings s;
  s.width = 1234;
  s.layout.left_w = 300;
  s.form.preset = "quick";
  s.form.kernels = {"cudnn.sdpa"};
  s.form.seq = "512:4096:x2";
  s.plot.tab = "speedup";
  s.plot.log_x = true;
  add_recent(s, "/tmp/a.jsonl");
  add_recent(s, "/tmp/b.jsonl");
  add_recent(s, "/tmp/a.jsonl");
  save_settings(file, s);
  std::string warning;
  const GuiSettings r = load_settings(file, warning);
  EXPECT_TRUE(warning.empty());
  EXPECT_EQ(r.width, 1234);
  EXPECT_FLOAT_EQ(r.layout.left_w, 300);
  EXPECT_EQ(r.form.kernels, s.form.kernels);
  EXPECT_EQ(r.form.seq, "512:4096:x2");
  EXPECT_EQ(r.plot.tab, "speedup");
  EXPECT_TRUE(r.plot.log_x);
  EXPECT_EQ(r.recent, (std::vector<std::string>{"/tmp/a.jsonl", "/tmp/b.jsonl"}));

  std::ofstream(file) << R"({"width": "wide", "sweep": {"seq": 5, "head_dim": "64"}, "layout": [1]})";
  const GuiSettings bad = load_settings(file, warning);
  EXPECT_EQ(bad.width, 1600);  // wrong type: default
  EXPECT_EQ(bad.form.seq, "");
  EXPECT_EQ(bad.form.head_dim, "64");
  std::ofstream(file) << "{not json";
  load_settings(file, warning);
  EXPECT_NE(warning.find("not valid JSON"), std::string::npos);
  fs::remove(file);
}

TEST(GuiStore, SnapshotCopiesOnlyAfterAChange) {
  ResultStore store;
  std::uint64_t seen = 0;
  std::vector<StoredRun> runs;
  EXPECT_TRUE(store.snapshot_if_changed(seen, runs));
  EXPECT_TRUE(runs.empty());
  EXPECT_FALSE(store.snapshot_if_changed(seen, runs));
  StoredRun r;
  r.label = "live";
  const std::uint64_t key = store.add(r);
  CaseResult c;
  c.case_id = "abc";
  store.append(key, c);
  EXPECT_TRUE(store.snapshot_if_changed(seen, runs));
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].data.cases.size(), 1u);
  EXPECT_FALSE(store.snapshot_if_changed(seen, runs));
  store.remove(key);
  EXPECT_TRUE(store.snapshot_if_changed(seen, runs));
  EXPECT_TRUE(runs.empty());
}

}  // namespace attn::gui
