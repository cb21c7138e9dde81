// Table renderers (table.hpp).
#include "reports/table.hpp"

#include <algorithm>
#include <stdexcept>

#include "reports/csv_writer.hpp"
#include "reports/text_format.hpp"

namespace attn {

std::string markdown_cell(std::string_view s) {
  std::string out;
  for (const char c : one_line(s)) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

void Table::add_column(std::string header, Align align) { m_columns.push_back({std::move(header), align}); }

void Table::add_row(std::vector<std::string> cells) {
  if (cells.size() != m_columns.size())
    throw std::invalid_argument("table row of " + std::to_string(cells.size()) + " cells for " +
                                std::to_string(m_columns.size()) + " columns");
  m_rows.push_back(std::move(cells));
}

std::string Table::markdown() const {
  std::string out = "|";
  // Appended piece by piece: `" " + markdown_cell(...)` trips GCC 12's -Wrestrict false positive.
  for (const Column& c : m_columns) {
    out += ' ';
    out += markdown_cell(c.header);
    out += " |";
  }
  out += "\n|";
  for (const Column& c : m_columns) out += c.align == Align::right ? " ---: |" : " --- |";
  out += "\n";
  for (const auto& row : m_rows) {
    out += "|";
    for (const std::string& cell : row) {
      out += ' ';
      out += markdown_cell(cell);
      out += " |";
    }
    out += "\n";
  }
  return out;
}

std::string Table::csv() const {
  auto line = [](const auto& cells, auto text_of) {
    std::string s;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) s += ',';
      s += csv_field(text_of(cells[i]));
    }
    return s + "\n";
  };
  std::string out = line(m_columns, [](const Column& c) -> const std::string& { return c.header; });
  for (const auto& row : m_rows)
    out += line(row, [](const std::string& s) -> const std::string& { return s; });
  return out;
}

std::string Table::text() const {
  std::vector<std::size_t> width(m_columns.size());
  for (std::size_t i = 0; i < m_columns.size(); ++i) {
    width[i] = display_width(m_columns[i].header);
    for (const auto& row : m_rows) width[i] = std::max(width[i], display_width(row[i]));
  }
  auto line = [&](auto cell_of) {
    std::string s;
    for (std::size_t i = 0; i < m_columns.size(); ++i) {
      const std::string cell = cell_of(i);
      const std::string pad(width[i] - display_width(cell), ' ');
      if (i > 0) s += "  ";
      s += m_columns[i].align == Align::right ? pad + cell : cell + pad;
    }
    s.erase(s.find_last_not_of(' ') + 1);
    return s + "\n";
  };
  std::string out = line([&](std::size_t i) { return m_columns[i].header; });
  out += line([&](std::size_t i) { return std::string(width[i], '-'); });
  for (const auto& row : m_rows) out += line([&](std::size_t i) { return row[i]; });
  return out;
}

nlohmann::json Table::json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& row : m_rows) {
    nlohmann::json obj = nlohmann::json::object();
    for (std::size_t i = 0; i < m_columns.size(); ++i) obj[m_columns[i].header] = row[i];
    out.push_back(std::move(obj));
  }
  return out;
}

}  // namespace attn
