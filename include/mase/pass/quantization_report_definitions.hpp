#pragma once
// The quantization reports' bodies (pass/quantization_report.hpp declares them): inline in the
// header-only mode, compiled once in mase::mase (src/passes.cpp) otherwise.

#include <mase/core/temp_file.hpp>
#include <mase/pass/quantization_report.hpp>
#include <mase/pass/report_tables_definitions.hpp>  // detail::mase_op_of
#include <mase/quant/quantize.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/pass/quantization_report.hpp> instead"
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <limits>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace mase {

MASE_COMPILED_INLINE node_formats formats_of(const node& n) {
  node_formats f{.name = n.name, .mase_type = n.kind(), .mase_op = detail::mase_op_of(n), .entries = {}};
  for (const auto& [name, arg] : n.meta.common.args)
    if (const tensor_meta* t = std::get_if<tensor_meta>(&arg)) f.entries.emplace_back(name, t->precision);
  for (const auto& [name, result] : n.meta.common.results) f.entries.emplace_back(name, result.precision);
  return f;
}

MASE_COMPILED_INLINE std::vector<node_formats> formats_of(const graph& g) {
  std::vector<node_formats> out;
  out.reserve(g.size());
  for (node_id id : g.order()) out.push_back(formats_of(g[id]));
  return out;
}

MASE_COMPILED_INLINE std::string quantization_type(const node_formats& n) {
  if (n.entries.empty()) return "-";
  const bool uniform = std::all_of(n.entries.begin(), n.entries.end(),
                                   [&](const auto& e) { return e.second == n.entries.front().second; });
  if (uniform) return to_string(n.entries.front().second);
  std::string text;
  for (const auto& [name, f] : n.entries) text += fmt::format("{}{}={}", text.empty() ? "" : " ", name, to_string(f));
  return text;
}

MASE_COMPILED_INLINE quantization_summary summarize_quantization(const std::vector<node_formats>& original, const graph& quantized) {
  std::unordered_map<std::string_view, const node_formats*> before;
  for (const node_formats& n : original) before.emplace(n.name, &n);
  quantization_summary s;
  for (node_id id : quantized.order()) {
    const node_formats now = formats_of(quantized[id]);
    const auto it = before.find(now.name);
    if (it == before.end())
      throw error(fmt::format("summarize_quantization: node {} of the quantized graph is not in the original graph; "
                              "pass the graph that quantize ran on as the original",
                              now.name));
    const node_formats& was = *it->second;
    const bool changed = was.entries != now.entries;
    s.rows.push_back({.name = now.name,
                      .mase_type = now.mase_type,
                      .mase_op = now.mase_op,
                      .original_type = quantization_type(was),
                      .quantized_type = quantization_type(now),
                      .changed = changed});
    auto h =
        std::find_if(s.histogram.begin(), s.histogram.end(), [&](const auto& e) { return e.mase_op == now.mase_op; });
    if (h == s.histogram.end()) {
      s.histogram.push_back(quantization_histogram_row{.mase_op = now.mase_op});
      h = s.histogram.end() - 1;
    }
    ++h->total;
    ++(changed ? h->changed : h->unchanged);
  }
  return s;
}

MASE_COMPILED_INLINE quantization_summary summarize_quantization(const graph& original, const graph& quantized) {
  return summarize_quantization(formats_of(original), quantized);
}

MASE_COMPILED_INLINE void quantization_summary::write(std::ostream& os) const {
  detail::text_table table({"Node name", "MASE type", "MASE op", "Original type", "Quantized type", "Changed"});
  for (const quantization_row& r : rows)
    table.add_row({r.name, std::string(to_string(r.mase_type)), r.mase_op, r.original_type, r.quantized_type,
                   std::string(detail::python_bool(r.changed))});
  os << fmt::format("Quantized graph: {} node{}, {} changed\n", rows.size(), rows.size() == 1 ? "" : "s",
                    changed_count());
  table.write(os);
  detail::text_table ops({"MASE op", "Total", "Changed", "Unchanged"});
  for (const quantization_histogram_row& h : histogram)
    ops.add_row(
        {h.mase_op, fmt::format("{}", h.total), fmt::format("{}", h.changed), fmt::format("{}", h.unchanged)});
  os << "\nNodes per op\n";
  ops.write(os);
}

MASE_COMPILED_INLINE std::string quantization_summary::table_csv() const {
  std::string csv = ",Ori name,New name,MASE_TYPE,Mase_OP,Original type,Quantized type,Changed\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const quantization_row& r = rows[i];
    csv += fmt::format("{},{},{},{},{},{},{},{}\n", i, detail::csv_field(r.name), detail::csv_field(r.name),
                       to_string(r.mase_type), detail::csv_field(r.mase_op), detail::csv_field(r.original_type),
                       detail::csv_field(r.quantized_type), detail::python_bool(r.changed));
  }
  return csv;
}

MASE_COMPILED_INLINE std::string quantization_summary::histogram_csv() const {
  std::string csv = "OP,Total,Changed,Unchanged\n";
  for (const quantization_histogram_row& h : histogram)
    csv += fmt::format("{},{},{},{}\n", detail::csv_field(h.mase_op), h.total, h.changed, h.unchanged);
  return csv;
}

MASE_COMPILED_INLINE void quantization_summary::write_csv(const std::filesystem::path& save_dir) const {
  std::error_code ec;
  std::filesystem::create_directories(save_dir, ec);
  if (ec)
    throw error(fmt::format("summarize_quantization: cannot create folder {}: {}", save_dir.string(), ec.message()));
  write_file_atomically(save_dir / "quantize_table.csv", table_csv());
  write_file_atomically(save_dir / "quantize_histogram.csv", histogram_csv());
}

MASE_COMPILED_INLINE avg_bits calculate_avg_bits_pass::run(const graph& g) const {
  double data_bits = 0, weight_bits = 0;
  avg_bits out;
  for (node_id id : g.order()) {
    const node& n = g[id];
    const std::string& op = n.meta.common.mase_op;
    if (op != "linear" && op != "conv1d" && op != "conv2d") continue;
    const auto tensor_entry = [&](std::string_view entry) -> const tensor_meta& {
      const auto it = n.meta.common.args.find(entry);
      const tensor_meta* t = it == n.meta.common.args.end() ? nullptr : std::get_if<tensor_meta>(&it->second);
      if (t == nullptr)
        throw error(fmt::format("calculate_avg_bits: node {} ({}) has no tensor entry {} in its common metadata; run "
                                "add_common_metadata first",
                                n.name, op, entry));
      return *t;
    };
    const tensor_meta& x = tensor_entry("data_in_0");
    const tensor_meta& w = tensor_entry("weight");
    data_bits += bits_per_value(x.precision) * static_cast<double>(x.shape.numel());
    weight_bits += bits_per_value(w.precision) * static_cast<double>(w.shape.numel());
    out.data_values += x.shape.numel();
    out.weight_values += w.shape.numel();
  }
  if (out.data_values > 0) out.data_avg_bit = data_bits / static_cast<double>(out.data_values);
  if (out.weight_values > 0) out.w_avg_bit = weight_bits / static_cast<double>(out.weight_values);
  return out;
}

}  // namespace mase
