#pragma once
// The quantizer entry points over every runtime format (quant/quantize.hpp declares them), which
// instantiate every family's kernels: inline in the header-only mode, compiled once in
// mase::mase (src/quantize.cpp) otherwise.

#include <mase/quant/quantize.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/quant/quantize.hpp> instead"
#endif

#include <cstdint>
#include <span>
#include <type_traits>

#include <fmt/core.h>

namespace mase {

MASE_COMPILED_INLINE void quantize(const format& f, std::span<const float> in, std::span<const std::int64_t> shape,
                                   std::span<float> out) {
  // Each family's quantize chooses its copy at run time (core/dispatch.hpp).
  f.visit([&](const auto& d) {
    if constexpr (elementwise_descriptor<std::remove_cvref_t<decltype(d)>>) {
      quantize(d, in, out);
    } else {
      quantize(d, in, shape, out);
    }
  });
}

MASE_COMPILED_INLINE std::uint64_t encode(const format& f, float x) {
  return f.visit([&](const auto& d) -> std::uint64_t {
    if constexpr (elementwise_descriptor<std::remove_cvref_t<decltype(d)>>) {
      return encode(d, x);
    } else {
      throw error(fmt::format("encode: {} is a block format; its codes need the block's shared exponent", to_string(f)));
    }
  });
}

MASE_COMPILED_INLINE float decode(const format& f, std::uint64_t code) {
  return f.visit([&](const auto& d) -> float {
    if constexpr (elementwise_descriptor<std::remove_cvref_t<decltype(d)>>) {
      return decode(d, code);
    } else {
      throw error(fmt::format("decode: {} is a block format; its codes need the block's shared exponent", to_string(f)));
    }
  });
}

MASE_COMPILED_INLINE double bits_per_value(const format& f) {
  return f.visit([](const auto& d) -> double {
    using D = std::remove_cvref_t<decltype(d)>;
    auto block_elements = [](const block_shape& b) {
      return static_cast<double>((b.rows == block_shape::full ? 1 : b.rows) * (b.cols == block_shape::full ? 1 : b.cols));
    };
    if constexpr (std::is_same_v<D, block_fp_fmt>) return d.width + d.exp_bits / block_elements(d.block);
    else if constexpr (std::is_same_v<D, block_minifloat_fmt>) return d.width + d.bias_bits / block_elements(d.block);
    else if constexpr (std::is_same_v<D, block_log_fmt>) return d.width + d.bias_bits / block_elements(d.block);
    else if constexpr (std::is_same_v<D, mxint_fmt>) return d.width + d.exp_bits / block_elements(d.block);
    else if constexpr (std::is_same_v<D, mx_fmt>) return element_bits(d.element) + double(mx_fmt::scale_bits) / d.block_size;
    else return d.bits();
  });
}

}  // namespace mase
