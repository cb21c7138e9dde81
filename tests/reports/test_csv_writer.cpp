// results.csv: the pinned text of an ok, a skipped and a mismatched case, and RFC 4180 quoting.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

#include "reports/csv_writer.hpp"
#include "tests/reports/golden.hpp"
#include "tests/reports/sample_results.hpp"

namespace attn {
namespace {

std::vector<CaseResult> three_cases() {
  CaseResult skipped = test::skipped_case("cudnn.sdpa", test::small_problem(64, true),
                                          "needs head_dim in {64, 128}; got \"32\"");
  CaseResult bad = test::ok_case("naive.unfused", test::small_problem(128, false), 0.0625, 0.5);
  bad.status = Status::mismatch;
  bad.reason = "rel_l2 nan above tol 1e-05\n3 outputs are NaN";
  bad.correctness->rel_l2 = std::numeric_limits<double>::quiet_NaN();
  bad.correctness->nonfinite = 3;
  bad.tflops.reset();
  bad.gbps.reset();
  return {test::full_case(), skipped, bad};
}

TEST(CsvWriter, GoldenThreeCases) { test::expect_golden("results.csv", results_csv(three_cases())); }

// The columns results.csv has had from the start come first, in the same order, so readers that
// index columns keep working; the field catalogue's later columns follow.
TEST(CsvWriter, HeaderStartsWithTheFirstColumns) {
  const std::string csv = results_csv({});
  const std::string first =
      "case_id,kernel,knobs,batch,heads_q,heads_kv,seq_q,seq_kv,head_dim,head_dim_v,dtype,causal,"
      "window_left,window_right,status,reason,median_ms,min_ms,mean_ms,std_ms,q1_ms,q3_ms,samples,"
      "noise_pct,flops,min_bytes,tflops,gbps,queries_per_s,max_abs,rel_l2,tol,pass,device_bytes_peak,"
      "sm_mhz,temp_c,power_w,";
  EXPECT_EQ(csv.substr(0, first.size()), first);
  EXPECT_EQ(csv, results_csv_header() + "\n");
  EXPECT_EQ(
      csv.substr(first.size()),
      "variant,metrics_status,sm_throughput_pct,dram_throughput_pct,dram_bytes_read,dram_bytes_write,"
      "dram_bytes,l2_throughput_pct,l2_bytes,tensor_pipe_pct,achieved_occupancy_pct,gpu_time_ns,tensor_flops,"
      "tensor_pct_of_peak,algorithmic_intensity,achieved_intensity,roofline_peak_tflops,"
      "roofline_peak_gbps,roofline_peak_source,ridge_intensity,attainable_tflops,pct_of_roofline,"
      "roofline_bound,direction,dq_rel_l2,dk_rel_l2,dv_rel_l2,host,device_index,device_name,device_uuid,"
      "worker,worker_slot,worker_pid,worker_start,"
      "phase_prepare_s,phase_inputs_s,phase_reference_s,phase_check_s,phase_warmup_s,phase_timed_s,"
      "phase_metrics_s,phase_other_s,kernel_origin,compress_block,compress_stride,padding_waste,"
      "select_block,select_count,select_seed,select_file,phase_cooldown_s\n");
}

TEST(CsvWriter, Rfc4180Quoting) {
  EXPECT_EQ(csv_field("plain"), "plain");
  EXPECT_EQ(csv_field(""), "");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field("cr\r"), "\"cr\r\"");
}

TEST(CsvWriter, WritesTheFileWithParents) {
  const auto dir = std::filesystem::temp_directory_path() / ("attnscope-csv-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const auto file = dir / "sub" / "results.csv";
  write_results_csv(file, three_cases());
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), results_csv(three_cases()));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace attn
