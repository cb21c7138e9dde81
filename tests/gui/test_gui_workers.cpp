// GUI sweeps on several workers, one of them started by a command (standing in for ssh), stopped
// and resumed through the GUI (label gui; Xvfb and xdotool, real input events). The run directory
// must end up as `attnscope run` leaves it: the plan, every case exactly once, results.csv and
// workers.log; the form must show each worker's state and device.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "reports/jsonl_store.hpp"
#include "reports/plan_store.hpp"
#include "tests/gui/gui_harness.hpp"
#include "tests/support/test_paths.hpp"

namespace attn::guitest {

namespace {

namespace fs = std::filesystem;

}  // namespace

TEST(GuiWorkers, SweepOnALocalAndACommandWorkerStopsAndResumesToTheFullPlan) {
  const fs::path dir = fresh_dir("workers");
  Xvfb x(dir);
  REQUIRE_X(x);
  // 16 cases of about 0.4 s each (the noise target is never met, so each uses its whole budget):
  // long enough to stop the sweep in the middle and to keep two workers busy.
  {
    std::ofstream p(dir / "two.toml");
    p << "name = \"two\"\nkernels = [\"cpu.reference\", \"cpu.flash\"]\nbaseline = \"cpu.reference\"\n"
         "backend = \"cpu\"\n[sweep]\nbatch = 1\nheads = 2\nseq = [16, 24, 32, 40, 48, 56, 64, 72]\n"
         "head_dim = 16\ndtype = \"fp32\"\n"
         "[protocol]\nwarmup_ms = 1\nmin_samples = 3\nmax_samples = 100000\nmax_time_s = 0.4\n"
         "noise_pct = 0.0001\n";
  }
  GuiSession gui(x, dir, {"--preset", (dir / "two.toml").string()});
  ASSERT_TRUE(gui.wait_for([](const auto& j) { return j["widgets"].contains("field_workers"); }, 60))
      << gui.log_text();

  // Two workers: this program, and `attnscope worker` started through a shell command as ssh would.
  const std::string command = "bash -c 'exec " + attn::test::cli_binary() + " worker'";
  // The Workers section sits below the protocol: on a 1000-px screen the sweep panel scrolls to it,
  // as a user would.
  Rect workers = *gui.widget("field_workers");
  for (int tries = 0; workers.y1 >= 1000 && tries < 10; ++tries) {
    gui.scroll_down(workers.cx(), 500, 5);
    workers = *gui.widget("field_workers");
  }
  ASSERT_LT(workers.y1, 1000) << "the workers field is off screen";
  ASSERT_GT(workers.y0, 0) << "the workers field is off screen";
  gui.click(workers.cx(), workers.cy());
  gui.type("local");
  gui.key("Return");  // a new line in the multi-line field (xdotool types '\n' as nothing there)
  gui.type(command);
  const Rect run = *gui.widget("run_button");
  gui.click(run.cx(), run.cy());

  // Stop once a few cases are in.
  ASSERT_TRUE(gui.wait_for(
      [](const auto& j) {
        // Also ends the wait (and fails below) when the sweep stopped on its own.
        return j["job"]["kind"] == "sweep" &&
               (j["job"]["done"].template get<int>() >= 3 || !j["job"]["running"].template get<bool>());
      },
      120))
      << gui.log_text() << gui.map().dump();
  ASSERT_TRUE(gui.map()["job"]["running"].get<bool>()) << gui.map()["job"].dump();
  const Rect stop = *gui.widget("stop_button");
  gui.click(stop.cx(), stop.cy());
  ASSERT_TRUE(gui.wait_for([](const auto& j) { return !j["job"]["running"].template get<bool>(); }, 60))
      << gui.map().dump();
  const nlohmann::json stopped = gui.map()["job"];
  EXPECT_EQ(stopped["total"].get<int>(), 16) << stopped.dump();
  ASSERT_LT(stopped["done"].get<int>(), 16) << "the sweep ended before Stop: " << stopped.dump();
  EXPECT_NE(stopped["message"].get<std::string>().find("stopped"), std::string::npos) << stopped.dump();
  ASSERT_EQ(stopped["workers"].size(), 2u) << stopped.dump();
  EXPECT_NE(stopped["workers"][1]["label"].get<std::string>().find("via '" + command + "'"),
            std::string::npos)
      << stopped.dump();
  // runs/<id>, relative to the GUI's working directory (`dir`).
  const fs::path run_dir = dir / fs::path(stopped["out_file"].get<std::string>()).parent_path();
  ASSERT_TRUE(fs::exists(run_dir / "plan.jsonl")) << run_dir;
  const std::size_t before = read_results(run_dir / "results.jsonl").cases.size();
  EXPECT_LT(before, 16u);

  // Resume: the dialog, the run folder typed in, OK.
  const Rect resume = *gui.widget("resume_button");
  gui.click(resume.cx(), resume.cy());
  ASSERT_TRUE(gui.wait_for([](const auto& j) { return j["widgets"].contains("dialog_ok"); }, 10));
  const std::optional<Rect> path = gui.settled_widget("dialog_path");
  ASSERT_TRUE(path.has_value()) << gui.map().dump();
  gui.click(path->cx(), path->cy());
  gui.key("ctrl+a");
  gui.type(run_dir.string());
  const std::optional<Rect> ok = gui.settled_widget("dialog_ok");
  ASSERT_TRUE(ok.has_value()) << gui.map().dump();
  gui.click(ok->cx(), ok->cy());
  ASSERT_TRUE(gui.wait_for([](const auto& j) { return !j["dialog_open"].template get<bool>(); }, 10))
      << gui.map().dump();
  ASSERT_TRUE(gui.wait_for(
      [](const auto& j) {
        return j["job"]["kind"] == "sweep" && !j["job"]["running"].template get<bool>() &&
               j["job"]["resumed"].template get<int>() > 0;
      },
      180))
      << gui.log_text() << gui.map().dump();
  const nlohmann::json done = gui.map()["job"];
  EXPECT_EQ(done["done"].get<int>(), 16) << done.dump();
  EXPECT_EQ(done["ok"].get<int>() + done["resumed"].get<int>(), 16) << done.dump();
  EXPECT_EQ(done["resumed"].get<int>(), static_cast<int>(before)) << done.dump();
  // Both workers reached the handshake (their device is shown) and measured cases.
  ASSERT_EQ(done["workers"].size(), 2u) << done.dump();
  for (const auto& w : done["workers"]) {
    EXPECT_FALSE(w["device"].get<std::string>().empty()) << w.dump();
    EXPECT_GE(w["cases"].get<int>(), 1) << w.dump();
  }
  EXPECT_EQ(gui.quit(30).value_or(-99), 0) << gui.log_text();

  // The run directory: every planned case exactly once, as `attnscope run --resume` leaves it.
  const PlanFile plan = read_plan(run_dir / "plan.jsonl");
  ASSERT_EQ(plan.cases.size(), 16u);
  const LoadedRun loaded = read_results(run_dir / "results.jsonl");
  std::map<std::string, int> lines;
  for (const CaseResult& r : loaded.cases) ++lines[r.case_id];
  EXPECT_EQ(loaded.cases.size(), 16u);
  for (const Case& c : plan.cases)
    EXPECT_EQ(lines[c.case_id], 1) << c.kernel << " " << c.problem.full_label();
  EXPECT_TRUE(fs::exists(run_dir / "results.csv"));
  std::ifstream log(run_dir / "workers.log");
  std::size_t starts = 0;
  for (std::string line; std::getline(log, line);)
    starts += line.find(" as pid ") != std::string::npos ? 1 : 0;
  EXPECT_GE(starts, 4u);  // two workers, started for the sweep and again for the resume
}

}  // namespace attn::guitest
