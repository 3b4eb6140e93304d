#pragma once
// What quantization did to a graph:
//
// - summarize_quantization: MASE's summarize_quantization_analysis_pass
//   (DeepWok/mase at ae4660b1: src/chop/passes/graph/transforms/quantize/summary.py). A table with one row per node (name, mase_type,
//   mase_op, original type, quantized type, changed) and a histogram per mase_op (total, changed,
//   unchanged). mase does not swap modules as MASE does, so a node's "type" is its number formats:
//   "float32" when every tensor entry holds the same format, else each entry with its format
//   ("data_in_0=fixed<8,3> weight=fixed<8,3> data_out_0=fixed<20,6>"). Changed = some entry's
//   format differs. The histogram lists ops in order of first appearance.
//     quantized | summarize_quantization(original)                  // to std::cout
//     quantized | summarize_quantization(original).to(stream)
//     quantized | summarize_quantization(original).to_csv("dir")    // quantize_table.csv, quantize_histogram.csv
//     summarize_quantization(original, quantized).text()           // as a value
// - calculate_avg_bits: MASE's calculate_avg_bits_mg_analysis_pass (§2.1): over linear, conv1d and
//   conv2d nodes, the average bits per value of data_in_0 and of the weight, weighted by element
//   count. A value's bits are bits_per_value(format) (quant/quantize.hpp): the element width, plus
//   a block format's shared exponent (or bias, or scale) spread over its nominal block size. MASE
//   adds up the whole precision list instead (fixed [8, 3] counts 11 bits); mase counts 8.

#include <mase/core/compiled.hpp>
#include <mase/core/error.hpp>
#include <mase/ir/graph.hpp>
#include <mase/ir/metadata.hpp>
#include <mase/pass/pipeline.hpp>
#include <mase/pass/report_tables.hpp>

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

// ---------------------------------------------------------------------------------------------
// Snapshots of a graph's formats (what the summary compares).

// One node's tensor entries (args, then results) and their formats.
struct node_formats {
  std::string name{};
  node_kind mase_type = node_kind::placeholder;
  std::string mase_op{};
  std::vector<std::pair<std::string, format>> entries{};

  friend bool operator==(const node_formats&, const node_formats&) = default;
};

MASE_COMPILED_INLINE node_formats formats_of(const node& n);

// Every node's formats, in topological order.
MASE_COMPILED_INLINE std::vector<node_formats> formats_of(const graph& g);

// The "type" column: the one format all entries share, or every entry with its format.
MASE_COMPILED_INLINE std::string quantization_type(const node_formats& n);

// ---------------------------------------------------------------------------------------------
// summarize_quantization

struct quantization_row {
  std::string name{};
  node_kind mase_type = node_kind::placeholder;
  std::string mase_op{};
  std::string original_type{};
  std::string quantized_type{};
  bool changed = false;
  friend bool operator==(const quantization_row&, const quantization_row&) = default;
};

struct quantization_histogram_row {
  std::string mase_op{};
  std::size_t total = 0;
  std::size_t changed = 0;
  std::size_t unchanged = 0;
  friend bool operator==(const quantization_histogram_row&, const quantization_histogram_row&) = default;
};

namespace detail {
// RFC 4180: quote a field holding a comma, a quote or a line break; double inner quotes.
inline std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}
inline std::string_view python_bool(bool b) { return b ? "True" : "False"; }
}  // namespace detail

struct quantization_summary {
  std::vector<quantization_row> rows{};                 // topological order
  std::vector<quantization_histogram_row> histogram{};  // ops in order of first appearance

  const quantization_row& at(std::string_view name) const {
    const auto it = std::find_if(rows.begin(), rows.end(), [&](const quantization_row& r) { return r.name == name; });
    if (it == rows.end()) throw error(fmt::format("quantization summary: no node named {}", name));
    return *it;
  }
  std::size_t changed_count() const {
    return static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), [](const auto& r) { return r.changed; }));
  }

  void write(std::ostream& os) const;
  std::string text() const {
    std::ostringstream os;
    write(os);
    return std::move(os).str();
  }

  // MASE's quantize_table.csv columns (with pandas' index column; a node keeps its name, so
  // "Ori name" and "New name" agree).
  std::string table_csv() const;
  // Grouped by mase_op (MASE groups by module class, which formats do not change here).
  std::string histogram_csv() const;
  // Writes save_dir/quantize_table.csv and save_dir/quantize_histogram.csv (atomically),
  // creating the folder if needed.
  void write_csv(const std::filesystem::path& save_dir) const;

  friend bool operator==(const quantization_summary&, const quantization_summary&) = default;
};

// Compares the formats of `original` (a snapshot taken before quantizing) with `quantized`'s,
// node by node by name. Every node of the quantized graph must be in the original.
MASE_COMPILED_INLINE quantization_summary summarize_quantization(const std::vector<node_formats>& original,
                                                                const graph& quantized);

MASE_COMPILED_INLINE quantization_summary summarize_quantization(const graph& original, const graph& quantized);

// The pass: holds a snapshot of the original graph's formats (not the graph), so it may outlive it.
struct summarize_quantization_pass {
  using needs = facts<fact::quantized>;
  using provides = facts<>;

  std::vector<node_formats> original{};
  std::ostream* stream = nullptr;    // std::cout unless chosen
  std::filesystem::path save_dir{};  // when set: CSV files instead of text

  quantization_summary run(const graph& g) const {
    quantization_summary s = summarize_quantization(original, g);
    if (!save_dir.empty()) s.write_csv(save_dir);
    else s.write(stream != nullptr ? *stream : std::cout);
    return s;
  }
  summarize_quantization_pass to(std::ostream& os) const { return {original, &os, {}}; }
  summarize_quantization_pass to_csv(std::filesystem::path dir) const { return {original, nullptr, std::move(dir)}; }
};

inline summarize_quantization_pass summarize_quantization(const graph& original) {
  return {formats_of(original), nullptr, {}};
}

// ---------------------------------------------------------------------------------------------
// calculate_avg_bits

struct avg_bits {
  // NaN when the graph has no linear / conv1d / conv2d node (MASE divides by zero there).
  double data_avg_bit = std::numeric_limits<double>::quiet_NaN();
  double w_avg_bit = std::numeric_limits<double>::quiet_NaN();
  std::int64_t data_values = 0;    // elements of every data_in_0 counted
  std::int64_t weight_values = 0;  // elements of every weight counted
};

struct calculate_avg_bits_pass {
  using needs = facts<fact::common_metadata>;
  using provides = facts<>;

  avg_bits run(const graph& g) const;
  avg_bits operator()(const graph& g) const { return run(g); }
};

inline constexpr calculate_avg_bits_pass calculate_avg_bits{};

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/pass/quantization_report_definitions.hpp>
#endif
