// A user's Python callable in a GUI sweep (label gui; Xvfb and xdotool): given with --python-kernel,
// it is in the kernel list, its cases run in Python workers, pass the same check, and its series is
// drawn beside the built-in kernel's.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/cli/python_kernels.hpp"
#include "profiling/engine/engine.hpp"
#include "reports/jsonl_store.hpp"
#include "tests/gui/gui_harness.hpp"
#include "tests/support/test_paths.hpp"

namespace attn::guitest {

namespace {

namespace fs = std::filesystem;

// A sweep of `preset_toml` with a user's Python file (`kernel`: FILE.py:FUNC=ID) beside a built-in
// kernel, started by clicking Run: every case `ok` (checked and timed), and one series a kernel,
// `kernels` in that order, each with `points` points. Skips where X is missing.
void sweep_beside_built_in(const fs::path& dir, const std::string& preset_toml, const std::string& kernel,
                           const std::vector<std::string>& kernels, int points) {
  Xvfb x(dir);
  REQUIRE_X(x);
  std::ofstream(dir / "py.toml") << preset_toml;
  GuiSession gui(x, dir, {"--preset", (dir / "py.toml").string(), "--python-kernel", kernel});
  ASSERT_TRUE(gui.wait_for([](const auto& j) { return j["widgets"].contains("run_button"); }, 60))
      << gui.log_text();
  const Rect run = *gui.widget("run_button");
  gui.click(run.cx(), run.cy());
  const int cases = points * static_cast<int>(kernels.size());
  ASSERT_TRUE(gui.wait_for(
      [cases](const auto& j) {
        return j["job"]["kind"] == "sweep" && !j["job"]["running"].template get<bool>() &&
               j["job"]["done"].template get<int>() == cases;
      },
      300))
      << gui.log_text() << gui.map().dump();
  ASSERT_TRUE(gui.wait_for([&](const auto& j) { return j["plot"]["series"].size() == kernels.size(); }, 30))
      << gui.map().dump();
  const nlohmann::json series = gui.map()["plot"]["series"];
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    EXPECT_EQ(series[i]["kernel"], kernels[i]);
    EXPECT_EQ(series[i]["points"].get<int>(), points) << kernels[i];
  }
  fs::path results = gui.map()["job"]["out_file"].get<std::string>();
  if (results.is_relative()) results = dir / results;  // the GUI runs in `dir`
  const LoadedRun r = read_results(results);
  ASSERT_EQ(r.cases.size(), static_cast<std::size_t>(cases));
  for (const CaseResult& c : r.cases) {
    EXPECT_EQ(c.status, Status::ok) << c.kernel << ": " << c.reason;
    EXPECT_GT(c.tflops.value_or(0.0), 0.0) << c.kernel;
    EXPECT_TRUE(c.correctness.has_value()) << c.kernel << ": not checked";
  }
}

// Skips (with the reason) where the Python module is not built.
#define REQUIRE_PYTHON_MODULE()                                                                        \
  const fs::path package_ = fs::path(attn::test::cli_binary()).parent_path() / "python" / "attnscope"; \
  if (!fs::exists(package_ / "__init__.py"))                                                           \
  GTEST_SKIP() << "the Python module is not built (" << package_ << ")"

TEST(GuiPython, UserCallableSweepsBesideABuiltInKernel) {
  REQUIRE_PYTHON_MODULE();
  // The workers' Python (the one the GUI will start) must import NumPy for the callable: CI's has
  // python3-numpy; a GPU host's PyTorch Python may not, and there the engine skips its cases.
  const auto [numpy_rc, numpy_out] =
      run_capture({cli::python_runtime().python, "-c", "import numpy"}, {}, 60);
  if (numpy_rc != 0) GTEST_SKIP() << "the workers' Python cannot import numpy: " << numpy_out;
  sweep_beside_built_in(fresh_dir("python"),
                        "name = \"py\"\nkernels = [\"cpu.reference\", \"mine.exact\"]\nbackend = \"cpu\"\n"
                        "[sweep]\nbatch = 1\nheads = 2\nseq = [32, 48, 64]\nhead_dim = 16\ndtype = \"fp32\"\n"
                        "[protocol]\nwarmup_ms = 1\nmin_samples = 3\nmax_time_s = 0.05\n",
                        attn::test::source_dir() + "/tests/python/kernels/numpy_attn.py:attention=mine.exact",
                        {"cpu.reference", "mine.exact"}, 3);
}

// The same on a GPU (labels gui and, by its skip, gpu): a user's PyTorch file beside cudnn.sdpa in a
// CUDA sweep. Skips with the reason where there is no GPU or the Python that runs the workers cannot
// import torch with CUDA.
TEST(GuiPython, TorchCallableBesideCudnnSdpaOnTheGpu) {
  REQUIRE_PYTHON_MODULE();
  if (std::string why; !cuda_device_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  const auto [torch_rc, torch_out] =
      run_capture({cli::python_runtime().python, "-c",
                   "import torch; assert torch.cuda.is_available(); print(torch.__version__)"},
                  {}, 120);
  if (torch_rc != 0)
    GTEST_SKIP() << "the workers' Python has no CUDA-enabled torch: "
                 << torch_out.substr(torch_out.find_last_of('\n', torch_out.size() - 2) + 1);
  sweep_beside_built_in(fresh_dir("python-gpu"),
                        "name = \"pygpu\"\nkernels = [\"cudnn.sdpa\", \"mine.torch\"]\nbackend = \"cuda\"\n"
                        "[sweep]\nbatch = 1\nheads = 4\nseq = [256, 512]\nhead_dim = 64\ndtype = \"fp16\"\n"
                        "[protocol]\nwarmup_ms = 5\nmin_samples = 5\nmax_time_s = 0.1\n",
                        attn::test::source_dir() + "/tests/python/kernels/torch_attn.py:attention=mine.torch",
                        {"cudnn.sdpa", "mine.torch"}, 2);
}

}  // namespace

}  // namespace attn::guitest
