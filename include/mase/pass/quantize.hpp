#pragma once
// quantize: MASE's quantize_transform_pass (DeepWok/mase at ae4660b1:
// src/chop/passes/graph/transforms/quantize/quantize.py and quant_parsers/). mase does not
// swap modules for quantized ones: a node is quantized by writing the number formats of its
// operands into its common metadata, which is where the evaluator and the Verilog emitter read
// them. So this pass's whole job is to write those formats right.
//
//   auto q = g | init_metadata | add_common_metadata | quantize({
//       .by = quantize_by::type,
//       .default_config = operand_formats::all(fixed_fmt{.width = 8, .frac = 3}),
//       .entries = {{"relu", bypass{}},
//                   {"linear", quant_config{{"name", "integer"}, {"data_in_width", 8}, …}}}});
//
// Which config a node gets (MASE's rules): `by` = type (key = the node's mase_op), name (key =
// the node's name) or regex_name (the first key, in config order, whose std::regex fully
// matches the name); nodes without a matching key get `default_config`, and none when that is
// unset. A config is MASE's keys (`quant_config`: name = "integer", data_in_width, …, read by
// format_from_mase_config), formats given per operand (`operand_formats`), or `bypass` (leave
// the node alone; MASE's bypass = true, and name = "NA"/None).
//
// Only MASE's QUANTIZEABLE_OP are quantized, the activations the hardware tabulates (sigmoid,
// silu, elu, leaky_relu, hardswish, hardsigmoid, hardtanh, relu6: data_in and data_out), and
// softmax (data_in, data_out: its integer rule, eval/fixed_functions.hpp), mean and the adaptive
// average pools (data_in, data_out: eval/mean_rule.hpp), each with
// MASE_OP_TO_ENTRIES' operands:
//   data_in                      every data_in_i (matmul / bmm: data_in_0)
//   weight                       linear, conv1d, conv2d (required); batch_norm2d, layer_norm,
//                                rms_norm (optional; MASE leaves the norms' weights float);
//                                matmul / bmm: data_in_1 (required), as MASE does
//   bias                         linear, conv1d, conv2d (required when the node has a bias, as
//                                MASE's quantized layers read it); batch_norm2d, layer_norm (optional)
//   data_out                     every op (optional; MASE parses it for linear / conv2d only)
// Unlike MASE nothing is dropped silently: an unknown key, an unknown arithmetic, a key for an
// operand the op does not take (in by-type and by-name entries, which name one op; default and
// regex entries may serve several ops and give each what it takes), an unknown op or node name,
// or an entry for an op that cannot be quantized is a mase::error naming the entry and the fix.
// MASE's `floor = true` (integer / fixed) gives every fixed format of that config floor rounding.
//
// Results (data_out_i): the data_out format when given, else
//   linear, conv1d, conv2d, matmul, bmm with fixed operands: the accumulator MASE's RTL keeps,
//     W_x + W_w + ceil(log2 K) bits, F_x + F_w fraction bits, K the reduction length
//     (in_features; in_channels/groups · kernel volume; the inner matmul dim), summed with the
//     bias format when there is a bias (sum_format: one more bit when the bias fits);
//   add / sub / mul with fixed operands: the exact sum / difference / product (format/fixed.hpp);
//   relu: its input's format;
//   anything else: float32.
// Derived fixed formats take the data_in format's rounding and overflow.
//
// For hardware (quantize_config::hardware_formats, what `mase emit-verilog` sets), results the
// config leaves float get a format the components take instead: the activations the hardware
// tabulates (gelu, sigmoid, tanh, …) their input's format, a documented default (their results
// have no finite exact format; for these functions the input's range holds the result except
// where it saturates, and the table is the evaluator's own, so hardware and evaluator agree);
// softmax its input's width with every bit but the sign fractional (probabilities lie in [0, 1];
// 1 saturates to the largest code, as the integer rule does); a mean or adaptive average pool its
// input's format (the mean of values in range is in range; the rule floors once); and integer's unsigned relu input (below) becomes signed and one bit wider, which holds the
// same values after the relu. Each choice is recorded in node_quantization::derived.
//
// Then formats flow: every node not quantized reads its producers' result formats into its
// data_in_i, and nodes that only move data (flatten, reshape, view, permute, transpose, squeeze,
// unsqueeze, dropout, identity, getitem, split, slice, max pools, relu, output; cat when its
// inputs agree) give their results their input's format. An avg_pool2d of fixed-point values
// whose divisor is a power of two 2^a gives its result the exact mean's format (a more integer
// and fraction bits), so the mean loses nothing; for hardware, one of any other divisor its
// input's format (the mean rule floors once, as for mean); a div by a
// scalar constant 2^k its input's format with k more fraction bits (the same codes).

#include <mase/core/compiled.hpp>
#include <mase/core/deferred.hpp>
#include <mase/core/error.hpp>
#include <mase/core/suggest.hpp>
#include <mase/format/fixed.hpp>
#include <mase/format/format.hpp>
#include <mase/format/mase_config.hpp>
#include <mase/ir/graph.hpp>
#include <mase/ir/metadata.hpp>
#include <mase/pass/pipeline.hpp>
#include <mase/pass/quantization_report.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <concepts>
#include <array>
#include <cstdint>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/core.h>

namespace mase {

// ---------------------------------------------------------------------------------------------
// The config.

enum class quantize_by : std::uint8_t { type, name, regex_name };

constexpr std::string_view to_string(quantize_by b) noexcept {
  switch (b) {
    case quantize_by::type: return "type";
    case quantize_by::name: return "name";
    case quantize_by::regex_name: return "regex_name";
  }
  return "?";
}

// Formats given directly, per operand. An unset operand is not quantized (a required one is an
// error); an unset data_out is derived (see the top of this file).
struct operand_formats {
  std::optional<format> data_in{};
  std::optional<format> weight{};
  std::optional<format> bias{};
  std::optional<format> data_out{};

  // data_in, weight and bias in one format; results derived.
  static operand_formats all(const format& f) { return {f, f, f, std::nullopt}; }

  friend bool operator==(const operand_formats&, const operand_formats&) = default;
};

// Leave the node alone (MASE's bypass = true, or name = None).
struct bypass {
  friend bool operator==(bypass, bypass) = default;
};

using node_quantize_config = std::variant<quant_config, operand_formats, bypass>;

// Where a config was read from, for messages that name the file and the TOML table.
struct config_source {
  std::string file{};   // empty: built in C++
  std::string table{};  // the table holding the entries: "passes.quantize", or "" at the top level
};

struct quantize_config {
  quantize_by by = quantize_by::type;
  std::optional<node_quantize_config> default_config{};  // unset: nodes without an entry are left alone
  // Keys (op types, node names or patterns) with their configs, in order: the first matching
  // pattern wins for regex_name.
  std::vector<std::pair<std::string, node_quantize_config>> entries{};
  bool report = false;  // MASE's `report = true`: print summarize_quantization's table to std::cout
  // Not a TOML key: give results the config leaves float a fixed-point format the hardware
  // components take (see the top of this file); the hardware flow sets it.
  bool hardware_formats = false;
  // by = "type" keys that name a user's op (the TOML loader fills it from the vocabulary it was
  // given): like an entry for one of mase's own ops, such an entry matches no node in a graph
  // without that op, where an unknown op type is refused.
  std::vector<std::string> user_op_types{};
  config_source source{};  // not part of the value: two configs are equal whatever their origin

  friend bool operator==(const quantize_config& a, const quantize_config& b);
};

// ---------------------------------------------------------------------------------------------
// What the pass did.

enum class quantize_outcome : std::uint8_t {
  quantized,        // its formats came from a config
  bypassed,         // its config said to leave it alone
  no_config,        // quantizable, but no entry matched and there is no default
  not_quantizable,  // not one of MASE's QUANTIZEABLE_OP
};

constexpr std::string_view to_string(quantize_outcome o) noexcept {
  switch (o) {
    case quantize_outcome::quantized: return "quantized";
    case quantize_outcome::bypassed: return "bypassed";
    case quantize_outcome::no_config: return "no_config";
    case quantize_outcome::not_quantizable: return "not_quantizable";
  }
  return "?";
}

// One entry (data_in_0, weight, data_out_0, …) whose format changed.
struct precision_change {
  std::string entry;
  format from;
  format to;
  friend bool operator==(const precision_change&, const precision_change&) = default;
};

// A format the config did not give, chosen by the pass: each result of a quantized node without
// data_out, and (for hardware) a relu input made signed.
struct derived_format {
  std::string entry;   // data_out_0, data_in_0, …
  format chosen;
  std::string reason;  // "exact: …" (lossless) or "default: …"
  friend bool operator==(const derived_format&, const derived_format&) = default;
};

struct node_quantization {
  std::string name{};
  std::string mase_op{};
  quantize_outcome outcome = quantize_outcome::not_quantizable;
  std::string config_entry{};               // the key that applied ("default", an op, a name, a pattern); "" if none
  std::vector<precision_change> changes{};  // includes formats that flowed in from producers
  std::vector<derived_format> derived{};    // formats the config did not give
};

struct quantize_info {
  std::vector<node_quantization> nodes{};  // topological order

  const node_quantization& at(std::string_view name) const {
    const auto it =
        std::find_if(nodes.begin(), nodes.end(), [&](const node_quantization& n) { return n.name == name; });
    if (it == nodes.end()) throw error(fmt::format("quantize_info: no node named {}", name));
    return *it;
  }
  std::size_t count(quantize_outcome o) const {
    return static_cast<std::size_t>(
        std::count_if(nodes.begin(), nodes.end(), [&](const auto& n) { return n.outcome == o; }));
  }
};

// ---------------------------------------------------------------------------------------------
// The pass's steps; they and MASE's tables are defined in pass/quantize_definitions.hpp (in the
// compiled mode, once, in mase::mase).

namespace detail {

// An op the pass quantizes: its name and its quantization facet (ir/op/op_base.hpp).
struct quantizable_op : quantizable {
  std::string_view op;
};

// The quantizable op named `op`: one of the graph's ops (a user's op with a quantization facet
// is found here), else a built-in one.
MASE_COMPILED_INLINE std::optional<quantizable_op> find_quantizable(const graph& g, std::string_view op);

// The node's op, when the pass quantizes it.
MASE_COMPILED_INLINE std::optional<quantizable_op> find_quantizable(const node& n);

MASE_COMPILED_INLINE std::string quantizable_op_list();

// QUANT_ARITH_ENTRIES: the per-operand key suffixes of each arithmetic format_from_mase_config reads.
struct quant_arithmetic {
  std::string_view name;
  std::span<const std::string_view> suffixes;
  bool takes_floor;  // MASE's `floor = true`
};

// MASE's spellings of "no arithmetic" (its TOML loader turns "NA" into None).
MASE_COMPILED_INLINE bool is_none_name(std::string_view s);

MASE_COMPILED_INLINE const quant_arithmetic* find_arithmetic(std::string_view name);

MASE_COMPILED_INLINE std::string arithmetic_keys(const quant_arithmetic& a, std::string_view operand);

// A flag: true/false, or MASE's 0/1. False when the value is neither.
MASE_COMPILED_INLINE bool quant_flag(const quant_config_value& v, bool& out);

// The arithmetic a MASE-keys config names, or nullptr when it leaves nodes alone (bypass = true,
// no name, name = "NA"/None). Checks every key: `where` names the entry in messages.
MASE_COMPILED_INLINE const quant_arithmetic* check_quant_config(const quant_config& c, const std::string& where);

// The formats a MASE-keys config gives each operand it has keys for; none when it leaves nodes alone.
MASE_COMPILED_INLINE std::optional<operand_formats> formats_of_config(const quant_config& c, const std::string& where);

// A TOML key as written in a table header: bare when it can be, else quoted.
MASE_COMPILED_INLINE std::string toml_key(std::string_view key);

// "quantize config entry "linear"" or "model.toml, [passes.quantize.linear.config]".
MASE_COMPILED_INLINE std::string entry_location(const config_source& source, std::string_view entry);

// One entry, resolved once per run.
struct resolved_entry {
  std::string key;                          // "default" for the default
  std::string where;                        // for messages
  std::optional<operand_formats> formats;   // none: leave the node alone
  bool names_one_op = false;                // by-type and by-name entries: operands must fit the op
  const quant_arithmetic* arithmetic = nullptr;  // MASE-keys entries: the arithmetic they name
};

MASE_COMPILED_INLINE resolved_entry resolve_entry(const config_source& source, std::string key, const node_quantize_config& c,
                                                  bool names_one_op);

// An entry naming one op may only give the operands that op takes.
MASE_COMPILED_INLINE void check_operands_fit(const resolved_entry& e, const quantizable_op& q, std::string_view subject);

// The activations mase's hardware tabulates: one input, one result, element by element (their
// hardware facet is the lookup-table component).
MASE_COMPILED_INLINE bool is_tabulated_activation(const node& n);

// Why derived_result_format chose a fixed result, for node_quantization::derived.
MASE_COMPILED_INLINE std::string derived_result_reason(result_format_rule rule, bool has_bias);

// The result format when the config gives none (see the top of this file). `c` holds the
// node's operand formats already set.
MASE_COMPILED_INLINE format derived_result_format(const node& n, const common_meta& c);

// What an average pool divides a whole window's sum by: divisor_override, or the window's area.
MASE_COMPILED_INLINE std::int64_t average_pool_divisor(const op::avg_pool2d& pool);

// An average pool whose divisor is the same power of two 2^a for every window has an exact
// result: the window's sum of codes, read with a more fraction bits (and as many more integer
// bits as the sum can need). So it keeps every value, and hardware computes it with no division.
MASE_COMPILED_INLINE std::optional<fixed_fmt> exact_mean_format(const node& n, const format& input);

MASE_COMPILED_INLINE tensor_meta* tensor_arg(common_meta& c, std::string_view entry);

// A division by a constant 2^k (a scalar) keeps every code and moves the point: the result is
// the input's codes read with k more fraction bits (fewer for k < 0), so it is exact and the
// hardware does no arithmetic (mase_rescale). The scores' division by √d = 8 in attention.
MASE_COMPILED_INLINE std::optional<fixed_fmt> exact_scale_format(const graph& g, const node& n, const format& input);

// A node nobody quantized: its inputs carry their producers' formats, and data movement keeps them.
// With `hardware` (quantize_config::hardware_formats), an average pool whose divisor is not a
// power of two takes its input's format (recorded in `derived`), as a mean does.
MASE_COMPILED_INLINE void propagate_formats(const graph& g, node& n, bool hardware, std::vector<derived_format>& derived);

// Why a mean or an average pool without a data_out format takes its input's (hardware_formats).
inline constexpr std::string_view mean_default_reason =
    "default: its input's format (a mean of values in range is in range; one floor)";

// Sets a quantized node's formats; records those the config did not give in `derived`.
MASE_COMPILED_INLINE void apply_formats(node& n, const quantizable_op& q, const resolved_entry& e, bool hardware,
                                        std::vector<derived_format>& derived);

// by type: the key must be an op MASE quantizes.
MASE_COMPILED_INLINE void check_op_key(const graph& g, const resolved_entry& e, std::span<const std::string> user_op_types = {});

// by type, before there is a graph (loading a TOML config): the key must be a built-in op MASE
// quantizes.
MASE_COMPILED_INLINE void check_op_key(const resolved_entry& e);

// by name: the key must be a quantizable node of the graph.
MASE_COMPILED_INLINE void check_name_key(const graph& g, const resolved_entry& e);

}  // namespace detail

namespace detail {
// The pass's run over a graph, defined with its std::regex name patterns in
// pass/quantize_definitions.hpp; a template so that a unit compiles it only where the pass runs.
template <class Graph>
quantize_info quantize_graph(Graph& g, const quantize_config& config);
#if MASE_EXTERN_INSTANTIATIONS
extern template quantize_info quantize_graph<graph>(graph&, const quantize_config&);
#endif
}  // namespace detail

// ---------------------------------------------------------------------------------------------
// The pass.

struct quantize_pass {
  using needs = facts<fact::common_metadata>;
  using provides = facts<fact::quantized>;
  using invalidates = facts<fact::hardware_metadata>;  // its Verilog parameters hold the old precisions

  quantize_config config;

  // A template so that std::regex is compiled only where the pass is used, or once in
  // mase::mase (detail::quantize_graph).
  template <std::derived_from<graph> G>
  quantize_info run(G& g) const {
    return detail::quantize_graph<deferred_t<graph, G>>(g, config);
  }

};

// The quantize pass for a config: g | quantize(config).
inline quantize_pass quantize(quantize_config config) { return quantize_pass{std::move(config)}; }

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/pass/quantize_definitions.hpp>
#endif
