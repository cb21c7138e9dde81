// Runs the attnscope executable from tests and captures what it prints.
#pragma once
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/support/test_paths.hpp"
namespace attn {

// ATTNSCOPE_BIN overrides the build-tree path (when the binary was copied to another machine).
inline std::string attnscope_binary() {
  const char* bin = std::getenv("ATTNSCOPE_BIN");
  return bin ? std::string(bin) : attn::test::cli_binary();
}

struct CliOutcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// A shell command line, run to completion: its exit code and what it prints on stdout (add 2>&1
// for stderr too).
inline CliOutcome run_shell(const std::string& cmd) {
  CliOutcome o;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return o;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe)) o.output += buf.data();
  const int status = pclose(pipe);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

// `env` ("NAME=value ...", through env(1)) is set for the command alone.
inline CliOutcome run_cli(const std::string& args, const std::string& env = "") {
  return run_shell((env.empty() ? "" : "env " + env + " ") + attnscope_binary() + " " + args + " 2>&1");
}

}  // namespace attn
