#pragma once
// MASE's report passes as plain functions writing text tables to a stream
// (report_graph, report_node_type, report_node_shape, report_node_hardware_type,
// report_node_meta_param; ../shared/spec/mase-reference.md §2.1).
//
// Every table has the same layout: a header row, a line of dashes under each column, then one
// row per line; columns are as wide as their widest cell and separated by two spaces, and no
// line ends in spaces. Cells that span several lines (the metadata report) get a dashed line
// between rows so that rows stay apart.
//
// The reports read metadata but never require it: before add_common_metadata has run (an empty
// mase_op) a node's type and op come from its op, and entries nobody recorded print as "-".

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

#include <fmt/format.h>

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

// What add_common_metadata records, or what the op says when it has not run.
inline std::string mase_op_of(const node& n) {
  return n.meta.common.mase_op.empty() ? std::string(n.op_name()) : n.meta.common.mase_op;
}
inline std::string_view mase_type_of(const node& n) {
  return to_string(n.meta.common.mase_op.empty() ? n.kind() : n.meta.common.mase_type);
}

inline std::string arg_type(const arg_meta& a) {
  if (const tensor_meta* t = std::get_if<tensor_meta>(&a)) return t->type();
  return std::string(python_type_name(std::get<config_value>(a)));
}

inline std::string join_names(const graph& g, const node& n) {
  std::string text;
  for (node_id in : n.inputs) text += fmt::format("{}{}", text.empty() ? "" : ", ", g[in].name);
  return text;
}

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
inline void write_graph_report(std::ostream& os, const graph& g) {
  detail::text_table nodes({"name", "kind", "op", "inputs", "attributes"});
  std::vector<std::size_t> per_kind(node_kind_names.size(), 0);
  std::vector<std::pair<std::string_view, std::size_t>> per_op;
  for (node_id id : g.order()) {
    const node& n = g[id];
    nodes.add_row({n.name, std::string(to_string(n.kind())), std::string(n.op_name()), detail::join_names(g, n),
                   attributes_to_string(n.op)});
    ++per_kind[static_cast<std::size_t>(n.kind())];
    const auto op = std::find_if(per_op.begin(), per_op.end(), [&](const auto& e) { return e.first == n.op_name(); });
    if (op == per_op.end()) per_op.emplace_back(n.op_name(), 1);
    else ++op->second;
  }
  os << fmt::format("Graph: {} node{}\n", g.size(), g.size() == 1 ? "" : "s");
  nodes.write(os);

  detail::text_table kinds({"kind", "count"});
  for (std::size_t k = 0; k < per_kind.size(); ++k)
    if (per_kind[k] > 0) kinds.add_row({std::string(node_kind_names[k]), fmt::format("{}", per_kind[k])});
  os << "\nNodes per kind\n";
  kinds.write(os);

  detail::text_table ops({"op", "count"});
  for (const auto& [op, count] : per_op) ops.add_row({std::string(op), fmt::format("{}", count)});
  os << "\nNodes per op\n";
  ops.write(os);
}

// Node name / Mase type / Mase op / data_in_0 type.
inline void write_node_type_report(std::ostream& os, const graph& g) {
  detail::text_table table({"Node name", "Mase type", "Mase op", "data_in_0 type"});
  for (node_id id : g.order()) {
    const node& n = g[id];
    const auto data_in = n.meta.common.args.find("data_in_0");
    table.add_row({n.name, std::string(detail::mase_type_of(n)), detail::mase_op_of(n),
                   data_in == n.meta.common.args.end() ? "-" : detail::arg_type(data_in->second)});
  }
  table.write(os);
}

// Each node's data_in_* shapes and result shapes.
inline void write_node_shape_report(std::ostream& os, const graph& g) {
  detail::text_table table({"Node name", "Input shapes", "Result shapes"});
  for (node_id id : g.order()) {
    const node& n = g[id];
    std::string inputs;
    for (const auto& [name, arg] : n.meta.common.args)
      if (const tensor_meta* t = std::get_if<tensor_meta>(&arg); t != nullptr && name.starts_with("data_in_"))
        inputs += fmt::format("{}{}: {}", inputs.empty() ? "" : ", ", name, to_string(t->shape));
    std::string results;
    for (const auto& [name, result] : n.meta.common.results)
      results += fmt::format("{}{}: {}", results.empty() ? "" : ", ", name, to_string(result.shape));
    table.add_row({n.name, inputs.empty() ? "-" : inputs, results.empty() ? "-" : results});
  }
  table.write(os);
}

// The nodes that become hardware (not implicit): name, op, data_out_0 type, toolchain, device.
inline void write_node_hardware_report(std::ostream& os, const graph& g) {
  detail::text_table table({"Node name", "Mase op", "data_out_0 type", "Toolchain", "Device id"});
  for (node_id id : g.order()) {
    const node& n = g[id];
    if (n.meta.hardware.is_implicit) continue;
    const auto out = n.meta.common.results.find("data_out_0");
    table.add_row({n.name, detail::mase_op_of(n), out == n.meta.common.results.end() ? "-" : out->second.type(),
                   std::string(to_string(n.meta.hardware.toolchain)), fmt::format("{}", n.meta.hardware.device_id)});
  }
  table.write(os);
}

// One row per node with the chosen sections printed in full (MASE's report_node_meta_param).
inline void write_metadata_report(std::ostream& os, const graph& g, metadata_sections sections = metadata_sections::all) {
  const bool common = includes(sections, metadata_sections::common);
  const bool software = includes(sections, metadata_sections::software);
  const bool hardware = includes(sections, metadata_sections::hardware);
  require(common || software || hardware,
          "write_metadata_report: no section chosen; pass metadata_sections::common, ::software, ::hardware, a "
          "combination with |, or ::all");
  std::vector<std::string> header{"Node name"};
  if (common) header.emplace_back("Common");
  if (software) header.emplace_back("Software");
  if (hardware) header.emplace_back("Hardware");
  detail::text_table table(std::move(header));
  for (node_id id : g.order()) {
    const node& n = g[id];
    std::vector<std::string> row{n.name};
    if (common) row.push_back(to_string(n.meta.common));
    if (software) row.push_back(to_string(n.meta.software));
    if (hardware) row.push_back(to_string(n.meta.hardware));
    table.add_row(std::move(row));
  }
  table.write(os);
}

}  // namespace mase
