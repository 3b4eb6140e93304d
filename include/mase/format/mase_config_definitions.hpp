#pragma once
// MASE's quantization config keys -> mase formats (format/mase_config.hpp declares it): inline in
// the header-only mode, compiled once in mase::mase (src/quantize.cpp) otherwise.

#include <mase/format/mase_config.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/format/mase_config.hpp> instead"
#endif

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <fmt/core.h>

namespace mase {

namespace detail {

class mase_config_reader {
public:
  mase_config_reader(const quant_config& config, std::string_view operand, std::string_view name)
      : config_(config), operand_(operand), name_(name) {}

  std::string key(std::string_view suffix) const { return fmt::format("{}_{}", operand_, suffix); }

  const quant_config_value* find(std::string_view suffix) const {
    const auto it = config_.find(key(suffix));
    return it == config_.end() ? nullptr : &it->second;
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw error(fmt::format("quantization config (name = \"{}\", operand {}): {}", name_, operand_, what));
  }

  int integer(std::string_view suffix) const {
    const quant_config_value* v = find(suffix);
    if (!v) fail(fmt::format("missing key \"{}\"; add e.g. {} = 8", key(suffix), key(suffix)));
    // Checked against int's range before the conversion (a cast outside it is undefined).
    constexpr auto lo = std::numeric_limits<int>::min(), hi = std::numeric_limits<int>::max();
    if (const auto* i = std::get_if<std::int64_t>(v)) {
      if (*i < lo || *i > hi) fail(fmt::format("key \"{}\" = {} is out of range; give a small integer", key(suffix), *i));
      return static_cast<int>(*i);
    }
    if (const auto* d = std::get_if<double>(v); d && *d >= lo && *d <= hi && *d == std::trunc(*d))
      return static_cast<int>(*d);
    fail(fmt::format("key \"{}\" must be an integer", key(suffix)));
  }

  // MASE spells "use the default" as a missing key, None, "none" or "None" (and "NA" for stats).
  std::optional<int> optional_integer(std::string_view suffix) const {
    const quant_config_value* v = find(suffix);
    if (!v) return std::nullopt;
    if (const auto* s = std::get_if<std::string>(v)) {
      if (*s == "none" || *s == "None" || *s == "NA" || s->empty()) return std::nullopt;
      fail(fmt::format("key \"{}\" must be an integer or \"none\", got \"{}\"", key(suffix), *s));
    }
    return integer(suffix);
  }

  bool boolean(std::string_view suffix, bool fallback) const {
    const quant_config_value* v = find(suffix);
    if (!v) return fallback;
    if (const auto* b = std::get_if<bool>(v)) return *b;
    if (const auto* i = std::get_if<std::int64_t>(v)) return *i != 0;
    if (const auto* s = std::get_if<std::string>(v); s && (*s == "NA" || *s == "none")) return fallback;
    fail(fmt::format("key \"{}\" must be true/false or 0/1", key(suffix)));
  }

  std::optional<double> real(std::string_view suffix) const {
    const quant_config_value* v = find(suffix);
    if (!v) return std::nullopt;
    if (const auto* d = std::get_if<double>(v)) return *d;
    if (const auto* i = std::get_if<std::int64_t>(v)) return static_cast<double>(*i);
    if (const auto* s = std::get_if<std::string>(v); s && (*s == "NA" || *s == "none")) return std::nullopt;
    fail(fmt::format("key \"{}\" must be a number", key(suffix)));
  }

  block_shape block(std::string_view suffix, bool skip_first_dim) const {
    const quant_config_value* v = find(suffix);
    block_shape b{.skip_first_dim = skip_first_dim};
    if (!v) return b;  // MASE's default block_size = [16]
    std::vector<std::int64_t> dims;
    if (const auto* list = std::get_if<std::vector<std::int64_t>>(v)) dims = *list;
    else if (const auto* i = std::get_if<std::int64_t>(v)) dims = {*i};
    else fail(fmt::format("key \"{}\" must be a list of one or two integers such as [16] or [1, 16]", key(suffix)));
    if (dims.empty() || dims.size() > 2) {
      fail(fmt::format("key \"{}\" must hold one or two block dims, got {}", key(suffix), dims.size()));
    }
    b.cols = static_cast<int>(dims.back());
    if (dims.size() == 2) b.rows = static_cast<int>(dims.front());
    return b;
  }

private:
  const quant_config& config_;
  std::string_view operand_;
  std::string_view name_;
};

}  // namespace detail

MASE_COMPILED_INLINE format format_from_mase_config(const quant_config& config, std::string_view operand) {
  const auto name_it = config.find("name");
  if (name_it == config.end()) {
    throw error(fmt::format("quantization config for operand {}: missing key \"name\" (e.g. name = \"integer\")",
                            operand));
  }
  const auto* name_ptr = std::get_if<std::string>(&name_it->second);
  if (!name_ptr) throw error("quantization config: key \"name\" must be a string such as \"integer\"");
  const std::string& name = *name_ptr;
  const detail::mase_config_reader r(config, operand, name);
  const bool weight_like = operand.starts_with("weight") || operand.starts_with("bias");

  if (name == "integer" || name == "fixed") {
    return fixed_fmt{.width = r.integer("width"), .frac = r.integer("frac_width")};
  }
  if (name == "minifloat_ieee" || name == "minifloat_denorm") {
    const int width = r.integer("width");
    const int exp_bits = r.integer("exponent_width");
    const int bias = r.optional_integer("exponent_bias").value_or(ieee_exponent_bias(exp_bits));
    return minifloat_fmt{.exp_bits = exp_bits, .man_bits = width - 1 - exp_bits, .bias = bias};
  }
  if (name == "log") {
    const int width = r.integer("width");
    // The default only for widths the format takes (its check names the others).
    const int bias = width >= 2 && width <= 32 ? default_log_bias(width) : 0;
    return log_fmt{.width = width, .bias = r.optional_integer("exponent_bias").value_or(bias)};
  }
  if (name == "block_fp") {
    const int exp_bits = r.integer("exponent_width");
    return block_fp_fmt{.width = r.integer("width"),
                        .exp_bits = exp_bits,
                        .bias = r.optional_integer("exponent_bias").value_or(ieee_exponent_bias(exp_bits)),
                        .block = r.block("block_size", !weight_like)};
  }
  if (name == "block_minifloat") {
    return block_minifloat_fmt{.width = r.integer("width"),
                               .exp_bits = r.integer("exponent_width"),
                               .bias_bits = r.integer("exponent_bias_width"),
                               .block = r.block("block_size", !weight_like)};
  }
  if (name == "block_log") {
    return block_log_fmt{.width = r.integer("width"),
                         .bias_bits = r.integer("exponent_bias_width"),
                         .block = r.block("block_size", !weight_like)};
  }
  if (name == "mxint_hardware") {
    block_shape b = r.block("parallelism", false);
    if (b.rows == block_shape::full) b.rows = 1;  // MASE: parallelism [p] means [1, p]
    return mxint_fmt{.width = r.integer("width"), .exp_bits = r.integer("exponent_width"), .block = b};
  }
  if (name == "binary") {
    if (r.boolean("stochastic", false)) r.fail("stochastic binarisation is not deterministic and has no format");
    if (!r.boolean("bipolar", true)) {
      r.fail("bipolar = 0 scales by a per-sample mean, which is not an element-wise format; "
             "use mase::compat::binary_quantizer");
    }
    return binary_fmt{};
  }
  if (name == "ternary") {
    if (r.boolean("scaling_factor", false)) {
      r.fail("scaling_factor = true scales by per-sample statistics, which is not an element-wise format; "
             "use mase::compat::ternary_quantizer");
    }
    return ternary_fmt{.threshold = r.real("threshold").value_or(0.5)};
  }
  throw error(fmt::format(
      "quantization config: unknown name = \"{}\" (known: integer, fixed, minifloat_ieee, minifloat_denorm, log, "
      "block_fp, block_minifloat, block_log, mxint_hardware, binary, ternary)",
      name));
}

}  // namespace mase
