#pragma once
// Format strings: to_string and parse for every format, round-tripping.
//
//   fixed<8,3>  ufixed<8,3>  fixed<8,3,floor,wrap>
//   minifloat<8,4,7>  minifloat<8,4,7,ieee>  minifloat<8,4,7,nan_only,saturating,no_subnormals>
//   float16  bfloat16  e5m2  e4m3  e3m2  e2m3  e2m1
//   log<8,63>  binary  ternary<0.5>  residual_sign<2,0.9,0.35>
//   block_fp<8,8,127,[16]>  block_fp<8,8,127,[4,4],weight>  block_minifloat<8,4,8,[16]>
//   block_log<8,8,[16]>  mxint<8,8,[1,32]>  mxint8  mxfp8_e4m3  mxfp4_e2m1<16>
//
// Trailing options (a rounding name, an overflow name, flags) appear only when they differ
// from the defaults, so every format has exactly one spelling. Defined in
// format/format_string_definitions.hpp (in the compiled mode, once, in mase::mase).

#include <mase/core/compiled.hpp>
#include <mase/format/format.hpp>

#include <fmt/core.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mase {

namespace detail {

MASE_COMPILED_INLINE std::string block_to_string(const block_shape& b, bool default_skip_first_dim);

MASE_COMPILED_INLINE std::string double_to_string(double v);

MASE_COMPILED_INLINE std::string minifloat_alias(const minifloat_fmt& f);

}  // namespace detail

MASE_COMPILED_INLINE std::string to_string(const fixed_fmt& f);

MASE_COMPILED_INLINE std::string to_string(const minifloat_fmt& f);

MASE_COMPILED_INLINE std::string to_string(const log_fmt& f);
MASE_COMPILED_INLINE std::string to_string(const binary_fmt&);
MASE_COMPILED_INLINE std::string to_string(const ternary_fmt& f);
MASE_COMPILED_INLINE std::string to_string(const residual_sign_fmt& f);

MASE_COMPILED_INLINE std::string to_string(const block_fp_fmt& f);
MASE_COMPILED_INLINE std::string to_string(const block_minifloat_fmt& f);
MASE_COMPILED_INLINE std::string to_string(const block_log_fmt& f);
MASE_COMPILED_INLINE std::string to_string(const mxint_fmt& f);
MASE_COMPILED_INLINE std::string to_string(const mx_fmt& f);

MASE_COMPILED_INLINE std::string to_string(const format_variant& f);

namespace detail {

// A format string split into its name and its top-level arguments ("[4,4]" stays one argument).
struct format_tokens {
  std::string name;
  std::vector<std::string> args;
  bool has_brackets = false;
};

MASE_COMPILED_INLINE format_tokens tokenize_format(std::string_view text);

MASE_COMPILED_INLINE long long parse_integer(std::string_view text, std::string_view whole, std::string_view what);

MASE_COMPILED_INLINE int parse_int(std::string_view text, std::string_view whole, std::string_view what);

MASE_COMPILED_INLINE double parse_real(std::string_view text, std::string_view whole, std::string_view what);

MASE_COMPILED_INLINE std::optional<rounding> rounding_named(std::string_view name);

MASE_COMPILED_INLINE std::optional<overflow> overflow_named(std::string_view name);

MASE_COMPILED_INLINE block_shape parse_block(std::string_view text, std::string_view whole, bool skip_first_dim);

MASE_COMPILED_INLINE std::optional<mx_element> mx_element_named(std::string_view name);


// The descriptor a format string spells, not yet validated.
MASE_COMPILED_INLINE format_variant parse_descriptor(std::string_view text);

}  // namespace detail

// Parses any format string that to_string produces. Throws mase::error naming the string, the
// part that is wrong and what was expected.
MASE_COMPILED_INLINE format parse_format(std::string_view text);

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/format/format_string_definitions.hpp>
#endif
