// scripts/ptxas_guard.sh, the compiler launcher of the wgmma families: ptxas's -v resource lines are
// dropped, every other message passes, the compiler's exit code is kept, and an info saying ptxas
// serialised warpgroup MMAs fails the compile and removes its object. A stand-in compiler (a shell
// one-liner) prints what ptxas would.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/cli_process.hpp"
#include "tests/support/test_paths.hpp"

namespace attn {
namespace {

namespace fs = std::filesystem;

// Runs the guard over `sh -c SCRIPT -o OBJ` (stderr folded into the output).
CliOutcome guard(const std::string& script, const fs::path& obj) {
  return run_shell("'" + attn::test::source_dir() + "/scripts/ptxas_guard.sh' sh -c '" + script +
                   "' sh -o '" + obj.string() + "' 2>&1");
}

fs::path object(const std::string& name) {
  const fs::path p = fs::path(::testing::TempDir()) / ("attnscope_ptxas_guard_" + name + ".o");
  std::ofstream(p) << "obj";
  return p;
}

TEST(PtxasGuard, ResourceLinesAreDroppedOtherMessagesKeptAndTheExitCodePassed) {
  const fs::path obj = object("clean");
  const CliOutcome ok = guard(
      "echo \"ptxas info    : Used 168 registers, used 16 barriers\" >&2; "
      "echo \"    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\" >&2; "
      "echo \"kernel.cu(12): warning: something the user must see\" >&2",
      obj);
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_EQ(ok.output, "kernel.cu(12): warning: something the user must see\n");
  EXPECT_TRUE(fs::exists(obj));
  const CliOutcome failed = guard("echo \"ptxas error   : spilled\" >&2; exit 3", obj);
  EXPECT_EQ(failed.exit_code, 3);
  EXPECT_EQ(failed.output, "ptxas error   : spilled\n");
}

TEST(PtxasGuard, SerialisedWgmmasFailTheCompileAndRemoveTheObject) {
  const fs::path obj = object("serialised");
  const CliOutcome o = guard(
      "echo \"ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are "
      "serialized due to ... in the function k\" >&2",
      obj);
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.output.find("ptxas_guard: ptxas serialised warpgroup MMAs"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("(C7515)"), std::string::npos) << o.output;
  EXPECT_FALSE(fs::exists(obj));
}

}  // namespace
}  // namespace attn
