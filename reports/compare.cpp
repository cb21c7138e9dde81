// compare_results(): pairing, standard errors, the verdict rule, and the three output forms.
#include "reports/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "reports/case_query.hpp"
#include "reports/csv_writer.hpp"
#include "reports/text_format.hpp"

namespace attn {

namespace {

bool failed_status(Status s) { return s != Status::ok && s != Status::skipped; }

std::optional<double> ok_median(const CaseResult& c) { return measured_median_ms(c); }

Verdict decide(const CompareRow& r, const CompareOptions& o) {
  if (r.ratio) {
    const double ratio = *r.ratio;
    const double up = 1.0 + o.threshold;
    if (ratio <= up && ratio >= 1.0 / up) return Verdict::same;
    const double diff = std::fabs(*r.new_ms - *r.base_ms);
    const double se = std::hypot(r.base_se_ms.value_or(0.0), r.new_se_ms.value_or(0.0));
    if (!(diff > o.sigma * se)) return Verdict::ambiguous;
    return ratio > up ? Verdict::slower : Verdict::faster;
  }
  if (r.base_status == Status::ok && failed_status(r.new_status)) return Verdict::failed;
  if (r.base_status == Status::ok && r.new_status == Status::skipped) return Verdict::missing;
  if (failed_status(r.base_status) && r.new_status == Status::ok) return Verdict::fixed;
  return Verdict::not_compared;
}

std::string opt_num(const std::optional<double>& v, const char* spec = "{:.6g}") {
  return v ? fmt::format(fmt::runtime(spec), *v) : std::string();
}

std::string md_cell(std::string_view s) {
  std::string out;
  for (const char c : one_line(s)) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string change_pct(const CompareRow& r) {
  return r.ratio ? fmt::format("{:+.1f}%", (*r.ratio - 1.0) * 100.0) : std::string("-");
}

nlohmann::json opt_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

}  // namespace

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::slower:
      return "slower";
    case Verdict::failed:
      return "failed";
    case Verdict::missing:
      return "missing";
    case Verdict::ambiguous:
      return "ambiguous";
    case Verdict::faster:
      return "faster";
    case Verdict::same:
      return "same";
    case Verdict::fixed:
      return "fixed";
    case Verdict::not_compared:
      return "not_compared";
  }
  return "?";
}

bool CompareReport::regressed() const {
  return count(Verdict::slower) + count(Verdict::failed) + (options.allow_missing ? 0 : missing()) > 0;
}

std::string CompareReport::regression_counts() const {
  std::string out;
  auto part = [&](std::size_t n, const char* what) {
    if (n > 0) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", n, what);
  };
  part(count(Verdict::slower), "slower");
  part(count(Verdict::failed), "failed");
  if (!options.allow_missing) part(missing(), "missing from NEW");
  return out.empty() ? std::string("none") : out;
}

std::size_t CompareReport::cross_device() const {
  return static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), [](const CompareRow& r) {
    return !r.base_device.empty() && !r.new_device.empty() && r.base_device != r.new_device;
  }));
}

std::size_t CompareReport::count(Verdict v) const {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [&](const CompareRow& r) { return r.verdict == v; }));
}

std::optional<double> median_standard_error(const TimingStats& t) {
  if (t.noise_pct > 0 && std::isfinite(t.noise_pct) && t.median_ms > 0)
    return t.median_ms * t.noise_pct / 100.0;
  const double n = static_cast<double>(t.samples);
  if (t.samples >= 8 && t.q3_ms > t.q1_ms) return 1.2533 * (t.q3_ms - t.q1_ms) / 1.349 / std::sqrt(n);
  if (t.samples >= 2 && t.std_ms > 0) return 1.2533 * t.std_ms / std::sqrt(n);
  return std::nullopt;
}

CompareReport compare_results(const std::vector<CaseResult>& base, const std::vector<CaseResult>& now,
                              const CompareOptions& options) {
  CompareReport rep;
  rep.options = options;
  std::unordered_map<std::string, const CaseResult*> base_by_id, new_by_id;
  for (const CaseResult& c : base) base_by_id.emplace(c.case_id, &c);
  for (const CaseResult& c : now) new_by_id.emplace(c.case_id, &c);

  for (const CaseResult& n : now) {
    const auto it = base_by_id.find(n.case_id);
    if (it == base_by_id.end()) {
      rep.only_new.push_back({n.case_id, variant_label(n), config_label(n.problem, n.knobs), n.status});
      continue;
    }
    const CaseResult& b = *it->second;
    CompareRow r;
    r.case_id = n.case_id;
    r.kernel = variant_label(n);
    r.config = config_label(n.problem, n.knobs);
    r.base_status = b.status;
    r.base_device = b.place ? b.place->device_name : std::string();
    r.new_device = n.place ? n.place->device_name : std::string();
    r.new_status = n.status;
    r.base_ms = ok_median(b);
    r.new_ms = ok_median(n);
    if (r.base_ms) r.base_se_ms = median_standard_error(*b.timing);
    if (r.new_ms) r.new_se_ms = median_standard_error(*n.timing);
    if (r.base_ms && r.new_ms) {
      r.ratio = *r.new_ms / *r.base_ms;
      const double se = std::hypot(r.base_se_ms.value_or(0.0), r.new_se_ms.value_or(0.0));
      if (se > 0) r.z = (*r.new_ms - *r.base_ms) / se;
    }
    r.verdict = decide(r, options);
    rep.rows.push_back(std::move(r));
  }
  for (const CaseResult& b : base)
    if (!new_by_id.contains(b.case_id))
      rep.only_base.push_back({b.case_id, variant_label(b), config_label(b.problem, b.knobs), b.status});

  std::stable_sort(rep.rows.begin(), rep.rows.end(), [](const CompareRow& x, const CompareRow& y) {
    if (x.verdict != y.verdict) return static_cast<int>(x.verdict) < static_cast<int>(y.verdict);
    if (x.ratio && y.ratio && *x.ratio != *y.ratio) {
      // The biggest change first: slowdowns by descending ratio, speedups by ascending ratio.
      return x.verdict == Verdict::faster ? *x.ratio < *y.ratio : *x.ratio > *y.ratio;
    }
    return false;
  });
  return rep;
}

std::optional<double> parse_threshold(std::string_view text) {
  std::string_view s = text;
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  if (!s.empty() && s.back() == '%') s.remove_suffix(1);
  if (s.empty()) return std::nullopt;
  double v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v) || v <= 0 || v >= 1000)
    return std::nullopt;
  return v / 100.0;
}

std::string compare_markdown(const CompareReport& r) {
  std::string out = fmt::format("# attnscope compare\n\nBASE: {}  \nNEW: {}\n\n", r.base_label, r.new_label);
  out += fmt::format(
      "Rule: ratio = NEW median / BASE median; a change counts when the ratio leaves [1/{0:.4g}, {0:.4g}] "
      "(threshold {1:.4g}%) and |NEW - BASE| > {2:.4g} x the combined standard error of the two medians; "
      "beyond the threshold but within the noise is ambiguous.\n\n",
      1.0 + r.options.threshold, r.options.threshold * 100.0, r.options.sigma);
  std::string counts;
  for (const Verdict v : {Verdict::slower, Verdict::failed, Verdict::missing, Verdict::ambiguous,
                          Verdict::faster, Verdict::same, Verdict::fixed, Verdict::not_compared}) {
    if (const std::size_t n = r.count(v); n > 0)
      counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, to_string(v));
  }
  out += fmt::format("{} paired cases: {}; {} only in BASE, {} only in NEW.\n\n", r.rows.size(),
                     counts.empty() ? std::string("none") : counts, r.only_base.size(), r.only_new.size());
  if (const std::size_t x = r.cross_device(); x > 0) {
    const auto it = std::find_if(r.rows.begin(), r.rows.end(), [](const CompareRow& row) {
      return !row.base_device.empty() && !row.new_device.empty() && row.base_device != row.new_device;
    });
    out += fmt::format(
        "**Different devices:** {} of {} paired cases ran on another kind of device in NEW than in BASE "
        "(e.g. {} on {} vs {}); their change measures the devices as much as the code.\n\n",
        x, r.rows.size(), it->kernel, it->base_device, it->new_device);
  }
  if (r.regressed()) {
    out += fmt::format("**REGRESSION: {}**\n\n", r.regression_counts());
  } else if (r.missing() > 0) {
    out += fmt::format(
        "**No regression beyond the threshold and the noise** ({} BASE cases not measured in NEW, allowed "
        "by --allow-missing)\n\n",
        r.missing());
  } else {
    out += "**No regression beyond the threshold and the noise**\n\n";
  }
  if (!r.rows.empty()) {
    out +=
        "| verdict | kernel | config | BASE median | NEW median | change | z | BASE status | NEW status |\n";
    out += "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- |\n";
    for (const CompareRow& row : r.rows) {
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", to_string(row.verdict),
                         md_cell(row.kernel), md_cell(row.config),
                         row.base_ms ? format_duration_ms(*row.base_ms) : "-",
                         row.new_ms ? format_duration_ms(*row.new_ms) : "-", change_pct(row),
                         row.z ? fmt::format("{:+.1f}", *row.z) : "-", to_string(row.base_status),
                         to_string(row.new_status));
    }
    out += "\n";
  }
  auto one_sided = [&](const char* title, const std::vector<OneSided>& v) {
    if (v.empty()) return;
    out += fmt::format("## {}\n\n| kernel | config | status | case_id |\n| --- | --- | --- | --- |\n", title);
    for (const OneSided& c : v)
      out += fmt::format("| {} | {} | {} | {} |\n", md_cell(c.kernel), md_cell(c.config), to_string(c.status),
                         c.case_id);
    out += "\n";
  };
  one_sided("Only in BASE", r.only_base);
  one_sided("Only in NEW", r.only_new);
  return out;
}

std::string compare_csv(const CompareReport& r) {
  std::string out =
      "verdict,case_id,kernel,config,base_status,new_status,base_ms,new_ms,base_se_ms,new_se_ms,ratio,change_"
      "pct,"
      "z,base_device,new_device\n";
  for (const CompareRow& row : r.rows) {
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", to_string(row.verdict), csv_field(row.case_id),
        csv_field(row.kernel), csv_field(row.config), to_string(row.base_status), to_string(row.new_status),
        opt_num(row.base_ms), opt_num(row.new_ms), opt_num(row.base_se_ms), opt_num(row.new_se_ms),
        opt_num(row.ratio), row.ratio ? fmt::format("{:.3f}", (*row.ratio - 1.0) * 100.0) : std::string(),
        opt_num(row.z, "{:.3f}"), csv_field(row.base_device), csv_field(row.new_device));
  }
  for (const auto& [verdict, list] :
       {std::pair{"only_base", &r.only_base}, std::pair{"only_new", &r.only_new}}) {
    for (const OneSided& c : *list) {
      const std::string status(to_string(c.status));
      out += fmt::format("{},{},{},{},{},{},,,,,,,,,\n", verdict, csv_field(c.case_id), csv_field(c.kernel),
                         csv_field(c.config), verdict == std::string_view("only_base") ? status : "",
                         verdict == std::string_view("only_new") ? status : "");
    }
  }
  return out;
}

std::string compare_json(const CompareReport& r) {
  using nlohmann::json;
  json rows = json::array();
  for (const CompareRow& row : r.rows) {
    rows.push_back({{"verdict", std::string(to_string(row.verdict))},
                    {"case_id", row.case_id},
                    {"kernel", row.kernel},
                    {"config", row.config},
                    {"base_status", std::string(to_string(row.base_status))},
                    {"new_status", std::string(to_string(row.new_status))},
                    {"base_ms", opt_json(row.base_ms)},
                    {"new_ms", opt_json(row.new_ms)},
                    {"base_se_ms", opt_json(row.base_se_ms)},
                    {"new_se_ms", opt_json(row.new_se_ms)},
                    {"ratio", opt_json(row.ratio)},
                    {"z", opt_json(row.z)},
                    {"base_device", row.base_device},
                    {"new_device", row.new_device}});
  }
  auto one_sided = [](const std::vector<OneSided>& v) {
    json a = json::array();
    for (const OneSided& c : v)
      a.push_back({{"case_id", c.case_id},
                   {"kernel", c.kernel},
                   {"config", c.config},
                   {"status", std::string(to_string(c.status))}});
    return a;
  };
  json counts = json::object();
  for (const Verdict v : {Verdict::slower, Verdict::failed, Verdict::missing, Verdict::ambiguous,
                          Verdict::faster, Verdict::same, Verdict::fixed, Verdict::not_compared})
    counts[std::string(to_string(v))] = r.count(v);
  const json j = {{"schema", "attnscope.compare.v1"},
                  {"base", r.base_label},
                  {"new", r.new_label},
                  {"threshold", r.options.threshold},
                  {"sigma", r.options.sigma},
                  {"regressed", r.regressed()},
                  {"missing", r.missing()},
                  {"cross_device", r.cross_device()},
                  {"allow_missing", r.options.allow_missing},
                  {"counts", counts},
                  {"rows", rows},
                  {"only_base", one_sided(r.only_base)},
                  {"only_new", one_sided(r.only_new)}};
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace attn
