// `make sass KERNEL=...` (scripts/sass.sh): an id maps to the folder of the source that registers
// it (cuda.reference -> kernels/reference, not the debug kernels that wrap it), a prefix or folder
// to its family, and only that family's CUDA objects are dumped; bad input exits 2 saying why.
// A stand-in cuobjdump and a fake build folder keep it off the GPU toolchain.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/cli_process.hpp"
#include "tests/support/test_paths.hpp"

namespace attn {
namespace {

namespace fs = std::filesystem;

class SassScript : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per test: CTest runs this fixture's tests in parallel processes.
    m_dir =
        fs::path(::testing::TempDir()) / (std::string("attnscope_sass_script_") +
                                          ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(m_dir);
    const fs::path objs = m_dir / "build" / "kernels" / "CMakeFiles";
    for (const char* o :
         {"attnscope.kernels.dir/fa2/inst/fa2_d64_fp16.cu.o", "attnscope.kernels.dir/fa2/fa2_mma.cu.o",
          "attnscope.kernels.dir/reference/cuda_reference.cu.o",
          "attnscope.kernels.dir/debug/debug_cuda.cu.o", "attnscope.kernels.dir/cudnn/cudnn_sdpa.cpp.o",
          "attnscope.kernels.ffpa.dir/ffpa/inst/ffpa_acc_f32_d512_fp16.cu.o",
          "attnscope.kernels.ffpa_wgmma.dir/ffpa/wgmma/inst/ffpa_wgmma_f32_fp16.cu.o"}) {
      fs::create_directories((objs / o).parent_path());
      std::ofstream(objs / o) << "obj";
    }
    fs::create_directories(m_dir / "bin");
    std::ofstream(m_dir / "bin" / "cuobjdump") << "#!/bin/sh\necho \"SASS of $2\"\n";
    fs::permissions(m_dir / "bin" / "cuobjdump", fs::perms::owner_all);
  }

  CliOutcome sass(const std::string& kernel) const {
    return run_shell("PATH=" + (m_dir / "bin").string() + ":$PATH " + test::source_dir() +
                     "/scripts/sass.sh " + (m_dir / "build").string() + " '" + kernel + "' 2>&1");
  }

  fs::path m_dir;
};

TEST_F(SassScript, AnIdDumpsTheFamilyThatRegistersIt) {
  const CliOutcome ref = sass("cuda.reference");
  EXPECT_EQ(ref.exit_code, 0) << ref.output;
  EXPECT_NE(ref.output.find("SASS of kernels/reference (1 objects)"), std::string::npos) << ref.output;
  EXPECT_EQ(ref.output.find("debug_cuda"), std::string::npos) << ref.output;

  const CliOutcome fa2 = sass("fa2.mma");
  EXPECT_EQ(fa2.exit_code, 0) << fa2.output;
  EXPECT_NE(fa2.output.find("(2 objects)"), std::string::npos) << fa2.output;
  EXPECT_NE(fa2.output.find("SASS of " + (m_dir / "build").string() +
                            "/kernels/CMakeFiles/attnscope.kernels.dir/fa2/inst/fa2_d64_fp16.cu.o"),
            std::string::npos)
      << fa2.output;
}

TEST_F(SassScript, PrefixesAndFoldersNameFamilies) {
  const CliOutcome l1 =
      sass("ffpa.l1");  // a prefix of ffpa.l1.acc_f32 / acc_f16: the ffpa folder, wgmma included
  EXPECT_EQ(l1.exit_code, 0) << l1.output;
  EXPECT_NE(l1.output.find("SASS of kernels/ffpa (2 objects)"), std::string::npos) << l1.output;
  const CliOutcome wg = sass("ffpa/wgmma");
  EXPECT_EQ(wg.exit_code, 0) << wg.output;
  EXPECT_NE(wg.output.find("SASS of kernels/ffpa/wgmma (1 objects)"), std::string::npos) << wg.output;
}

TEST_F(SassScript, BadInputExits2WithTheReason) {
  const CliOutcome none = sass("");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.output.find("KERNEL is required"), std::string::npos) << none.output;
  const CliOutcome unknown = sass("fa9.magic");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.output.find("'fa9.magic' is neither a registered kernel id nor a family folder"),
            std::string::npos)
      << unknown.output;
  const CliOutcome cpu_only = sass("cudnn.sdpa");  // only a .cpp object in this fake build
  EXPECT_EQ(cpu_only.exit_code, 2);
  EXPECT_NE(cpu_only.output.find("no CUDA objects for kernels/cudnn"), std::string::npos) << cpu_only.output;
}

}  // namespace
}  // namespace attn
