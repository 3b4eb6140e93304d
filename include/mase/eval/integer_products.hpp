#pragma once
// The bit-exact evaluator's linear, conv1d, conv2d, matmul and bmm on integer codes: operands of
// at most 16 bits whose exact dot products fit int32 run the exact integer products of
// eval/kernels/integer_gemm.hpp (vpdpbusd / vpdpwssd / vpmaddwd, chosen at run time), then add
// the aligned bias and apply the one cast in integers. Their results are those of the general
// path in eval/bit_exact.hpp, which runs everything else: both compute the exact dot product.
//
// Layouts. A layer's weight is the packed right operand, arranged once when the kernel is made;
// the left operand's rows are the activations' codes, written per run. A convolution's rows are
// its output pixels, each holding its patch in (kernel row, kernel column, channel) order, copied
// from the image converted to codes in HWC order with its zero border; the weight is packed in the
// same order, and the int32 results [pixel][channel] are written out as NCHW by the cast.

#include <mase/core/tensor.hpp>
#include <mase/core/thread_pool.hpp>
#include <mase/eval/fixed_rules.hpp>
#include <mase/eval/kernel.hpp>
#include <mase/eval/kernels/integer_gemm.hpp>
#include <mase/eval/kernels/linear_algebra.hpp>
#include <mase/eval/lowering.hpp>
#include <mase/format/fixed.hpp>
#include <mase/ir/graph.hpp>
#include <mase/ir/op/shape_rules.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include <fmt/core.h>

namespace mase::eval {

// The signed bits a format's codes need (an unsigned format's codes need one more).
constexpr int signed_code_bits(const fixed_fmt& f) noexcept { return f.is_signed ? f.width : f.width + 1; }

// Whether a dot product of k terms of codes of formats a and b runs on the exact int32 products:
// both fit 16 signed bits and k · max|a| · max|b| < 2^31 bounds every sum (integer_gemm.hpp).
constexpr bool integer_product_applies(const fixed_fmt& a, const fixed_fmt& b, std::int64_t k) noexcept {
  if (k < 1 || signed_code_bits(a) > 16 || signed_code_bits(b) > 16) return false;
  const auto magnitude = [](const fixed_fmt& f) {
    const integer_range r = f.code_range();
    return std::max(-r.lo, r.hi);
  };
  return k <= std::numeric_limits<std::int32_t>::max() / (magnitude(a) * magnitude(b));
}

// Whether a product that integer_product_applies to should run on the integer products. They are
// exact where float accumulation is not (more than 24 bits), and faster wherever the results fill
// whole panels of 16 columns, and for a linear layer even when they do not (the MLP's last layer,
// 64 x 64 x 10: 1.1 µs against 2.4 in float). A narrow convolution whose float accumulation is
// exact (LeNet's first: 6 channels of 25 taps) runs faster on the float kernels.
constexpr bool prefer_integer_product(int accumulator_width, std::int64_t columns, bool linear_layer) noexcept {
  return accumulator_for(accumulator_width) != accumulator_type::float32 || linear_layer ||
         columns >= integer_gemm::panel_width;
}

namespace detail {

using integer_gemm::Index;

// hardware_cast_raw of sums at `from_frac` fraction bits into `to`, and each code's value as a
// float: the epilogue of every integer product. Sum is int32 when every sum fits it (the loops
// then vectorise), int64 otherwise.
struct integer_cast {
  int shift = 0;  // from_frac - to.frac
  std::int64_t lo = 0, hi = 0;
  float down = 1;  // 2^-to.frac
  fixed_fmt to{};
  int from_frac = 0;
  bool simple = true;  // shift >= 0 and 2^-to.frac a normal float: a shift, a clamp, a multiply

  integer_cast(int from, const fixed_fmt& out) : shift(from - out.frac), to(out), from_frac(from) {
    const integer_range r = out.saturation_range();
    lo = r.lo;
    hi = r.hi;
    simple = shift >= 0 && out.frac >= -120 && out.frac <= 120;
    down = simple ? std::ldexp(1.0f, -out.frac) : 1.0f;
  }

  template <class Sum>
  float operator()(Sum sum) const noexcept {
    if constexpr (std::is_same_v<Sum, std::int32_t>) {
      // Every code in [lo, hi] that an int32 sum can reach: clamping the bounds keeps the result.
      const std::int32_t l = static_cast<std::int32_t>(std::max<std::int64_t>(lo, std::numeric_limits<std::int32_t>::min()));
      const std::int32_t h = static_cast<std::int32_t>(std::min<std::int64_t>(hi, std::numeric_limits<std::int32_t>::max()));
      std::int32_t v = sum >> std::min(shift, 31);  // an arithmetic shift: floor
      v = v < l ? l : v;
      v = h < v ? h : v;
      return static_cast<float>(v) * down;
    } else {
      return static_cast<float>(value_of(hardware_cast_raw(sum, from_frac, to), to.frac));
    }
  }
};

// cast_run's loops, for the dispatcher.
inline void cast_run_loops(const integer_cast* cast_ptr, bool narrow, const std::int32_t* acc, Index stride,
                           const std::int64_t* bias, Index bias_step, Index count, float* out) {
  const integer_cast& cast = *cast_ptr;
  if (narrow && cast.simple) {
    if (bias == nullptr)
      for (Index j = 0; j < count; ++j) out[j] = cast(acc[j * stride]);
    else if (bias_step == 0)
      for (Index j = 0; j < count; ++j) out[j] = cast(acc[j * stride] + static_cast<std::int32_t>(*bias));
    else
      for (Index j = 0; j < count; ++j) out[j] = cast(acc[j * stride] + static_cast<std::int32_t>(bias[j * bias_step]));
  } else {
    for (Index j = 0; j < count; ++j)
      out[j] = cast(std::int64_t{acc[j * stride]} + (bias == nullptr ? 0 : bias[j * bias_step]));
  }
}

// out[j] = cast(acc[j · stride] + bias[j · bias_step]) for j < count: int32 sums where `narrow`.
// Dispatched: a baseline build vectorises none of it at -O2.
inline void cast_run(const integer_cast& cast, bool narrow, const std::int32_t* acc, Index stride,
                     const std::int64_t* bias, Index bias_step, Index count, float* out) {
  dispatch::run<&cast_run_loops>(&cast, narrow, acc, stride, bias, bias_step, count, out);
}

// Everything a node's integer product keeps between runs.
struct integer_product_state {
  integer_gemm::isa target = integer_gemm::best_isa();
  std::vector<integer_gemm::packed_rhs> weights;  // one per group (linear: one)
  integer_gemm::packed_rhs other;                 // matmul: the right operand of this run
  integer_gemm::lhs_rows rows;
  std::vector<std::int32_t> acc;
  // conv: one image's codes, HWC with the zero border, for each thread
  std::vector<std::vector<std::int16_t>> image_pairs;
  std::vector<std::vector<std::uint8_t>> image_quads;
  std::vector<integer_gemm::lhs_rows> chunks;  // conv: patch rows of a few pixels, for each thread
  // matmul with several right operands: one product's buffers for each thread
  struct product_buffers {
    integer_gemm::packed_rhs other;
    integer_gemm::lhs_rows rows;
    std::vector<std::int32_t> acc;
  };
  std::vector<product_buffers> per_thread;
};

// The element a product of these formats stores, and how its codes are written into it.
template <class E>
constexpr std::int32_t stored_offset() noexcept {
  return std::is_same_v<E, std::uint8_t> ? integer_gemm::uint8_offset : 0;
}

// conv_image_codes's loops, for the dispatcher (pointers: its arguments are copied).
template <class E>
void conv_image_code_loops(const linear_algebra_detail::conv_geometry* geometry, Index group, Index n, const float* x,
                           int frac, std::vector<E>* image_ptr) {
  const linear_algebra_detail::conv_geometry& g = *geometry;
  std::vector<E>& image = *image_ptr;
  // Sizes in locals: the stores below are of bytes, which may alias anything, so the compiler
  // would otherwise reload every field of g in every iteration.
  const Index cg = g.group_in(), in_h = g.in_h, in_w = g.in_w, pad_h = g.pad_h, pad_w = g.pad_w;
  const Index hp = g.padded_h(), wp = g.padded_w();
  const auto zero = static_cast<E>(stored_offset<E>());
  image.assign(static_cast<std::size_t>(hp * wp * cg) + 32, zero);  // 32: copy_in_blocks reads past the end
  const float scale = std::ldexp(1.0f, frac);
  const float* const planes = x + (n * g.in_channels + group * cg) * g.in_pixels();
  if (cg <= 8 && in_w <= 64) {
    // Few channels: each row's codes, converted channel by channel, are interleaved pixel by
    // pixel, so the stores run along the image.
    std::int32_t codes[8][64];
    for (Index h = 0; h < in_h; ++h) {
      for (Index c = 0; c < cg; ++c) {
        const float* const from = planes + c * g.in_pixels() + h * in_w;
        for (Index w = 0; w < in_w; ++w) codes[c][w] = static_cast<std::int32_t>(from[w] * scale) + stored_offset<E>();
      }
      E* to = image.data() + ((h + pad_h) * wp + pad_w) * cg;
      for (Index w = 0; w < in_w; ++w)
        for (Index c = 0; c < cg; ++c) *to++ = static_cast<E>(codes[c][w]);
    }
    return;
  }
  std::int32_t codes[256];  // a run of one row's codes, converted before they are interleaved
  for (Index c = 0; c < cg; ++c) {
    const float* plane = planes + c * g.in_pixels();
    for (Index h = 0; h < in_h; ++h) {
      E* const to = image.data() + ((h + pad_h) * wp + pad_w) * cg + c;
      const float* const from = plane + h * in_w;
      for (Index start = 0; start < in_w; start += 256) {
        const Index count = std::min<Index>(256, in_w - start);
        for (Index w = 0; w < count; ++w) codes[w] = static_cast<std::int32_t>(from[start + w] * scale) + stored_offset<E>();
        E* const run_to = to + start * cg;
        for (Index w = 0; w < count; ++w) run_to[w * cg] = static_cast<E>(codes[w]);
      }
    }
  }
}

// The codes of one conv group of image n, HWC with the zero border, into `image`. Dispatched: a
// baseline build at -O2 vectorises none of the conversions (LeNet's conv2: 11 % of the bit-exact run).
template <class E>
void conv_image_codes(const linear_algebra_detail::conv_geometry& g, Index group, Index n, const float* x, int frac,
                      std::vector<E>& image) {
  dispatch::run<&conv_image_code_loops<E>>(&g, group, n, x, frac, &image);
}

// The patch rows of output pixels [first, last) of an image whose codes conv_image_codes wrote, into
// rows [0, last − first) of `rows` (whose storage holds E: the copies may run 31 bytes past a row,
// into the next row, written afterwards, or into the slack after the last).
template <class E>
void conv_patch_rows(const linear_algebra_detail::conv_geometry& g, const std::vector<E>& image, Index first,
                     Index last, integer_gemm::lhs_rows& rows) {
  const Index cg = g.group_in(), wp = g.padded_w(), out_w = g.out_w;
  const Index kernel_h = g.kernel_h, kernel_w = g.kernel_w, stride_h = g.stride_h, stride_w = g.stride_w;
  const Index dilation_h = g.dilation_h, dilation_w = g.dilation_w;
  const Index run = dilation_w == 1 ? kernel_w * cg : cg;  // contiguous codes per copy
  const auto run_bytes = static_cast<std::size_t>(run) * sizeof(E);
  if (dilation_w == 1 && run_bytes <= 32) {
    // Small channel counts (LeNet's conv2: 5 taps of 6 channels): one 32-byte move per kernel
    // row, the output position stepped rather than divided out.
    const Index row_step = dilation_h * wp * cg;
    Index oh = first / out_w, ow = first % out_w;
    for (Index pixel = first; pixel < last; ++pixel) {
      E* row = rows.row_data<E>(pixel - first);
      const E* source = image.data() + (oh * stride_h * wp + ow * stride_w) * cg;
      for (Index ki = 0; ki < kernel_h; ++ki, row += run, source += row_step) std::memcpy(row, source, 32);
      rows.clear_padding(pixel - first);
      if (++ow == out_w) {
        ow = 0;
        ++oh;
      }
    }
    return;
  }
  for (Index pixel = first; pixel < last; ++pixel) {
    const Index oh = pixel / out_w, ow = pixel % out_w;
    E* row = rows.row_data<E>(pixel - first);
    for (Index ki = 0; ki < kernel_h; ++ki) {
      const E* source = image.data() + ((oh * stride_h + ki * dilation_h) * wp + ow * stride_w) * cg;
      for (Index kj = 0; kj < (dilation_w == 1 ? 1 : kernel_w); ++kj, row += run)
        integer_gemm::copy_in_blocks(row, source + kj * dilation_w * cg, run_bytes);
    }
    rows.clear_padding(pixel - first);  // which the last copy may have overrun
  }
}

template <class Op>
bit_exact_kernel make_integer_dot_product_kernel(const Op& op, const node& n, const fixed_lowering& l) {
  auto state = std::make_shared<integer_product_state>();
  const shape& ws = l.weight_shape;
  const Index out_channels = ws[0];
  const Index k = ws.numel() / out_channels;  // in/groups · kernel
  Index groups = 1, kernel = 1;
  if constexpr (!std::is_same_v<Op, op::linear>) {
    groups = op.groups;
    kernel = k / ws[1];
  }
  const Index group_out = out_channels / groups, group_in = ws[1];
  const int a_bits = signed_code_bits(l.input), b_bits = signed_code_bits(*l.weight);
  state->weights.resize(static_cast<std::size_t>(groups));
  for (Index group = 0; group < groups; ++group) {
    // Weight [O][C/groups][kernel] as B[o][k], k in (kernel position, channel) order for a conv.
    const std::int64_t* w = l.weight_codes.data() + group * group_out * k;
    integer_gemm::pack_rhs(state->target, a_bits, b_bits, group_out, k,
                           [&](Index o, Index i) { return w[o * k + (i % group_in) * kernel + i / group_in]; },
                           state->weights[static_cast<std::size_t>(group)]);
  }
  const integer_gemm::element kind = state->weights[0].kind;
  const std::string description = fmt::format(
      "{}: {}-bit x {}-bit, exact int32 products ({}, {}), accumulator {} bits", n.op_name(), l.input.width,
      l.weight->width, to_string(state->target),
      kind == integer_gemm::element::uint8_quads ? "8-bit quads" : "16-bit pairs", l.accumulator_width);
  const bool narrow = l.accumulator_width <= 31;
  return {description, [op, state, x_fmt = l.input, cast = integer_cast(l.accumulator_frac(), l.output), narrow,
                        bias = l.aligned_bias, k, kind, out_channels](const kernel_args& args) {
            (void)op;            // read by the convolutions only
            (void)out_channels;  // read by linear only
            const tensor& x = args.input(0);
            tensor& y = args.output(0);
            integer_product_state& s = *state;
            const std::int64_t* bias_data = bias.empty() ? nullptr : bias.data();
            if constexpr (std::is_same_v<Op, op::linear>) {
              const Index rows = static_cast<Index>(x.size()) / k;
              s.rows.reshape(kind, rows, k);
              s.acc.resize(static_cast<std::size_t>(rows * out_channels));
              // Each thread converts, multiplies and casts its own rows; a product of fewer than
              // 2^18 multiply-accumulates (a microsecond or two) runs on one, since handing half
              // of it to another thread costs about as much as it saves.
              const bool small = rows * k * out_channels < (Index{1} << 18);
              thread_pool::shared_for(static_cast<std::size_t>(rows), small ? 1 : args.threads,
                                      [&](std::size_t first, std::size_t last, std::size_t) {
                const auto begin = static_cast<Index>(first), end = static_cast<Index>(last);
                for (Index r = begin; r < end; ++r)
                  integer_gemm::set_row_from_values(s.rows, r, x.data() + r * k, k, x_fmt.frac);
                integer_gemm::multiply(s.rows, s.weights[0], s.acc.data(), out_channels, begin, end);
                for (Index r = begin; r < end; ++r)
                  cast_run(cast, narrow, s.acc.data() + r * out_channels, 1, bias_data, 1, out_channels,
                           y.data() + r * out_channels);
              });
            } else {
              const linear_algebra_detail::conv_geometry g = linear_algebra_detail::geometry(op, x.shape(), y.shape());
              const Index pixels = g.out_pixels(), group_out = g.group_out();
              s.acc.resize(static_cast<std::size_t>(g.batch * pixels * group_out));
              s.image_pairs.resize(std::max<std::size_t>(s.image_pairs.size(), args.threads));
              s.image_quads.resize(std::max<std::size_t>(s.image_quads.size(), args.threads));
              s.chunks.resize(std::max<std::size_t>(s.chunks.size(), args.threads));
              // Patch rows are built and multiplied a chunk at a time that stays in L1 (about
              // 16 KiB), rather than written out for the whole batch and read back.
              const Index chunk_rows =
                  std::max<Index>(1, 16384 / (integer_gemm::round_up(k, 4) * 2) / 12) * 12;
              for (Index group = 0; group < g.groups; ++group) {
                // Each thread takes whole images: their rows, their products, their casts.
                thread_pool::shared_for(static_cast<std::size_t>(g.batch), args.threads,
                                        [&](std::size_t first, std::size_t last, std::size_t part) {
                  const auto begin = static_cast<Index>(first), end = static_cast<Index>(last);
                  integer_gemm::lhs_rows& chunk = s.chunks[part];
                  chunk.reshape(kind, std::min(chunk_rows, pixels), k);
                  const integer_gemm::packed_rhs& weights = s.weights[static_cast<std::size_t>(group)];
                  for (Index image = begin; image < end; ++image) {
                    if (kind == integer_gemm::element::uint8_quads)
                      conv_image_codes(g, group, image, x.data(), x_fmt.frac, s.image_quads[part]);
                    else
                      conv_image_codes(g, group, image, x.data(), x_fmt.frac, s.image_pairs[part]);
                    for (Index p = 0; p < pixels; p += chunk.m) {
                      const Index count = std::min(chunk.m, pixels - p);
                      if (kind == integer_gemm::element::uint8_quads)
                        conv_patch_rows(g, s.image_quads[part], p, p + count, chunk);
                      else
                        conv_patch_rows(g, s.image_pairs[part], p, p + count, chunk);
                      integer_gemm::multiply(chunk, weights, s.acc.data() + (image * pixels + p) * group_out,
                                                   group_out, 0, count);
                    }
                  }
                  for (Index image = begin; image < end; ++image)
                    for (Index o = 0; o < group_out; ++o) {
                      const Index channel = group * group_out + o;
                      cast_run(cast, narrow, s.acc.data() + image * pixels * group_out + o, group_out,
                               bias_data == nullptr ? nullptr : bias_data + channel, 0, pixels,
                               y.data() + (image * g.out_channels + channel) * pixels);
                    }
                });
              }
            }
          }};
}

inline bit_exact_kernel make_integer_matmul_kernel(const node& n, const fixed_lowering& l) {
  auto state = std::make_shared<integer_product_state>();
  const int a_bits = signed_code_bits(l.input), b_bits = signed_code_bits(*l.other_input);
  const integer_gemm::element kind = integer_gemm::element_for(state->target, a_bits, b_bits);
  const std::string description =
      fmt::format("{}: {}-bit x {}-bit, exact int32 products ({}, {}), accumulator {} bits", n.op_name(),
                  l.input.width, l.other_input->width, to_string(state->target),
                  kind == integer_gemm::element::uint8_quads ? "8-bit quads" : "16-bit pairs", l.accumulator_width);
  const bool narrow = l.accumulator_width <= 31;
  return {description, [state, a_fmt = l.input, b_fmt = *l.other_input, a_bits, b_bits, kind, narrow,
                        cast = integer_cast(l.accumulator_frac(), l.output)](const kernel_args& args) {
            const tensor& a = args.input(0);
            const tensor& b = args.input(1);
            tensor& y = args.output(0);
            integer_product_state& s = *state;
            const shape& as = a.shape();
            const shape& bs = b.shape();
            const bool a_is_matrix = as.size() >= 2, b_is_matrix = bs.size() >= 2;
            const Index rows = a_is_matrix ? as.at(-2) : 1, inner = as.back(), cols = b_is_matrix ? bs.back() : 1;
            if (!integer_product_applies(a_fmt, b_fmt, inner))
              throw error(fmt::format("node {}: an inner dimension of {} can overflow the int32 products chosen for "
                                      "the shapes in the metadata; rerun add_common_metadata with these shapes",
                                      args.node_name, inner));
            const shape a_batch = shape_rules::leading_dims(as, 2), b_batch = shape_rules::leading_dims(bs, 2);
            const float b_scale = std::ldexp(1.0f, b_fmt.frac);
            const auto pack_other = [&](const float* b_matrix, integer_gemm::packed_rhs& other) {
              integer_gemm::pack_rhs(s.target, a_bits, b_bits, cols, inner,
                                     [&](Index c, Index i) {
                                       return static_cast<std::int32_t>(b_matrix[i * cols + c] * b_scale);
                                     },
                                     other);
            };
            // Rows [first, last) of one product: left rows from a_first, results cast into out.
            const auto product_rows = [&](const float* a_first, Index first, Index last, const integer_gemm::packed_rhs& other,
                                          integer_gemm::lhs_rows& left, std::vector<std::int32_t>& acc, float* out) {
              for (Index r = first; r < last; ++r)
                integer_gemm::set_row_from_values(left, r, a_first + r * inner, inner, a_fmt.frac);
              integer_gemm::multiply(left, other, acc.data(), cols, first, last);
              cast_run(cast, narrow, acc.data() + first * cols, 1, nullptr, 0, (last - first) * cols, out + first * cols);
            };
            if (b_batch.numel() == 1) {
              // One right operand for every row of a: the threads split the rows.
              const Index count = a_batch.numel() * rows;
              pack_other(b.data(), s.other);
              s.rows.reshape(kind, count, inner);
              s.acc.resize(static_cast<std::size_t>(count * cols));
              thread_pool::shared_for(static_cast<std::size_t>(count), args.threads,
                                      [&](std::size_t first, std::size_t last, std::size_t) {
                                        product_rows(a.data(), static_cast<Index>(first), static_cast<Index>(last), s.other,
                                                     s.rows, s.acc, y.data());
                                      });
              return;
            }
            // Several products: the threads split them, each with its own buffers.
            const shape y_batch = linear_algebra_detail::first_dims(
                y.shape(), y.shape().size() - (a_is_matrix ? 1 : 0) - (b_is_matrix ? 1 : 0));
            s.per_thread.resize(std::max<std::size_t>(s.per_thread.size(), args.threads));
            thread_pool::shared_for(static_cast<std::size_t>(y_batch.numel()), args.threads,
                                    [&](std::size_t first, std::size_t last, std::size_t part) {
              integer_product_state::product_buffers& buffers = s.per_thread[part];
              for (auto i = static_cast<Index>(first); i < static_cast<Index>(last); ++i) {
                pack_other(b.data() + linear_algebra_detail::broadcast_source(i, y_batch, b_batch) * inner * cols,
                           buffers.other);
                buffers.rows.reshape(kind, rows, inner);
                buffers.acc.resize(static_cast<std::size_t>(rows * cols));
                product_rows(a.data() + linear_algebra_detail::broadcast_source(i, y_batch, a_batch) * rows * inner, 0,
                             rows, buffers.other, buffers.rows, buffers.acc, y.data() + i * rows * cols);
              }
            });
          }};
}

}  // namespace detail
}  // namespace mase::eval
