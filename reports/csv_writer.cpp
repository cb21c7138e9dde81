// results.csv writer: fixed columns, RFC 4180 quoting, exact doubles.
#include "reports/csv_writer.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>

#include "reports/jsonl_store.hpp"

namespace attn {

namespace {

constexpr const char* kHeader =
    "case_id,kernel,knobs,batch,heads_q,heads_kv,seq_q,seq_kv,head_dim,head_dim_v,dtype,causal,"
    "window_left,window_right,status,reason,median_ms,min_ms,mean_ms,std_ms,q1_ms,q3_ms,samples,"
    "noise_pct,flops,min_bytes,tflops,gbps,queries_per_s,max_abs,rel_l2,tol,pass,device_bytes_peak,"
    "sm_mhz,temp_c,power_w";

// fmt's "{}" prints the shortest decimal text that parses back to the same double.
std::string num(double v) { return fmt::format("{}", v); }
std::string num(const std::optional<double>& v) { return v ? num(*v) : std::string(); }
std::string num(const std::optional<std::int64_t>& v) { return v ? std::to_string(*v) : std::string(); }
const char* boolean(bool b) { return b ? "true" : "false"; }

class Row {
 public:
  Row& add(std::string_view cell) {
    if (m_cells > 0) m_text += ',';
    m_text += csv_field(cell);
    ++m_cells;
    return *this;
  }
  Row& add(std::int64_t v) { return add(std::to_string(v)); }
  std::string line() const { return m_text + "\n"; }

 private:
  std::string m_text;
  int m_cells = 0;
};

std::string knobs_text(const Knobs& knobs) {
  std::string s;
  for (const auto& [name, value] : knobs) {
    if (!s.empty()) s += ';';
    s += name + "=" + std::to_string(value);
  }
  return s;
}

}  // namespace

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string results_csv(const std::vector<CaseResult>& cases) {
  std::string out = std::string(kHeader) + "\n";
  for (const CaseResult& c : cases) {
    const Problem& p = c.problem;
    Row row;
    row.add(c.case_id).add(c.kernel).add(knobs_text(c.knobs));
    row.add(p.batch)
        .add(p.heads_q)
        .add(p.heads_kv)
        .add(p.seq_q)
        .add(p.seq_kv)
        .add(p.head_dim)
        .add(p.head_dim_v);
    row.add(to_string(p.dtype)).add(boolean(p.causal)).add(p.window.left).add(p.window.right);
    row.add(to_string(c.status)).add(c.reason);
    const auto& t = c.timing;
    if (t) {
      row.add(num(t->median_ms)).add(num(t->min_ms)).add(num(t->mean_ms)).add(num(t->std_ms));
      row.add(num(t->q1_ms)).add(num(t->q3_ms)).add(t->samples).add(num(t->noise_pct));
    } else {
      for (int i = 0; i < 8; ++i) row.add("");
    }
    row.add(num(c.flops)).add(c.min_bytes).add(num(c.tflops)).add(num(c.gbps)).add(num(c.queries_per_s));
    const auto& k = c.correctness;
    if (k) {
      row.add(num(k->max_abs)).add(num(k->rel_l2)).add(num(k->tol)).add(boolean(k->pass));
    } else {
      for (int i = 0; i < 4; ++i) row.add("");
    }
    row.add(num(c.device_bytes_peak));
    const Clocks clocks = c.clocks.value_or(Clocks{});
    row.add(num(clocks.sm_mhz)).add(num(clocks.temp_c)).add(num(clocks.power_w));
    out += row.line();
  }
  return out;
}

void write_results_csv(const std::filesystem::path& file, const std::vector<CaseResult>& cases) {
  const std::string text = results_csv(cases);
  if (!file.parent_path().empty()) {
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    if (ec) throw ResultsIoError(file.parent_path().string() + ": cannot create directory: " + ec.message());
  }
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) throw ResultsIoError(file.string() + ": cannot open for writing: " + std::strerror(errno));
  out << text;
  out.flush();
  if (!out) throw ResultsIoError(file.string() + ": write failed: " + std::strerror(errno));
}

}  // namespace attn
