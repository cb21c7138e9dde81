// Issue 18, hot reload in the GUI under Xvfb: a watched plug-in library is run by the sweep as
// version 1; saving version 2 over it reruns the sweep for its kernel alone and a second series,
// test.versioned@v2, appears beside v1; saving a version whose output is wrong is reported as failing
// the check and adds no series. A watched kernel source saved with a syntax error is a compile
// error with NVRTC's diagnostics listed, and the GUI stays up.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "kernels/api/nvrtc_compiler.hpp"
#include "tests/gui/gui_harness.hpp"
#include "tests/support/test_paths.hpp"

namespace attn::guitest {

namespace {

namespace fs = std::filesystem;

// An editor's save: the new bytes land under a temporary name, then replace the file.
void save_as(const fs::path& from, const fs::path& to) {
  const fs::path tmp = to.string() + ".saving";
  fs::copy_file(from, tmp, fs::copy_options::overwrite_existing);
  fs::rename(tmp, to);
}

std::vector<std::string> series_labels(const nlohmann::json& j) {
  std::vector<std::string> out;
  for (const auto& s : j["plot"]["series"]) out.push_back(s["label"].get<std::string>());
  return out;
}

bool has_label(const nlohmann::json& j, const std::string& label) {
  const auto labels = series_labels(j);
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

void write_preset(const fs::path& file, const std::string& kernels, int head_dim = 16,
                  const std::string& dtype = "fp32") {
  std::ofstream p(file);
  p << "name = \"watch\"\nkernels = [" << kernels
    << "]\nbackend = \"cpu\"\n[sweep]\nbatch = 1\nheads = 2\nseq = [32, 64, 96]\n"
    << "head_dim = " << head_dim << "\ndtype = \"" << dtype
    << "\"\n"
       "[protocol]\nwarmup_ms = 1\nmin_samples = 3\nmax_samples = 10\nmax_time_s = 0.02\nnoise_pct = 50\n";
}

TEST(GuiWatch, EachSaveOfAPluginIsAVersionSeriesAndAWrongOneAddsNone) {
  const fs::path dir = fresh_dir("watch");
  Xvfb x(dir);
  REQUIRE_X(x);
  setenv("ATTNSCOPE_CACHE_DIR", (dir / "cache").c_str(), 1);
  const fs::path watched = dir / "libwatched.so";
  fs::copy_file(test::test_plugin("versioned_v1"), watched);
  write_preset(dir / "watch.toml", "\"cpu.reference\", \"test.versioned\"");
  GuiSession gui(x, dir,
                 {"--preset", (dir / "watch.toml").string(), "--watch", watched.string(), "--x", "seq"});
  ASSERT_TRUE(gui.wait_for([](const auto& j) { return j["widgets"].contains("run_button"); }, 60))
      << gui.log_text();
  const nlohmann::json start = gui.map();
  ASSERT_EQ(start["watch"].size(), 1u) << start.dump();
  EXPECT_EQ(start["watch"][0]["kernels"][0], "test.versioned");

  // Version 1 runs with the sweep of the form.
  const Rect run = *gui.widget("run_button");
  gui.click(run.cx(), run.cy());
  ASSERT_TRUE(gui.wait_for(
      [](const auto& j) {
        return has_label(j, "test.versioned@v1") && !j["job"]["running"].template get<bool>();
      },
      120))
      << gui.map().dump() << gui.log_text();
  EXPECT_TRUE(has_label(gui.map(), "cpu.reference")) << gui.map().dump();

  // Saving version 2 reruns the sweep for test.versioned alone: a second series, the first kept.
  save_as(test::test_plugin("versioned_v2"), watched);
  ASSERT_TRUE(gui.wait_for(
      [](const auto& j) {
        return j["watch"][0]["versions"].size() == 2 && j["watch"][0]["versions"][1]["state"] == "done" &&
               has_label(j, "test.versioned@v2");
      },
      120))
      << gui.map().dump() << gui.log_text();
  nlohmann::json m = gui.map();
  EXPECT_EQ(m["watch"][0]["versions"][1]["ok"], 3) << m.dump();  // 3 sequence lengths
  EXPECT_EQ(m["watch"][0]["versions"][1]["failed"], 0) << m.dump();
  EXPECT_TRUE(has_label(m, "test.versioned@v1")) << m.dump();
  for (const auto& s : m["plot"]["series"])
    if (s["label"] == "test.versioned@v2") {
      EXPECT_EQ(s["points"], 3);
    }

  // A wrong version: it runs, fails the check, and adds no series; v1 and v2 stay.
  save_as(test::test_plugin("versioned_wrong"), watched);
  ASSERT_TRUE(gui.wait_for(
      [](const auto& j) {
        return j["watch"][0]["versions"].size() == 3 && j["watch"][0]["versions"][2]["state"] == "done" &&
               !j["job"]["running"].template get<bool>();
      },
      120))
      << gui.map().dump() << gui.log_text();
  m = gui.map();
  EXPECT_EQ(m["watch"][0]["versions"][2]["failed"], 3) << m.dump();
  EXPECT_EQ(m["watch"][0]["versions"][2]["ok"], 0) << m.dump();
  EXPECT_FALSE(has_label(m, "test.versioned@v3")) << m.dump();
  EXPECT_TRUE(has_label(m, "test.versioned@v1")) << m.dump();
  EXPECT_TRUE(has_label(m, "test.versioned@v2")) << m.dump();

  EXPECT_EQ(gui.quit(30).value_or(-99), 0) << gui.log_text();
  unsetenv("ATTNSCOPE_CACHE_DIR");
}

TEST(GuiWatch, AKernelSourceSavedWithAnErrorListsItsDiagnostics) {
  try {
    (void)nvrtc_version();
  } catch (const PluginError& e) {
    GTEST_SKIP() << "NVRTC is not available here: " << e.what();
  }
  const fs::path dir = fresh_dir("watch-source");
  Xvfb x(dir);
  REQUIRE_X(x);
  setenv("ATTNSCOPE_CACHE_DIR", (dir / "cache").c_str(), 1);
  const fs::path watched = dir / "tiled.cu";
  fs::copy_file(test::source_dir() + "/examples/kernel-source/tiled_attention.cu", watched);
  // fp16 and D=64: a configuration the source takes, so the edit is compiled (the CPU sweep skips it).
  write_preset(dir / "watch.toml", "\"cpu.reference\", \"example.tiled_rtc\"", 64, "fp16");
  GuiSession gui(x, dir, {"--preset", (dir / "watch.toml").string(), "--watch", watched.string()});
  ASSERT_TRUE(gui.wait_for([](const auto& j) { return j["watch"].size() == 1; }, 60)) << gui.log_text();

  // The same file with a statement that does not parse, 3 lines below the kernel's entry.
  std::ifstream in(watched);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  in.close();
  const std::string entry = "tiled::attention<ATTN_HEAD_DIM, ATTN_DTYPE == ATTN_BF16>(args, p);";
  const std::size_t at = text.find(entry);
  ASSERT_NE(at, std::string::npos);
  text.insert(at + entry.size(), "\n  int broken = ;");
  const auto broken_line = std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n') + 2;
  const fs::path edited = dir / "edited.cu";
  std::ofstream(edited) << text;
  save_as(edited, watched);
  ASSERT_TRUE(gui.wait_for(
      [](const auto& j) {
        return j["watch"][0]["versions"].size() == 2 &&
               j["watch"][0]["versions"][1]["state"] == "compile error";
      },
      120))
      << gui.map().dump() << gui.log_text();
  const nlohmann::json m = gui.map();
  EXPECT_EQ(m["watch"][0]["versions"][1]["diagnostics"], 1) << m.dump();
  EXPECT_EQ(m["watch"][0]["versions"][1]["message"],
            watched.string() + ":" + std::to_string(broken_line) + ":16: error: expected an expression")
      << m.dump();
  EXPECT_TRUE(gui.wait_for([](const auto& j) { return j["widgets"].contains("watch_first_diagnostic"); }, 20))
      << gui.map().dump();
  EXPECT_EQ(gui.quit(30).value_or(-99), 0) << gui.log_text();
  unsetenv("ATTNSCOPE_CACHE_DIR");
}

}  // namespace
}  // namespace attn::guitest
