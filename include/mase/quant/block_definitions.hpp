#pragma once
// The block formats' quantizers (quant/block.hpp declares them and says what each computes): inline
// in the header-only mode, compiled once in mase::mase (src/quantize.cpp) otherwise.

#include <mase/quant/block.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/quant/block.hpp> instead"
#endif

#include <algorithm>
#include <cstdint>
#include <span>

namespace mase {

MASE_COMPILED_INLINE void quantize(const block_fp_fmt& f, std::span<const float> in,
                                   std::span<const std::int64_t> shape, std::span<float> out) {
  check(f);
  const block_layout layout = detail::layout_of(f, shape);
  with_rounding(f.round, [&](auto mode) {
    constexpr rounding R = decltype(mode)::value;
    const int m = f.man_bits();
    detail::for_each_block_run(
        layout, in, out,
        [&](const float* x, auto n) { return detail::block_fp_exponent<R>(f, detail::max_finite_abs(x, n)); },
        [&](const float* x, float* y, auto n, int e) { detail::quantize_scaled_integer_block<R>(x, y, n, m, e); });
  });
}

MASE_COMPILED_INLINE void quantize(const block_minifloat_fmt& f, std::span<const float> in,
                                   std::span<const std::int64_t> shape, std::span<float> out) {
  check(f);
  const block_layout layout = detail::layout_of(f, shape);
  const int m = f.man_bits();
  detail::for_each_block_run(
      layout, in, out,
      [&](const float* x, auto n) { return detail::block_minifloat_bias(f, detail::max_finite_abs(x, n)); },
      [&](const float* x, float* y, auto n, int bias) {
        const minifloat_fmt element{.exp_bits = f.exp_bits, .man_bits = m, .bias = bias};
        detail::quantize_minifloat_block<rounding::half_even>(x, y, n, element.emin(), element.emax(), m,
                                                              element.max_value());
      });
}

MASE_COMPILED_INLINE void quantize(const block_log_fmt& f, std::span<const float> in,
                                   std::span<const std::int64_t> shape, std::span<float> out) {
  check(f);
  const block_layout layout = detail::layout_of(f, shape);
  detail::for_each_block_run(
      layout, in, out,
      [&](const float* x, auto n) { return detail::block_log_bias(f, detail::max_finite_abs(x, n)); },
      [&](const float* x, float* y, auto n, int bias) {
        const log_fmt element{.width = f.width, .bias = bias};
        detail::quantize_log_run(x, y, n, element.emin(), std::min(element.emax(), 127));
      });
}

MASE_COMPILED_INLINE void quantize(const mxint_fmt& f, std::span<const float> in,
                                   std::span<const std::int64_t> shape, std::span<float> out) {
  check(f);
  const block_layout layout = detail::layout_of(f, shape);
  with_rounding(f.round, [&](auto mode) {
    constexpr rounding R = decltype(mode)::value;
    detail::for_each_block_run(
        layout, in, out,
        [&](const float* x, auto n) {
          return detail::mx_integer_scale(detail::max_finite_abs(x, n), f.scale_emin(), f.scale_emax());
        },
        [&](const float* x, float* y, auto n, int s) { detail::quantize_mx_integer_block<R>(x, y, n, f.width, s); });
  });
}

MASE_COMPILED_INLINE void quantize(const mx_fmt& f, std::span<const float> in,
                                   std::span<const std::int64_t> shape, std::span<float> out) {
  check(f);
  const block_layout layout = detail::layout_of(f, shape);
  with_rounding(f.round, [&](auto mode) {
    constexpr rounding R = decltype(mode)::value;
    if (is_integer_element(f.element)) {
      const int width = integer_element_bits(f.element);
      detail::for_each_block_run(
          layout, in, out,
          [&](const float* x, auto n) {
            return detail::mx_integer_scale(detail::max_finite_abs(x, n), mx_fmt::scale_emin, mx_fmt::scale_emax);
          },
          [&](const float* x, float* y, auto n, int s) { detail::quantize_mx_integer_block<R>(x, y, n, width, s); });
      return;
    }
    const minifloat_fmt element = element_minifloat(f.element);
    const double max_element = element.max_value();
    detail::for_each_block_run(
        layout, in, out,
        [&](const float* x, auto n) { return detail::mx_float_scale(f.element, detail::max_finite_abs(x, n)); },
        [&](const float* x, float* y, auto n, int s) {
          detail::quantize_minifloat_block<R>(x, y, n, element.emin() + s, element.emax() + s, element.man_bits,
                                              max_element * exp2i<double>(s));  // s in [-127, 127]: exact
        });
  });
}

}  // namespace mase
