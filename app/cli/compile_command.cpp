// `attnscope compile` (compile_command.hpp).
#include "app/cli/compile_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "app/cli/commands.hpp"
#include "kernels/api/dtype.hpp"
#include "kernels/api/nvrtc_compiler.hpp"
#include "kernels/api/source_kernel.hpp"

namespace attn::cli {

namespace {

// Registers and spill bytes from ptxas -v's lines in NVRTC's log (-1 when absent).
struct PtxasFigures {
  int registers = -1;
  int spill_store_bytes = -1, spill_load_bytes = -1;
};

PtxasFigures ptxas_figures(const std::string& log) {
  PtxasFigures f;
  std::smatch m;
  if (std::regex_search(log, m, std::regex(R"(Used (\d+) registers)"))) f.registers = std::stoi(m[1]);
  if (std::regex_search(log, m, std::regex(R"((\d+) bytes spill stores, (\d+) bytes spill loads)"))) {
    f.spill_store_bytes = std::stoi(m[1]);
    f.spill_load_bytes = std::stoi(m[2]);
  }
  return f;
}

}  // namespace

CLI::App* add_compile_command(CLI::App& app, CompileOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "compile", "Compile a kernel source with NVRTC for the configurations a sweep would (no GPU needed)");
  cmd->add_option("source", o.source, "the kernel source (.cu, include/attnscope/kernel_source.h)")
      ->required()
      ->type_name("FILE.cu");
  cmd->add_option("--head-dim", o.head_dims, "head dims to compile for (default 128)")
      ->delimiter(',')
      ->type_name("D,...");
  cmd->add_option("--head-dim-v", o.head_dims_v, "value head dims (default: each head dim)")
      ->delimiter(',')
      ->type_name("DV,...");
  cmd->add_option("--dtype", o.dtypes, "fp16, bf16 or fp32 (default fp16)")
      ->delimiter(',')
      ->type_name("T,...");
  cmd->add_option("--knob", o.knobs, "a knob value the source declares, NAME=VALUE (repeatable)")
      ->type_name("NAME=VALUE");
  cmd->add_option(
         "--arch", o.arch,
         "target architecture (default: this machine's GPU, else $ATTNSCOPE_NVRTC_ARCH, else sm_90a)")
      ->type_name("sm_XX");
  cmd->add_flag("--json", o.json, "Machine-readable output");
  return cmd;
}

int compile_kernel_source(const CompileOptions& o) {
  std::error_code ec;
  const std::string path = std::filesystem::absolute(o.source, ec).lexically_normal().string();
  SourceDirectives d;
  KernelSpec spec;
  try {
    if (!std::filesystem::is_regular_file(path, ec))
      throw PluginError(path + ": no such file; expected a .cu file");
    spec = kernel_source_spec(path, d);
  } catch (const PluginError& e) {
    std::fprintf(stderr, "attnscope compile: %s\n", e.what());
    return kExitBadInput;
  }
  Knobs knobs;
  for (const std::string& kv : o.knobs) {
    std::size_t eq = kv.find('=');
    const std::string name = kv.substr(0, eq);
    const auto known =
        std::find_if(d.knobs.begin(), d.knobs.end(), [&](const KnobSpec& k) { return k.name == name; });
    int value = 0;
    try {
      value = eq == std::string::npos ? 0 : std::stoi(kv.substr(eq + 1));
    } catch (const std::exception&) {
      eq = std::string::npos;
    }
    if (eq == std::string::npos || known == d.knobs.end() ||
        std::find(known->values.begin(), known->values.end(), value) == known->values.end()) {
      std::string declared;
      for (const KnobSpec& k : d.knobs) {
        declared += (declared.empty() ? "" : "; ") + k.name + " in {";
        for (std::size_t i = 0; i < k.values.size(); ++i)
          declared += (i ? "," : "") + std::to_string(k.values[i]);
        declared += "}";
      }
      std::fprintf(stderr,
                   "attnscope compile: --knob %s: expected NAME=VALUE with a knob the source declares (%s)\n",
                   kv.c_str(), declared.empty() ? "it declares none" : declared.c_str());
      return kExitBadInput;
    }
    knobs[name] = value;
  }
  const std::string arch = o.arch.empty() ? source_arch() : o.arch;
  nlohmann::json out = {
      {"id", d.id}, {"source", path}, {"arch", arch}, {"configurations", nlohmann::json::array()}};
  try {
    out["nvrtc"] = nvrtc_version();
  } catch (const PluginError& e) {
    std::fprintf(stderr, "attnscope compile: %s\n", e.what());
    return kExitBadInput;
  }
  if (!o.json)
    std::printf("%s  %s  (NVRTC %s, %s)\n", d.id.c_str(), path.c_str(),
                out["nvrtc"].get<std::string>().c_str(), arch.c_str());
  int compiled = 0, refused = 0;
  for (const std::string& t : o.dtypes) {
    const std::optional<DType> dtype = parse_dtype(t);
    if (!dtype) {
      std::fprintf(stderr, "attnscope compile: --dtype %s: expected fp16, bf16 or fp32\n", t.c_str());
      return kExitBadInput;
    }
    for (std::size_t i = 0; i < o.head_dims.size(); ++i) {
      Problem p;
      p.dtype = *dtype;
      p.head_dim = o.head_dims[i];
      p.head_dim_v =
          o.head_dims_v.empty() ? p.head_dim : o.head_dims_v[std::min(i, o.head_dims_v.size() - 1)];
      const std::string config = fmt::format("D={} Dv={} {}", p.head_dim, p.head_dim_v, t);
      nlohmann::json c = {{"head_dim", p.head_dim}, {"head_dim_v", p.head_dim_v}, {"dtype", t}};
      try {
        const CompiledSource cs = compile_source(source_build(path, d, p, knobs, arch));
        const SourceLaunch launch = source_launch(cs, path);
        const PtxasFigures f = ptxas_figures(cs.log);
        c["registers"] = f.registers;
        c["spill_store_bytes"] = f.spill_store_bytes;
        c["spill_load_bytes"] = f.spill_load_bytes;
        c["launch"] = {{"threads", launch.threads},
                       {"rows_per_block", launch.rows_per_block},
                       {"smem_bytes", launch.smem_bytes}};
        c["cache_file"] = cs.cache_file;
        c["from_cache"] = cs.from_cache;
        c["compile_s"] = cs.compile_s;
        c["options"] = cs.options;
        if (!o.json)
          std::printf(
              "  %-18s %d registers, spills %d/%d bytes (store/load); launch %d threads x %d rows, %d B "
              "shared; %s\n",
              config.c_str(), f.registers, f.spill_store_bytes, f.spill_load_bytes, launch.threads,
              launch.rows_per_block, launch.smem_bytes,
              cs.from_cache ? ("cached " + cs.cache_file).c_str()
                            : fmt::format("compiled in {:.2f} s", cs.compile_s).c_str());
        ++compiled;
      } catch (const SourceCompileError& e) {
        if (e.unsupported().empty()) {
          std::fprintf(stderr, "attnscope compile: %s", e.what());
          return kExitBadInput;
        }
        c["refused"] = e.unsupported();
        if (!o.json) std::printf("  %-18s not taken: %s\n", config.c_str(), e.unsupported().c_str());
        ++refused;
      } catch (const PluginError& e) {
        std::fprintf(stderr, "attnscope compile: %s\n", e.what());
        return kExitBadInput;
      }
      out["configurations"].push_back(std::move(c));
    }
  }
  if (o.json) std::puts(out.dump(2).c_str());
  if (compiled == 0 && refused > 0) {
    std::fprintf(stderr, "attnscope compile: the source takes none of these configurations\n");
    return kExitBadInput;
  }
  return 0;
}

}  // namespace attn::cli
