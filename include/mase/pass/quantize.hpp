#pragma once
// quantize: MASE's quantize_transform_pass (../shared/spec/mase-reference.md §2.5). mase does not
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
// softmax (data_in, data_out: its integer rule, eval/fixed_functions.hpp), each with
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
// 1 saturates to the largest code, as the integer rule does); and integer's unsigned relu input (below) becomes signed and one bit wider, which holds the
// same values after the relu. Each choice is recorded in node_quantization::derived.
//
// Then formats flow: every node not quantized reads its producers' result formats into its
// data_in_i, and nodes that only move data (flatten, reshape, view, permute, transpose, squeeze,
// unsqueeze, dropout, identity, getitem, split, slice, max pools, relu, output; cat when its
// inputs agree) give their results their input's format. An avg_pool2d of fixed-point values
// whose divisor is a power of two 2^a gives its result the exact mean's format (a more integer
// and fraction bits), so the mean loses nothing and the hardware needs no divider; a div by a
// scalar constant 2^k its input's format with k more fraction bits (the same codes).

#include <mase/core/deferred.hpp>
#include <mase/core/error.hpp>
#include <mase/core/suggest.hpp>
#include <mase/format/fixed.hpp>
#include <mase/format/format.hpp>
#include <mase/format/mase_config.hpp>
#include <mase/ir/graph.hpp>
#include <mase/ir/metadata.hpp>
#include <mase/pass/pipeline.hpp>
#include <mase/pass/name_pattern.hpp>
#include <mase/pass/quantization_report.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <concepts>
#include <array>
#include <cstdint>
#include <iostream>
#include <optional>
#include <regex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>

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

  friend bool operator==(const quantize_config& a, const quantize_config& b) {
    return a.by == b.by && a.default_config == b.default_config && a.entries == b.entries && a.report == b.report &&
           a.hardware_formats == b.hardware_formats && a.user_op_types == b.user_op_types;
  }
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
// MASE's tables.

namespace detail {

// An op the pass quantizes: its name and its quantization facet (ir/op/op_base.hpp).
struct quantizable_op : quantizable {
  std::string_view op;
};

template <class... Ops>
constexpr auto quantizable_ops_of(op_list<Ops...>) {
  constexpr std::size_t count = (std::size_t{op_with_quantization<Ops>} + ... + 0);
  std::array<quantizable_op, count> table{};
  std::size_t at = 0;
  ((op_with_quantization<Ops> ? (void)(table[at++] = quantizable_op{*quantization_of<Ops>(), Ops::name}) : (void)0),
   ...);
  return table;
}

// The built-in ops with a quantization facet (MASE's QUANTIZEABLE_OP ∩ mase's ops, with
// MASE_OP_TO_ENTRIES, and the activations mase's lookup-table component implements), in
// builtin_ops order.
inline constexpr auto quantizable_ops = quantizable_ops_of(builtin_ops{});

// In MASE's QUANTIZEABLE_OP, but ops mase's IR does not have.
inline constexpr std::array<std::string_view, 3> mase_only_quantizable_ops{"convtranspose2d", "instance_norm2d",
                                                                          "grouped_query_attention"};

// The quantizable op named `op`: one of the graph's ops (a user's op with a quantization facet
// is found here), else a built-in one.
inline std::optional<quantizable_op> find_quantizable(const graph& g, std::string_view op) {
  std::optional<quantizable_op> found;
  g.for_each_node([&](const node& n) {
    if (!found && n.op_name() == op)
      if (const quantizable* q = n.op.quantization()) found = quantizable_op{*q, n.op.name()};
  });
  if (found) return found;
  const auto it =
      std::find_if(quantizable_ops.begin(), quantizable_ops.end(), [&](const auto& q) { return q.op == op; });
  if (it != quantizable_ops.end()) return *it;
  return std::nullopt;
}

// The node's op, when the pass quantizes it.
inline std::optional<quantizable_op> find_quantizable(const node& n) {
  if (const quantizable* q = n.op.quantization()) return quantizable_op{*q, n.op.name()};
  return std::nullopt;
}

inline std::string quantizable_op_list() {
  std::string list;
  for (const quantizable_op& q : quantizable_ops) list += fmt::format("{}{}", list.empty() ? "" : ", ", q.op);
  return list;
}

// QUANT_ARITH_ENTRIES: the per-operand key suffixes of each arithmetic format_from_mase_config reads.
struct quant_arithmetic {
  std::string_view name;
  std::span<const std::string_view> suffixes;
  bool takes_floor;  // MASE's `floor = true`
};

inline constexpr std::string_view fixed_suffixes[] = {"width", "frac_width"};
inline constexpr std::string_view minifloat_suffixes[] = {"width", "exponent_width", "exponent_bias"};
inline constexpr std::string_view log_suffixes[] = {"width", "exponent_bias"};
inline constexpr std::string_view block_fp_suffixes[] = {"width", "exponent_width", "exponent_bias", "block_size"};
inline constexpr std::string_view block_minifloat_suffixes[] = {"width", "exponent_width", "exponent_bias_width",
                                                                "block_size"};
inline constexpr std::string_view block_log_suffixes[] = {"width", "exponent_bias_width", "block_size"};
inline constexpr std::string_view mxint_suffixes[] = {"width", "exponent_width", "parallelism"};
inline constexpr std::string_view binary_suffixes[] = {"width", "stochastic", "bipolar", "binary_training"};
inline constexpr std::string_view ternary_suffixes[] = {"width", "scaling_factor", "mean", "median",
                                                        "max",   "threshold"};

inline constexpr std::array<quant_arithmetic, 11> quant_arithmetics{{
    {"integer", fixed_suffixes, true},
    {"fixed", fixed_suffixes, true},
    {"minifloat_ieee", minifloat_suffixes, false},
    {"minifloat_denorm", minifloat_suffixes, false},
    {"log", log_suffixes, false},
    {"block_fp", block_fp_suffixes, false},
    {"block_minifloat", block_minifloat_suffixes, false},
    {"block_log", block_log_suffixes, false},
    {"mxint_hardware", mxint_suffixes, false},
    {"binary", binary_suffixes, false},
    {"ternary", ternary_suffixes, false},
}};

inline constexpr std::array<std::string_view, 4> quant_operands{"data_in", "weight", "bias", "data_out"};

// MASE's spellings of "no arithmetic" (its TOML loader turns "NA" into None).
inline bool is_none_name(std::string_view s) { return s == "NA" || s == "None" || s == "none"; }

inline const quant_arithmetic* find_arithmetic(std::string_view name) {
  const auto it =
      std::find_if(quant_arithmetics.begin(), quant_arithmetics.end(), [&](const auto& a) { return a.name == name; });
  return it == quant_arithmetics.end() ? nullptr : &*it;
}

inline std::string arithmetic_keys(const quant_arithmetic& a, std::string_view operand) {
  std::string keys;
  for (std::string_view s : a.suffixes) keys += fmt::format("{}{}_{}", keys.empty() ? "" : ", ", operand, s);
  return keys;
}

// A flag: true/false, or MASE's 0/1. False when the value is neither.
inline bool quant_flag(const quant_config_value& v, bool& out) {
  if (const bool* b = std::get_if<bool>(&v)) {
    out = *b;
    return true;
  }
  if (const std::int64_t* i = std::get_if<std::int64_t>(&v); i != nullptr && (*i == 0 || *i == 1)) {
    out = *i == 1;
    return true;
  }
  return false;
}

// The arithmetic a MASE-keys config names, or nullptr when it leaves nodes alone (bypass = true,
// no name, name = "NA"/None). Checks every key: `where` names the entry in messages.
inline const quant_arithmetic* check_quant_config(const quant_config& c, const std::string& where) {
  bool bypassed = false;
  if (const auto b = c.find("bypass"); b != c.end() && !quant_flag(b->second, bypassed))
    throw error(fmt::format("{}: key \"bypass\" must be true or false", where));
  const auto name_it = c.find("name");
  const std::string* name = name_it == c.end() ? nullptr : std::get_if<std::string>(&name_it->second);
  if (name_it != c.end() && name == nullptr)
    throw error(fmt::format("{}: key \"name\" must be a string naming the arithmetic, e.g. name = \"integer\"", where));
  if (bypassed || name == nullptr || is_none_name(*name)) {
    // Nothing will be read: any key but these would be lost.
    for (const auto& [key, value] : c)
      if (key != "bypass" && key != "name")
        throw error(fmt::format("{}: key \"{}\" has no effect because the entry {}; remove it, or {}", where, key,
                                bypassed ? "says bypass = true" : "names no arithmetic",
                                bypassed ? "set bypass = false" : "add e.g. name = \"integer\""));
    return nullptr;
  }
  const quant_arithmetic* arith = find_arithmetic(*name);
  if (arith == nullptr) {
    std::vector<std::string_view> names;
    for (const auto& a : quant_arithmetics) names.push_back(a.name);
    const std::string near = nearest_names(*name, names);
    std::string list;
    for (std::string_view n : names) list += fmt::format("{}{}", list.empty() ? "" : ", ", n);
    throw error(fmt::format("{}: unknown arithmetic name = \"{}\"{}; the arithmetics are {}", where, *name,
                            near.empty() ? "" : fmt::format(" (did you mean {}?)", near), list));
  }
  std::vector<std::string> known{"name", "bypass"};
  if (arith->takes_floor) known.emplace_back("floor");
  for (std::string_view operand : quant_operands)
    for (std::string_view suffix : arith->suffixes) known.push_back(fmt::format("{}_{}", operand, suffix));
  for (const auto& [key, value] : c) {
    if (key == "floor" && arith->takes_floor) {
      bool ignored = false;
      if (!quant_flag(value, ignored)) throw error(fmt::format("{}: key \"floor\" must be true or false", where));
      continue;
    }
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    const std::string near = nearest_names(key, known);
    throw error(fmt::format("{}: unknown key \"{}\" for name = \"{}\"{}; its keys are {} for each operand (data_in, "
                            "weight, bias, data_out){}",
                            where, key, arith->name, near.empty() ? "" : fmt::format(" (did you mean {}?)", near),
                            arithmetic_keys(*arith, "<operand>"), arith->takes_floor ? ", and floor" : ""));
  }
  return arith;
}

// The formats a MASE-keys config gives each operand it has keys for; none when it leaves nodes alone.
inline std::optional<operand_formats> formats_of_config(const quant_config& c, const std::string& where) {
  const quant_arithmetic* arith = check_quant_config(c, where);
  if (arith == nullptr) return std::nullopt;
  bool floor = false;
  if (const auto f = c.find("floor"); f != c.end()) quant_flag(f->second, floor);
  const auto operand_format = [&](std::string_view operand) -> std::optional<format> {
    const std::string prefix = fmt::format("{}_", operand);
    const bool given = std::any_of(c.begin(), c.end(), [&](const auto& kv) { return kv.first.starts_with(prefix); });
    if (!given) return std::nullopt;
    try {
      format f = format_from_mase_config(c, operand);
      if (floor && f.holds<fixed_fmt>()) {
        fixed_fmt fixed = f.get<fixed_fmt>();
        fixed.round = rounding::floor;
        f = fixed;
      }
      return f;
    } catch (const error& e) {
      throw error(fmt::format("{}: {}", where, e.what()));
    }
  };
  return operand_formats{operand_format("data_in"), operand_format("weight"), operand_format("bias"),
                         operand_format("data_out")};
}

// A TOML key as written in a table header: bare when it can be, else quoted.
inline std::string toml_key(std::string_view key) {
  const bool bare = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
  if (bare) return std::string(key);
  std::string quoted = "\"";
  for (char c : key) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + '"';
}

// "quantize config entry "linear"" or "model.toml, [passes.quantize.linear.config]".
inline std::string entry_location(const config_source& source, std::string_view entry) {
  if (source.file.empty()) return fmt::format("quantize config entry \"{}\"", entry);
  return fmt::format("{}, [{}{}.config]", source.file, source.table.empty() ? "" : source.table + ".", toml_key(entry));
}

// One entry, resolved once per run.
struct resolved_entry {
  std::string key;                          // "default" for the default
  std::string where;                        // for messages
  std::optional<operand_formats> formats;   // none: leave the node alone
  bool names_one_op = false;                // by-type and by-name entries: operands must fit the op
  const quant_arithmetic* arithmetic = nullptr;  // MASE-keys entries: the arithmetic they name
};

inline resolved_entry resolve_entry(const config_source& source, std::string key, const node_quantize_config& c,
                                    bool names_one_op) {
  resolved_entry r{.key = std::move(key), .where = {}, .formats = std::nullopt, .names_one_op = names_one_op};
  r.where = entry_location(source, r.key);
  if (const quant_config* keys = std::get_if<quant_config>(&c)) {
    r.formats = formats_of_config(*keys, r.where);
    if (r.formats) r.arithmetic = find_arithmetic(std::get<std::string>(keys->at("name")));
  } else if (const operand_formats* f = std::get_if<operand_formats>(&c)) r.formats = *f;
  return r;
}

// An entry naming one op may only give the operands that op takes.
inline void check_operands_fit(const resolved_entry& e, const quantizable_op& q, std::string_view subject) {
  if (!e.formats || !e.names_one_op) return;
  const auto refuse = [&](std::string_view operand) {
    throw error(fmt::format("{}: {} has no {} operand to quantize (MASE quantizes {}); remove the {} keys "
                            "(or .{}) from the entry",
                            e.where, subject, operand,
                            q.weight == operand_use::none ? "only its data_in"
                            : q.bias == operand_use::none ? "its data_in and weight"
                                                          : "its data_in, weight and bias",
                            operand, operand));
  };
  if (e.formats->weight && q.weight == operand_use::none) refuse("weight");
  if (e.formats->bias && q.bias == operand_use::none) refuse("bias");
}

// The activations mase's hardware tabulates: one input, one result, element by element (their
// hardware facet is the lookup-table component).
inline bool is_tabulated_activation(const node& n) {
  const hardware_mapping* h = n.op.hardware();
  return h != nullptr && h->module == "mase_lut";
}

// Why derived_result_format chose a fixed result, for node_quantization::derived.
inline std::string derived_result_reason(result_format_rule rule, bool has_bias) {
  switch (rule) {
    case result_format_rule::same_as_input: return "exact: its input's format";
    case result_format_rule::same_as_weight: return "exact: its weight's format";
    case result_format_rule::sum: return "exact: the sum of its inputs' formats";
    case result_format_rule::difference: return "exact: the difference of its inputs' formats";
    case result_format_rule::product: return "exact: the product of its inputs' formats";
    default: return has_bias ? "exact: the accumulator plus the bias" : "exact: the accumulator";
  }
}

// The result format when the config gives none (see the top of this file). `c` holds the
// node's operand formats already set.
inline format derived_result_format(const node& n, const common_meta& c) {
  const auto fixed_arg = [&](std::string_view entry) -> std::optional<fixed_fmt> {
    const auto it = c.args.find(entry);
    if (it == c.args.end()) return std::nullopt;
    const tensor_meta* t = std::get_if<tensor_meta>(&it->second);
    if (t == nullptr || !t->precision.holds<fixed_fmt>()) return std::nullopt;
    return t->precision.get<fixed_fmt>();
  };
  const std::string_view op = n.op_name();
  const result_format_rule rule = n.op.result_format();
  std::optional<fixed_fmt> result;
  const std::optional<fixed_fmt> x = fixed_arg("data_in_0");
  if (rule == result_format_rule::same_as_input || rule == result_format_rule::same_as_weight) {
    const auto it = c.args.find(rule == result_format_rule::same_as_input ? "data_in_0" : "weight");
    if (it != c.args.end())
      if (const tensor_meta* t = std::get_if<tensor_meta>(&it->second)) return t->precision;
  } else if (rule == result_format_rule::weighted_sum) {
    const std::optional<fixed_fmt> w = fixed_arg("weight");
    const auto weight = c.args.find("weight");
    const bool has_bias = c.args.contains("bias");
    if (x && w && weight != c.args.end() && (!has_bias || fixed_arg("bias"))) {
      const shape& ws = std::get<tensor_meta>(weight->second).shape;
      const std::int64_t k = ws.empty() || ws[0] == 0 ? 1 : ws.numel() / ws[0];  // in/groups · kernel volume
      result = accumulator_format(product_format(*x, *w), k);
      // Plus the bias at its own precision, as MASE adds it (a bias finer or wider than the
      // products widens the result; for the usual formats this is one more bit).
      if (has_bias) result = sum_format(*result, *fixed_arg("bias"));
    }
  } else if (rule == result_format_rule::matrix_product) {
    const std::optional<fixed_fmt> y = fixed_arg("data_in_1");
    if (x && y) {
      const shape& a = std::get<tensor_meta>(c.args.at("data_in_0")).shape;
      result = accumulator_format(product_format(*x, *y), a.empty() ? 1 : a.back());
    }
  } else if (rule == result_format_rule::sum || rule == result_format_rule::difference ||
             rule == result_format_rule::product) {
    const std::optional<fixed_fmt> y = fixed_arg("data_in_1");
    if (x && y)
      result = rule == result_format_rule::sum          ? sum_format(*x, *y)
               : rule == result_format_rule::difference ? difference_format(*x, *y)
                                                        : product_format(*x, *y);
  }
  if (!result) return formats::float32;
  result->round = x->round;
  result->ovf = x->ovf;
  try {
    return format(*result);
  } catch (const error& e) {
    throw error(fmt::format("quantize: node {} ({}): its exact result format {} cannot be held ({}); give the result a "
                            "format with data_out_width and data_out_frac_width (or .data_out)",
                            n.name, op, to_string(*result), e.what()));
  }
}

// What an average pool divides a whole window's sum by: divisor_override, or the window's area.
inline std::int64_t average_pool_divisor(const op::avg_pool2d& pool) {
  if (pool.divisor_override != 0) return pool.divisor_override;
  return pool.kernel_size.empty() ? 0 : pool.kernel_size[0] * pool.kernel_size.back();
}

// An average pool whose divisor is the same power of two 2^a for every window has an exact
// result: the window's sum of codes, read with a more fraction bits (and as many more integer
// bits as the sum can need). So it keeps every value, and hardware computes it with no division.
inline std::optional<fixed_fmt> exact_mean_format(const node& n, const format& input) {
  const op::avg_pool2d* pool = n.op.get_if<op::avg_pool2d>();
  if (pool == nullptr || !input.holds<fixed_fmt>() || pool->ceil_mode) return std::nullopt;
  const bool padded = std::any_of(pool->padding.begin(), pool->padding.end(), [](std::int64_t p) { return p != 0; });
  if (padded && !pool->count_include_pad) return std::nullopt;
  if (pool->kernel_size.empty()) return std::nullopt;
  const std::int64_t area = pool->kernel_size[0] * pool->kernel_size.back();
  if (average_pool_divisor(*pool) != area || !std::has_single_bit(static_cast<std::uint64_t>(area))) return std::nullopt;
  const int a = std::countr_zero(static_cast<std::uint64_t>(area));
  fixed_fmt mean = input.get<fixed_fmt>();
  if (mean.width + a > 63) return std::nullopt;
  mean.width += a;
  mean.frac += a;
  return mean;
}

inline tensor_meta* tensor_arg(common_meta& c, std::string_view entry) {
  const auto it = c.args.find(entry);
  return it == c.args.end() ? nullptr : std::get_if<tensor_meta>(&it->second);
}

// A division by a constant 2^k (a scalar) keeps every code and moves the point: the result is
// the input's codes read with k more fraction bits (fewer for k < 0), so it is exact and the
// hardware does no arithmetic (mase_rescale). The scores' division by √d = 8 in attention.
inline std::optional<fixed_fmt> exact_scale_format(const graph& g, const node& n, const format& input) {
  if (!n.is<op::div>() || n.inputs.size() != 2 || !input.holds<fixed_fmt>()) return std::nullopt;
  const node& divisor = g[n.inputs[1]];
  const auto value = divisor.parameters.find("value");
  if (!divisor.is<op::constant>() || value == divisor.parameters.end() || value->second.size() != 1) return std::nullopt;
  int exponent = 0;
  const float mantissa = std::frexp(value->second.values()[0], &exponent);
  if (mantissa != 0.5f) return std::nullopt;  // positive powers of two only: 2^(exponent - 1)
  fixed_fmt scaled = input.get<fixed_fmt>();
  scaled.frac += exponent - 1;
  return scaled;
}

// A node nobody quantized: its inputs carry their producers' formats, and data movement keeps them.
inline void propagate_formats(const graph& g, node& n) {
  common_meta& c = n.meta.common;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    tensor_meta* arg = tensor_arg(c, data_in_name(i));
    if (arg == nullptr) continue;
    const node& producer = g[n.inputs[i]];
    std::int64_t which = 0;
    if (const op::getitem* item = n.op.get_if<op::getitem>())
      which =
          item->index < 0 ? item->index + static_cast<std::int64_t>(producer.meta.common.results.size()) : item->index;
    if (which < 0) continue;
    const auto produced = producer.meta.common.results.find(data_out_name(static_cast<std::size_t>(which)));
    if (produced != producer.meta.common.results.end()) arg->precision = produced->second.precision;
  }
  const tensor_meta* first = tensor_arg(c, data_in_name(0));
  if (first == nullptr) return;
  if (n.is<op::output>()) {
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      const tensor_meta* in = tensor_arg(c, data_in_name(i));
      const auto out = c.results.find(data_out_name(i));
      if (in != nullptr && out != c.results.end()) out->second.precision = in->precision;
    }
  } else if (n.is<op::cat>()) {
    bool agree = true;
    for (std::size_t i = 1; i < n.inputs.size(); ++i) {
      const tensor_meta* in = tensor_arg(c, data_in_name(i));
      agree = agree && in != nullptr && in->precision == first->precision;
    }
    if (agree)
      for (auto& [name, result] : c.results) result.precision = first->precision;
  } else if (n.op.result_format() == result_format_rule::same_as_input) {  // the input's values, so its format
    for (auto& [name, result] : c.results) result.precision = first->precision;
  } else if (const std::optional<fixed_fmt> mean = exact_mean_format(n, first->precision)) {
    for (auto& [name, result] : c.results) result.precision = *mean;
  } else if (const std::optional<fixed_fmt> scaled = exact_scale_format(g, n, first->precision)) {
    for (auto& [name, result] : c.results) result.precision = *scaled;
  }
}

// Sets a quantized node's formats; records those the config did not give in `derived`.
inline void apply_formats(node& n, const quantizable_op& q, const resolved_entry& e, bool hardware,
                          std::vector<derived_format>& derived) {
  const operand_formats& f = *e.formats;
  common_meta& c = n.meta.common;
  const auto missing = [&](std::string_view operand, std::string_view why) {
    throw error(fmt::format("node {} ({}): {} gives no {} format, which {}; {}", n.name, q.op, e.where, operand, why,
                            e.arithmetic != nullptr ? fmt::format("add {}", arithmetic_keys(*e.arithmetic, operand))
                                                    : fmt::format("set .{}", operand)));
  };
  if (!f.data_in && !q.data_in_0_is_row_index) missing("data_in", "every quantized op needs");
  if (!f.weight && q.weight == operand_use::required)
    missing("weight", q.weight_is_data_in_1 ? fmt::format("{} takes for its second operand (data_in_1)", q.op)
                                            : fmt::format("{} needs", q.op));
  const bool has_bias = tensor_arg(c, "bias") != nullptr;
  if (!f.bias && has_bias && q.bias == operand_use::required_with_parameter)
    missing("bias", "the node needs for its bias (MASE's quantized layers read it)");

  // MASE's relu_integer / ReLUInteger quantize their input unsigned (negatives become 0, and
  // the positive range doubles); its fixed-point RTL relu is signed, as "fixed" configs are.
  // For hardware (two's complement only) the unsigned input becomes signed with one more bit:
  // after saturating, the relu leaves exactly the values the unsigned format holds. (A wrapping
  // format would keep negative codes, so it stays unsigned and add_hardware_metadata refuses it.)
  const bool unsigned_input = n.is<op::relu>() && e.arithmetic != nullptr && e.arithmetic->name == "integer" &&
                              f.data_in->holds<fixed_fmt>();
  for (std::size_t i = 0; i < n.inputs.size(); ++i)
    if (tensor_meta* arg = tensor_arg(c, data_in_name(i))) {
      if (q.data_in_0_is_row_index && i == 0) {
        const tensor_meta* w = tensor_arg(c, "weight");
        require(w != nullptr && !w->shape.empty() && w->shape[0] >= 1,
                "node {} ({}): its data_in_0 selects rows of its weight, which has no metadata; run "
                "add_common_metadata first",
                n.name, q.op);
        const fixed_fmt rows{.width = 1 + std::max(1, static_cast<int>(std::bit_width(
                                                        static_cast<std::uint64_t>(w->shape[0] - 1)))),
                             .frac = 0};
        arg->precision = rows;
        derived.push_back({std::string(data_in_name(i)), format(rows),
                           fmt::format("exact: row numbers 0 to {} (its weight's rows)", w->shape[0] - 1)});
        continue;
      }
      arg->precision = q.weight_is_data_in_1 && i == 1 ? *f.weight : *f.data_in;
      if (unsigned_input) {
        fixed_fmt u = f.data_in->get<fixed_fmt>();
        u.is_signed = false;
        if (hardware && u.ovf != overflow::wrap && u.width < max_fixed_width) {
          u.is_signed = true;
          u.width += 1;
          derived.push_back({std::string(data_in_name(i)), format(u),
                             "exact: integer's unsigned relu input, signed with one more bit (the same values after "
                             "the relu)"});
        }
        arg->precision = u;
      }
    }
  if (q.weight != operand_use::none && !q.weight_is_data_in_1 && f.weight)
    if (tensor_meta* w = tensor_arg(c, "weight")) w->precision = *f.weight;
  if (q.bias != operand_use::none && f.bias)
    if (tensor_meta* b = tensor_arg(c, "bias")) b->precision = *f.bias;
  format result = f.data_out ? *f.data_out : derived_result_format(n, c);
  std::string reason;
  if (!f.data_out && result.holds<fixed_fmt>()) reason = derived_result_reason(n.op.result_format(), has_bias);
  if (!f.data_out && !result.holds<fixed_fmt>() && hardware && is_tabulated_activation(n)) {
    if (const tensor_meta* in = tensor_arg(c, data_in_name(0)); in != nullptr && in->precision.holds<fixed_fmt>()) {
      result = in->precision;
      reason = fmt::format("default: its input's format ({} has no finite exact result)", q.op);
    }
  }
  if (!f.data_out && !result.holds<fixed_fmt>() && hardware && n.is<op::softmax>()) {
    if (const tensor_meta* in = tensor_arg(c, data_in_name(0)); in != nullptr && in->precision.holds<fixed_fmt>()) {
      fixed_fmt probabilities = in->precision.get<fixed_fmt>();
      probabilities.frac = probabilities.width - 1;
      result = probabilities;
      reason = "default: probabilities at the input's width, every bit but the sign fractional (1 saturates)";
    }
  }
  for (auto& [name, meta] : c.results) {
    meta.precision = result;
    if (!reason.empty()) derived.push_back({name, result, reason});
  }
}

// by type: the key must be an op MASE quantizes.
inline void check_op_key(const graph& g, const resolved_entry& e, std::span<const std::string> user_op_types = {}) {
  if (const std::optional<quantizable_op> q = find_quantizable(g, e.key)) {
    check_operands_fit(e, *q, fmt::format("op {}", e.key));
    return;
  }
  bool in_graph = false;  // a user's op without a quantization facet
  g.for_each_node([&](const node& n) { in_graph = in_graph || n.op_name() == e.key; });
  // A user's op the config's vocabulary vouched for matches nothing here, as a built-in op would.
  if (!in_graph && std::find(user_op_types.begin(), user_op_types.end(), e.key) != user_op_types.end()) return;
  if (std::find(mase_only_quantizable_ops.begin(), mase_only_quantizable_ops.end(), e.key) !=
      mase_only_quantizable_ops.end())
    throw error(fmt::format("{}: mase has no {} op, so no node can match; remove the entry", e.where, e.key));
  const auto& ops = op_names();
  if (in_graph || std::find(ops.begin(), ops.end(), e.key) != ops.end())
    throw error(fmt::format("{}: op {} cannot be quantized (MASE's QUANTIZEABLE_OP are {}); remove the entry",
                            e.where, e.key, quantizable_op_list()));
  std::vector<std::string_view> candidates;
  for (const quantizable_op& q : quantizable_ops) candidates.push_back(q.op);
  const std::string near = nearest_names(e.key, candidates);
  throw error(fmt::format("{}: unknown op \"{}\" in a by = \"type\" config{}; the quantizable ops are {}",
                          e.where, e.key, near.empty() ? "" : fmt::format(" (did you mean {}?)", near),
                          quantizable_op_list()));
}

// by type, before there is a graph (loading a TOML config): the key must be a built-in op MASE
// quantizes.
inline void check_op_key(const resolved_entry& e) { check_op_key(graph{}, e); }

// by name: the key must be a quantizable node of the graph.
inline void check_name_key(const graph& g, const resolved_entry& e) {
  const std::optional<node_id> id = g.find(e.key);
  if (!id) {
    std::vector<std::string_view> names;
    for (node_id n : g.order()) names.push_back(g[n].name);
    const std::string near = nearest_names(e.key, names);
    throw error(
        fmt::format("{}: the graph has no node named \"{}\"{}", e.where, e.key,
                    near.empty() ? "; by = \"name\" keys are node names" : fmt::format(" (did you mean {}?)", near)));
  }
  const node& n = g[*id];
  const std::optional<quantizable_op> q = find_quantizable(n);
  if (!q && e.formats)
    throw error(fmt::format("{}: node {} is a {}, which cannot be quantized (MASE's QUANTIZEABLE_OP are {}); "
                            "remove the entry",
                            e.where, n.name, n.op_name(), quantizable_op_list()));
  if (q) check_operands_fit(e, *q, fmt::format("node {} ({})", n.name, q->op));
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// The pass.

struct quantize_pass {
  using needs = facts<fact::common_metadata>;
  using provides = facts<fact::quantized>;
  using invalidates = facts<fact::hardware_metadata>;  // its Verilog parameters hold the old precisions

  quantize_config config;

  // A template so that std::regex is compiled only where the pass is used (with deferred_t below).
  template <std::derived_from<graph> G>
  quantize_info run(G& g) const {
    using namespace detail;
    const std::vector<node_formats> before = config.report ? formats_of(g) : std::vector<node_formats>{};

    // Resolve and check every entry up front, used or not.
    const bool names_one_op = config.by != quantize_by::regex_name;
    std::optional<resolved_entry> fallback;
    if (config.default_config) fallback = resolve_entry(config.source, "default", *config.default_config, false);
    std::vector<resolved_entry> entries;
    std::vector<basic_name_pattern<deferred_t<char, G>>> patterns;  // std::regex compiled only here
    for (const auto& entry : config.entries) {
      const std::string& key = entry.first;
      const std::string where = entry_location(config.source, key);
      if (std::any_of(entries.begin(), entries.end(), [&](const resolved_entry& e) { return e.key == key; }))
        throw error(fmt::format("{} appears twice; keep one", where));
      if (key == "default")
        throw error(fmt::format("{}: the default config goes in .default_config, not among the entries", where));
      entries.push_back(resolve_entry(config.source, key, entry.second, names_one_op));
      const resolved_entry& e = entries.back();
      if (config.by == quantize_by::type) {
        check_op_key(g, e, config.user_op_types);
      } else if (config.by == quantize_by::name) {
        check_name_key(g, e);
      } else {
        patterns.emplace_back(key, where);  // a mase::error naming `where` if invalid or too long
      }
    }

    quantize_info info;
    for (node_id id : g.order()) {
      node& n = g[id];
      const node_formats was = formats_of(n);
      node_quantization record{.name = n.name, .mase_op = std::string(n.op_name()), .outcome = {}, .config_entry = {},
                               .changes = {}, .derived = {}};
      const resolved_entry* entry = nullptr;
      if (config.by == quantize_by::regex_name) {
        for (std::size_t i = 0; i < patterns.size() && entry == nullptr; ++i)
          if (patterns[i].matches(n.name)) entry = &entries[i];
      } else {
        const std::string_view key = config.by == quantize_by::type ? n.op_name() : std::string_view(n.name);
        const auto it =
            std::find_if(entries.begin(), entries.end(), [&](const resolved_entry& e) { return e.key == key; });
        if (it != entries.end()) entry = &*it;
      }
      if (entry == nullptr && fallback) entry = &*fallback;

      const std::optional<quantizable_op> q = find_quantizable(n);
      if (!q) {
        record.outcome = quantize_outcome::not_quantizable;
      } else if (entry == nullptr) {
        record.outcome = quantize_outcome::no_config;
      } else if (!entry->formats) {
        record.outcome = quantize_outcome::bypassed;
        record.config_entry = entry->key;
      } else {
        record.outcome = quantize_outcome::quantized;
        record.config_entry = entry->key;
        apply_formats(n, *q, *entry, config.hardware_formats, record.derived);
      }
      if (record.outcome != quantize_outcome::quantized) propagate_formats(g, n);

      const node_formats now = formats_of(n);
      for (std::size_t i = 0; i < now.entries.size() && i < was.entries.size(); ++i)
        if (!(now.entries[i].second == was.entries[i].second))
          record.changes.push_back({now.entries[i].first, was.entries[i].second, now.entries[i].second});
      info.nodes.push_back(std::move(record));
    }
    if (config.report) summarize_quantization(before, g).write(std::cout);
    return info;
  }

};

// The quantize pass for a config: g | quantize(config).
inline quantize_pass quantize(quantize_config config) { return quantize_pass{std::move(config)}; }

}  // namespace mase
