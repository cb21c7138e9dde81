// `attnscope kernels`: the registry with a capability matrix probed through each kernel's own
// why_not(), so the table can never disagree with what planning does.
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "app/cli/commands.hpp"
#include "kernels/registry.hpp"

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
  return v;
}

// The head dims in 16..1024 (step 16) the kernel takes, as compact ranges "16-256".
std::string head_dim_ranges(const KernelSpec& k, DType t) {
  std::string out;
  int run_start = -1, prev = -1;
  auto flush = [&] {
    if (run_start < 0) return;
    if (!out.empty()) out += ",";
    out += run_start == prev ? std::to_string(run_start) : fmt::format("{}-{}", run_start, prev);
    run_start = -1;
  };
  for (int d = 16; d <= 1024; d += 16) {
    Problem p = base_problem(t);
    p.head_dim = p.head_dim_v = d;
    if (k.why_not(p, {}).empty()) {
      if (run_start < 0) run_start = d;
      prev = d;
    } else {
      flush();
    }
  }
  flush();
  return out.empty() ? "-" : out;
}

}  // namespace

int list_kernels(bool as_json) {
  nlohmann::json all = nlohmann::json::array();
  std::string table = fmt::format("{:<16} {:<5} {:<5} {:<5} {:<5} {:<7} {:<7} {:<5} {:<7} {:<7} {:<14} {}\n",
                                  "kernel", "back", "fp16", "bf16", "fp32", "causal", "window", "gqa",
                                  "sq!=sk", "d!=dv", "head dims", "description");
  for (const KernelSpec& k : kernel_registry()) {
    const DType native = k.backend == Backend::cpu ? DType::fp32 : DType::fp16;
    nlohmann::json j{
        {"id", k.id}, {"backend", std::string(to_string(k.backend))}, {"description", k.description}};
    std::string row = fmt::format("{:<16} {:<5}", k.id, to_string(k.backend));
    const char* widths[] = {"5", "5", "5", "7", "7", "5", "7", "7"};
    int column = 0;
    for (const Probe& probe : probes(native)) {
      const std::string why = k.why_not(probe.problem, {});
      j["supports"][probe.name] = why.empty();
      if (!why.empty()) j["refuses"][probe.name] = why;
      row +=
          fmt::format(fmt::runtime(std::string(" {:<") + widths[column++] + "}"), why.empty() ? "yes" : "no");
    }
    const std::string dims = head_dim_ranges(k, native);
    j["head_dims"] = dims;
    for (const KnobSpec& knob : k.knobs)
      j["knobs"].push_back({{"name", knob.name},
                            {"values", knob.values},
                            {"default", knob.default_value},
                            {"help", knob.help}});
    row += fmt::format(" {:<14} {}\n", dims, k.description);
    table += row;
    all.push_back(std::move(j));
  }
  if (as_json) {
    std::puts(all.dump(2).c_str());
  } else {
    std::fputs(table.c_str(), stdout);
    std::puts(
        "\nCapabilities are probed with each kernel's own why_not() on B=1 H=4 S=256 D=64 (dtype: fp16 on "
        "cuda, fp32 on cpu);\n`attnscope run` prints the exact reason for any case a kernel refuses.");
  }
  return kExitOk;
}

}  // namespace attn::cli
