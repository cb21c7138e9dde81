// Host memory of CPU cases (issue 24 item 7): the footprint, the free-memory readers, and a case
// too large for this host ending as `oom` with both sizes before anything is allocated.
#include <gtest/gtest.h>

#include <chrono>

#include "profiling/engine/engine.hpp"
#include "profiling/engine/host_memory.hpp"
#include "profiling/sweep/plan.hpp"

namespace attn {
namespace {

Problem shape(std::int64_t seq, std::int64_t d) {
  Problem p;
  p.seq_q = p.seq_kv = seq;
  p.head_dim = p.head_dim_v = d;
  p.dtype = DType::fp32;
  return p;
}

TEST(HostMemory, FootprintCountsEveryBuffer) {
  const Problem p = shape(1024, 64);  // Q, K, V, O: 65536 elements each; LSE 1024
  const HostFootprint f = cpu_case_footprint(p, 100, false, false, 4);
  EXPECT_DOUBLE_EQ(f.inputs, 4.0 * 3 * 65536);
  EXPECT_DOUBLE_EQ(f.reference, 12.0 * 65536 + 8.0 * 1024);
  EXPECT_DOUBLE_EQ(f.output, 4.0 * 65536 + 4.0 * 1024 + 100);
  EXPECT_DOUBLE_EQ(f.scratch, 8.0 * 1024 * 4);
  // A problem whose reference is already held adds only its output.
  const HostFootprint held = cpu_case_footprint(p, 0, true, false, 4);
  EXPECT_DOUBLE_EQ(held.total(), 4.0 * 65536 + 4.0 * 1024);
  // cpu.reference timed as a kernel keeps its own fp64 O and LSE.
  EXPECT_DOUBLE_EQ(cpu_case_footprint(p, 0, true, true, 1).output, 12.0 * (65536 + 1024));
}

TEST(HostMemory, ParsesMeminfoAndCgroupFiles) {
  EXPECT_EQ(
      parse_meminfo_available("MemTotal:       24576000 kB\nMemFree: 1 kB\nMemAvailable:   20480000 kB\n")
          .value_or(-1),
      20480000.0 * 1024);
  EXPECT_FALSE(parse_meminfo_available("MemTotal: 5 kB\n").has_value());
  EXPECT_EQ(cgroup_headroom("25232932864\n", "1073741824\n").value_or(-1), 25232932864.0 - 1073741824.0);
  EXPECT_FALSE(cgroup_headroom("max\n", "1073741824\n").has_value());
  EXPECT_FALSE(cgroup_headroom("9223372036854771712\n", "5\n").has_value());  // v1 "no limit"
  EXPECT_EQ(cgroup_headroom("100\n", "300\n").value_or(-1), 0.0);
  const auto here = host_memory_available();
  ASSERT_TRUE(here.has_value()) << "/proc/meminfo unreadable";
  EXPECT_GT(here->available, 0.0);
}

TEST(HostMemory, ShortfallNamesNeededAndAvailable) {
  HostFootprint need;
  need.inputs = 6.0 * (1ull << 30);
  need.reference = 12.0 * (1ull << 30);
  need.output = 6.0 * (1ull << 30);
  const std::string why =
      host_memory_shortfall(need, HostMemory{23.5 * (1ull << 30), "MemAvailable in /proc/meminfo"});
  EXPECT_EQ(
      why,
      "host memory: the case needs 24.0 GiB (inputs 6.00 GiB, reference 12.0 GiB, output 6.00 GiB), 23.5 GiB "
      "available (MemAvailable in /proc/meminfo); not run");
  EXPECT_EQ(host_memory_shortfall(need, HostMemory{25.0 * (1ull << 30), "x"}), "");
  EXPECT_EQ(format_bytes(12), "12 B");
  EXPECT_EQ(format_bytes(3 * 1024), "3.00 KiB");
  EXPECT_EQ(format_bytes(512.0 * (1 << 20)), "512 MiB");
}

// A case needing far more than this host has: oom at once, with both sizes, nothing allocated.
TEST(HostMemory, CaseLargerThanTheHostIsOomBeforeAllocating) {
  Case c;
  c.kernel = "cpu.flash";
  c.problem = shape(std::int64_t{1} << 31, 8);  // inputs 192 GiB, O 64 GiB
  c.case_id = make_case_id(c.kernel, {}, c.problem);
  const auto mem = host_memory_available();
  ASSERT_TRUE(mem.has_value());
  const double need = cpu_case_footprint(c.problem, 0, false, false, 1).total();
  if (mem->available > need) GTEST_SKIP() << "this host has " << format_bytes(mem->available) << " free";
  Protocol protocol;
  protocol.max_time_s = 0.01;
  const auto engine = make_engine(Backend::cpu, protocol);
  const auto t0 = std::chrono::steady_clock::now();
  const CaseResult r = engine->run(c);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, Status::oom) << r.reason;
  EXPECT_NE(r.reason.find("host memory: the case needs "), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("inputs 192 GiB"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find(" available ("), std::string::npos) << r.reason;
  EXPECT_LT(seconds, 5.0);  // decided, not attempted
}

}  // namespace
}  // namespace attn
