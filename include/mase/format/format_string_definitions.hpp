#pragma once
// to_string and parse for every format (format/format_string.hpp declares them): inline in the
// header-only mode, compiled once in mase::mase (src/quantize.cpp) otherwise.

#include <mase/format/format_string.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/format/format_string.hpp> instead"
#endif

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

namespace mase {

namespace detail {

MASE_COMPILED_INLINE std::string block_to_string(const block_shape& b, bool default_skip_first_dim) {
  std::string s = b.rows == block_shape::full ? fmt::format("[{}]", b.cols) : fmt::format("[{},{}]", b.rows, b.cols);
  if (b.skip_first_dim != default_skip_first_dim) s += b.skip_first_dim ? ",activation" : ",weight";
  return s;
}

MASE_COMPILED_INLINE std::string double_to_string(double v) {
  // Shortest spelling that reads back to the same double.
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, result.ptr);
}

MASE_COMPILED_INLINE std::string minifloat_alias(const minifloat_fmt& f) {
  if (f == formats::float32) return "float32";
  if (f == formats::float16) return "float16";
  if (f == formats::bfloat16) return "bfloat16";
  if (f == formats::e5m2) return "e5m2";
  if (f == formats::e4m3) return "e4m3";
  if (f == formats::e3m2) return "e3m2";
  if (f == formats::e2m3) return "e2m3";
  if (f == formats::e2m1) return "e2m1";
  return {};
}

}  // namespace detail

MASE_COMPILED_INLINE std::string to_string(const fixed_fmt& f) {
  std::string s = fmt::format("{}fixed<{},{}", f.is_signed ? "" : "u", f.width, f.frac);
  if (f.round != rounding::half_even) s += fmt::format(",{}", to_string(f.round));
  if (f.ovf != overflow::saturate) s += fmt::format(",{}", to_string(f.ovf));
  return s + ">";
}

MASE_COMPILED_INLINE std::string to_string(const minifloat_fmt& f) {
  if (auto alias = detail::minifloat_alias(f); !alias.empty()) return alias;
  std::string s = fmt::format("minifloat<{},{},{}", f.bits(), f.exp_bits, f.bias);
  if (f.specials == special_values::ieee) s += ",ieee";
  if (f.specials == special_values::nan_only) s += ",nan_only";
  if (f.specials != special_values::finite && f.saturating) s += ",saturating";
  if (!f.subnormals) s += ",no_subnormals";
  if (f.round != rounding::half_even) s += fmt::format(",{}", to_string(f.round));
  return s + ">";
}

MASE_COMPILED_INLINE std::string to_string(const log_fmt& f) { return fmt::format("log<{},{}>", f.width, f.bias); }

MASE_COMPILED_INLINE std::string to_string(const binary_fmt&) { return "binary"; }

MASE_COMPILED_INLINE std::string to_string(const ternary_fmt& f) {
  return fmt::format("ternary<{}>", detail::double_to_string(f.threshold));
}

MASE_COMPILED_INLINE std::string to_string(const residual_sign_fmt& f) {
  std::string s = fmt::format("residual_sign<{}", f.levels);
  for (int l = 0; l < f.levels; ++l) s += fmt::format(",{}", detail::double_to_string(f.means[static_cast<std::size_t>(l)]));
  return s + ">";
}

MASE_COMPILED_INLINE std::string to_string(const block_fp_fmt& f) {
  std::string s = fmt::format("block_fp<{},{},{},{}", f.width, f.exp_bits, f.bias, detail::block_to_string(f.block, true));
  if (f.round != rounding::half_even) s += fmt::format(",{}", to_string(f.round));
  return s + ">";
}

MASE_COMPILED_INLINE std::string to_string(const block_minifloat_fmt& f) {
  return fmt::format("block_minifloat<{},{},{},{}>", f.width, f.exp_bits, f.bias_bits,
                     detail::block_to_string(f.block, true));
}

MASE_COMPILED_INLINE std::string to_string(const block_log_fmt& f) {
  return fmt::format("block_log<{},{},{}>", f.width, f.bias_bits, detail::block_to_string(f.block, true));
}

MASE_COMPILED_INLINE std::string to_string(const mxint_fmt& f) {
  std::string s = fmt::format("mxint<{},{},{}", f.width, f.exp_bits, detail::block_to_string(f.block, false));
  if (f.round != rounding::half_even) s += fmt::format(",{}", to_string(f.round));
  return s + ">";
}

MASE_COMPILED_INLINE std::string to_string(const mx_fmt& f) {
  std::string s = fmt::format("mx{}", to_string(f.element));
  if (f.block_size != 32 && f.round != rounding::half_even) return fmt::format("{}<{},{}>", s, f.block_size, to_string(f.round));
  if (f.block_size != 32) return fmt::format("{}<{}>", s, f.block_size);
  if (f.round != rounding::half_even) return fmt::format("{}<{}>", s, to_string(f.round));
  return s;
}

MASE_COMPILED_INLINE std::string to_string(const format_variant& f) {
  return std::visit([](const auto& d) { return to_string(d); }, f);
}

namespace detail {

MASE_COMPILED_INLINE format_tokens tokenize_format(std::string_view text) {
  auto fail = [&](const std::string& why) -> format_tokens {
    throw error(fmt::format("cannot parse format \"{}\": {}", text, why));
  };
  format_tokens t;
  std::size_t i = 0;
  auto skip_space = [&] { while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i; };
  skip_space();
  while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) t.name += text[i++];
  skip_space();
  if (t.name.empty()) return fail("expected a format name such as fixed<8,3>, minifloat<8,4,7> or mxfp8_e4m3");
  if (i == text.size()) return t;
  if (text[i] != '<') return fail(fmt::format("unexpected '{}' after the name", text[i]));
  t.has_brackets = true;
  ++i;
  std::string current;
  int depth = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth < 0) return fail("unbalanced ']'");
    if (depth == 0 && (c == ',' || c == '>')) {
      if (current.empty()) return fail("an argument is empty");
      t.args.push_back(current);
      current.clear();
      if (c == '>') break;
      continue;
    }
    if (c != ' ' && c != '\t') current += c;
  }
  if (i == text.size()) return fail("missing '>'");
  ++i;
  skip_space();
  if (i != text.size()) return fail("unexpected text after '>'");
  return t;
}

MASE_COMPILED_INLINE long long parse_integer(std::string_view text, std::string_view whole, std::string_view what) {
  long long value = 0;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
  if (result.ec != std::errc{} || result.ptr != text.data() + text.size()) {
    throw error(fmt::format("cannot parse format \"{}\": {} must be an integer, got \"{}\"", whole, what, text));
  }
  return value;
}

MASE_COMPILED_INLINE int parse_int(std::string_view text, std::string_view whole, std::string_view what) {
  const long long v = parse_integer(text, whole, what);
  if (v < -100000 || v > 100000) {
    throw error(fmt::format("cannot parse format \"{}\": {} = {} is out of range", whole, what, text));
  }
  return static_cast<int>(v);
}

MASE_COMPILED_INLINE double parse_real(std::string_view text, std::string_view whole, std::string_view what) {
  const std::string copy(text);
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (copy.empty() || end != copy.c_str() + copy.size()) {
    throw error(fmt::format("cannot parse format \"{}\": {} must be a number, got \"{}\"", whole, what, text));
  }
  return v;
}

MASE_COMPILED_INLINE std::optional<rounding> rounding_named(std::string_view name) {
  for (rounding r : all_roundings)
    if (to_string(r) == name) return r;
  return std::nullopt;
}

MASE_COMPILED_INLINE std::optional<overflow> overflow_named(std::string_view name) {
  for (overflow o : all_overflows)
    if (to_string(o) == name) return o;
  return std::nullopt;
}

MASE_COMPILED_INLINE block_shape parse_block(std::string_view text, std::string_view whole, bool skip_first_dim) {
  if (text.size() < 3 || text.front() != '[' || text.back() != ']') {
    throw error(fmt::format("cannot parse format \"{}\": the block shape must look like [16] or [1,16], got \"{}\"",
                            whole, text));
  }
  const std::string_view inner = text.substr(1, text.size() - 2);
  const auto comma = inner.find(',');
  block_shape b;
  b.skip_first_dim = skip_first_dim;
  if (comma == std::string_view::npos) {
    b.cols = parse_int(inner, whole, "the block width");
  } else {
    b.rows = parse_int(inner.substr(0, comma), whole, "the block height");
    b.cols = parse_int(inner.substr(comma + 1), whole, "the block width");
  }
  return b;
}

MASE_COMPILED_INLINE std::optional<mx_element> mx_element_named(std::string_view name) {
  for (mx_element e : all_mx_elements)
    if (to_string(e) == name) return e;
  return std::nullopt;
}

}  // namespace detail

namespace detail {

MASE_COMPILED_INLINE format_variant parse_descriptor(std::string_view text) {
  const detail::format_tokens t = detail::tokenize_format(text);
  const auto& a = t.args;
  auto expect_args = [&](std::size_t lo, std::size_t hi, std::string_view example) {
    if (a.size() < lo || a.size() > hi) {
      throw error(fmt::format("cannot parse format \"{}\": {} takes {} to {} arguments, e.g. {}", text, t.name, lo,
                              hi, example));
    }
  };
  auto unknown_option = [&](std::string_view option, std::string_view allowed) -> format_variant {
    throw error(fmt::format("cannot parse format \"{}\": unknown option \"{}\" (allowed: {})", text, option, allowed));
  };

  if (t.name == "fixed" || t.name == "ufixed") {
    expect_args(2, 4, "fixed<8,3> or fixed<8,3,floor,wrap>");
    fixed_fmt f{.width = detail::parse_int(a[0], text, "the width"), .frac = detail::parse_int(a[1], text, "the fraction width"),
                .is_signed = t.name == "fixed"};
    for (std::size_t k = 2; k < a.size(); ++k) {
      if (auto r = detail::rounding_named(a[k])) f.round = *r;
      else if (auto o = detail::overflow_named(a[k])) f.ovf = *o;
      else return unknown_option(a[k], "a rounding such as floor or half_even, an overflow such as saturate or wrap");
    }
    return f;
  }
  if (t.name == "minifloat") {
    expect_args(3, 8, "minifloat<8,4,7> or minifloat<8,5,15,ieee>");
    const int width = detail::parse_int(a[0], text, "the width");
    const int exp_bits = detail::parse_int(a[1], text, "the exponent width");
    minifloat_fmt f{.exp_bits = exp_bits, .man_bits = width - 1 - exp_bits, .bias = detail::parse_int(a[2], text, "the bias")};
    bool saturating_given = false;
    for (std::size_t k = 3; k < a.size(); ++k) {
      if (a[k] == "ieee") f.specials = special_values::ieee;
      else if (a[k] == "nan_only") f.specials = special_values::nan_only;
      else if (a[k] == "saturating") saturating_given = true;
      else if (a[k] == "no_subnormals") f.subnormals = false;
      else if (auto r = detail::rounding_named(a[k])) f.round = *r;
      else return unknown_option(a[k], "ieee, nan_only, saturating, no_subnormals or a rounding name");
    }
    f.saturating = f.specials == special_values::finite || saturating_given;
    return f;
  }
  constexpr std::string_view aliases[] = {"float32", "float16", "bfloat16", "e5m2", "e4m3", "e3m2", "e2m3", "e2m1", "binary", "mxfp4"};
  if (t.has_brackets && std::find(std::begin(aliases), std::end(aliases), t.name) != std::end(aliases) &&
      t.name != "mxfp4") {
    throw error(fmt::format("cannot parse format \"{}\": {} takes no arguments; write just {}", text, t.name, t.name));
  }
  if (t.name == "mxfp4" && !t.has_brackets) return formats::mxfp4;  // OCP's name; the element is e2m1
  if (!t.has_brackets) {
    if (t.name == "float32") return formats::float32;
    if (t.name == "float16") return formats::float16;
    if (t.name == "bfloat16") return formats::bfloat16;
    if (t.name == "e5m2") return formats::e5m2;
    if (t.name == "e4m3") return formats::e4m3;
    if (t.name == "e3m2") return formats::e3m2;
    if (t.name == "e2m3") return formats::e2m3;
    if (t.name == "e2m1") return formats::e2m1;
    if (t.name == "binary") return binary_fmt{};
  }
  if (t.name == "log") {
    expect_args(2, 2, "log<8,63>");
    return log_fmt{.width = detail::parse_int(a[0], text, "the width"), .bias = detail::parse_int(a[1], text, "the bias")};
  }
  if (t.name == "ternary") {
    expect_args(1, 1, "ternary<0.5>");
    return ternary_fmt{.threshold = detail::parse_real(a[0], text, "the threshold")};
  }
  if (t.name == "residual_sign") {
    expect_args(2, 5, "residual_sign<2,0.9,0.35>");
    residual_sign_fmt f{.levels = detail::parse_int(a[0], text, "the number of levels")};
    if (static_cast<std::size_t>(f.levels) + 1 != a.size()) {
      throw error(fmt::format("cannot parse format \"{}\": {} levels need {} means", text, f.levels, f.levels));
    }
    for (int l = 0; l < f.levels; ++l)
      f.means[static_cast<std::size_t>(l)] = detail::parse_real(a[static_cast<std::size_t>(l) + 1], text, "a mean");
    return f;
  }
  auto block_options = [&](std::size_t first, block_shape& block, rounding* round) {
    for (std::size_t k = first; k < a.size(); ++k) {
      if (a[k] == "weight") block.skip_first_dim = false;
      else if (a[k] == "activation") block.skip_first_dim = true;
      else if (auto r = detail::rounding_named(a[k]); r && round) *round = *r;
      else unknown_option(a[k], round ? "weight, activation or a rounding name" : "weight or activation");
    }
  };
  if (t.name == "block_fp") {
    expect_args(4, 6, "block_fp<8,8,127,[16]>");
    block_fp_fmt f{.width = detail::parse_int(a[0], text, "the width"), .exp_bits = detail::parse_int(a[1], text, "the exponent width"),
                   .bias = detail::parse_int(a[2], text, "the bias"), .block = detail::parse_block(a[3], text, true)};
    block_options(4, f.block, &f.round);
    return f;
  }
  if (t.name == "block_minifloat") {
    expect_args(4, 5, "block_minifloat<8,4,8,[16]>");
    block_minifloat_fmt f{.width = detail::parse_int(a[0], text, "the width"),
                          .exp_bits = detail::parse_int(a[1], text, "the exponent width"),
                          .bias_bits = detail::parse_int(a[2], text, "the bias width"),
                          .block = detail::parse_block(a[3], text, true)};
    block_options(4, f.block, nullptr);
    return f;
  }
  if (t.name == "block_log") {
    expect_args(3, 4, "block_log<8,8,[16]>");
    block_log_fmt f{.width = detail::parse_int(a[0], text, "the width"),
                    .bias_bits = detail::parse_int(a[1], text, "the bias width"),
                    .block = detail::parse_block(a[2], text, true)};
    block_options(3, f.block, nullptr);
    return f;
  }
  if (t.name == "mxint" && t.has_brackets) {
    expect_args(3, 5, "mxint<8,8,[1,32]>");
    mxint_fmt f{.width = detail::parse_int(a[0], text, "the width"),
                .exp_bits = detail::parse_int(a[1], text, "the exponent width"),
                .block = detail::parse_block(a[2], text, false)};
    block_options(3, f.block, &f.round);
    return f;
  }
  if (t.name.starts_with("mx")) {
    if (auto element = detail::mx_element_named(t.name == "mxfp4" ? "fp4_e2m1" : std::string_view(t.name).substr(2))) {
      mx_fmt f{.element = *element};
      if (t.has_brackets) {
        expect_args(1, 2, "mxfp8_e4m3<16> or mxint8<32,half_away>");
        for (const auto& arg : a) {
          if (auto r = detail::rounding_named(arg)) f.round = *r;
          else f.block_size = detail::parse_int(arg, text, "the block size");
        }
      }
      return f;
    }
  }
  throw error(fmt::format(
      "cannot parse format \"{}\": unknown format name \"{}\" (known: fixed, ufixed, minifloat, float32, float16, bfloat16, e5m2, "
      "e4m3, e3m2, e2m3, e2m1, log, binary, ternary, residual_sign, block_fp, block_minifloat, block_log, mxint, "
      "mxint8, mxint4, mxint2, mxfp8_e4m3, mxfp8_e5m2, mxfp6_e3m2, mxfp6_e2m3, mxfp4_e2m1)",
      text, t.name));
}

}  // namespace detail

MASE_COMPILED_INLINE format parse_format(std::string_view text) {
  const format_variant descriptor = detail::parse_descriptor(text);
  try {
    return format(descriptor);
  } catch (const error& e) {
    throw error(fmt::format("cannot parse format \"{}\": {}", text, e.what()));
  }
}

}  // namespace mase
