#pragma once
// Array quantizers for block (shared-exponent) formats: block_fp, block_minifloat, block_log,
// mxint and OCP MX. Each block picks its shared exponent (or bias) from its largest finite
// magnitude so that this magnitude is represented as nearly as the element format allows, then
// quantizes its elements with the element-wise loop of that format (fixed, minifloat or log)
// over a shifted range: one definition of every rounding and saturation rule.
//
// Blocks follow MASE's partition (mase/quant/blocking.hpp). Blocks that are runs along the
// last dim (activations, MX, 1-D) are processed in place in one pass; 2-D tiles are gathered
// into a small buffer first.
//
// Non-finite inputs: NaN elements stay NaN and ±inf elements saturate to the block's largest
// magnitude; neither takes part in choosing the shared exponent. An all-zero block stays zero.

#include <mase/core/compiled.hpp>
#include <mase/core/dispatch.hpp>
#include <mase/format/block.hpp>
#include <mase/quant/blocking.hpp>
#include <mase/quant/fixed.hpp>
#include <mase/quant/log.hpp>
#include <mase/quant/minifloat.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

namespace mase {

namespace detail {

// Largest finite |x| of a block (0 if there is none); NaN and ±inf take no part.
// Computed on the bits, in a form compilers vectorise as an integer max reduction: the bits of
// |x| order like the values, and adding 2^23 maps finite values to positive keys and inf / NaN
// (bits >= 0x7f800000) to negative ones, which never beat the start value 0. `Size` is
// std::size_t or a std::integral_constant for blocks whose length is known at compile time.
template <class Size>
inline float max_finite_abs(const float* x, Size n) noexcept {
  const std::size_t count = n;
  std::int32_t m = 0;
  // Not unrolled: for a known length of 16, GCC would otherwise unroll the loop into scalar code
  // before the vectoriser sees it.
#pragma GCC unroll 1
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint32_t magnitude = std::bit_cast<std::uint32_t>(x[i]) & 0x7fffffffu;
    const auto key = static_cast<std::int32_t>(magnitude + 0x00800000u);
    m = key > m ? key : m;
  }
  return std::bit_cast<float>(m == 0 ? 0u : static_cast<std::uint32_t>(m) - 0x00800000u);
}

inline std::vector<std::int64_t> block_size_vector(const block_shape& b) {
  if (b.rows == block_shape::full) return {b.cols};
  return {b.rows, b.cols};
}

// The block partition of each format (one definition, shared by quantize and encode_blocks).
inline block_layout layout_of(const block_fp_fmt& f, std::span<const std::int64_t> shape) {
  return make_mase_block_layout(shape, block_size_vector(f.block), f.block.skip_first_dim);
}
inline block_layout layout_of(const block_minifloat_fmt& f, std::span<const std::int64_t> shape) {
  return make_mase_block_layout(shape, block_size_vector(f.block), f.block.skip_first_dim);
}
inline block_layout layout_of(const block_log_fmt& f, std::span<const std::int64_t> shape) {
  return make_mase_block_layout(shape, block_size_vector(f.block), f.block.skip_first_dim);
}

inline block_layout layout_of(const mxint_fmt& f, std::span<const std::int64_t> shape) {
  require(!shape.empty(), "quantize(mxint): a scalar has no blocks; give the tensor at least one dim");
  std::vector<std::int64_t> tile(shape.size(), 1);
  tile.back() = f.block.cols == block_shape::full ? std::max<std::int64_t>(shape.back(), 1) : f.block.cols;
  if (shape.size() >= 2) {
    const std::int64_t rows = shape[shape.size() - 2];
    tile[shape.size() - 2] = f.block.rows == block_shape::full ? std::max<std::int64_t>(rows, 1) : f.block.rows;
  }
  return make_tile_layout(shape, tile);
}

inline block_layout layout_of(const mx_fmt& f, std::span<const std::int64_t> shape) {
  require(!shape.empty(), "quantize(mx): a scalar has no blocks; give the tensor at least one dim");
  std::vector<std::int64_t> tile(shape.size(), 1);
  tile.back() = f.block_size;
  return make_tile_layout(shape, tile);
}

// `count` consecutive blocks of length `full` (a constant or a std::size_t) from x and y on: first
// the choices of up to 64 blocks, then their quantization. Choose and Apply come by pointer so
// that both copies of the dispatched kernel call the same objects.
template <class Full, class Choose, class Apply>
void block_runs(const float* x, float* y, std::size_t count, Full full, const Choose* choose, const Apply* apply) {
  using shared_t = decltype((*choose)(x, full));
  constexpr std::size_t batch = 64;
  shared_t shared[batch];
  for (std::size_t first = 0; first < count; first += batch) {
    const std::size_t size = std::min(batch, count - first);
    const float* bx = x + first * full;
    float* by = y + first * full;
    for (std::size_t k = 0; k < size; ++k) shared[k] = (*choose)(bx + k * full, full);
    for (std::size_t k = 0; k < size; ++k) (*apply)(bx + k * full, by + k * full, full, shared[k]);
  }
}

// Runs every block in two steps: `choose(x, n)` reads a block and returns what its elements
// share (an exponent or a bias), `apply(x, y, n, shared)` quantizes it. Contiguous blocks are
// handed over where they lie, in batches: first the choices of up to 64 blocks, then their
// quantization, so that the processor overlaps the short dependent chains of many blocks
// (reduce, pick the exponent, scale) instead of waiting on one block's chain at a time. Tiles
// are gathered into a buffer and scattered back. Full runs of 16 or 32 elements (MASE's and
// OCP MX's usual blocks) pass n as a std::integral_constant: the block's loops then have a known
// length, so they are unrolled and vectorised without remainder loops; `n` converts to
// std::size_t wherever a run length is needed. `out` may be `in`: a block is read by its choice
// and its quantization only, and written by the latter.
template <class Choose, class Apply>
void for_each_block_run(const block_layout& layout, std::span<const float> in, std::span<float> out, Choose&& choose,
                        Apply&& apply) {
  require(static_cast<std::int64_t>(in.size()) == layout.element_count() && in.size() == out.size(),
          "quantize(block format): " + std::to_string(in.size()) + " input and " + std::to_string(out.size()) +
              " output values for shape " + shape_to_string(layout.shape));
  if (in.empty()) return;
  const bool runs_along_rows =
      std::all_of(layout.tile.begin(), layout.tile.end() - 1, [](std::int64_t t) { return t == 1; });
  if (runs_along_rows) {
    const auto row = static_cast<std::size_t>(layout.shape.back());
    const auto run = static_cast<std::size_t>(layout.tile.back());
    // Consecutive full blocks: the bulk of the work, dispatched (core/dispatch.hpp) so that a
    // build for the x86-64 baseline runs them vectorised on a processor with AVX2.
    auto blocks = [&](const float* x, float* y, std::size_t count, auto full) {
      dispatch::run<&block_runs<decltype(full), std::remove_cvref_t<Choose>, std::remove_cvref_t<Apply>>>(
          x, y, count, full, &choose, &apply);
    };
    auto rows_of_runs = [&](auto full) {
      if (row % full == 0) {  // the tensor is one sequence of full blocks
        blocks(in.data(), out.data(), in.size() / full, full);
        return;
      }
      for (std::size_t start = 0; start < in.size(); start += row) {
        const std::size_t count = row / full;
        blocks(in.data() + start, out.data() + start, count, full);
        const std::size_t c = count * full;
        const std::size_t rest = row - c;
        apply(in.data() + start + c, out.data() + start + c, rest, choose(in.data() + start + c, rest));
      }
    };
    if (run == 16) {
      rows_of_runs(std::integral_constant<std::size_t, 16>{});
    } else if (run == 32) {
      rows_of_runs(std::integral_constant<std::size_t, 32>{});
    } else {
      rows_of_runs(run);
    }
    return;
  }
  const std::size_t rank = layout.shape.size();
  const bool tiles_over_last_two_dims =
      rank >= 2 && std::all_of(layout.tile.begin(), layout.tile.end() - 2, [](std::int64_t t) { return t == 1; });
  std::vector<float> gathered, quantized;
  if (tiles_over_last_two_dims) {
    // Each tile is a few row segments: copy them into one buffer, quantize it, copy back.
    const auto rows = static_cast<std::size_t>(layout.shape[rank - 2]);
    const auto cols = static_cast<std::size_t>(layout.shape[rank - 1]);
    const auto tile_rows = static_cast<std::size_t>(layout.tile[rank - 2]);
    const auto tile_cols = static_cast<std::size_t>(layout.tile[rank - 1]);
    gathered.resize(tile_rows * tile_cols);
    quantized.resize(tile_rows * tile_cols);
    for (std::size_t matrix = 0; matrix < in.size(); matrix += rows * cols) {
      for (std::size_t r0 = 0; r0 < rows; r0 += tile_rows) {
        const std::size_t height = std::min(tile_rows, rows - r0);
        for (std::size_t c0 = 0; c0 < cols; c0 += tile_cols) {
          const std::size_t width = std::min(tile_cols, cols - c0);
          for (std::size_t r = 0; r < height; ++r)
            std::copy_n(in.data() + matrix + (r0 + r) * cols + c0, width, gathered.data() + r * width);
          const std::size_t n = height * width;
          apply(gathered.data(), quantized.data(), n, choose(gathered.data(), n));
          for (std::size_t r = 0; r < height; ++r)
            std::copy_n(quantized.data() + r * width, width, out.data() + matrix + (r0 + r) * cols + c0);
        }
      }
    }
    return;
  }
  for_each_block(layout, [&](std::int64_t, std::span<const std::int64_t> elements, std::int64_t) {
    gathered.resize(elements.size());
    quantized.resize(elements.size());
    for (std::size_t k = 0; k < elements.size(); ++k) gathered[k] = in[static_cast<std::size_t>(elements[k])];
    apply(gathered.data(), quantized.data(), elements.size(), choose(gathered.data(), elements.size()));
    for (std::size_t k = 0; k < elements.size(); ++k) out[static_cast<std::size_t>(elements[k])] = quantized[k];
  });
}

// Blocks whose scale leaves float32's range (extreme block maxima) run the double loops. They
// are rare, so those loops stay out of line and the float32 loop inlines into the per-block code.
template <rounding R>
[[gnu::cold, gnu::noinline]] void quantize_fixed_run_double(const float* in, float* out, std::size_t n,
                                                            const fixed_run_params<double>& p) noexcept {
  quantize_fixed_run<R, double>(in, out, n, p);
}

template <rounding R>
[[gnu::cold, gnu::noinline]] void quantize_minifloat_run_double(const float* in, float* out, std::size_t n,
                                                                const minifloat_run_params<double>& p) noexcept {
  quantize_minifloat_run<R, double>(in, out, n, p);
}

// Elements k·2^(e-m), |k| <= 2^m - 1 (sign-magnitude, or two's complement saturated
// symmetrically): one fixed-point run with frac = m - e.
template <rounding R, class Size>
[[gnu::always_inline]] inline void quantize_scaled_integer_block(const float* in, float* out, Size n, int man_bits,
                                                                 int e) noexcept {
  const int frac = man_bits - e;
  const double limit = exp2i<double>(man_bits) - 1;  // man_bits <= 23
  if (frac >= 0 && frac <= 126) [[likely]] {
    const fixed_run_params<float> p{exp2i<float>(frac), exp2i<float>(-frac), static_cast<float>(-limit),
                                    static_cast<float>(limit)};
    quantize_fixed_run<R, float>(in, out, n, p);
  } else {
    quantize_fixed_run_double<R>(in, out, n, {exp2i<double>(frac), exp2i<double>(-frac), -limit, limit});
  }
}

// Smallest e with round(amax · 2^(m-e)) <= 2^m - 1: the shared exponent that holds the block max.
template <rounding R>
int exponent_holding(float amax, int man_bits) noexcept {
  int e = floor_log2_exact(amax) + 1;  // amax < 2^e
  const double mantissa = round_to_integer<R>(static_cast<double>(amax) * exp2i<double>(man_bits - e));
  return mantissa > exp2i<double>(man_bits) - 1 ? e + 1 : e;
}

// The shared exponent or bias of one block, from the block's largest finite magnitude (0 for
// a block without one). One function per format, used by quantize and by encode_blocks.
template <rounding R>
int block_fp_exponent(const block_fp_fmt& f, float amax) noexcept {
  const int e = amax == 0.0f ? f.emin() : exponent_holding<R>(amax, f.man_bits());
  return std::clamp(e, f.emin(), f.emax());
}

inline int block_minifloat_bias(const block_minifloat_fmt& f, float amax) noexcept {
  const int top_field = (1 << f.exp_bits) - 1;
  // Largest bias that keeps every element a float32 (emin >= -126, subnormals >= 2^-149).
  const int max_bias = std::min({(1 << f.bias_bits) - 1, 127, 150 - f.man_bits()});
  // The top binade exponent that holds amax after rounding (minifloats carry into the next binade).
  const int top = amax == 0.0f ? 0 : exponent_holding<rounding::half_even>(amax, f.man_bits() + 1) - 1;
  return std::clamp(top_field - top, 0, max_bias);
}

inline int block_log_bias(const block_log_fmt& f, float amax) noexcept {
  const int top_code = (1 << (f.width - 1)) - 1;
  const int max_bias = std::min((1 << f.bias_bits) - 1, 127);  // keeps emin >= -126
  const int top = amax == 0.0f ? 0 : nearest_log2(amax);
  return std::clamp(top_code - top, 0, max_bias);
}

inline int mx_float_scale(mx_element element, float amax) noexcept {
  if (amax == 0.0f) return mx_fmt::scale_emin;
  return std::clamp(floor_log2_exact(amax) - element_emax(element), mx_fmt::scale_emin, mx_fmt::scale_emax);
}

template <rounding R, class Size>
[[gnu::always_inline]] inline void quantize_minifloat_block(const float* in, float* out, Size n, int emin, int emax,
                                                            int man_bits, double max_value) noexcept {
  if (minifloat_run_fits_float(emin, emax, man_bits)) [[likely]] {
    const auto m = static_cast<float>(max_value);
    quantize_minifloat_run<R, float>(in, out, n, {emin, emax, man_bits, m, m, true});
  } else {
    quantize_minifloat_run_double<R>(in, out, n, {emin, emax, man_bits, max_value, max_value, true});
  }
}

}  // namespace detail

// block_fp (MSFP): shared exponent e in [-bias, 2^exp_bits - 1 - bias], elements s·k·2^(e-m).
MASE_COMPILED_INLINE void quantize(const block_fp_fmt& f, std::span<const float> in,
                                   std::span<const std::int64_t> shape, std::span<float> out);

// block_minifloat: minifloat elements (exp_bits, width-1-exp_bits) with a per-block bias in
// [0, 2^bias_bits - 1], chosen so that the block max lies in the top binade.
MASE_COMPILED_INLINE void quantize(const block_minifloat_fmt& f, std::span<const float> in,
                                   std::span<const std::int64_t> shape, std::span<float> out);

// block_log: log elements (sign + width-1 exponent bits, code 0 = zero) with a per-block bias
// in [0, 2^bias_bits - 1], chosen so that the block max's rounded exponent is the largest code.
MASE_COMPILED_INLINE void quantize(const block_log_fmt& f, std::span<const float> in,
                                   std::span<const std::int64_t> shape, std::span<float> out);

namespace detail {

// Two's-complement elements with width-2 fraction bits under a power-of-two scale 2^s,
// s = floor(log2 amax) clamped to the scale's range: OCP MXINT, with any scale width.
inline int mx_integer_scale(float amax, int scale_emin, int scale_emax) noexcept {
  return amax == 0.0f ? scale_emin : std::clamp(floor_log2_exact(amax), scale_emin, scale_emax);
}

template <rounding R, class Size>
[[gnu::always_inline]] inline void quantize_mx_integer_block(const float* in, float* out, Size n, int width,
                                                             int s) noexcept {
  // value = k · 2^(s - (width - 2)), |k| <= 2^(width-1) - 1
  quantize_scaled_integer_block<R>(in, out, n, width - 1, s + 1);
}

}  // namespace detail

// mxint: blocks of block.rows x block.cols over the last two dims (zero-padded), shared
// exponent of exp_bits bits, elements of `width` bits.
MASE_COMPILED_INLINE void quantize(const mxint_fmt& f, std::span<const float> in,
                                   std::span<const std::int64_t> shape, std::span<float> out);

// OCP MX: blocks of block_size along the last dim, E8M0 scale 2^s with
// s = clamp(floor(log2 amax) - emax_elem, -127, 127), elements converted with saturation.
MASE_COMPILED_INLINE void quantize(const mx_fmt& f, std::span<const float> in,
                                   std::span<const std::int64_t> shape, std::span<float> out);

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/quant/block_definitions.hpp>
#endif
