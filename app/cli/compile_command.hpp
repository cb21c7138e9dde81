// `attnscope compile FILE.cu`: compile a kernel source (include/attnscope/kernel_source.h) for the
// configurations a sweep would, without a GPU: what a researcher runs after each edit to see compile
// errors as FILE:LINE:COL, registers, spills and the stated launch.
#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace attn::cli {

struct CompileOptions {
  std::string source;
  std::vector<int> head_dims{128};
  std::vector<int> head_dims_v;  // empty = each head dim's own
  std::vector<std::string> dtypes{"fp16"};
  std::vector<std::string> knobs;  // NAME=VALUE
  std::string arch;                // empty = source_arch()
  bool json = false;
};

CLI::App* add_compile_command(CLI::App& app, CompileOptions& o);
// 0: every configuration compiled or was refused by the source with a reason (at least one
// compiled); 2: a compile error (diagnostics on stderr), bad flags, or every configuration refused.
int compile_kernel_source(const CompileOptions& o);

}  // namespace attn::cli
