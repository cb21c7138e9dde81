// The field catalogue through the codec and CSV: a golden results.jsonl of a fixed record set
// (written with the codec before it looped over the catalogue, so the loop changed no byte), a
// round trip of every descriptor, and results.csv's columns following the catalogue.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "profiling/field_catalogue.hpp"
#include "profiling/metrics.hpp"
#include "reports/csv_writer.hpp"
#include "reports/jsonl_store.hpp"
#include "reports/result_json.hpp"
#include "tests/reports/golden.hpp"
#include "tests/reports/golden_records.hpp"

namespace attn {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path temp_file(const std::string& name) {
  return fs::temp_directory_path() / ("attnscope-catalogue-" + std::to_string(::getpid())) / name;
}

TEST(FieldCatalogue, GoldenResultsJsonl) {
  const fs::path file = temp_file("results.jsonl");
  {
    JsonlWriter w = JsonlWriter::create(file, test::golden_run(), true);
    for (const CaseResult& c : test::golden_cases()) w.append(c);
  }
  test::expect_golden("results.jsonl", read_text(file));
  // Reading the golden file back and writing it again gives the same bytes.
  const LoadedRun back = read_results(file);
  ASSERT_EQ(back.cases.size(), test::golden_cases().size());
  const fs::path again = temp_file("again.jsonl");
  {
    JsonlWriter w = JsonlWriter::create(again, back.run, true);
    for (const CaseResult& c : back.cases) w.append(c);
  }
  EXPECT_EQ(read_text(again), read_text(file));
  fs::remove_all(file.parent_path());
}

TEST(FieldCatalogue, NamesAndPathsAreUnique) {
  std::set<std::string_view> names, paths;
  for (const FieldDesc& f : case_fields()) {
    EXPECT_TRUE(names.insert(f.name).second) << "duplicate name " << f.name;
    EXPECT_TRUE(paths.insert(f.path).second) << "duplicate path " << f.path;
    EXPECT_FALSE(f.label.empty()) << f.name;
    EXPECT_NE(f.get, nullptr) << f.name;
    EXPECT_NE(f.set, nullptr) << f.name;
    EXPECT_EQ(find_field(f.name), &f);
    // A metric row reads CUPTI counters into a KernelMetrics member under metrics.<name>.
    EXPECT_EQ(f.metric != nullptr, !f.cupti.empty()) << f.name;
    if (f.metric) {
      EXPECT_EQ(f.path, "metrics." + std::string(f.name));
    }
  }
  EXPECT_EQ(find_field("no_such_field"), nullptr);
}

// The collection order the CUPTI pass used before the catalogue existed (run records name it), with
// lts__t_bytes.sum (the L2 roofline's traffic, issue 24) after the L2 throughput.
TEST(FieldCatalogue, DefaultMetricsKeepTheirOrder) {
  std::vector<std::string> want = {metric::kSmThroughput, metric::kDramThroughput, metric::kDramRead,
                                   metric::kDramWrite,    metric::kL2Throughput,   "lts__t_bytes.sum",
                                   metric::kTensorPipe,   metric::kWarpsActive,    metric::kGpuTime};
  for (const auto& n : tensor_flop_metrics()) want.push_back(n);
  for (const auto& n : tensor_peak_pct_metrics()) want.push_back(n);
  EXPECT_EQ(default_metric_names(), want);
  EXPECT_EQ(tensor_flop_metrics().size(), 2u);
  EXPECT_EQ(tensor_peak_pct_metrics().size(), 5u);
}

// A value of `f`'s type that differs from `current`, valid for the field.
FieldValue distinctive(const FieldDesc& f, const FieldValue& current, std::size_t index, CaseResult& probe) {
  switch (f.type) {
    case FieldType::real:
      return 1000.0 + static_cast<double>(index) + 0.375;
    case FieldType::int32:
    case FieldType::int64:
      return static_cast<std::int64_t>(3000 + index);
    case FieldType::boolean: {
      const auto* b = std::get_if<bool>(&current);
      return b == nullptr || !*b;
    }
    case FieldType::text:
      break;
  }
  if (f.name == "variant") return std::string("fa2.mma@stages=2");
  // The first candidate the field accepts and that differs from what it holds.
  for (const std::string& s :
       {"distinct-" + std::string(f.name), std::string("timeout"), std::string("failed"), std::string("bf16"),
        std::string("fp16"), std::string("bwd"), std::string("block_m=64;stages=3")}) {
    CaseResult copy = probe;
    if (f.set(copy, s).empty() && FieldValue(s) != current) return s;
  }
  ADD_FAILURE() << f.name << ": no distinctive text value";
  return std::monostate{};
}

// Every descriptor: set a distinctive value, encode, write as text, read, decode, compare; on a
// fully populated case and on a minimal one (where setting the field creates its parent object).
TEST(FieldCatalogue, EveryDescriptorRoundTrips) {
  const auto fields = case_fields();
  for (const CaseResult& base : {test::golden_profiled_case(), test::minimal_case()}) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
      const FieldDesc& f = fields[i];
      CaseResult c = base;
      if (f.name == "variant") c.knobs = {{"stages", 2}}, c.kernel = "fa2.mma";
      if (f.name == "kernel" || f.name == "knobs") c.variant.clear();  // it must name kernel and knobs
      const FieldValue v = distinctive(f, f.get(c), i, c);
      ASSERT_EQ(f.set(c, v), "") << f.name;
      ASSERT_EQ(f.get(c), v) << f.name << ": get does not return what set stored";
      const std::string text = to_json(c).dump();
      const CaseResult back = case_result_from_json(nlohmann::json::parse(text));
      EXPECT_EQ(f.get(back), v) << f.name << " in " << text;
      // Nothing else changed on the way.
      EXPECT_EQ(to_json(back).dump(), text) << f.name;
    }
  }
}

TEST(FieldCatalogue, SettersRejectValuesOutOfTheirDomain) {
  CaseResult c = test::minimal_case();
  EXPECT_NE(find_field("status")->set(c, std::string("done")), "");
  EXPECT_NE(find_field("metrics_status")->set(c, std::string("maybe")), "");
  EXPECT_NE(find_field("dtype")->set(c, std::string("fp8")), "");
  EXPECT_NE(find_field("knobs")->set(c, std::string("stages")), "");
  EXPECT_NE(find_field("samples")->set(c, std::int64_t{1} << 40), "");
  EXPECT_NE(find_field("throttle_mask")->set(c, std::int64_t{-1}), "");
  EXPECT_NE(find_field("median_ms")->set(c, std::string("fast")), "");
  EXPECT_EQ(c.status, Status::skipped);
  EXPECT_NE(find_field("sm_throughput_pct")->set(c, std::string("high")), "");
  EXPECT_FALSE(c.clocks.has_value());  // a rejected value creates no group
  EXPECT_FALSE(c.timing.has_value());
  EXPECT_FALSE(c.metrics.has_value());
}

TEST(FieldCatalogue, DecodeErrorsNameTheField) {
  nlohmann::json j = to_json(test::golden_profiled_case());
  j["metrics_status"] = "maybe";
  try {
    case_result_from_json(j);
    FAIL() << "accepted metrics_status \"maybe\"";
  } catch (const ResultsFormatError& e) {
    EXPECT_EQ(std::string(e.what()),
              "case.metrics_status: expected ok, off, unavailable or failed, got \"maybe\"");
  }
  j = to_json(test::golden_profiled_case());
  j["timing"].erase("median_ms");
  EXPECT_THROW(case_result_from_json(j), ResultsFormatError);
  j = to_json(test::golden_profiled_case());
  j["roofline"] = 3;
  try {
    case_result_from_json(j);
    FAIL() << "accepted a number for roofline";
  } catch (const ResultsFormatError& e) {
    EXPECT_EQ(std::string(e.what()), "case.roofline: expected an object, got number");
  }
}

TEST(FieldCatalogue, MetricsStatusNames) {
  for (const MetricsStatus s : {MetricsStatus::not_attempted, MetricsStatus::ok, MetricsStatus::off,
                                MetricsStatus::unavailable, MetricsStatus::failed})
    EXPECT_EQ(parse_metrics_status(to_string(s)), s);
  EXPECT_EQ(to_string(MetricsStatus::not_attempted), "");
  EXPECT_EQ(parse_metrics_status("OK"), std::nullopt);
  // Absent in JSON when not attempted; the run record round-trips its status too.
  EXPECT_FALSE(to_json(test::minimal_case()).contains("metrics_status"));
  RunInfo run = test::golden_run();
  run.metrics_status = MetricsStatus::unavailable;
  EXPECT_EQ(run_info_from_json(to_json(run)).metrics_status, MetricsStatus::unavailable);
}

// results.csv: one column per csv row of the catalogue, in its order, and each cell is the field.
TEST(FieldCatalogue, CsvColumnsFollowTheCatalogue) {
  std::vector<std::string> want;
  for (const FieldDesc& f : case_fields())
    if (f.csv) want.emplace_back(f.name);
  const std::string header = results_csv_header();
  std::vector<std::string> got;
  std::stringstream hs(header);
  for (std::string col; std::getline(hs, col, ',');) got.push_back(col);
  EXPECT_EQ(got, want);
  // The first 37 columns are the ones results.csv always had, in the same order.
  ASSERT_GE(got.size(), 37u);
  EXPECT_EQ(got[0], "case_id");
  EXPECT_EQ(got[36], "power_w");
  for (const char* added : {"variant", "metrics_status", "sm_throughput_pct", "dram_bytes", "tensor_flops",
                            "pct_of_roofline", "roofline_bound"})
    EXPECT_NE(std::find(got.begin(), got.end(), added), got.end()) << added;

  const CaseResult c = test::golden_profiled_case();
  const std::string csv = results_csv({c});
  const std::string row = csv.substr(csv.find('\n') + 1);
  std::vector<std::string> cells;
  const std::string body = row.substr(0, row.size() - 1);
  std::stringstream rs(body);
  for (std::string cell; std::getline(rs, cell, ',');) cells.push_back(cell);
  if (!body.empty() && body.back() == ',') cells.emplace_back();  // getline drops a last empty cell
  ASSERT_EQ(cells.size(), got.size()) << row;
  auto cell_of = [&](const char* name) {
    return cells[static_cast<std::size_t>(std::find(got.begin(), got.end(), name) - got.begin())];
  };
  EXPECT_EQ(cell_of("variant"), "fa2.mma@block_m=128");
  EXPECT_EQ(cell_of("metrics_status"), "ok");
  EXPECT_EQ(cell_of("sm_throughput_pct"), "53.4375");
  EXPECT_EQ(cell_of("pct_of_roofline"), "0.375");
  EXPECT_EQ(cell_of("roofline_bound"), "compute");
  EXPECT_EQ(cell_of("median_ms"), "0.5");
  // A case without metrics leaves those cells empty, never 0.
  const std::string bare = results_csv({test::minimal_case()});
  EXPECT_NE(bare.find(",,,,,,,,,,,"), std::string::npos);
}

}  // namespace
}  // namespace attn
