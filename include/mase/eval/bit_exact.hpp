#pragma once
// The bit-exact evaluator's integer semantics: what MASE's fixed-point RTL computes
// (DeepWok/mase at ae4660b1: src/mase_components/cast/rtl/ and linear_layers/, with the models in
// their test/*_tb.py), and the golden model the emitted Verilog must match.
// Everything the hardware does to a number is one of the rules in this file:
//
// - hardware_cast_raw: fixed_signed_cast. Drop fraction bits by an arithmetic right shift (floor),
//   then saturate to the output width (symmetric when the format asks for it). The RTL only
//   implements floor, so the output format's rounding mode does not apply here.
// - Dot products (linear, conv, matmul): integer products summed exactly in an accumulator of
//   W_x + W_w + ceil(log2 K) bits (fixed_dot_product / fixed_accumulator), the bias cast to the
//   accumulator's fraction (floor) and added in one more bit, then hardware_cast_raw once.
// - add / sub / mul: exact at sum_format / product_format, then hardware_cast_raw.
// - batch_norm1d / 2d: a per-channel scale and shift folded from its statistics (fold_batch_norm), the
//   product exact, then hardware_cast_raw.
// - relu: exact on codes. Other unary functions: a lookup table indexed by the input code whose
//   entries are the output format's quantization of f(x) computed in double (MASE's generated
//   LUTs: integer_quantizer(f(x))), for inputs of at most lut_max_input_width bits. A user's
//   unary op with a scalar_function member (ir/op/any_op.hpp) is tabulated the same way, and one
//   with a linear_form member is lowered as that linear layer.
// - softmax over the last dimension, layer_norm and rms_norm over their rows: integer rules with
//   an exp table, an exact floor division and an exact inverse square root (fixed_functions.hpp).
//
// Values travel between nodes as float32 tensors holding exact fixed-point values
// (code · 2^-frac): every format up to 24 bits is exact in float32.
//
// The accumulator's C++ type is chosen from the formats when the evaluator is built (it is a
// template parameter of the kernels): float when every partial sum provably fits float's 24-bit
// significand, double when it fits 53 bits, int64 beyond. The GEMM then runs on Eigen at that
// type; with exact partial sums the summation order cannot change the result.

#include <mase/core/dispatch.hpp>
#include <mase/core/thread_pool.hpp>
#include <mase/eval/fixed_functions.hpp>
#include <mase/eval/fixed_rules.hpp>
#include <mase/core/tensor_eigen.hpp>
#include <mase/eval/integer_products.hpp>
#include <mase/eval/kernel.hpp>
#include <mase/eval/lowering.hpp>
#include <mase/eval/kernels/elementwise.hpp>
#include <mase/eval/kernels/linear_algebra.hpp>
#include <mase/eval/kernels/pooling.hpp>
#include <mase/eval/mean_rule.hpp>
#include <mase/format/fixed.hpp>
#include <mase/format/format.hpp>
#include <mase/ir/graph.hpp>
#include <mase/quant/quantize.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/core.h>

#if MASE_DISPATCH
#include <immintrin.h>
#endif

namespace mase::eval {

// ---------------------------------------------------------------------------------------------
// The rules: eval/fixed_rules.hpp; softmax and normalization: eval/fixed_functions.hpp; the
// lowering's records: eval/lowering.hpp.

inline constexpr int lut_max_input_width = 16;

// A batch_norm1d or batch_norm2d node's folded scale and shift (folded_batch_norm says how).
template <class BatchNorm, class Node>
folded_batch_norm fold_batch_norm(const Node& n, const fixed_fmt& x, const fixed_fmt& w, const fixed_fmt& b) {
  const auto& bn = n.template as<BatchNorm>();
  const auto values = [&](std::string_view role, float fallback) {
    const auto it = n.parameters.find(std::string(role));
    return it == n.parameters.end() ? std::vector<float>(static_cast<std::size_t>(bn.num_features), fallback)
                                    : std::vector<float>(it->second.values().begin(), it->second.values().end());
  };
  const std::vector<float> gamma = values("weight", 1), beta = values("bias", 0), mean = values("running_mean", 0),
                           variance = values("running_var", 1);
  std::vector<float> scale(gamma.size()), shift(gamma.size());
  for (std::size_t c = 0; c < gamma.size(); ++c) {
    const double s = static_cast<double>(gamma[c]) / std::sqrt(static_cast<double>(variance[c]) + bn.eps);
    scale[c] = static_cast<float>(s);
    shift[c] = static_cast<float>(static_cast<double>(beta[c]) - static_cast<double>(mean[c]) * s);
  }
  quantize(format(w), scale, scale);
  quantize(format(b), shift, shift);
  folded_batch_norm folded;
  folded.accumulator_width = linear_accumulator_width(x, w, 1, b);
  for (std::size_t c = 0; c < gamma.size(); ++c) {
    folded.scale.push_back(raw_of(scale[c], w.frac));
    folded.aligned_shift.push_back(bias_to_accumulator_raw(raw_of(shift[c], b.frac), b.frac, x.frac + w.frac));
  }
  return folded;
}

// ---------------------------------------------------------------------------------------------
// Casting whole tensors.

// Element-wise hardware_cast_raw of exact values of format `from` into `to`, as floats. The
// float path computes the same floor-and-clamp on scaled values (exact: powers of two).
inline void hardware_cast(const fixed_fmt& to, std::span<const float> in, std::span<float> out) {
  require(in.size() == out.size(), "hardware_cast: sizes differ");
  const integer_range range = to.saturation_range();
  const double lo = static_cast<double>(range.lo);
  const double hi = static_cast<double>(range.hi);
  const double up = std::ldexp(1.0, to.frac), down = std::ldexp(1.0, -to.frac);
  for (std::size_t i = 0; i < in.size(); ++i) {
    double v = round_to_integer<rounding::floor>(static_cast<double>(in[i]) * up);
    v = v < lo ? lo : (v > hi ? hi : v);
    out[i] = static_cast<float>(v * down);
  }
}

// ---------------------------------------------------------------------------------------------
// Kernels.

namespace detail {

// The codes of exact values with `frac` fraction bits.
inline std::vector<std::int64_t> codes_of(std::span<const float> values, int frac) {
  std::vector<std::int64_t> codes(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) codes[i] = raw_of(values[i], frac);
  return codes;
}

// Codes as the accumulator's C++ type: the codes themselves for int64, their values (exact) for
// floating types.
template <class T>
std::vector<T> accumulator_scalars(std::span<const std::int64_t> codes, int frac) {
  std::vector<T> out(codes.size());
  for (std::size_t i = 0; i < codes.size(); ++i) {
    if constexpr (std::is_same_v<T, std::int64_t>) out[i] = codes[i];
    else out[i] = static_cast<T>(value_of(codes[i], frac));
  }
  return out;
}

// The accumulator's elements are laid out [outer, channels, inner] (linear: inner = 1; conv:
// inner = the output pixels of one channel). Each gets its channel's aligned bias, then the cast,
// written to out as floats.
struct epilogue_layout {
  std::size_t outer, channels, inner;
};

// The cast of floating sums (exact multiples of 2^-acc_frac that fit T's significand): scaling by
// powers of two, floor and the bias sum are exact, so this is hardware_cast_raw on the raw values.
// A bias per element (bias_step 1) or one for the run (bias_step 0). Dispatched: at -O2, and
// at -O3 without -fno-trapping-math, GCC 12 vectorises no floor; AVX-512 halves its time.
template <class T>
struct floating_cast {
  T up, down, lo, hi;  // 2^F_o, 2^-F_o and the output's saturation range

  float operator()(T sum) const noexcept {
    T r = round_to_integer<rounding::floor>(sum * up);
    r = r < lo ? lo : r;
    r = hi < r ? hi : r;
    return static_cast<float>(r * down);
  }
};
template <class T>
void cast_floating_sums(const T* acc, std::size_t count, const T* bias, std::size_t bias_step, floating_cast<T> c,
                        float* out) noexcept {
  // Two loops, so that the run's one bias is a broadcast: GCC 12's -O2 build vectorised the
  // strided read bias[j * bias_step] as sixteen scalar loads (its share of a bit-exact LeNet run
  // fell from 11.7 to 5.0 %).
  if (bias_step == 0) {
    const T b = *bias;
    for (std::size_t j = 0; j < count; ++j) out[j] = c(acc[j] + b);
  } else {
    for (std::size_t j = 0; j < count; ++j) out[j] = c(acc[j] + bias[j]);
  }
}

template <class T>
void dot_product_epilogue(const T* acc, epilogue_layout layout, int acc_frac, std::span<const T> aligned_bias,
                          const fixed_fmt& out_fmt, float* out) {
  const auto run = [&](std::size_t first, std::size_t count, const T* bias, std::size_t bias_step) {
    if constexpr (std::is_same_v<T, std::int64_t>) {
      for (std::size_t j = 0; j < count; ++j)
        out[first + j] = static_cast<float>(
            value_of(hardware_cast_raw(acc[first + j] + bias[j * bias_step], acc_frac, out_fmt), out_fmt.frac));
    } else {
      const integer_range range = out_fmt.saturation_range();
      const floating_cast<T> c{static_cast<T>(std::ldexp(1.0, out_fmt.frac)), static_cast<T>(std::ldexp(1.0, -out_fmt.frac)),
                               static_cast<T>(range.lo), static_cast<T>(range.hi)};
      dispatch::run_widest<&cast_floating_sums<T>>(acc + first, count, bias, bias_step, c, out + first);
    }
  };
  const T zero{0};
  if (aligned_bias.empty()) {
    run(0, layout.outer * layout.channels * layout.inner, &zero, 0);
  } else if (layout.inner == 1) {  // rows of channels: the bias varies along the row
    for (std::size_t o = 0; o < layout.outer; ++o) run(o * layout.channels, layout.channels, aligned_bias.data(), 1);
  } else {  // planes of pixels: one bias per plane
    for (std::size_t o = 0; o < layout.outer * layout.channels; ++o)
      run(o * layout.inner, layout.inner, &aligned_bias[o % layout.channels], 0);
  }
}

// x as T: the values themselves for floating T, the raw codes for int64.
template <class T>
void to_accumulator_scalars(std::span<const float> in, int frac, std::vector<T>& out) {
  out.resize(in.size());
  if constexpr (std::is_same_v<T, std::int64_t>) {
    const code_scale scale(frac);
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = scale.code(in[i]);
  } else {
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = static_cast<T>(in[i]);
  }
}

template <class T>
struct dot_product_buffers {
  std::vector<T> weight, aligned_bias;  // from the lowering, converted once
  std::vector<T> input, acc, scratch;
};

template <class T, class Op>
bit_exact_kernel make_dot_product_kernel(const Op& op, const node& n, const fixed_lowering& l) {
  auto buffers = std::make_shared<dot_product_buffers<T>>();
  buffers->weight = accumulator_scalars<T>(l.weight_codes, l.weight->frac);
  const int acc_frac = l.accumulator_frac();
  buffers->aligned_bias = accumulator_scalars<T>(l.aligned_bias, acc_frac);
  const std::string description =
      fmt::format("{}: {}-bit x {}-bit, accumulator {} bits in {}", n.op_name(), l.input.width, l.weight->width,
                  l.accumulator_width, to_string(accumulator_for(l.accumulator_width)));
  return {description, [op, x_fmt = l.input, out_fmt = l.output, acc_frac, buffers,
                        weight_shape = l.weight_shape](const kernel_args& args) {
            (void)op;  // read by the conv products only
            const tensor& x = args.input(0);
            tensor& y = args.output(0);
            dot_product_buffers<T>& b = *buffers;
            to_accumulator_scalars<T>(x.values(), x_fmt.frac, b.input);
            b.acc.resize(y.size());
            std::int64_t channels = 1, inner = 1;  // bias index of element i = (i / inner) % channels
            if constexpr (std::is_same_v<Op, op::linear>) {
              const Eigen::Index in = weight_shape[1], out = weight_shape[0];
              linear_product<T>(b.input.data(), static_cast<Eigen::Index>(x.size()) / in, in, b.weight.data(), out,
                                b.acc.data(), args.threads);
              channels = out;
            } else if constexpr (std::is_same_v<Op, op::conv1d> || std::is_same_v<Op, op::conv2d>) {
              const int spatial = std::is_same_v<Op, op::conv1d> ? 1 : 2;
              channels = weight_shape[0];
              for (int d = y.rank() - spatial; d < y.rank(); ++d) inner *= y.shape()[d];
              const auto convolve = [&](T* acc, const auto& after_image) {
                if constexpr (std::is_same_v<Op, op::conv1d>)
                  conv1d_product<T>(op, b.input.data(), x.shape(), b.weight.data(), acc, y.shape(), b.scratch,
                                    args.threads, after_image);
                else
                  conv2d_product<T>(op, b.input.data(), x.shape(), b.weight.data(), acc, y.shape(), b.scratch,
                                    args.threads, after_image);
              };
              if constexpr (std::is_same_v<T, float>) {
                // Float sums go straight into y, and each image is cast in place as soon as its sums are
                // complete, while they are still in cache.
                const auto image_size = static_cast<std::size_t>(channels * inner);
                convolve(y.data(), [&](Eigen::Index image) {
                  float* sums = y.data() + static_cast<std::size_t>(image) * image_size;
                  dot_product_epilogue<T>(sums, {1, static_cast<std::size_t>(channels), static_cast<std::size_t>(inner)},
                                          acc_frac, b.aligned_bias, out_fmt, sums);
                });
                return;
              } else {
                convolve(b.acc.data(), linear_algebra_detail::no_image_step{});
              }
            }
            const std::size_t planes = static_cast<std::size_t>(channels);
            const std::size_t per_plane = static_cast<std::size_t>(inner);
            dot_product_epilogue<T>(b.acc.data(), {y.size() / (planes * per_plane), planes, per_plane}, acc_frac,
                                    b.aligned_bias, out_fmt, y.data());
          }};
}

template <class T>
bit_exact_kernel make_matmul_kernel(const node& n, const fixed_lowering& l) {
  auto buffers = std::make_shared<std::array<std::vector<T>, 3>>();
  return {fmt::format("{}: {}-bit x {}-bit, accumulator {} bits in {}", n.op_name(), l.input.width,
                      l.other_input->width, l.accumulator_width, to_string(accumulator_for(l.accumulator_width))),
          [a_fmt = l.input, b_fmt = *l.other_input, out_fmt = l.output, acc_frac = l.accumulator_frac(),
           buffers](const kernel_args& args) {
            auto& [a, b, acc] = *buffers;
            const tensor& x = args.input(0);
            const tensor& w = args.input(1);
            tensor& y = args.output(0);
            to_accumulator_scalars<T>(x.values(), a_fmt.frac, a);
            to_accumulator_scalars<T>(w.values(), b_fmt.frac, b);
            acc.resize(y.size());
            matmul_product<T>(a.data(), x.shape(), b.data(), w.shape(), acc.data(), y.shape());
            dot_product_epilogue<T>(acc.data(), {1, 1, y.size()}, acc_frac, {}, out_fmt, y.data());
          }};
}

template <class Make>
bit_exact_kernel with_accumulator(int acc_width, Make&& make) {
  switch (accumulator_for(acc_width)) {
    case accumulator_type::float32: return make(float{});
    case accumulator_type::float64: return make(double{});
    default: return make(std::int64_t{});
  }
}

// a op b (add, sub or mul) on exact values, floored to the output's step (`up` = 2^frac) and
// saturated to its codes [lo, hi]: exact in double (at most 53 bits, lower_to_fixed checks).
template <class Op>
float exact_binary_value(float a, float b, double up, double down, double lo, double hi) noexcept {
  const double u = a, v = b;
  const double exact_value = std::is_same_v<Op, op::mul> ? u * v : std::is_same_v<Op, op::sub> ? u - v : u + v;
  double r = std::floor(exact_value * up);
  r = r < lo ? lo : (r > hi ? hi : r);
  return static_cast<float>(r * down);
}

// exact_binary_value over operands of the same shape: written for the vectoriser, and dispatched.
template <class Op>
void exact_binary_values(const float* __restrict a, const float* __restrict b, float* __restrict y, std::size_t count,
                         double up, double down, double lo, double hi) noexcept {
  for (std::size_t i = 0; i < count; ++i) y[i] = exact_binary_value<Op>(a[i], b[i], up, down, lo, hi);
}

// Element-wise add / sub / mul of two fixed tensors (the broadcasting cases through
// elementwise_detail::binary).

template <class Op>
bit_exact_kernel make_binary_kernel(const node& n, const fixed_lowering& l) {
  return bit_exact_kernel{
      fmt::format("{}: exact in {} bits, then cast to {} bits", n.op_name(), l.accumulator_width, l.output.width),
      [out_fmt = l.output](const kernel_args& args) {
        const integer_range range = out_fmt.saturation_range();
        const double lo = static_cast<double>(range.lo);
        const double hi = static_cast<double>(range.hi);
        const double up = std::ldexp(1.0, out_fmt.frac), down = std::ldexp(1.0, -out_fmt.frac);
        const auto exact_then_cast = [=](float a, float b) { return exact_binary_value<Op>(a, b, up, down, lo, hi); };
        const tensor& a = args.input(0);
        const tensor& b = args.input(1);
        if (a.shape() == b.shape() && args.output(0).shape() == a.shape()) {
          // The common case (a residual add): one pass, vectorised in the dispatched copy.
          float* y = args.output(0).data();
          thread_pool::shared_chunks(y == nullptr ? 0 : a.size(), args.threads, parallel_grain,
                                     [&](std::size_t first, std::size_t last, std::size_t) {
                                       dispatch::run<&exact_binary_values<Op>>(a.data() + first, b.data() + first,
                                                                               y + first, last - first, up, down, lo, hi);
                                     });
          return;
        }
        // PyTorch's broadcasting (a bias over the last dimension, a mask over attention scores).
        elementwise_detail::binary(args, Op::name, [&](const auto& p, const auto& q) {
          using P = std::decay_t<decltype(p)>;
          using Q = std::decay_t<decltype(q)>;
          if constexpr (std::is_same_v<P, float> && std::is_same_v<Q, float>) return exact_then_cast(p, q);
          else if constexpr (std::is_same_v<P, float>) return q.unaryExpr([&](float b) { return exact_then_cast(p, b); });
          else if constexpr (std::is_same_v<Q, float>) return p.unaryExpr([&](float a) { return exact_then_cast(a, q); });
          else return p.binaryExpr(q, exact_then_cast);
        });
      }};
}

inline bit_exact_kernel make_scale_shift_kernel(const fixed_lowering& l) {
  auto scale = std::make_shared<const std::vector<std::int64_t>>(l.weight_codes);
  auto shift = std::make_shared<const std::vector<std::int64_t>>(l.aligned_bias);
  return bit_exact_kernel{
      fmt::format("batch norm: per-channel scale and shift, accumulator {} bits", l.accumulator_width),
      [scale, shift, in = code_scale(l.input.frac), to = l.output, out = code_scale(l.output.frac),
       acc_frac = l.accumulator_frac()](const kernel_args& args) {
        const tensor& v = args.input(0);
        tensor& y = args.output(0);
        // [N, C, ...]: the elements of one channel of one sample are contiguous ([N, C]: one).
        const std::int64_t channels = v.shape()[1];
        std::int64_t plane = 1;
        for (int d = 2; d < v.shape().size(); ++d) plane *= v.shape()[d];
        for (std::size_t i = 0; i < y.size(); ++i) {
          const auto c = static_cast<std::size_t>((static_cast<std::int64_t>(i) / plane) % channels);
          const std::int64_t acc = in.code(v.data()[i]) * (*scale)[c] + (*shift)[c];
          y.data()[i] = out.value(hardware_cast_raw(acc, acc_frac, to));
        }
      }};
}

// y[i] = table[code of values[i] − lo]. The values are exact codes of a format whose codes lie in
// [lo, hi] (the evaluator casts them): scaling by `scale` = 2^frac is exact in double, and the
// clamp (which also sends NaN to lo) only guards the index. Written for the vectoriser, and
// dispatched: a baseline build vectorises nothing at -O2.
inline void look_up_codes(const float* __restrict values, float* __restrict y, std::size_t count, double scale,
                          double lo, double hi,
                          const float* table) noexcept {
  for (std::size_t i = 0; i < count; ++i) {
    double code = values[i] * scale;
    code = code > lo ? code : lo;
    code = code < hi ? code : hi;
    y[i] = table[static_cast<std::int32_t>(code - lo)];
  }
}

// Every table is padded to this size, which the AVX-512 lookup reads whole (8-bit codes).
inline constexpr std::size_t register_table_entries = 256;

#if MASE_DISPATCH
// look_up_codes in float with AVX2's gather (GCC 12, vectorising the loop itself, loads each entry
// on its own), for scales that are normal floats: a value times 2^frac is then its code exactly,
// and the clamp (max_ps returns lo for NaN) keeps each index in the table.
__attribute__((target("avx2"))) inline void look_up_codes_avx2(const float* values, float* y, std::size_t count,
                                                              float scale, float lo, float hi,
                                                              const float* table) noexcept {
  const __m256 s = _mm256_set1_ps(scale), low = _mm256_set1_ps(lo), high = _mm256_set1_ps(hi);
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256 code = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_loadu_ps(values + i), s), low), high);
    _mm256_storeu_ps(y + i, _mm256_i32gather_ps(table, _mm256_cvttps_epi32(_mm256_sub_ps(code, low)), 4));
  }
  look_up_codes(values + i, y + i, count - i, scale, lo, hi, table);
}

// The same for tables of at most register_table_entries entries (8-bit codes), which sixteen
// AVX-512 registers hold: eight two-register permutes each look up 32 entries by an index's low
// five bits, and its three high bits choose among the eight. No memory access per element, where
// a gather makes one per element.
__attribute__((target("avx512f"))) inline void look_up_codes_avx512(const float* values, float* y, std::size_t count,
                                                                  float scale, float lo, float hi,
                                                                  const float* table) noexcept {
  __m512 entries[16];  // table holds register_table_entries floats, padded
  for (int k = 0; k < 16; ++k) entries[k] = _mm512_loadu_ps(table + 16 * k);
  const __m512 s = _mm512_set1_ps(scale), low = _mm512_set1_ps(lo), high = _mm512_set1_ps(hi);
  std::size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    // The zero-masking forms, all lanes kept: GCC 12's plain forms pass an undefined vector that
    // -Wmaybe-uninitialized reports.
    const __mmask16 all = 0xFFFF;
    const __m512 code =
        _mm512_maskz_min_ps(all, _mm512_maskz_max_ps(all, _mm512_mul_ps(_mm512_loadu_ps(values + i), s), low), high);
    const __m512i index = _mm512_maskz_cvttps_epi32(all, _mm512_sub_ps(code, low));
    __m512 found[8];
    for (int p = 0; p < 8; ++p) found[p] = _mm512_permutex2var_ps(entries[2 * p], index, entries[2 * p + 1]);
    for (int bit = 5, pairs = 4; bit < 8; ++bit, pairs /= 2) {
      const __mmask16 upper = _mm512_test_epi32_mask(index, _mm512_set1_epi32(1 << bit));
      for (int p = 0; p < pairs; ++p) found[p] = _mm512_mask_blend_ps(upper, found[2 * p], found[2 * p + 1]);
    }
    _mm512_storeu_ps(y + i, found[0]);
  }
  look_up_codes(values + i, y + i, count - i, scale, lo, hi, table);
}
#endif

inline bit_exact_kernel make_lookup_kernel(const node& n, const fixed_lowering& l) {
  // Padded with zeros to the registers' table, which reads whole vectors (no index reaches the
  // padding: the codes are clamped to the table).
  auto table = std::make_shared<std::vector<float>>(std::max(l.table.size(), register_table_entries));
  for (std::size_t i = 0; i < l.table.size(); ++i) (*table)[i] = static_cast<float>(value_of(l.table[i], l.output.frac));
  const integer_range range = l.input.code_range();  // as many codes as the table has entries
  return bit_exact_kernel{fmt::format("{}: lookup table of {} entries", n.op_name(), l.table.size()),
                          [lo = static_cast<double>(range.lo), hi = static_cast<double>(range.hi),
                           scale = std::ldexp(1.0, l.input.frac), in_registers = l.table.size() <= register_table_entries,
                           table](const kernel_args& args) {
                            const tensor& v = args.input(0);
                            tensor& y = args.output(0);
                            thread_pool::shared_chunks(
                                y.size(), args.threads, parallel_grain, [&](std::size_t first, std::size_t last, std::size_t) {
#if MASE_DISPATCH
                                  const bool normal_float_scale = scale >= 0x1p-126 && scale <= 0x1p126;
                                  if (normal_float_scale && in_registers && dispatch::chosen() >= dispatch::target::x86_64_v4)
                                    return look_up_codes_avx512(v.data() + first, y.data() + first, last - first,
                                                                static_cast<float>(scale), static_cast<float>(lo),
                                                                static_cast<float>(hi), table->data());
                                  if (normal_float_scale && dispatch::chosen() >= dispatch::target::x86_64_v3)
                                    return look_up_codes_avx2(v.data() + first, y.data() + first, last - first,
                                                              static_cast<float>(scale), static_cast<float>(lo),
                                                              static_cast<float>(hi), table->data());
#endif
                                  dispatch::run<&look_up_codes>(v.data() + first, y.data() + first, last - first, scale,
                                                                lo, hi, static_cast<const float*>(table->data()));
                                });
                          }};
}

// Rows of values (exact codes scaled by 2^−frac: `up` = 2^frac) through a normalization rule
// into values (`down` = the output's 2^−frac), with `buffer` for two rows of codes. A kernel for
// the dispatcher (no error path): it sets *overflow and stops when a row's variance overflows.
inline void normalize_value_rows(const normalization_rule* rule, const float* values, float* y, std::size_t rows,
                                 double up, double down, std::int64_t* buffer, bool* overflow) noexcept {
  const auto n = static_cast<std::size_t>(rule->row_length);
  std::int64_t* x = buffer;
  std::int64_t* r = buffer + n;
  // Codes of at most 31 bits pass through int32, whose conversions vectorise (int64's do not
  // before AVX-512).
  const bool narrow = rule->input.width <= 31 && rule->output.width <= 31;
  for (std::size_t row = 0; row < rows; ++row, values += n, y += n) {
    if (narrow)
      for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<std::int32_t>(static_cast<double>(values[i]) * up);
    else
      for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<std::int64_t>(static_cast<double>(values[i]) * up);
    if (!rule->run_row(x, r)) {
      *overflow = true;
      return;
    }
    if (narrow)
      for (std::size_t i = 0; i < n; ++i) y[i] = static_cast<float>(static_cast<std::int32_t>(r[i]) * down);
    else
      for (std::size_t i = 0; i < n; ++i) y[i] = static_cast<float>(static_cast<double>(r[i]) * down);
  }
}

// A rule applied to each row (the last dimension's run of values, or a normalization's trailing
// dimensions): codes in, codes out.
template <class Rule>
bit_exact_kernel make_row_kernel(std::string description, std::shared_ptr<const Rule> rule, const fixed_fmt& in,
                                 const fixed_fmt& out) {
  // One row in and one out for each thread, kept between runs.
  auto rows = std::make_shared<std::vector<std::vector<std::int64_t>>>();
  return bit_exact_kernel{std::move(description), [rule, rows, in = code_scale(in.frac),
                                                   out = code_scale(out.frac)](const kernel_args& args) {
                            const tensor& v = args.input(0);
                            tensor& y = args.output(0);
                            const auto row = static_cast<std::size_t>(rule->row_length);
                            require(row > 0 && v.size() % row == 0,
                                    "bit-exact: {} values do not split into rows of {}", v.size(), row);
                            rows->resize(std::max(rows->size(), args.threads));
                            // The threads split the rows.
                            thread_pool::shared_chunks(
                                v.size() / row, args.threads, std::max<std::size_t>(1, parallel_grain / row / 4),
                                [&](std::size_t first, std::size_t last, std::size_t part) {
                                  std::vector<std::int64_t>& buffer = (*rows)[part];
                                  buffer.resize(2 * row);
                                  if constexpr (std::is_same_v<Rule, normalization_rule>) {
                                    bool overflow = false;
                                    dispatch::run_widest<&normalize_value_rows>(rule.get(), v.data() + first * row,
                                                                         y.data() + first * row, last - first, in.up,
                                                                         out.down, buffer.data(), &overflow);
                                    require(!overflow, "bit-exact: a row's variance overflows 64 bits");
                                    return;
                                  }
                                  const std::span<std::int64_t> x(buffer.data(), row), r(buffer.data() + row, row);
                                  for (std::size_t start = first * row; start < last * row; start += row) {
                                    for (std::size_t i = 0; i < row; ++i) x[i] = in.code(v.data()[start + i]);
                                    rule->run(x, r);
                                    for (std::size_t i = 0; i < row; ++i) y.data()[start + i] = out.value(r[i]);
                                  }
                                });
                          }};
}

}  // namespace detail

// A unary function's table: entry c is the output format's quantization of f(value of code c),
// for every code of the input format (codes in two's complement order from the lowest value).
template <class Function>
std::vector<float> function_lut(Function&& f, const fixed_fmt& in, const format& out) {
  const integer_range range = in.code_range();
  std::vector<float> table;
  table.reserve(static_cast<std::size_t>(range.hi - range.lo + 1));
  for (std::int64_t c = range.lo; c <= range.hi; ++c) table.push_back(static_cast<float>(f(value_of(c, in.frac))));
  quantize(out, table, table);
  return table;
}
template <class Op>
std::vector<float> activation_lut(const Op& op, const fixed_fmt& in, const format& out) {
  return function_lut([&](double x) { return scalar_function(op, x); }, in, out);
}

// The number of terms of a matmul node's dot products, from its first input's shape.
template <class Node>
std::int64_t matmul_inner_dimension(const Node& n) {
  const shape& a_shape = std::get<tensor_meta>(n.meta.common.args.find("data_in_0")->second).shape;
  return a_shape.empty() ? 1 : a_shape.back();
}

// The lowering of a node of a built-in op, or none when its op or formats have no integer
// semantics here (the evaluator then runs it as in fake-quant mode; the emitter refuses it).
// `parameters` are the node's quantized parameters. (A template so that including this header
// compiles no op's lowering.)
namespace detail {

// A global mean: each run of rule.count consecutive codes summed exactly (int64: the rule has
// checked that the sum fits) and divided by the rule (floor, saturate). The threads split the runs.
inline bit_exact_kernel make_mean_kernel(const mean_rule& rule, const fixed_fmt& input) {
  return {fmt::format("mean of {} values: exact sum, floor division (a {}-bit reciprocal in hardware), one cast",
                      rule.count, std::bit_width(static_cast<std::uint64_t>(rule.multiplier))),
          [rule, in = code_scale(input.frac), out = code_scale(rule.output.frac)](const kernel_args& args) {
            const tensor& x = args.input(0);
            tensor& y = args.output(0);
            const auto count = static_cast<std::size_t>(rule.count);
            require(x.size() == y.size() * count,
                    "node {}: the bit-exact mean averages runs of {} values (the metadata's input shape), but this "
                    "input has shape {}; run add_common_metadata on inputs of this shape",
                    args.node_name, rule.count, to_string(x.shape()));
            thread_pool::shared_chunks(y.size(), args.threads, std::max<std::size_t>(1, parallel_grain / count),
                                       [&](std::size_t first, std::size_t last, std::size_t) {
              for (std::size_t r = first; r < last; ++r) {
                const float* run = x.data() + r * count;
                std::int64_t sum = 0;
                for (std::size_t i = 0; i < count; ++i) sum += in.code(run[i]);
                y.data()[r] = out.value(rule.apply(sum));
              }
            });
          }};
}

// An average pool: each window's codes summed exactly (in float: the rule's sums fit 24 bits, which
// lower_to_fixed checks) and divided by its divisor with the mean rule, in the planned shapes.
template <class Op>
bit_exact_kernel make_window_mean_kernel(const Op& pool, const fixed_lowering& l) {
  std::string divisors;
  for (const mean_rule& r : l.window_means->by_divisor) divisors += fmt::format("{}{}", divisors.empty() ? "" : ", ", r.averaged);
  return {fmt::format("{}: exact window sums, floor division by {} (a constant reciprocal in hardware), one cast",
                      Op::name, divisors),
          [pool, rules = l.window_means, in = code_scale(l.input.frac),
           out = code_scale(l.output.frac)](const kernel_args& args) {
            const pooling_detail::planes p = pooling_detail::window_planes(pool, args, pool_spatial_rank<Op>());
            // Any batch: the divisors depend on the spatial dimensions only.
            const pooling_detail::planes& planned = rules->planned;
            require(p.d == planned.d && p.h == planned.h && p.w == planned.w,
                    "node {}: the bit-exact average pool's divisors were planned for the metadata's spatial "
                    "dimensions, but this input has shape {}; run add_common_metadata on inputs of this shape",
                    args.node_name, to_string(args.input(0).shape()));
            const auto finish = [&](float sum, std::int64_t divisor) {
              return out.value(rules->for_divisor(divisor).apply(in.code(sum)));
            };
            pooling_detail::over_planes(p, args.input(0).data(), args.output().data(), args.threads,
                                        [&](const pooling_detail::planes& part, const float* x, float* y) {
                                          pooling_detail::avg_pool(part, pool.count_include_pad,
                                                                   divisor_override_of(pool), x, y, finish);
                                        });
          }};
}

}  // namespace detail

// The integer rule op type Op computes by: the one it names (ir/op/op_base.hpp), else a table
// for a function of one operand, else none (the node runs as in fake-quant mode).
template <class Op>
constexpr std::optional<lowering_kind> integer_rule_of() noexcept {
  if constexpr (op_with_integer_rule<Op>) return Op::integer_rule;
  else if constexpr (has_scalar_function<Op>) return lowering_kind::lookup_table;
  else return std::nullopt;
}

template <class Node>
std::optional<fixed_lowering> lower_to_fixed(const Node& n, const ordered_map<tensor>& parameters) {
  using detail::fixed_entry;
  const std::optional<fixed_fmt> x = fixed_entry(n, "data_in_0");
  const std::optional<fixed_fmt> out = fixed_entry(n, "data_out_0", true);
  if (!x || !out) return std::nullopt;
  fixed_lowering l{.input = *x, .output = *out};
  // linear, conv1d, conv2d and a user's op with a linear form: the weight and bias as codes.
  const auto lower_dot_product = [&]() -> std::optional<fixed_lowering> {
    l.kind = lowering_kind::dot_product;
    l.weight = fixed_entry(n, "weight");
    const auto weight = parameters.find("weight");
    if (!l.weight || weight == parameters.end()) return std::nullopt;
    const auto bias = parameters.find("bias");
    if (bias != parameters.end()) {
      l.bias = fixed_entry(n, "bias");
      if (!l.bias) return std::nullopt;
    }
    l.weight_shape = weight->second.shape();
    const std::int64_t k = l.weight_shape.numel() / l.weight_shape[0];  // in/groups · kernel
    l.accumulator_width = linear_accumulator_width(*x, *l.weight, k, l.bias);
    require(l.accumulator_width <= 63,
            "node {}: the bit-exact accumulator needs {} bits, more than int64 holds; use narrower formats",
            n.name, l.accumulator_width);
    l.weight_codes = detail::codes_of(weight->second.values(), l.weight->frac);
    if (l.bias) {
      l.aligned_bias = detail::codes_of(bias->second.values(), l.bias->frac);
      for (std::int64_t& c : l.aligned_bias) c = bias_to_accumulator_raw(c, l.bias->frac, l.accumulator_frac());
    }
    return l;
  };
  return visit_op<std::optional<fixed_lowering>>(
      n.op,
      [&](const auto& op) -> std::optional<fixed_lowering> {
        using Op = std::decay_t<decltype(op)>;
        constexpr std::optional<lowering_kind> rule = integer_rule_of<Op>();
        if constexpr (rule == lowering_kind::dot_product) {
          return lower_dot_product();
        } else if constexpr (rule == lowering_kind::matmul) {
          l.kind = lowering_kind::matmul;
          l.other_input = fixed_entry(n, "data_in_1");
          if (!l.other_input) return std::nullopt;
          const std::int64_t k = matmul_inner_dimension(n);
          l.accumulator_width = dot_product_accumulator_width(*x, *l.other_input, k, false);
          require(l.accumulator_width <= 63,
                  "node {}: the bit-exact accumulator needs {} bits, more than int64 holds; use narrower formats",
                  n.name, l.accumulator_width);
          return l;
        } else if constexpr (rule == lowering_kind::elementwise) {
          l.kind = lowering_kind::elementwise;
          l.other_input = fixed_entry(n, "data_in_1");
          if (!l.other_input || n.inputs.size() != 2) return std::nullopt;
          const fixed_fmt& y = *l.other_input;
          l.accumulator_width = (std::is_same_v<Op, op::mul>   ? product_format(*x, y)
                                 : std::is_same_v<Op, op::sub> ? difference_format(*x, y)
                                                               : sum_format(*x, y))
                                    .width;
          if (l.accumulator_width > 53) return std::nullopt;  // exact in double
          return l;
        } else if constexpr (rule == lowering_kind::scale_shift) {
          l.kind = lowering_kind::scale_shift;
          l.weight = fixed_entry(n, "weight");
          l.bias = fixed_entry(n, "bias");
          if (!l.weight || !l.bias) return std::nullopt;  // no formats for the scale and shift
          folded_batch_norm folded = fold_batch_norm<Op>(n, *x, *l.weight, *l.bias);
          if (folded.accumulator_width > 63) return std::nullopt;
          l.accumulator_width = folded.accumulator_width;
          l.weight_codes = std::move(folded.scale);
          l.aligned_bias = std::move(folded.aligned_shift);
          return l;
        } else if constexpr (rule == lowering_kind::relu) {
          l.kind = lowering_kind::relu;
          return l;
        } else if constexpr (rule == lowering_kind::softmax) {
          const shape& s = std::get<tensor_meta>(n.meta.common.args.find("data_in_0")->second).shape;
          const int rank = static_cast<int>(s.size());
          // The integer rule runs along the last dimension, on inputs whose distances fit a table.
          if (rank == 0 || (op.dim != -1 && op.dim != rank - 1) || x->width > lut_max_input_width) return std::nullopt;
          l.kind = lowering_kind::softmax;
          l.softmax_rows = std::make_shared<const softmax_rule>(make_softmax_rule(*x, *out, s.back()));
          return l;
        } else if constexpr (rule == lowering_kind::mean) {
          const std::int64_t count = averaged_count(n);
          if (count < 1) return std::nullopt;  // a mean over other dimensions runs as in fake-quant
          l.kind = lowering_kind::mean;
          l.mean_runs = make_mean_rule(*x, *out, count);
          return l;
        } else if constexpr (rule == lowering_kind::window_mean) {
          std::optional<window_mean_rule> rules = window_mean_rule_of(n, op, *x, *out);
          if (!rules) return std::nullopt;  // nothing to pool, or windows of padding only
          // The kernel sums in float, exact while the sums fit its 24-bit significand.
          require(rules->by_divisor.front().sum_width <= 24,
                  "node {} ({}): a window's exact sum needs {} bits, more than the bit-exact evaluator's float sums "
                  "hold (24); use a narrower input format",
                  n.name, Op::name, rules->by_divisor.front().sum_width);
          l.kind = lowering_kind::window_mean;
          l.window_means = std::make_shared<const window_mean_rule>(std::move(*rules));
          return l;
        } else if constexpr (rule == lowering_kind::normalization) {
          std::int64_t row = 1;
          for (std::int64_t d : op.normalized_shape) row *= d;
          const auto operand = [&](std::string_view role, bool present) -> std::optional<std::optional<fixed_fmt>> {
            const auto p = parameters.find(std::string(role));
            if (!present || p == parameters.end()) return std::optional<fixed_fmt>{};
            const std::optional<fixed_fmt> f = fixed_entry(n, role);
            if (!f) return std::nullopt;  // a float affine parameter: no integer rule
            return f;
          };
          constexpr bool centred = std::is_same_v<Op, op::layer_norm>;
          bool has_bias = false;
          if constexpr (requires { op.bias; }) has_bias = op.bias;
          const auto w = operand("weight", op.elementwise_affine), b = operand("bias", op.elementwise_affine && has_bias);
          if (!w || !b) return std::nullopt;
          const auto codes = [&](std::string_view role, const std::optional<fixed_fmt>& f) {
            return f ? detail::codes_of(parameters.find(std::string(role))->second.values(), f->frac)
                     : std::vector<std::int64_t>{};
          };
          l.kind = lowering_kind::normalization;
          l.weight = *w;
          l.bias = *b;
          const std::vector<std::int64_t> bias_codes = codes("bias", *b);
          l.normalization_rows = std::make_shared<const normalization_rule>(make_normalization_rule(
              centred, row, op.eps, *x, *out, *w, codes("weight", *w), *b, bias_codes));
          return l;
        } else if constexpr (rule == lowering_kind::lookup_table) {
          // A lookup table is a function of one input (pow with a tensor exponent has two).
          if (n.inputs.size() != 1 || x->width > lut_max_input_width) return std::nullopt;
          l.kind = lowering_kind::lookup_table;
          l.table = detail::codes_of(activation_lut(op, *x, format(*out)), out->frac);
          return l;
        } else {
          return std::nullopt;
        }
      },
      [&](const any_op& op) -> std::optional<fixed_lowering> {
        // A user's op with a linear form: lowered as that linear layer.
        if (op.linear_form()) return lower_dot_product();
        // A user's unary function with a scalar_function member: tabulated as mase's own.
        if (!op.has_scalar_function() || n.inputs.size() != 1 || x->width > lut_max_input_width) return std::nullopt;
        l.kind = lowering_kind::lookup_table;
        l.table = detail::codes_of(function_lut([&](double v) { return op.scalar_function(v); }, *x, format(*out)),
                                   out->frac);
        return l;
      });
}

// The kernel that runs a lowering of node n.
template <class Node>
bit_exact_kernel lowered_kernel(const Node& n, const fixed_lowering& l) {
  // linear, conv1d, conv2d (and a user's op as its linear form): integer or floating products.
  const auto dot_product_kernel = [&](const auto& op) -> bit_exact_kernel {
    using Op = std::decay_t<decltype(op)>;
    const std::int64_t out_channels = l.weight_shape[0];
    std::int64_t groups = 1;
    if constexpr (requires { op.groups; }) groups = op.groups;
    if (integer_product_applies(l.input, *l.weight, l.weight_shape.numel() / out_channels) &&
        prefer_integer_product(l.accumulator_width, out_channels / groups, std::is_same_v<Op, op::linear>))
      return detail::make_integer_dot_product_kernel(op, n, l);
    return detail::with_accumulator(l.accumulator_width, [&](auto t) {
      return detail::make_dot_product_kernel<decltype(t)>(op, n, l);
    });
  };
  return visit_op<bit_exact_kernel>(
      n.op,
      [&](const auto& op) -> bit_exact_kernel {
        using Op = std::decay_t<decltype(op)>;
        constexpr std::optional<lowering_kind> rule = integer_rule_of<Op>();
        if constexpr (rule == lowering_kind::dot_product) {
          return dot_product_kernel(op);
        } else if constexpr (rule == lowering_kind::matmul) {
          const shape& b_shape = std::get<tensor_meta>(n.meta.common.args.find("data_in_1")->second).shape;
          if (integer_product_applies(l.input, *l.other_input, matmul_inner_dimension(n)) &&
              prefer_integer_product(l.accumulator_width, b_shape.size() >= 2 ? b_shape.back() : 1, false))
            return detail::make_integer_matmul_kernel(n, l);
          return detail::with_accumulator(l.accumulator_width,
                                          [&](auto t) { return detail::make_matmul_kernel<decltype(t)>(n, l); });
        } else if constexpr (rule == lowering_kind::elementwise) {
          return detail::make_binary_kernel<Op>(n, l);
        } else if constexpr (rule == lowering_kind::scale_shift) {
          return detail::make_scale_shift_kernel(l);
        } else if constexpr (rule == lowering_kind::relu) {
          return bit_exact_kernel{"relu: exact on codes", [in = l.input, to = l.output](const kernel_args& args) {
                                    const tensor& v = args.input(0);
                                    tensor& y = args.output(0);
                                    thread_pool::shared_chunks(
                                        y.size(), args.threads, parallel_grain,
                                        [&](std::size_t first, std::size_t last, std::size_t) {
                                          const auto at = static_cast<Eigen::Index>(first);
                                          const auto count = static_cast<Eigen::Index>(last - first);
                                          y.array().segment(at, count) = v.array().segment(at, count).max(0.0f);
                                          const std::span<float> part = y.values().subspan(first, last - first);
                                          if (!(in == to)) hardware_cast(to, part, part);
                                        });
                                  }};
        } else if constexpr (rule == lowering_kind::softmax) {
          return detail::make_row_kernel(
              fmt::format("softmax: exp table of {} entries ({} fraction bits), exact sum, floor division",
                          l.softmax_rows->exp_table.size(), l.softmax_rows->exp_frac),
              l.softmax_rows, l.input, l.output);
        } else if constexpr (rule == lowering_kind::normalization) {
          return detail::make_row_kernel(
              fmt::format("{}: exact sums, inverse square root to {} bits, one cast", n.op_name(),
                          l.normalization_rows->reciprocal_bits),
              l.normalization_rows, l.input, l.output);
        } else if constexpr (rule == lowering_kind::mean) {
          return detail::make_mean_kernel(*l.mean_runs, l.input);
        } else if constexpr (rule == lowering_kind::window_mean) {
          return detail::make_window_mean_kernel(op, l);
        } else if constexpr (rule == lowering_kind::lookup_table) {
          return detail::make_lookup_kernel(n, l);
        } else {
          throw error(fmt::format("node {} ({}): no kernel runs this lowering", n.name, n.op_name()));
        }
      },
      [&](const any_op& op) -> bit_exact_kernel {
        if (l.kind == lowering_kind::dot_product) return dot_product_kernel(*op.linear_form());
        if (l.kind == lowering_kind::lookup_table) return detail::make_lookup_kernel(n, l);  // scalar_function's table
        throw error(fmt::format("node {} ({}): a user's op gives its own bit-exact kernel", n.name, n.op_name()));
      });
}

// A bit-exact kernel for a node of a user's op: its own rule (the op's bit_exact member), or none
// (then it runs as in fake-quant mode).
template <class Node>
std::optional<bit_exact_kernel> user_bit_exact_kernel(const Node& n) {
  if constexpr (std::is_same_v<Node, node>)
    if (n.op.builtin_index() < 0)
      if (const std::shared_ptr<const bit_exact_kernel> kernel = n.op.bit_exact(n)) return *kernel;
  return std::nullopt;
}

}  // namespace mase::eval
