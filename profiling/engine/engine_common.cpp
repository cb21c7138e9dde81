// Backend-independent parts of the engine: derived rates, NVTX names, CPU host description, and
// the backend factory.
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>
#include <thread>

#include "kernels/api/bucketing.hpp"
#include "profiling/engine/devices.hpp"
#include "profiling/engine/engine.hpp"
#include "profiling/plugin_records.hpp"
#include "profiling/sweep/variant.hpp"

namespace attn {

std::unique_ptr<CaseEngine> make_cpu_engine(const Protocol& protocol);
#if ATTNSCOPE_HAS_CUDA
std::unique_ptr<CaseEngine> make_cuda_engine(const Protocol& protocol);
bool probe_cuda_device(std::string* why_not);
#endif

std::string cuda_unavailable_reason(const std::string& error_name, const std::string& error_text,
                                    const std::string& driver_missing) {
  if (!driver_missing.empty()) return "no NVIDIA driver found (" + driver_missing + ")";
  return "no usable CUDA device (" + error_name + ": " + error_text + ")";
}

bool cuda_device_available(std::string* why_not) {
#if ATTNSCOPE_HAS_CUDA
  return probe_cuda_device(why_not);
#else
  if (why_not) *why_not = "this attnscope was built without CUDA (ATTNSCOPE_ENABLE_CUDA=OFF)";
  return false;
#endif
}

std::unique_ptr<CaseEngine> make_engine(Backend backend, const Protocol& protocol) {
  if (backend == Backend::cpu) return make_cpu_engine(protocol);
#if ATTNSCOPE_HAS_CUDA
  return make_cuda_engine(protocol);
#else
  throw std::runtime_error("--backend cuda: this attnscope was built without CUDA; use --backend cpu");
#endif
}

void fill_derived(CaseResult& r, bool writes_lse) {
  r.flops = r.problem.flops();
  r.min_bytes = r.problem.min_bytes(writes_lse);
  if (r.timing && r.timing->median_ms > 0) {
    const double s = r.timing->median_ms * 1e-3;
    r.tflops = r.flops / s * 1e-12;
    r.gbps = static_cast<double>(r.min_bytes) / s * 1e-9;
    r.queries_per_s = static_cast<double>(r.problem.total_q() * r.problem.heads_q) / s;
  }
}

CaseResult case_record(const Case& c, Status status, std::string reason) {
  CaseResult r;
  r.case_id = c.case_id;
  r.kernel = c.kernel;
  r.knobs = c.knobs;
  if (std::string label = variant_label(c.kernel, c.knobs); label != c.kernel) r.variant = std::move(label);
  r.kernel_origin = kernel_origin(c.kernel);
  r.problem = c.problem;
  if (const int bucket = knob_value(c.knobs, kBucketKnob); bucket > 0 && c.problem.varlen.active())
    r.padding_waste = padding_cost(c.problem, bucket).waste();
  r.status = status;
  r.reason = std::move(reason);
  r.nvtx_range = nvtx_range_name(c);
  return r;
}

CaseResult planned_skip_record(const Case& c) {
  CaseResult r = case_record(c, Status::skipped, c.skip_reason);
  fill_derived(r, false);
  return r;
}

std::string nvtx_range_name(const Case& c) {
  std::string name = variant_label(c.kernel, c.knobs) + "/" + c.problem.shape_label() + "/" +
                     std::string(to_string(c.problem.dtype)) + "/" + c.problem.mask_label();
  if (c.problem.pass != Pass::fwd) {
    name += '/';
    name += to_string(c.problem.pass);
  }
  return name;
}

std::string cpu_model_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown";
}

// PRETTY_NAME of /etc/os-release and the kernel release: "Ubuntu 24.04.1 LTS (Linux 6.8.0-49-generic)".
std::string os_description() {
  std::string name;
  std::ifstream f("/etc/os-release");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      name = line.substr(12);
      if (name.size() >= 2 && name.front() == '"' && name.back() == '"')
        name = name.substr(1, name.size() - 2);
    }
  utsname u{};
  if (uname(&u) == 0) {
    const std::string kernel = std::string(u.sysname) + " " + u.release;
    name = name.empty() ? kernel : name + " (" + kernel + ")";
  }
  return name;
}

void describe_host(RunInfo& run) {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) run.host = host;
  run.os = os_description();
  run.cpu_model = cpu_model_name();
  run.cpu_threads = static_cast<int>(std::thread::hardware_concurrency());
}

}  // namespace attn

namespace attn {

#if ATTNSCOPE_HAS_CUDA
SystemReport describe_cuda_system();
#endif

SystemReport describe_system() {
#if ATTNSCOPE_HAS_CUDA
  return describe_cuda_system();
#else
  SystemReport s;
  s.none_reason = "this attnscope was built without CUDA (ATTNSCOPE_ENABLE_CUDA=OFF)";
  return s;
#endif
}

Peaks datasheet_peaks(const std::string& name) {
  // Dense (no sparsity) fp16 tensor-core TFLOPS and DRAM GB/s from NVIDIA's datasheets.
  struct Sheet {
    const char* match;
    double tflops, gbps;
  };
  static constexpr Sheet kSheets[] = {
      {"H100 80GB HBM3", 989.4, 3352},  // SXM5
      {"H100 PCIe", 756.0, 2039},
      {"H100 NVL", 835.0, 3938},
      {"H200", 989.4, 4800},
      {"A100-SXM4-80GB", 312.0, 2039},
      {"A100-SXM4-40GB", 312.0, 1555},
      {"A100 80GB PCIe", 312.0, 1935},
      {"L40S", 362.05, 864},
      {"L4", 121.0, 300},
      {"L20", 119.5, 864},
  };
  Peaks p;
  for (const auto& s : kSheets) {
    if (name.find(s.match) != std::string::npos) {
      p.tensor_tflops_datasheet = s.tflops;
      p.dram_gbps_datasheet = s.gbps;
      break;
    }
  }
  return p;
}

}  // namespace attn
