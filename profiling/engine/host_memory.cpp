// Host memory footprint of a CPU case and the memory free to it (see host_memory.hpp).
#include "profiling/engine/host_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>
#include <sstream>

namespace attn {

namespace {

std::optional<std::string> read_file(const char* path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

std::optional<double> parse_number(std::string_view s) {
  s = trim(s);
  unsigned long long v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return static_cast<double>(v);
}

// /proc/self/cgroup names the process's cgroup v2 path on its "0::" line.
std::string cgroup_v2_dir() {
  const auto text = read_file("/proc/self/cgroup");
  std::string dir = "/sys/fs/cgroup";
  if (!text) return dir;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("0::", 0) == 0 && line.size() > 3 && line.substr(3) != "/") return dir + line.substr(3);
  return dir;
}

}  // namespace

HostFootprint cpu_case_footprint(const Problem& p, std::size_t workspace_bytes, bool reference_held,
                                 bool fp64_output_copy, unsigned threads) {
  const double b = static_cast<double>(p.batch), hq = static_cast<double>(p.heads_q),
               hkv = static_cast<double>(p.heads_kv), sq = static_cast<double>(p.seq_q),
               sk = static_cast<double>(p.seq_kv), d = static_cast<double>(p.head_dim),
               dv = static_cast<double>(p.head_dim_v);
  const double q = b * sq * hq * d, k = b * sk * hkv * d, v = b * sk * hkv * dv, o = b * sq * hq * dv,
               lse = b * hq * sq;
  HostFootprint f;
  if (!reference_held) {
    f.inputs = 4 * (q + k + v);
    f.reference = 8 * o + 8 * lse + 4 * o;  // fp64 O and LSE, then the fp32 O kept for the check
  }
  f.output =
      4 * o + 4 * lse + static_cast<double>(workspace_bytes) + (fp64_output_copy ? 8 * (o + lse) : 0.0);
  f.scratch = 8 * sk * std::max(1u, threads) * (fp64_output_copy || !reference_held ? 1 : 0);
  if (has_backward(p.pass)) {
    // dO (fp32); the reference gradients in fp64 and the fp32 copies checked against; the case's
    // dQ, dK, dV; per-thread fp64 dK/dV accumulators of one KV head (the fp64 copy when timed).
    if (!reference_held) {
      f.inputs += 4 * o;
      f.reference += 12 * (q + k + v);
    }
    f.output += 4 * (q + k + v) + (fp64_output_copy ? 8 * (q + k + v) : 0.0);
    f.scratch += 8 * sk * (d + dv) * std::min<double>(std::max(1u, threads), b * hkv);
  }
  return f;
}

std::optional<double> parse_meminfo_available(std::string_view meminfo) {
  std::istringstream lines{std::string(meminfo)};
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::string_view rest = std::string_view(line).substr(13);
    rest = trim(rest);
    if (rest.ends_with("kB")) rest.remove_suffix(2);
    const auto kb = parse_number(rest);
    if (kb) return *kb * 1024.0;
  }
  return std::nullopt;
}

std::optional<double> cgroup_headroom(std::string_view limit_text, std::string_view usage_text) {
  const auto limit = parse_number(limit_text);  // "max" (no limit) parses as nothing
  const auto usage = parse_number(usage_text);
  // cgroup v1 spells "no limit" as a number near 2^63.
  if (!limit || !usage || *limit >= 9.0e18) return std::nullopt;
  return std::max(0.0, *limit - *usage);
}

std::optional<HostMemory> host_memory_available() {
  std::optional<HostMemory> best;
  auto consider = [&](std::optional<double> bytes, std::string source) {
    if (bytes && (!best || *bytes < best->available)) best = HostMemory{*bytes, std::move(source)};
  };
  if (const auto meminfo = read_file("/proc/meminfo"))
    consider(parse_meminfo_available(*meminfo), "MemAvailable in /proc/meminfo");
  const std::string v2 = cgroup_v2_dir();
  const auto v2_max = read_file((v2 + "/memory.max").c_str());
  const auto v2_cur = read_file((v2 + "/memory.current").c_str());
  if (v2_max && v2_cur)
    consider(cgroup_headroom(*v2_max, *v2_cur), "cgroup " + v2 + "/memory.max less usage");
  const auto v1_max = read_file("/sys/fs/cgroup/memory/memory.limit_in_bytes");
  const auto v1_cur = read_file("/sys/fs/cgroup/memory/memory.usage_in_bytes");
  if (v1_max && v1_cur)
    consider(cgroup_headroom(*v1_max, *v1_cur), "cgroup v1 memory.limit_in_bytes less usage");
  return best;
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  std::size_t u = 0;
  while (bytes >= 1024.0 && u + 1 < std::size(units)) bytes /= 1024.0, ++u;
  if (u == 0) return fmt::format("{:.0f} B", bytes);
  return fmt::format(fmt::runtime(bytes < 10    ? "{:.2f} {}"
                                  : bytes < 100 ? "{:.1f} {}"
                                                : "{:.0f} {}"),
                     bytes, units[u]);
}

std::string host_memory_shortfall(const HostFootprint& need, const HostMemory& mem) {
  if (need.total() <= mem.available) return {};
  std::string parts;
  auto part = [&](const char* name, double v) {
    if (v > 0) parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", name, format_bytes(v));
  };
  part("inputs", need.inputs);
  part("reference", need.reference);
  part("output", need.output);
  part("scratch", need.scratch);
  return fmt::format("host memory: the case needs {} ({}), {} available ({}); not run",
                     format_bytes(need.total()), parts, format_bytes(mem.available), mem.source);
}

}  // namespace attn
