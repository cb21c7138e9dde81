// A user's Python callable in a GUI sweep (label gui; Xvfb and xdotool): given with --python-kernel,
// it is in the kernel list, its cases run in Python workers, pass the same check, and its series is
// drawn beside the built-in kernel's.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "app/cli/python_kernels.hpp"
#include "reports/jsonl_store.hpp"
#include "tests/gui/gui_harness.hpp"
#include "tests/support/test_paths.hpp"

namespace attn::guitest {

namespace {

namespace fs = std::filesystem;

TEST(GuiPython, UserCallableSweepsBesideABuiltInKernel) {
  const fs::path package = fs::path(attn::test::cli_binary()).parent_path() / "python" / "attnscope";
  if (!fs::exists(package / "__init__.py"))
    GTEST_SKIP() << "the Python module is not built (" << package << ")";
  // The workers' Python (the one the GUI will start) must import NumPy for the callable: CI's has
  // python3-numpy; a GPU host's PyTorch Python may not, and there the engine skips its cases.
  const auto [numpy_rc, numpy_out] =
      run_capture({cli::python_runtime().python, "-c", "import numpy"}, {}, 60);
  if (numpy_rc != 0) GTEST_SKIP() << "the workers' Python cannot import numpy: " << numpy_out;
  const fs::path dir = fresh_dir("python");
  Xvfb x(dir);
  REQUIRE_X(x);
  {
    std::ofstream p(dir / "py.toml");
    p << "name = \"py\"\nkernels = [\"cpu.reference\", \"mine.exact\"]\nbackend = \"cpu\"\n"
         "[sweep]\nbatch = 1\nheads = 2\nseq = [32, 48, 64]\nhead_dim = 16\ndtype = \"fp32\"\n"
         "[protocol]\nwarmup_ms = 1\nmin_samples = 3\nmax_time_s = 0.05\n";
  }
  const std::string kernel =
      attn::test::source_dir() + "/tests/python/kernels/numpy_attn.py:attention=mine.exact";
  GuiSession gui(x, dir, {"--preset", (dir / "py.toml").string(), "--python-kernel", kernel});
  ASSERT_TRUE(gui.wait_for([](const auto& j) { return j["widgets"].contains("run_button"); }, 60))
      << gui.log_text();
  const Rect run = *gui.widget("run_button");
  gui.click(run.cx(), run.cy());
  ASSERT_TRUE(gui.wait_for(
      [](const auto& j) {
        return j["job"]["kind"] == "sweep" && !j["job"]["running"].template get<bool>() &&
               j["job"]["done"].template get<int>() == 6;
      },
      180))
      << gui.log_text() << gui.map().dump();
  ASSERT_TRUE(gui.wait_for([](const auto& j) { return j["plot"]["series"].size() == 2; }, 30))
      << gui.map().dump();
  const nlohmann::json series = gui.map()["plot"]["series"];
  EXPECT_EQ(series[0]["kernel"], "cpu.reference");
  EXPECT_EQ(series[1]["kernel"], "mine.exact");
  for (const auto& s : series) EXPECT_EQ(s["points"].get<int>(), 3);
  fs::path results = gui.map()["job"]["out_file"].get<std::string>();
  if (results.is_relative()) results = dir / results;  // the GUI runs in `dir`
  const LoadedRun r = read_results(results);
  ASSERT_EQ(r.cases.size(), 6u);
  for (const CaseResult& c : r.cases) EXPECT_EQ(c.status, Status::ok) << c.kernel << ": " << c.reason;
}

// The same on a GPU (labels gui and, by its skip, gpu): a user's PyTorch file beside cudnn.sdpa in a
// CUDA sweep, each case checked, and both series drawn. Skips with the reason where there is no GPU or
// the Python that runs the workers cannot import torch with CUDA.
TEST(GuiPython, TorchCallableBesideCudnnSdpaOnTheGpu) {
  const fs::path package = fs::path(attn::test::cli_binary()).parent_path() / "python" / "attnscope";
  if (!fs::exists(package / "__init__.py"))
    GTEST_SKIP() << "the Python module is not built (" << package << ")";
  const auto [devices_rc, devices] = run_capture({attn::test::cli_binary(), "devices"}, {}, 60);
  if (devices_rc != 0 || devices.find("o GPU: ") != std::string::npos)  // "No GPU: " / "no GPU: "
    GTEST_SKIP() << "no GPU (attnscope devices: " << devices.substr(0, devices.find('\n')) << ")";
  const auto [torch_rc, torch_out] =
      run_capture({cli::python_runtime().python, "-c",
                   "import torch; assert torch.cuda.is_available(); print(torch.__version__)"},
                  {}, 120);
  if (torch_rc != 0)
    GTEST_SKIP() << "the workers' Python has no CUDA-enabled torch: "
                 << torch_out.substr(torch_out.find_last_of('\n', torch_out.size() - 2) + 1);
  const fs::path dir = fresh_dir("python-gpu");
  Xvfb x(dir);
  REQUIRE_X(x);
  {
    std::ofstream p(dir / "pygpu.toml");
    p << "name = \"pygpu\"\nkernels = [\"cudnn.sdpa\", \"mine.torch\"]\nbackend = \"cuda\"\n"
         "[sweep]\nbatch = 1\nheads = 4\nseq = [256, 512]\nhead_dim = 64\ndtype = \"fp16\"\n"
         "[protocol]\nwarmup_ms = 5\nmin_samples = 5\nmax_time_s = 0.1\n";
  }
  const std::string kernel =
      attn::test::source_dir() + "/tests/python/kernels/torch_attn.py:attention=mine.torch";
  GuiSession gui(x, dir, {"--preset", (dir / "pygpu.toml").string(), "--python-kernel", kernel});
  ASSERT_TRUE(gui.wait_for([](const auto& j) { return j["widgets"].contains("run_button"); }, 60))
      << gui.log_text();
  const Rect run = *gui.widget("run_button");
  gui.click(run.cx(), run.cy());
  ASSERT_TRUE(gui.wait_for(
      [](const auto& j) {
        return j["job"]["kind"] == "sweep" && !j["job"]["running"].template get<bool>() &&
               j["job"]["done"].template get<int>() == 4;
      },
      300))
      << gui.log_text() << gui.map().dump();
  ASSERT_TRUE(gui.wait_for([](const auto& j) { return j["plot"]["series"].size() == 2; }, 30))
      << gui.map().dump();
  const nlohmann::json series = gui.map()["plot"]["series"];
  EXPECT_EQ(series[0]["kernel"], "cudnn.sdpa");
  EXPECT_EQ(series[1]["kernel"], "mine.torch");
  for (const auto& s : series) EXPECT_EQ(s["points"].get<int>(), 2);
  fs::path results = gui.map()["job"]["out_file"].get<std::string>();
  if (results.is_relative()) results = dir / results;
  const LoadedRun r = read_results(results);
  ASSERT_EQ(r.cases.size(), 4u);
  for (const CaseResult& c : r.cases) {
    EXPECT_EQ(c.status, Status::ok) << c.kernel << ": " << c.reason;
    EXPECT_GT(c.tflops.value_or(0.0), 0.0) << c.kernel;
    EXPECT_TRUE(c.correctness.has_value()) << c.kernel << ": not checked";
  }
}

}  // namespace

}  // namespace attn::guitest
