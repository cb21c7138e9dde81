// The backend kernels are registered for before a sweep's spec is built (Python and debug kernels):
// --backend, else the preset's own `backend`, else this host's default.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "app/cli/run_plan.hpp"
#include "profiling/engine/engine.hpp"

namespace attn {
namespace {

namespace fs = std::filesystem;

std::string preset_file(const std::string& name, const std::string& backend_line) {
  const fs::path p = fs::temp_directory_path() / ("attnscope-backend-" + name + ".toml");
  std::ofstream(p) << "name = \"" << name << "\"\nkernels = [\"cpu.reference\"]\n"
                   << backend_line << "[sweep]\nbatch = 1\nheads = 1\nseq = 16\nhead_dim = 16\n";
  return p.string();
}

TEST(BackendBeforeSpec, ThePresetsBackendDecidesWithoutTheFlag) {
  SweepOverrides o;
  o.preset = preset_file("cuda", "backend = \"cuda\"\n");
  EXPECT_EQ(cli::backend_before_spec(o), Backend::cuda);  // on a host without a GPU too
  o.preset = preset_file("cpu", "backend = \"cpu\"\n");
  EXPECT_EQ(cli::backend_before_spec(o), Backend::cpu);  // on a GPU host too (a NumPy callable's sweep)
}

TEST(BackendBeforeSpec, TheFlagWinsOverThePreset) {
  SweepOverrides o;
  o.preset = preset_file("cuda-flag", "backend = \"cuda\"\n");
  o.backend = "cpu";
  EXPECT_EQ(cli::backend_before_spec(o), Backend::cpu);
}

TEST(BackendBeforeSpec, APresetWithoutOneOrUnreadableLeavesTheHostDefault) {
  const Backend host = cuda_device_available() ? Backend::cuda : Backend::cpu;
  SweepOverrides o;
  o.preset = preset_file("none", "");
  EXPECT_EQ(cli::backend_before_spec(o), host);
  o.preset = preset_file("bad", "backend = \"tpu\"\n");  // the spec's own reading reports it
  EXPECT_EQ(cli::backend_before_spec(o), host);
  o.preset = "/nonexistent/preset.toml";
  EXPECT_EQ(cli::backend_before_spec(o), host);
}

}  // namespace
}  // namespace attn
