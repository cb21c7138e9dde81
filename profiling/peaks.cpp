// Peaks cache (JSON, one entry per GPU key) and the load-or-measure policy (see peaks.hpp).
#include "profiling/peaks.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace attn {

std::string peaks_cache_key(const GpuInfo& gpu, const std::string& driver) {
  return gpu.name + "|" + gpu.pci_bus_id + "|" + driver;
}

std::filesystem::path peaks_cache_path() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::filesystem::path(xdg) / "attnscope" / "peaks.json";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : "/tmp") / ".cache" / "attnscope" / "peaks.json";
}

namespace {
nlohmann::json read_all(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return nlohmann::json::object();
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return j.is_object() ? j : nlohmann::json::object();
}
}  // namespace

std::optional<MeasuredPeaks> read_cached_peaks(const std::filesystem::path& file, const std::string& key) {
  const nlohmann::json all = read_all(file);
  const auto it = all.find(key);
  if (it == all.end() || !it->is_object()) return std::nullopt;
  const nlohmann::json& e = *it;
  auto num = [&](const char* k) { return e.contains(k) && e[k].is_number() ? e[k].get<double>() : 0.0; };
  MeasuredPeaks p;
  p.tensor_tflops_fp16 = num("tensor_tflops_fp16");
  p.tensor_tflops_bf16 = num("tensor_tflops_bf16");
  p.dram_gbps = num("dram_gbps");
  p.l2_gbps = num("l2_gbps");
  if (e.contains("measured_at") && e["measured_at"].is_string()) p.measured_at = e["measured_at"];
  if (e.contains("method") && e["method"].is_string()) p.method = e["method"];
  if (p.tensor_tflops_fp16 <= 0 || p.tensor_tflops_bf16 <= 0 || p.dram_gbps <= 0 || p.l2_gbps <= 0)
    return std::nullopt;
  return p;
}

void write_cached_peaks(const std::filesystem::path& file, const std::string& key, const MeasuredPeaks& p) {
  nlohmann::json all = read_all(file);
  all[key] = {{"tensor_tflops_fp16", p.tensor_tflops_fp16},
              {"tensor_tflops_bf16", p.tensor_tflops_bf16},
              {"dram_gbps", p.dram_gbps},
              {"l2_gbps", p.l2_gbps},
              {"measured_at", p.measured_at},
              {"method", p.method}};
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  // Write then rename, so a concurrent reader never sees half a file.
  const std::filesystem::path tmp = file.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
    out << all.dump(2) << '\n';
    if (!out) throw std::runtime_error("cannot write " + tmp.string());
  }
  std::filesystem::rename(tmp, file, ec);
  if (ec) throw std::runtime_error("cannot write " + file.string() + ": " + ec.message());
}

void apply_measured_peaks(Peaks& peaks, const MeasuredPeaks& m) {
  peaks.tensor_tflops_fp16_measured = m.tensor_tflops_fp16;
  peaks.tensor_tflops_bf16_measured = m.tensor_tflops_bf16;
  peaks.tensor_tflops_measured = std::max(m.tensor_tflops_fp16, m.tensor_tflops_bf16);
  peaks.dram_gbps_measured = m.dram_gbps;
  if (m.l2_gbps > 0) peaks.l2_gbps_measured = m.l2_gbps;
  peaks.measured_at = m.measured_at;
}

MeasuredPeaks load_or_measure_peaks(const GpuInfo& gpu, const std::string& driver, bool remeasure,
                                    void (*announce)(const std::string& line)) {
  const std::filesystem::path file = peaks_cache_path();
  const std::string key = peaks_cache_key(gpu, driver);
  if (!remeasure)
    if (auto cached = read_cached_peaks(file, key)) return *cached;
  if (announce)
    announce("measuring peaks of " + gpu.name +
             " (cuBLAS 8192^3 GEMM fp16 and bf16, 2 GiB device copy; ~2 s), "
             "cached in " +
             file.string());
  MeasuredPeaks m = measure_peaks();
  try {
    write_cached_peaks(file, key, m);
  } catch (const std::exception& e) {
    if (announce) announce(std::string("peaks not cached: ") + e.what());
  }
  return m;
}

#if !ATTNSCOPE_HAS_CUDA
MeasuredPeaks measure_peaks() {
  throw std::runtime_error(
      "this attnscope was built without CUDA (ATTNSCOPE_ENABLE_CUDA=OFF): no peaks to measure");
}
#endif

}  // namespace attn
