// `attnscope kernels`: the registry with a capability matrix probed through each kernel's own
// why_not(), so the table can never disagree with what planning does.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/cli/commands.hpp"
#include "app/cli/python_kernels.hpp"
#include "kernels/api/plugin_loader.hpp"
#include "kernels/registry.hpp"
#include "profiling/engine/engine.hpp"

namespace attn::cli {

namespace {

struct Probe {
  const char* name;
  Problem problem;
};

Problem base_problem(DType t) {
  Problem p;
  p.batch = 1;
  p.heads_q = p.heads_kv = 4;
  p.seq_q = p.seq_kv = 256;
  p.head_dim = p.head_dim_v = 64;
  p.dtype = t;
  return p;
}

std::vector<Probe> probes(DType t) {
  std::vector<Probe> v;
  v.push_back({"fp16", base_problem(DType::fp16)});
  v.push_back({"bf16", base_problem(DType::bf16)});
  v.push_back({"fp32", base_problem(DType::fp32)});
  Problem causal = base_problem(t);
  causal.causal = true;
  v.push_back({"causal", causal});
  Problem window = base_problem(t);
  window.window = {64, 0};
  v.push_back({"window", window});
  Problem compressed = base_problem(t);
  compressed.compress = {32, 16};
  compressed.seq_kv = compressed.compress.blocks_at(compressed.seq_q - 1);
  v.push_back({"cmp", compressed});
  Problem selected = base_problem(t);
  selected.select = {64, 2, 0};
  v.push_back({"sel", selected});
  Problem varlen = base_problem(t);
  varlen.varlen.q = varlen.varlen.kv = {256, 100, 17};
  varlen.batch = 3;
  v.push_back({"varlen", varlen});
  Problem gqa = base_problem(t);
  gqa.heads_kv = 1;
  v.push_back({"gqa", gqa});
  Problem ragged = base_problem(t);
  ragged.seq_q = 100;
  ragged.seq_kv = 300;
  v.push_back({"sq!=sk", ragged});
  Problem dv = base_problem(t);
  dv.head_dim_v = 32;
  v.push_back({"d!=dv", dv});
  Problem backward = base_problem(t);
  backward.pass = Pass::bwd;
  v.push_back({"bwd", backward});
  return v;
}

// why_not() of a kernel source compiles the source: a compile error is shown in the cell, not fatal.
std::string probe_reason(const KernelSpec& k, const Problem& p) {
  try {
    if (std::string why = kernel_why_not(k, p, {}); !why.empty() || !has_backward(p.pass)) return why;
    return backward_why_not(k, p, {});
  } catch (const std::exception& e) {
    const std::string what = e.what();
    return "does not compile: " + what.substr(0, what.find('\n'));
  }
}

// The head dims in 16..1024 (probed in steps of 16) the kernel takes, as compact runs of one step:
// "16-256", "32-1024 step 32"; a run of fewer than three dims is listed as is. A kernel source is
// compiled per head dim, so it is probed on the common ones only.
std::string head_dim_ranges(const KernelSpec& k, DType t, bool compiled_per_case) {
  std::vector<int> candidates;
  if (compiled_per_case)
    candidates = {32, 64, 96, 128, 192, 256};
  else
    for (int d = 16; d <= 1024; d += 16) candidates.push_back(d);
  std::vector<int> dims;
  for (const int d : candidates) {
    Problem p = base_problem(t);
    p.head_dim = p.head_dim_v = d;
    if (probe_reason(k, p).empty()) dims.push_back(d);
  }
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : ",") + s; };
  for (std::size_t i = 0; i < dims.size();) {
    std::size_t j = i + 1;
    const int step = j < dims.size() ? dims[j] - dims[i] : 0;
    while (j < dims.size() && dims[j] - dims[j - 1] == step) ++j;
    if (j - i >= 3) {
      add(fmt::format("{}-{}", dims[i], dims[j - 1]) + (step == 16 ? "" : fmt::format(" step {}", step)));
      i = j;
    } else {
      add(std::to_string(dims[i]));
      ++i;
    }
  }
  return out.empty() ? "-" : out;
}

// Rows of cells printed with every column as wide as its widest cell, two spaces apart; the last
// column (free text) is not padded.
std::string aligned(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

// "br bc warps stages", or "-" for a kernel without knobs.
std::string knob_names(const KernelSpec& k) {
  std::string out;
  for (const KnobSpec& knob : k.knobs) out += (out.empty() ? "" : " ") + knob.name;
  return out.empty() ? "-" : out;
}

std::string knob_values(const KnobSpec& knob) {
  std::string out;
  for (int v : knob.values) {
    if (!out.empty()) out += ',';
    out += std::to_string(v);
  }
  return out;
}

}  // namespace

int list_kernels(bool as_json, const std::vector<std::string>& plugins,
                 const std::vector<std::string>& kernel_sources,
                 const std::vector<std::string>& python_kernels) {
  try {
    load_plugins(plugin_paths(plugins));
  } catch (const PluginError& e) {
    std::fprintf(stderr, "attnscope kernels: --plugin %s\n", e.what());
    return kExitBadInput;
  }
  try {
    load_plugins(kernel_sources);
  } catch (const PluginError& e) {
    std::fprintf(stderr, "attnscope kernels: --kernel-source %s\n", e.what());
    return kExitBadInput;
  }
  try {
    load_python_kernels(python_kernels, cuda_device_available() ? Backend::cuda : Backend::cpu);
  } catch (const PluginError& e) {
    std::fprintf(stderr, "attnscope kernels: --python-kernel %s\n", e.what());
    return kExitBadInput;
  }
  // The built-in adapters, loaded or not, with what is missing for those that cannot load here.
  std::vector<PythonAdapterStatus> adapters;
  std::string adapters_missing;
  try {
    adapters = python_adapters();
  } catch (const PluginError& e) {
    adapters_missing = e.what();
  }
  const std::vector<const KernelSpec*> listed = listed_kernels();
  nlohmann::json all = nlohmann::json::array();
  std::vector<std::vector<std::string>> table{{"kernel", "backend"}};
  for (const Probe& probe : probes(DType::fp16)) table[0].push_back(probe.name);
  for (const char* h : {"head dims", "knobs", "description"}) table[0].push_back(h);
  std::vector<std::vector<std::string>> knob_rows{{"kernel", "knob", "values", "default", "meaning"}};
  for (const KernelSpec* kp : listed) {
    const KernelSpec& k = *kp;
    const DType native = k.backend == Backend::cpu ? DType::fp32 : DType::fp16;
    const PluginInfo* lib = plugin_of(k.id);
    nlohmann::json j{
        {"id", k.id}, {"backend", std::string(to_string(k.backend))}, {"description", k.description}};
    const bool source = lib && lib->kind == "source";
    if (lib) j["plugin"] = {{"path", lib->path}, {"sha256", lib->sha256}, {"kind", lib->kind}};
    std::vector<std::string> row{k.id, std::string(to_string(k.backend))};
    for (const Probe& probe : probes(native)) {
      const std::string why = probe_reason(k, probe.problem);
      j["supports"][probe.name] = why.empty();
      if (!why.empty()) j["refuses"][probe.name] = why;
      row.push_back(why.empty() ? "yes" : "no");
    }
    const std::string dims = head_dim_ranges(k, native, source);
    j["head_dims"] = dims;
    for (const KnobSpec& knob : k.knobs) {
      j["knobs"].push_back({{"name", knob.name},
                            {"values", knob.values},
                            {"default", knob.default_value},
                            {"help", knob.help}});
      knob_rows.push_back(
          {k.id, knob.name, knob_values(knob), std::to_string(knob.default_value), knob.help});
    }
    row.push_back(dims);
    row.push_back(knob_names(k));
    std::string described = k.description;
    if (lib) {
      described += source ? " [kernel source " : lib->kind == "python" ? " [" : " [plug-in ";
      described += lib->path;
      described += "]";
    }
    row.push_back(std::move(described));
    table.push_back(std::move(row));
    all.push_back(std::move(j));
  }
  std::vector<std::vector<std::string>> adapter_rows{{"python adapter", "available", "why not"}};
  for (const PythonAdapterStatus& a : adapters) {
    if (find_kernel(a.id)) continue;  // loaded above, listed with the others
    all.push_back({{"id", a.id},
                   {"backend", "cuda"},
                   {"python_adapter", true},
                   {"available", a.available},
                   {"why_not", a.why}});
    adapter_rows.push_back({a.id, a.available ? "yes" : "no", a.why});
  }
  if (as_json) {
    std::puts(all.dump(2).c_str());
  } else {
    std::fputs(aligned(table).c_str(), stdout);
    if (!adapters_missing.empty())
      std::printf("\nPython adapters (torch.*, triton.*): not listed: %s\n", adapters_missing.c_str());
    if (adapter_rows.size() > 1) {
      std::puts("\nPython adapters (sweep one with --kernels <id>; its cases run in Python workers):");
      std::fputs(aligned(adapter_rows).c_str(), stdout);
    }
    if (knob_rows.size() > 1) {
      std::puts(
          "\nKnobs (set one with --kernels <id>@<knob>=<value>+...; 0 lets the kernel's traits choose where "
          "the meaning says so):");
      std::fputs(aligned(knob_rows).c_str(), stdout);
    }
    std::puts(
        "\nEvery kernel also takes @bucket=N (N = 1..1048576): a varlen batch run as dense batches padded to "
        "multiples of N rows, one launch each (causal or window right 0; records carry padding_waste).");
    std::puts(
        "\nCapabilities are probed with each kernel's own why_not() on B=1 H=4 S=256 D=64 (dtype: fp16 on "
        "cuda, fp32 on cpu; a kernel source by compiling it);\n`attnscope run` prints the exact reason for "
        "any case a kernel refuses.");
  }
  return kExitOk;
}

}  // namespace attn::cli
