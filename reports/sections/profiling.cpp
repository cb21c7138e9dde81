// Report section: launch statistics and CUPTI hardware metrics per kernel (profiling_summary_md,
// which reads the JSON form of the records so it shows whatever fields they carry).
#include <fmt/format.h>

#include <map>

#include "profiling/field_catalogue.hpp"
#include "reports/result_json.hpp"
#include "reports/sections/section.hpp"
#include "reports/sections/section_util.hpp"
#include "reports/table.hpp"
#include "reports/text_format.hpp"

namespace attn {

using nlohmann::json;

namespace {

std::string json_cell(const json& v) {
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_number()) return format_fixed4(v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_string()) return shorten(v.get<std::string>(), 60);
  if (v.is_array()) {
    std::string s;
    for (const json& e : v) {
      if (!s.empty()) s += 'x';
      s += json_cell(e);
    }
    return s;
  }
  return v.dump();
}

bool record_ok(const json& r) { return r.value("status", std::string()) == "ok"; }

double record_flops(const json& r) {
  const auto f = r.find("flops");
  return f != r.end() && f->is_number() ? f->get<double>() : 0;
}

std::string record_config(const json& r) {
  try {
    Problem p;
    from_json(r.at("problem"), p);
    return config_label(p);
  } catch (const std::exception&) {
    return "?";
  }
}

// DESIGN.md's order of the launch and metrics fields first, then the others by name.
void order_like_design(std::vector<std::string>& names, const std::vector<std::string>& design) {
  auto rank = [&](const std::string& n) {
    const auto it = std::find(design.begin(), design.end(), n);
    return it == design.end() ? design.size() : static_cast<std::size_t>(it - design.begin());
  };
  std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    const auto ra = rank(a), rb = rank(b);
    return ra != rb ? ra < rb : a < b;
  });
}

}  // namespace

std::string profiling_summary_md(const std::vector<json>& records) {
  std::vector<std::string> kernels;
  std::map<std::string, const json*> largest;  // kernel -> its largest ok record with launch stats
  std::map<std::string, std::map<std::string, std::vector<double>>> metrics;  // kernel -> name -> values
  std::map<std::string, std::size_t> ok_count;
  std::vector<std::string> metric_names;
  std::map<std::string, std::pair<int, std::string>> statuses;  // metrics_status -> cases, first reason
  for (const json& r : records) {
    if (!r.is_object() || !record_ok(r)) continue;
    // The variant label (its "variant" field) keeps two variants of a kernel apart.
    const std::string k = r.value("variant", std::string()).empty() ? r.value("kernel", std::string())
                                                                    : r.value("variant", std::string());
    add_unique(kernels, k);
    ++ok_count[k];
    if (const auto l = r.find("launch"); l != r.end() && !l->is_null() && !l->empty()) {
      const json*& best = largest[k];
      if (!best || record_flops(r) > record_flops(*best)) best = &r;
    }
    if (const auto m = r.find("metrics"); m != r.end() && m->is_object()) {
      auto take = [&](const std::string& name, const json& v) {
        if (!v.is_number()) return;
        add_unique(metric_names, name);
        metrics[k][name].push_back(v.get<double>());
      };
      // The case's aggregate: the field catalogue's metrics and `extra` (--metrics additions).
      for (const FieldDesc& f : case_fields())
        if (f.metric)
          if (const auto v = m->find(f.name); v != m->end()) take(std::string(f.name), *v);
      if (const auto e = m->find("extra"); e != m->end() && e->is_object())
        for (const auto& [en, ev] : e->items()) take(en, ev);
    }
    if (const auto st = r.find("metrics_status"); st != r.end() && st->is_string() && *st != "ok") {
      auto& [n, reason] = statuses[st->get<std::string>()];
      ++n;
      if (reason.empty()) reason = r.value("metrics_reason", std::string());
    }
  }
  std::string out = "## Profiling summary\n\n### Launch statistics\n\n";
  if (largest.empty()) {
    out += "Launch statistics: not collected in this run.\n\n";
  } else {
    // Columns: the union of the launch fields, in order of first appearance.
    std::vector<std::string> cols;
    auto objects = [](const json& launch) {
      std::vector<const json*> v;
      if (launch.is_object()) v.push_back(&launch);
      if (launch.is_array())
        for (const json& e : launch)
          if (e.is_object()) v.push_back(&e);
      return v;
    };
    for (const auto& k : kernels)
      if (largest.contains(k))
        for (const json* o : objects(largest[k]->at("launch")))
          for (const auto& [name, v] : o->items()) add_unique(cols, name);
    order_like_design(
        cols, {"name", "grid", "block", "regs", "smem_static", "smem_dynamic", "occupancy_theoretical"});
    out += "Per kernel, at its largest measured case (one row per launched GPU kernel).\n\n";
    Table t({{"kernel"}, {"case"}});
    for (const auto& c : cols) t.add_column(c, Align::right);
    for (const auto& k : kernels) {
      if (!largest.contains(k)) continue;
      for (const json* o : objects(largest[k]->at("launch"))) {
        std::vector<std::string> row{k, record_config(*largest[k])};
        for (const auto& c : cols) row.push_back(o->contains(c) ? json_cell(o->at(c)) : std::string("-"));
        t.add_row(std::move(row));
      }
    }
    out += t.markdown();
    std::string without;
    for (const auto& k : kernels)
      if (!largest.contains(k)) without += (without.empty() ? "`" : ", `") + k + "`";
    if (!without.empty()) out += "\nNot collected for " + without + ".\n";
    out += "\n";
  }
  out += "### Hardware metrics\n\n";
  order_like_design(metric_names,
                    {"sm_throughput_pct", "dram_throughput_pct", "dram_bytes", "l2_throughput_pct",
                     "tensor_pipe_pct", "achieved_occupancy_pct", "tensor_flops"});
  if (metric_names.empty()) {
    out += "Hardware metrics (CUPTI): not collected in this run.";
    for (const auto& [status, info] : statuses)
      out += fmt::format(" {} on {} case{}{}.", status, info.first, info.first == 1 ? "" : "s",
                         info.second.empty() ? std::string() : ": " + one_line(info.second));
    return out + "\n\n";
  }
  out += "Per kernel, the median over its measured cases that carry metrics.\n\n";
  Table t({{"kernel"}, {"cases", Align::right}});
  for (const auto& m : metric_names) t.add_column(m, Align::right);
  for (const auto& k : kernels) {
    if (!metrics.contains(k)) continue;
    std::size_t n = 0;
    for (const auto& [name, v] : metrics[k]) n = std::max(n, v.size());
    std::vector<std::string> row{k, fmt::format("{} of {}", n, ok_count[k])};
    for (const auto& m : metric_names) {
      auto it = metrics[k].find(m);
      if (it == metrics[k].end()) {
        row.emplace_back("-");
        continue;
      }
      std::vector<double> v = it->second;
      std::sort(v.begin(), v.end());
      const double med = v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
      row.push_back(si(med));
    }
    t.add_row(std::move(row));
  }
  out += t.markdown();
  return out + "\n";
}

std::string profiling_section(const ReportContext& ctx) {
  std::vector<json> records;
  records.reserve(ctx.set.cases.size());
  for (const CaseResult& c : ctx.set.cases) records.push_back(to_json(c));
  return profiling_summary_md(records);
}

}  // namespace attn
