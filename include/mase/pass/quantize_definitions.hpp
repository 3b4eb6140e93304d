#pragma once
// The quantize pass's steps and MASE's tables (pass/quantize.hpp declares the steps): inline in
// the header-only mode, compiled once in mase::mase (src/passes.cpp) otherwise.

#include <mase/pass/name_pattern.hpp>
#include <mase/pass/quantize.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/pass/quantize.hpp> instead"
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

namespace mase::detail {

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

MASE_COMPILED_INLINE std::optional<quantizable_op> find_quantizable(const graph& g, std::string_view op) {
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

MASE_COMPILED_INLINE std::optional<quantizable_op> find_quantizable(const node& n) {
  if (const quantizable* q = n.op.quantization()) return quantizable_op{*q, n.op.name()};
  return std::nullopt;
}

MASE_COMPILED_INLINE std::string quantizable_op_list() {
  std::string list;
  for (const quantizable_op& q : quantizable_ops) list += fmt::format("{}{}", list.empty() ? "" : ", ", q.op);
  return list;
}

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

MASE_COMPILED_INLINE bool is_none_name(std::string_view s) { return s == "NA" || s == "None" || s == "none"; }

MASE_COMPILED_INLINE const quant_arithmetic* find_arithmetic(std::string_view name) {
  const auto it =
      std::find_if(quant_arithmetics.begin(), quant_arithmetics.end(), [&](const auto& a) { return a.name == name; });
  return it == quant_arithmetics.end() ? nullptr : &*it;
}

MASE_COMPILED_INLINE std::string arithmetic_keys(const quant_arithmetic& a, std::string_view operand) {
  std::string keys;
  for (std::string_view s : a.suffixes) keys += fmt::format("{}{}_{}", keys.empty() ? "" : ", ", operand, s);
  return keys;
}

MASE_COMPILED_INLINE bool quant_flag(const quant_config_value& v, bool& out) {
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

MASE_COMPILED_INLINE const quant_arithmetic* check_quant_config(const quant_config& c, const std::string& where) {
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

MASE_COMPILED_INLINE std::optional<operand_formats> formats_of_config(const quant_config& c, const std::string& where) {
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

MASE_COMPILED_INLINE std::string toml_key(std::string_view key) {
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

MASE_COMPILED_INLINE std::string entry_location(const config_source& source, std::string_view entry) {
  if (source.file.empty()) return fmt::format("quantize config entry \"{}\"", entry);
  return fmt::format("{}, [{}{}.config]", source.file, source.table.empty() ? "" : source.table + ".", toml_key(entry));
}

MASE_COMPILED_INLINE resolved_entry resolve_entry(const config_source& source, std::string key, const node_quantize_config& c,
                                                  bool names_one_op) {
  resolved_entry r{.key = std::move(key), .where = {}, .formats = std::nullopt, .names_one_op = names_one_op};
  r.where = entry_location(source, r.key);
  if (const quant_config* keys = std::get_if<quant_config>(&c)) {
    r.formats = formats_of_config(*keys, r.where);
    if (r.formats) r.arithmetic = find_arithmetic(std::get<std::string>(keys->at("name")));
  } else if (const operand_formats* f = std::get_if<operand_formats>(&c)) r.formats = *f;
  return r;
}

MASE_COMPILED_INLINE void check_operands_fit(const resolved_entry& e, const quantizable_op& q, std::string_view subject) {
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

MASE_COMPILED_INLINE bool is_tabulated_activation(const node& n) {
  const hardware_mapping* h = n.op.hardware();
  return h != nullptr && h->module == "mase_lut";
}

MASE_COMPILED_INLINE std::string derived_result_reason(result_format_rule rule, bool has_bias) {
  switch (rule) {
    case result_format_rule::same_as_input: return "exact: its input's format";
    case result_format_rule::same_as_weight: return "exact: its weight's format";
    case result_format_rule::sum: return "exact: the sum of its inputs' formats";
    case result_format_rule::difference: return "exact: the difference of its inputs' formats";
    case result_format_rule::product: return "exact: the product of its inputs' formats";
    default: return has_bias ? "exact: the accumulator plus the bias" : "exact: the accumulator";
  }
}

MASE_COMPILED_INLINE format derived_result_format(const node& n, const common_meta& c) {
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

MASE_COMPILED_INLINE std::int64_t average_pool_divisor(const op::avg_pool2d& pool) {
  if (pool.divisor_override != 0) return pool.divisor_override;
  return pool.kernel_size.empty() ? 0 : pool.kernel_size[0] * pool.kernel_size.back();
}

MASE_COMPILED_INLINE std::optional<fixed_fmt> exact_mean_format(const node& n, const format& input) {
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

MASE_COMPILED_INLINE tensor_meta* tensor_arg(common_meta& c, std::string_view entry) {
  const auto it = c.args.find(entry);
  return it == c.args.end() ? nullptr : std::get_if<tensor_meta>(&it->second);
}

MASE_COMPILED_INLINE std::optional<fixed_fmt> exact_scale_format(const graph& g, const node& n, const format& input) {
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

MASE_COMPILED_INLINE void propagate_formats(const graph& g, node& n, bool hardware, std::vector<derived_format>& derived) {
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
  } else if (hardware && n.is<op::avg_pool2d>() && first->precision.holds<fixed_fmt>()) {
    // Any other divisor: the mean rule (eval/mean_rule.hpp) into the input's format, as for mean.
    for (auto& [name, result] : c.results) {
      result.precision = first->precision;
      derived.push_back({name, first->precision, std::string(mean_default_reason)});
    }
  }
}

MASE_COMPILED_INLINE void apply_formats(node& n, const quantizable_op& q, const resolved_entry& e, bool hardware,
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
  if (!f.data_out && !result.holds<fixed_fmt>() && hardware &&
      (n.is<op::mean>() || n.is<op::adaptive_avg_pool1d>() || n.is<op::adaptive_avg_pool2d>())) {
    if (const tensor_meta* in = tensor_arg(c, data_in_name(0)); in != nullptr && in->precision.holds<fixed_fmt>()) {
      result = in->precision;
      reason = mean_default_reason;
    }
  }
  for (auto& [name, meta] : c.results) {
    meta.precision = result;
    if (!reason.empty()) derived.push_back({name, result, reason});
  }
}

MASE_COMPILED_INLINE void check_op_key(const graph& g, const resolved_entry& e, std::span<const std::string> user_op_types) {
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

MASE_COMPILED_INLINE void check_op_key(const resolved_entry& e) { check_op_key(graph{}, e); }

MASE_COMPILED_INLINE void check_name_key(const graph& g, const resolved_entry& e) {
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

template <class Graph>
quantize_info quantize_graph(Graph& g, const quantize_config& config) {
  const std::vector<node_formats> before = config.report ? formats_of(g) : std::vector<node_formats>{};

  // Resolve and check every entry up front, used or not.
  const bool names_one_op = config.by != quantize_by::regex_name;
  std::optional<resolved_entry> fallback;
  if (config.default_config) fallback = resolve_entry(config.source, "default", *config.default_config, false);
  std::vector<resolved_entry> entries;
  std::vector<basic_name_pattern<deferred_t<char, Graph>>> patterns;  // std::regex compiled only here
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
    if (record.outcome != quantize_outcome::quantized) propagate_formats(g, n, config.hardware_formats, record.derived);

    const node_formats now = formats_of(n);
    for (std::size_t i = 0; i < now.entries.size() && i < was.entries.size(); ++i)
      if (!(now.entries[i].second == was.entries[i].second))
        record.changes.push_back({now.entries[i].first, was.entries[i].second, now.entries[i].second});
    info.nodes.push_back(std::move(record));
  }
  if (config.report) summarize_quantization(before, g).write(std::cout);
  return info;
}

}  // namespace mase::detail

namespace mase {

MASE_COMPILED_INLINE bool operator==(const quantize_config& a, const quantize_config& b) {
  return a.by == b.by && a.default_config == b.default_config && a.entries == b.entries && a.report == b.report &&
         a.hardware_formats == b.hardware_formats && a.user_op_types == b.user_op_types;
}

}  // namespace mase
