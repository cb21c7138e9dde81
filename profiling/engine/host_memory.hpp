// Host memory a CPU case needs and what this machine (or its cgroup) has free, so that a case too
// large for the host ends as `oom` with both sizes before anything is allocated, instead of
// swapping until its time-out or failing inside std::vector.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "kernels/api/problem.hpp"

namespace attn {

// The host bytes one CPU case holds at its peak, by part [bytes]. Doubles: no size overflows.
struct HostFootprint {
  double inputs = 0;     // Q, K, V as fp32
  double reference = 0;  // cpu.reference's O and LSE in fp64 plus the fp32 copy kept for the check
  double output = 0;     // the case's O and LSE (fp32), its workspace and a kernel's own fp64 copy
  double scratch = 0;    // per-thread score rows of the reference
  double total() const { return inputs + reference + output + scratch; }
};

// `reference_held`: the inputs and reference of this problem are already in memory (not counted).
// `fp64_output_copy`: the kernel keeps its own fp64 O and LSE (cpu.reference timed as a kernel).
HostFootprint cpu_case_footprint(const Problem& p, std::size_t workspace_bytes, bool reference_held,
                                 bool fp64_output_copy, unsigned threads);

struct HostMemory {
  double available = 0;  // [bytes]
  std::string source;    // "MemAvailable in /proc/meminfo", "cgroup memory.max", ...
};

// The smaller of MemAvailable and the cgroup's limit minus its usage (v2, or v1); nullopt when
// neither can be read.
std::optional<HostMemory> host_memory_available();

// Parsers, exposed for tests: MemAvailable [bytes] from /proc/meminfo text; a cgroup limit file
// ("max" or a number) and usage file. nullopt when the text says nothing usable.
std::optional<double> parse_meminfo_available(std::string_view meminfo);
std::optional<double> cgroup_headroom(std::string_view limit_text, std::string_view usage_text);

// Empty when `need` fits in `mem`; else the `oom` reason naming both, e.g. "host memory: the case
// needs 24.1 GiB (inputs 6.00 GiB, ...), 23.5 GiB available (MemAvailable in /proc/meminfo)".
std::string host_memory_shortfall(const HostFootprint& need, const HostMemory& mem);

// "24.1 GiB", "512 MiB", "3.0 KiB", "12 B".
std::string format_bytes(double bytes);

}  // namespace attn
