// results.csv writer: the field catalogue's csv columns in catalogue order, RFC 4180 quoting,
// exact doubles; an absent field is an empty cell.
#include "reports/csv_writer.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <variant>

#include "profiling/field_catalogue.hpp"
#include "reports/jsonl_store.hpp"

namespace attn {

namespace {

// fmt's "{}" prints the shortest decimal text that parses back to the same double.
std::string cell_text(const FieldValue& v) {
  if (const auto* d = std::get_if<double>(&v)) return fmt::format("{}", *d);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* s = std::get_if<std::string>(&v)) return csv_field(*s);
  return {};
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

std::string results_csv_header() {
  std::string out;
  for (const FieldDesc& f : case_fields())
    if (f.csv) {
      if (!out.empty()) out += ',';
      out += f.name;
    }
  return out;
}

std::string results_csv(const std::vector<CaseResult>& cases) {
  std::string out = results_csv_header() + "\n";
  for (const CaseResult& c : cases) {
    std::string row;
    bool first = true;
    for (const FieldDesc& f : case_fields()) {
      if (!f.csv) continue;
      if (!first) row += ',';
      first = false;
      row += cell_text(f.get(c));
    }
    out += row + "\n";
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
