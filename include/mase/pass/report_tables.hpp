#pragma once
// MASE's report passes as plain functions writing text tables to a stream
// (report_graph, report_node_type, report_node_shape, report_node_hardware_type,
// report_node_meta_param; DeepWok/mase at ae4660b1: report_graph.py and report_node.py in
// src/chop/passes/graph/analysis/report/).
//
// Every table has the same layout: a header row, a line of dashes under each column, then one
// row per line; columns are as wide as their widest cell and separated by two spaces, and no
// line ends in spaces. Cells that span several lines (the metadata report) get a dashed line
// between rows so that rows stay apart.
//
// The reports read metadata but never require it: before add_common_metadata has run (an empty
// mase_op) a node's type and op come from its op, and entries nobody recorded print as "-".

#include <mase/core/compiled.hpp>
#include <mase/core/error.hpp>
#include <mase/ir/graph.hpp>
#include <mase/ir/metadata.hpp>
#include <mase/ir/print.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace mase {

namespace detail {

// Columns on screen: UTF-8 continuation bytes take no column ("…" is one).
inline std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

inline std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return lines;
    start = end + 1;
  }
}

class text_table {
public:
  explicit text_table(std::vector<std::string> header) : header_(std::move(header)) {}

  void add_row(std::vector<std::string> cells) {
    require(cells.size() == header_.size(), "text_table: a row has {} cells but the table has {} columns",
                                                        cells.size(), header_.size());
    rows_.push_back(std::move(cells));
  }

  void write(std::ostream& os) const {
    std::vector<std::size_t> widths(header_.size(), 0);
    bool multi_line = false;
    auto measure = [&](const std::vector<std::string>& row) {
      for (std::size_t c = 0; c < row.size(); ++c)
        for (std::string_view line : split_lines(row[c])) {
          widths[c] = std::max(widths[c], display_width(line));
          multi_line = multi_line || row[c].find('\n') != std::string::npos;
        }
    };
    measure(header_);
    for (const auto& row : rows_) measure(row);

    std::string separator;
    for (std::size_t c = 0; c < widths.size(); ++c) {
      if (c > 0) separator += "  ";
      separator.append(widths[c], '-');
    }
    separator += '\n';

    write_row(os, header_, widths);
    os << separator;
    for (std::size_t r = 0; r < rows_.size(); ++r) {
      if (multi_line && r > 0) os << separator;
      write_row(os, rows_[r], widths);
    }
  }

private:
  static void write_row(std::ostream& os, const std::vector<std::string>& row, const std::vector<std::size_t>& widths) {
    std::vector<std::vector<std::string_view>> cells;
    std::size_t height = 1;
    for (const std::string& cell : row) {
      cells.push_back(split_lines(cell));
      height = std::max(height, cells.back().size());
    }
    for (std::size_t l = 0; l < height; ++l) {
      std::string line;
      for (std::size_t c = 0; c < cells.size(); ++c) {
        const std::string_view text = l < cells[c].size() ? cells[c][l] : std::string_view();
        if (c > 0) line += "  ";
        line += text;
        line.append(widths[c] - display_width(text), ' ');
      }
      line.erase(line.find_last_not_of(' ') + 1);
      os << line << '\n';
    }
  }

  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace detail

// Which metadata sections write_metadata_report shows; combine with |.
enum class metadata_sections : std::uint8_t { common = 1, software = 2, hardware = 4, all = 7 };

constexpr metadata_sections operator|(metadata_sections a, metadata_sections b) noexcept {
  return static_cast<metadata_sections>(static_cast<std::uint8_t>(a) | static_cast<std::uint8_t>(b));
}
constexpr bool includes(metadata_sections set, metadata_sections section) noexcept {
  return (static_cast<std::uint8_t>(set) & static_cast<std::uint8_t>(section)) == static_cast<std::uint8_t>(section);
}

// Every node with its kind, op, inputs and attributes; then how many nodes there are of each kind
// and of each op (kinds in MASE's order, ops in order of first appearance).
MASE_COMPILED_INLINE void write_graph_report(std::ostream& os, const graph& g);
// The same, `respell` changing each node's attributes text (node_text).
MASE_COMPILED_INLINE void write_graph_report(std::ostream& os, const graph& g, const node_text& respell);

// Node name / Mase type / Mase op / data_in_0 type.
MASE_COMPILED_INLINE void write_node_type_report(std::ostream& os, const graph& g);

// Each node's data_in_* shapes and result shapes; `respell` may change each shape's text.
MASE_COMPILED_INLINE void write_node_shape_report(std::ostream& os, const graph& g);
MASE_COMPILED_INLINE void write_node_shape_report(std::ostream& os, const graph& g, const node_text& respell);

// The nodes that become hardware (not implicit): name, op, data_out_0 type, toolchain, device.
MASE_COMPILED_INLINE void write_node_hardware_report(std::ostream& os, const graph& g);

// One row per node with the chosen sections printed in full (MASE's report_node_meta_param).
MASE_COMPILED_INLINE void write_metadata_report(std::ostream& os, const graph& g,
                                           metadata_sections sections = metadata_sections::all);

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/pass/report_tables_definitions.hpp>
#endif
