#pragma once
// The report tables' bodies (pass/report_tables.hpp declares them): inline in the header-only
// mode, compiled once in mase::mase (src/passes.cpp) otherwise.

#include <mase/pass/report_tables.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/pass/report_tables.hpp> instead"
#endif

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

MASE_COMPILED_INLINE void write_graph_report(std::ostream& os, const graph& g) { write_graph_report(os, g, node_text{}); }

MASE_COMPILED_INLINE void write_graph_report(std::ostream& os, const graph& g, const node_text& respell) {
  detail::text_table nodes({"name", "kind", "op", "inputs", "attributes"});
  std::vector<std::size_t> per_kind(node_kind_names.size(), 0);
  std::vector<std::pair<std::string_view, std::size_t>> per_op;
  for (node_id id : g.order()) {
    const node& n = g[id];
    nodes.add_row({n.name, std::string(to_string(n.kind())), std::string(n.op_name()), detail::join_names(g, n),
                   respell ? respell(n, "attributes", attributes_to_string(n.op)) : attributes_to_string(n.op)});
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

MASE_COMPILED_INLINE void write_node_type_report(std::ostream& os, const graph& g) {
  detail::text_table table({"Node name", "Mase type", "Mase op", "data_in_0 type"});
  for (node_id id : g.order()) {
    const node& n = g[id];
    const auto data_in = n.meta.common.args.find("data_in_0");
    table.add_row({n.name, std::string(detail::mase_type_of(n)), detail::mase_op_of(n),
                   data_in == n.meta.common.args.end() ? "-" : detail::arg_type(data_in->second)});
  }
  table.write(os);
}

MASE_COMPILED_INLINE void write_node_shape_report(std::ostream& os, const graph& g) {
  write_node_shape_report(os, g, node_text{});
}

MASE_COMPILED_INLINE void write_node_shape_report(std::ostream& os, const graph& g, const node_text& respell) {
  detail::text_table table({"Node name", "Input shapes", "Result shapes"});
  for (node_id id : g.order()) {
    const node& n = g[id];
    const auto text = [&](std::string_view slot, const shape& s) {
      return respell ? respell(n, slot, to_string(s)) : to_string(s);
    };
    std::string inputs;
    for (const auto& [name, arg] : n.meta.common.args)
      if (const tensor_meta* t = std::get_if<tensor_meta>(&arg); t != nullptr && name.starts_with("data_in_"))
        inputs += fmt::format("{}{}: {}", inputs.empty() ? "" : ", ", name, text(name, t->shape));
    std::string results;
    for (const auto& [name, result] : n.meta.common.results)
      results += fmt::format("{}{}: {}", results.empty() ? "" : ", ", name, text(name, result.shape));
    table.add_row({n.name, inputs.empty() ? "-" : inputs, results.empty() ? "-" : results});
  }
  table.write(os);
}

MASE_COMPILED_INLINE void write_node_hardware_report(std::ostream& os, const graph& g) {
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

MASE_COMPILED_INLINE void write_metadata_report(std::ostream& os, const graph& g, metadata_sections sections) {
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
