// Issue 18, kernel sources without a GPU: the directives of a .cu file, NVRTC compiles of the
// example for each configuration (the launch read back from the cubin), compile errors located as
// FILE:LINE:COL, `#error attnscope-unsupported:` as a reason, and the on-disk cache keyed by the
// source and what it includes. NVRTC needs no GPU; where libnvrtc is missing the compile tests skip
// with the reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "kernels/api/nvrtc_compiler.hpp"
#include "kernels/api/source_directives.hpp"
#include "kernels/api/source_kernel.hpp"
#include "tests/support/cli_process.hpp"
#include "tests/support/test_paths.hpp"

namespace attn {
namespace {

namespace fs = std::filesystem;

std::string example_source() { return test::source_dir() + "/examples/kernel-source/tiled_attention.cu"; }

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("attnscope_source_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

#define ATTN_SKIP_WITHOUT_NVRTC()                                  \
  do {                                                             \
    try {                                                          \
      (void)nvrtc_version();                                       \
    } catch (const PluginError& e) {                               \
      GTEST_SKIP() << "NVRTC is not available here: " << e.what(); \
    }                                                              \
  } while (0)

Problem problem(int d, DType t = DType::fp16) {
  Problem p;
  p.head_dim = p.head_dim_v = d;
  p.dtype = t;
  return p;
}

constexpr const char* kHeader =
    "// @attnscope id: my.kernel\n"
    "// @attnscope description: a test kernel\n"
    "#include <attnscope/kernel_source.h>\n"
    "ATTN_LAUNCH(64, 16, ATTN_HEAD_DIM * 4);\n";

TEST(KernelSourceDirectives, TheExampleDeclaresItsIdEntryAndLse) {
  std::ifstream in(example_source());
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  const SourceDirectives d = parse_source_directives(text, "tiled_attention.cu");
  EXPECT_EQ(d.id, "example.tiled_rtc");
  EXPECT_EQ(d.entry, "attn_forward");
  EXPECT_TRUE(d.writes_lse);
  EXPECT_TRUE(d.knobs.empty());
  EXPECT_EQ(d.stated_rel_l2, 0.0);
}

TEST(KernelSourceDirectives, KnobsOptionsAndBoundsAreRead) {
  const SourceDirectives d = parse_source_directives(
      "// @attnscope id: a.b\n// @attnscope description: d\n"
      "// @attnscope knob: tile values=64,128 default=128 help=rows per block\n"
      "// @attnscope knob: stages values=2,3\n"
      "// @attnscope option: -maxrregcount=128\n// @attnscope stated_rel_l2: 2e-3\n"
      "// @attnscope entry: my_entry\n",
      "f.cu");
  ASSERT_EQ(d.knobs.size(), 2u);
  EXPECT_EQ(d.knobs[0].name, "tile");
  EXPECT_EQ(d.knobs[0].values, (std::vector<int>{64, 128}));
  EXPECT_EQ(d.knobs[0].default_value, 128);
  EXPECT_EQ(d.knobs[0].help, "rows per block");
  EXPECT_EQ(d.knobs[1].default_value, 2);  // the first value when no default is given
  EXPECT_EQ(d.options, std::vector<std::string>{"-maxrregcount=128"});
  EXPECT_DOUBLE_EQ(d.stated_rel_l2, 2e-3);
  EXPECT_EQ(d.entry, "my_entry");
}

TEST(KernelSourceDirectives, MistakesNameTheFileLineAndWhatIsExpected) {
  auto error_of = [](const std::string& text) {
    try {
      parse_source_directives(text, "k.cu");
    } catch (const SourceDirectiveError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(error_of("// @attnscope description: d\n"),
            "k.cu: no '// @attnscope id: family.variant' line; a kernel source names its kernel");
  EXPECT_EQ(
      error_of("// @attnscope id: a.b\n// @attnscope colour: red\n"),
      "k.cu:2: unknown directive '@attnscope colour'; expected one of id, description, entry, writes_lse, "
      "stated_rel_l2, knob, option, include_dir");
  EXPECT_EQ(error_of("// @attnscope id: a.b\n// @attnscope description: d\n// @attnscope knob: t values=1,2 "
                     "default=3\n"),
            "k.cu:3: knob t: default=3 is not one of its values");
  EXPECT_EQ(
      error_of("// @attnscope id: a.b\n// @attnscope description: d\n// @attnscope knob: t values=1,x\n"),
      "k.cu:3: knob t values: 'x' is not an integer");
  EXPECT_EQ(error_of("// @attnscope id: a.b\n"),
            "k.cu:1: no '// @attnscope description: ...' line; expected one line saying what the kernel is");
}

TEST(KernelSourceCompile, TheExampleCompilesPerHeadDimAndStatesItsLaunch) {
  ATTN_SKIP_WITHOUT_NVRTC();
  const fs::path dir = fresh_dir("example");
  setenv("ATTNSCOPE_CACHE_DIR", dir.c_str(), 1);
  SourceDirectives d;
  const KernelSpec spec = kernel_source_spec(example_source(), d);
  EXPECT_EQ(spec.id, "example.tiled_rtc");
  EXPECT_EQ(spec.backend, Backend::cuda);
  for (const auto& [dim, smem] : {std::pair{64, 18432}, std::pair{128, 34816}}) {
    const CompiledSource c = compile_source(source_build(example_source(), d, problem(dim), {}, "sm_90a"));
    EXPECT_GT(c.cubin.size(), 1000u);
    EXPECT_NE(c.log.find("Used "), std::string::npos) << c.log;  // ptxas -v
    const SourceLaunch launch = source_launch(c, example_source());
    EXPECT_EQ(launch.threads, 128);
    EXPECT_EQ(launch.rows_per_block, 64);
    EXPECT_EQ(launch.smem_bytes, smem);
    EXPECT_TRUE(fs::exists(c.cache_file)) << c.cache_file;
  }
  // Planning asks the source: 96 and fp32 are refused with the source's own words.
  EXPECT_EQ(spec.why_not(problem(96), {}), "head_dim must be 64 or 128");
  EXPECT_EQ(spec.why_not(problem(64, DType::fp32), {}), "dtype must be fp16 or bf16");
  EXPECT_EQ(spec.why_not(problem(64, DType::bf16), {}), "");
  unsetenv("ATTNSCOPE_CACHE_DIR");
}

TEST(KernelSourceCompile, ACompileErrorIsLocatedAsFileLineColumn) {
  ATTN_SKIP_WITHOUT_NVRTC();
  const fs::path dir = fresh_dir("error");
  const fs::path src = dir / "bad.cu";
  write(src, std::string(kHeader) +
                 "extern \"C\" __global__ void attn_forward(attn_args a, attn_problem p) {\n"
                 "  int x = ;\n"
                 "}\n");
  SourceDirectives d;
  const KernelSpec spec = kernel_source_spec(src.string(), d);
  try {
    spec.why_not(problem(64), {});
    FAIL() << "a source with a syntax error compiled";
  } catch (const SourceCompileError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u) << e.what();
    const CompileDiagnostic& diag = e.diagnostics()[0];
    EXPECT_EQ(diag.file, src.string());
    EXPECT_EQ(diag.line, 6);
    EXPECT_EQ(diag.column, 11);
    EXPECT_EQ(diag.severity, "error");
    EXPECT_EQ(diag.message, "expected an expression");
    EXPECT_EQ(diag.source_line, "  int x = ;");
    EXPECT_TRUE(e.unsupported().empty());
    EXPECT_NE(std::string(e.what()).find(src.string() + ":6:11: error: expected an expression"),
              std::string::npos)
        << e.what();
  }
  // `run` compiles while planning (here without a GPU: a worker command could reach one) and exits 2
  // before any case with the same diagnostic.
  const CliOutcome planned = run_cli(
      "run --backend cuda --worker-cmd true --plan-only --kernels my.kernel "
      "--batch 1 --heads 2 --seq 64 --head-dim 64 --kernel-source " +
          src.string() + " --out " + (dir / "run").string(),
      "ATTNSCOPE_CACHE_DIR=" + dir.string());
  EXPECT_EQ(planned.exit_code, 2) << planned.output;
  EXPECT_NE(planned.output.find(src.string() + ":6:11: error: expected an expression"), std::string::npos)
      << planned.output;
  // The CLI says the same and exits 2.
  const CliOutcome o =
      run_cli("compile " + src.string() + " --head-dim 64", "ATTNSCOPE_CACHE_DIR=" + dir.string());
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(
      o.output.find(src.string() + ":6:11: error: expected an expression\n    int x = ;\n            ^"),
      std::string::npos)
      << o.output;
}

TEST(KernelSourceCompile, TheCacheIsKeyedByTheSourceAndWhatItIncludes) {
  ATTN_SKIP_WITHOUT_NVRTC();
  const fs::path dir = fresh_dir("cache");
  const fs::path src = dir / "k.cu";
  write(dir / "body.cuh", "__device__ int body() { return 1; }\n");
  write(src, std::string(kHeader) + "#include \"body.cuh\"\n" +
                 "extern \"C\" __global__ void attn_forward(attn_args a, attn_problem p) { "
                 "static_cast<float*>(a.o)[0] = body(); }\n");
  const std::string env = "ATTNSCOPE_CACHE_DIR=" + (dir / "cache").string();
  const std::string cmd = "compile " + src.string() + " --head-dim 64";
  CliOutcome o = run_cli(cmd, env);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("compiled in"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("launch 64 threads x 16 rows, 256 B shared"), std::string::npos) << o.output;
  o = run_cli(cmd, env);
  EXPECT_NE(o.output.find("cached "), std::string::npos) << o.output;
  write(dir / "body.cuh", "__device__ int body() { return 2; }\n");  // an included file changed
  o = run_cli(cmd, env);
  EXPECT_NE(o.output.find("compiled in"), std::string::npos) << o.output;
  o = run_cli(cmd + " --head-dim 128", env);  // another configuration is another binary
  EXPECT_NE(o.output.find("compiled in"), std::string::npos) << o.output;
}

TEST(KernelSourceCompile, ASourceWithoutALaunchIsRefusedWithWhatToAdd) {
  ATTN_SKIP_WITHOUT_NVRTC();
  const fs::path dir = fresh_dir("nolaunch");
  const fs::path src = dir / "k.cu";
  write(src,
        "// @attnscope id: my.k\n// @attnscope description: d\n#include <attnscope/kernel_source.h>\n"
        "extern \"C\" __global__ void attn_forward(attn_args, attn_problem) {}\n");
  const CliOutcome o =
      run_cli("compile " + src.string() + " --head-dim 64", "ATTNSCOPE_CACHE_DIR=" + dir.string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(
      o.output.find(src.string() + ": no ATTN_LAUNCH(threads, rows_per_block, smem_bytes) at file scope"),
      std::string::npos)
      << o.output;
}

TEST(KernelSourceCli, KernelsListsTheSourceAndRunRefusesAFileThatIsNotCu) {
  ATTN_SKIP_WITHOUT_NVRTC();
  const fs::path dir = fresh_dir("cli");
  CliOutcome o =
      run_cli("kernels --kernel-source " + example_source(), "ATTNSCOPE_CACHE_DIR=" + dir.string());
  ASSERT_EQ(o.exit_code, 0) << o.output;
  const std::size_t row = o.output.find("example.tiled_rtc");
  ASSERT_NE(row, std::string::npos) << o.output;
  const std::string line = o.output.substr(row, o.output.find('\n', row) - row);
  EXPECT_NE(line.find("64,128"), std::string::npos) << line;  // the head dims it compiles for
  EXPECT_NE(line.find("[kernel source " + fs::canonical(example_source()).string() + "]"), std::string::npos)
      << line;
  o = run_cli("run --kernel-source " + (dir / "k.txt").string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.output.find("expected a .cu file"), std::string::npos) << o.output;
  o = run_cli("run --backend cpu --kernels cpu.reference --kernel-source " + (dir / "missing.cu").string());
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.output.find("missing.cu: no such file (--kernel-source); expected a .cu file"),
            std::string::npos)
      << o.output;
}

TEST(NvrtcLog, DiagnosticsAreParsedWithTheirCaretColumn) {
  const std::string log =
      "/a/k.cu(12): warning #177-D: variable \"y\" was declared but never referenced\n"
      "      int y = 0;\n"
      "          ^\n"
      "\n"
      "/a/k.cu(14): error: identifier \"zz\" is undefined\n"
      "    return zz;\n"
      "           ^\n"
      "\n"
      "1 error detected in the compilation of \"/a/k.cu\".\n";
  const std::vector<CompileDiagnostic> d = parse_nvrtc_log(log);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].severity, "warning #177-D");
  EXPECT_EQ(d[0].line, 12);
  EXPECT_EQ(d[0].column, 9);
  EXPECT_EQ(d[1].severity, "error");
  EXPECT_EQ(d[1].message, "identifier \"zz\" is undefined");
  EXPECT_EQ(d[1].column, 10);
  EXPECT_EQ(format_diagnostics({d[1]}),
            "/a/k.cu:14:10: error: identifier \"zz\" is undefined\n    return zz;\n           ^\n");
}

}  // namespace
}  // namespace attn
