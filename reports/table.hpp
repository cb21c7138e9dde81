// One table type for every tabular output (report sections, the terminal summary): columns with
// a header and an alignment, rows of text cells, rendered to Markdown, CSV, aligned text or JSON.
// Cells hold plain text; each renderer does its own escaping.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace attn {

enum class Align { left, right };

class Table {
 public:
  struct Column {
    std::string header;
    Align align = Align::left;
  };

  Table() = default;
  explicit Table(std::vector<Column> columns) : m_columns(std::move(columns)) {}

  void add_column(std::string header, Align align = Align::left);
  // A row of exactly columns().size() cells; throws std::invalid_argument otherwise.
  void add_row(std::vector<std::string> cells);

  const std::vector<Column>& columns() const { return m_columns; }
  const std::vector<std::vector<std::string>>& rows() const { return m_rows; }
  bool empty() const { return m_rows.empty(); }

  // GitHub Markdown: "| a | b |", then "| --- | ---: |" (right-aligned columns end in ':'), one
  // line per row; in cells, tabs and line breaks become spaces and '|' is escaped.
  std::string markdown() const;
  // RFC 4180: the header line, then one line per row.
  std::string csv() const;
  // For a terminal: columns padded to their widest cell (UTF-8 aware) and separated by two spaces,
  // a line of dashes under the header, trailing spaces trimmed.
  std::string text() const;
  // An array with one object per row, keyed by the column headers.
  nlohmann::json json() const;

 private:
  std::vector<Column> m_columns;
  std::vector<std::vector<std::string>> m_rows;
};

// A Markdown table cell: one line, '|' escaped.
std::string markdown_cell(std::string_view s);

}  // namespace attn
