#pragma once
// Float kernels of the linear-algebra ops: linear, matmul, bmm, conv1d, conv2d, conv3d,
// conv_transpose1d, conv_transpose2d, scaled_dot_product_attention and embedding.
//
// The products underneath (linear_product, matmul_product, conv1d_product, conv2d_product) are
// templates over the scalar type: the float kernels use them at T = float and the bit-exact
// evaluator at T = std::int64_t (integer accumulation), so each product has one definition.
// Matrix products are Eigen GEMMs on row-major maps of the tensors (PyTorch's layout), written
// straight into the result, except the float linear layer, which runs float_blocks' register
// blocks (AVX2 or AVX-512, chosen at run time) where the processor has AVX2; 1-d and 2-d
// convolutions run a register-blocked direct kernel whose working memory is a caller-owned
// scratch vector, and conv3d (rarer, and with larger patches) is im2col + Eigen GEMM per group. Nothing here allocates in a steady-state run, except
// that Eigen's GEMM takes its packing blocks from the heap when they exceed 128 KiB
// (EIGEN_STACK_ALLOCATION_LIMIT), e.g. for 64×784 · 784×256.

#include <mase/core/dispatch.hpp>
#include <mase/core/error.hpp>
#include <mase/core/shape.hpp>
#include <mase/core/tensor_eigen.hpp>
#include <mase/core/thread_pool.hpp>
#include <mase/eval/kernel.hpp>
#include <mase/eval/kernels/float_blocks.hpp>
#include <mase/ir/op/bmm.hpp>
#include <mase/ir/op/conv.hpp>
#include <mase/ir/op/conv_transpose.hpp>
#include <mase/ir/op/embedding.hpp>
#include <mase/ir/op/linear.hpp>
#include <mase/ir/op/matmul.hpp>
#include <mase/ir/op/scaled_dot_product_attention.hpp>
#include <mase/ir/op/shape_rules.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace mase::eval {

namespace linear_algebra_detail {

using Eigen::Index;

template <class T>
using row_major = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using matrix_view = Eigen::Map<row_major<T>>;
template <class T>
using const_matrix_view = Eigen::Map<const row_major<T>>;
template <class T>
using const_row_view = Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>;

// Product of every dimension but the last: the rows of a [..., features] tensor.
inline Index leading_count(const shape& s) {
  Index rows = 1;
  for (int d = 0; d + 1 < s.size(); ++d) rows *= s[d];
  return rows;
}

// The first `count` dimensions of s.
inline shape first_dims(const shape& s, int count) {
  shape head;
  for (int d = 0; d < count; ++d) head.push_back(s[d]);
  return head;
}

// For matrix number `i` of a batch with dimensions `to`, the number of the matrix it reads in an
// operand whose batch dimensions `from` broadcast to `to` (right-aligned; size-1 dimensions
// repeat). Called once per matrix, never per element.
inline Index broadcast_source(Index i, const shape& to, const shape& from) {
  Index source = 0;
  Index stride = 1;
  for (int d = to.size() - 1; d >= 0; --d) {
    const Index coordinate = i % to[d];
    i /= to[d];
    const int from_d = from.size() - to.size() + d;
    if (from_d < 0) continue;
    if (from[from_d] != 1) source += coordinate * stride;
    stride *= from[from_d];
  }
  return source;
}

// y[rows, cols] = a[rows, inner] · b[inner, cols], all row-major and contiguous.
template <class T>
void multiply(const T* a, Index rows, Index inner, const T* b, Index cols, T* y) {
  matrix_view<T>(y, rows, cols).noalias() = const_matrix_view<T>(a, rows, inner) * const_matrix_view<T>(b, inner, cols);
}

// Output columns per unit of work when a product is split between threads: a multiple of every
// column block Eigen's GEMM kernels use, so that each result is computed by the same kernel, in
// the same order, however the columns are split. The last unit also takes the remaining columns,
// so that no part has fewer than 32 (one column would make Eigen switch to its GEMV kernel, and
// a handful to its coefficient-wise product, each summing in another order).
inline constexpr Index thread_columns = 32;

// y[rows, out] = x[rows, in] · w[out, in]ᵀ (+ bias[out] on every row when bias is not null), the
// output columns split between `threads` threads.
template <class T>
void linear_into(const T* x, Index rows, Index in, const T* w, Index out, const T* bias, T* y, std::size_t threads = 1) {
  const const_matrix_view<T> inputs(x, rows, in);
  const const_matrix_view<T> weights(w, out, in);
  matrix_view<T> result(y, rows, out);
  const auto columns = [&](Index first, Index count) {
    auto part = result.middleCols(first, count);
    const auto part_weights = weights.middleRows(first, count);
    if (bias == nullptr) {
      part.noalias() = inputs * part_weights.transpose();
    } else {
      // Starting from the bias replaces the zero fill that `=` does before its GEMM, so the bias
      // costs no extra pass over the result.
      part.rowwise() = const_row_view<T>(bias + first, count);
      part.noalias() += inputs * part_weights.transpose();
    }
  };
  const auto blocks = static_cast<std::size_t>(out / thread_columns);
  if (threads <= 1 || blocks <= 1) return columns(0, out);
  thread_pool::shared_for(blocks, threads, [&](std::size_t first, std::size_t last, std::size_t) {
    const Index begin = static_cast<Index>(first) * thread_columns;
    columns(begin, (last == blocks ? out : static_cast<Index>(last) * thread_columns) - begin);
  });
}

// A 1-D or 2-D convolution; a 1-D one is a 2-D one of height 1.
struct conv_geometry {
  Index batch = 1;
  Index in_channels = 0, in_h = 1, in_w = 0;
  Index out_channels = 0, out_h = 1, out_w = 0;
  Index groups = 1;
  Index kernel_h = 1, kernel_w = 1;
  Index stride_h = 1, stride_w = 1;
  Index pad_h = 0, pad_w = 0;
  Index dilation_h = 1, dilation_w = 1;

  Index group_in() const noexcept { return in_channels / groups; }
  Index group_out() const noexcept { return out_channels / groups; }
  // Weights of one output channel (the GEMM's inner dimension).
  Index patch() const noexcept { return group_in() * kernel_h * kernel_w; }
  Index out_pixels() const noexcept { return out_h * out_w; }
  Index in_pixels() const noexcept { return in_h * in_w; }
  bool padded() const noexcept { return pad_h > 0 || pad_w > 0; }
  Index padded_h() const noexcept { return in_h + 2 * pad_h; }
  Index padded_w() const noexcept { return in_w + 2 * pad_w; }
};

// The sizes of a 1-D or 2-D convolution-like op (1-D fills only the width fields), shared by
// the convolutions and the transposed ones. Input [N, C, (H,) W] or unbatched [C, (H,) W];
// result [N, O, (Ho,) Wo] or [O, (Ho,) Wo].
template <class Geometry, class Op>
Geometry spatial_geometry(const Op& op, const shape& x, const shape& y, int spatial) {
  using shape_rules::per_dim;
  Geometry g;
  g.batch = x.size() == spatial + 2 ? x[0] : 1;
  g.in_channels = op.in_channels;
  g.out_channels = op.out_channels;
  g.groups = op.groups;
  const int w = spatial - 1;  // the width's index in the per-dimension lists
  g.in_w = x.at(-1);
  g.out_w = y.at(-1);
  g.kernel_w = per_dim(op.kernel_size, w);
  g.stride_w = per_dim(op.stride, w);
  g.pad_w = per_dim(op.padding, w);
  g.dilation_w = per_dim(op.dilation, w);
  if (spatial == 2) {
    g.in_h = x.at(-2);
    g.out_h = y.at(-2);
    g.kernel_h = per_dim(op.kernel_size, 0);
    g.stride_h = per_dim(op.stride, 0);
    g.pad_h = per_dim(op.padding, 0);
    g.dilation_h = per_dim(op.dilation, 0);
  }
  return g;
}

inline conv_geometry geometry(const op::conv1d& op, const shape& x, const shape& y) {
  return spatial_geometry<conv_geometry>(op, x, y, 1);
}
inline conv_geometry geometry(const op::conv2d& op, const shape& x, const shape& y) {
  return spatial_geometry<conv_geometry>(op, x, y, 2);
}

// The convolution is a GEMM, W[O, patch] · columns[patch, pixels], whose columns (im2col) are
// never materialised: a register block of output channels × output pixels reads each input
// value straight from the (zero-bordered) image. At LeNet's sizes, writing the columns out and
// Eigen packing them again made im2col + GEMM 1.4–2× slower than this.
//
// The SIMD packet is Eigen's for T (8 floats with AVX2, 4 with SSE, 16 with AVX-512), used
// through Eigen's portable packet functions; integer types run as scalar code (one lane).
template <class T, bool = std::is_floating_point_v<T>>
struct simd {
  using packet = T;
  static constexpr Index lanes = 1;
};
template <class T>
struct simd<T, true> {
  using packet = typename Eigen::internal::packet_traits<T>::type;
  static constexpr Index lanes = Eigen::internal::packet_traits<T>::size;
};
template <class T>
using packet_of = typename simd<T>::packet;
template <class T>
inline constexpr Index lanes_of = simd<T>::lanes;

// Calls f(std::integral_constant<int, i>) for i in [0, N): unrolled, so that arrays of packets
// indexed by i stay in registers.
template <int N, class F>
inline void static_for(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) { (f(std::integral_constant<int, I>{}), ...); }(
      std::make_integer_sequence<int, N>{});
}

// Register blocks: `vectors` packets of `lanes` output channels by `pixels` output pixels. With
// Eigen's packets, a group with at most one packet of output channels uses one packet by a
// multiple of `lanes` pixels (8 with AVX2), whose results an in-register transpose turns into rows
// of the NCHW output; wider groups use two packets by 6 pixels. Accumulators, weight packets and
// one broadcast then fit the 16 vector registers of SSE/AVX2. On a processor with AVX-512, float
// groups of more than 16 channels take two 16-lane packets by 12 pixels (24 of its 32 registers).
template <Index Lanes, int Vectors, int Pixels>
struct conv_block_shape {
  static constexpr Index lanes = Lanes;
  static constexpr int vectors = Vectors, pixels = Pixels;
  static constexpr Index channels = Vectors * Lanes;
  // group_out rounded up to whole channel blocks.
  static Index padded_out(const conv_geometry& g) noexcept { return (g.group_out() + channels - 1) / channels * channels; }
  // Scratch: a conv_packing_key, the weights as one panel [patch][channels] per channel block
  // ([groups][padded_out / channels] panels) and the bias [groups][padded_out] (both zero in the
  // padding channels), then the zero-bordered image buffers.
  static std::size_t weights_size(const conv_geometry& g) noexcept {
    return static_cast<std::size_t>(g.groups * g.patch() * padded_out(g));
  }
  static std::size_t bias_size(const conv_geometry& g) noexcept {
    return static_cast<std::size_t>(g.groups * padded_out(g));
  }
};

// One image with its zero border (none without padding).
inline std::size_t padded_image_size(const conv_geometry& g) noexcept {
  return g.padded() ? static_cast<std::size_t>(g.in_channels * g.padded_h() * g.padded_w()) : 0;
}

template <class T>
struct conv_blocking {
  static constexpr Index lanes = lanes_of<T>;
  using wide = conv_block_shape<lanes, 2, 6>;
  using narrow = conv_block_shape<lanes, 1, (lanes >= 8 ? static_cast<int>(lanes) : 12 / lanes * lanes)>;
  static bool is_wide(const conv_geometry& g) noexcept { return g.group_out() > lanes; }
};

// Transposes n packets of n lanes (lane j of packet i ↔ lane i of packet j) with Eigen's
// ptranspose. Packet deduced, not spelled, as a template argument: GCC warns that a SIMD type's
// attributes are dropped when one is written there.
template <class Packet, int n>
inline void transpose_in_registers(Packet (&packets)[n]) {
  Eigen::internal::PacketBlock<Packet, n> block;
  for (int i = 0; i < n; ++i) block.packet[i] = packets[i];
  Eigen::internal::ptranspose(block);
  for (int i = 0; i < n; ++i) packets[i] = block.packet[i];
}

// Where a register block's results go: `channels` rows of the output, `row_stride` apart, from
// `out`, `count` pixels each (fewer than the block's in the last block of an image).
template <class T>
struct conv_block_output {
  T* out;
  Index row_stride;
  Index channels;
  Index count;
};

// One register block: out[c][p] = bias[c] + Σ_taps weights[tap][c] · image[base[p] + tap's
// offset] for `pixels` pixels (their offsets in the image in `base`) and vectors·lanes channels.
template <class T, int vectors, int pixels>
inline void conv_register_block(const conv_geometry& g, const T* image, const Index* base, const T* weights,
                                Index weight_stride, const T* bias, const conv_block_output<T>& to) {
  using packet = packet_of<T>;
  using namespace Eigen::internal;
  constexpr int lanes = static_cast<int>(lanes_of<T>);
  const Index row_length = g.padded_w();
  const Index channel_size = g.padded_h() * row_length;
  packet acc[pixels][vectors];
  static_for<vectors>([&](auto v) {
    const packet b = ploadu<packet>(bias + v * lanes);
    static_for<pixels>([&](auto p) { acc[p][v] = b; });
  });
  const T* tap_weights = weights;
  for (Index c = 0; c < g.group_in(); ++c) {
    for (Index ki = 0; ki < g.kernel_h; ++ki) {
      const T* row = image + c * channel_size + ki * g.dilation_h * row_length;
      for (Index kj = 0; kj < g.kernel_w; ++kj, tap_weights += weight_stride) {
        const T* tap = row + kj * g.dilation_w;
        packet w[vectors];
        static_for<vectors>([&](auto v) { w[v] = ploadu<packet>(tap_weights + v * lanes); });
        static_for<pixels>([&](auto p) {
          const packet value = pset1<packet>(tap[base[p]]);
          static_for<vectors>([&](auto v) { acc[p][v] = pmadd(value, w[v], acc[p][v]); });
        });
      }
    }
  }
  // acc[p][v] holds pixel p of channels v·lanes…; the output wants each channel's pixels in a row.
  constexpr int block = vectors * lanes;
  T tile[block * pixels];
  if constexpr (pixels % lanes == 0) {
    // Square lanes × lanes blocks transposed in registers: whole blocks are stored as rows.
    const bool whole = to.count == pixels;
    static_for<vectors>([&](auto v) {
      static_for<pixels / lanes>([&](auto square) {
        packet rows[lanes];
        static_for<lanes>([&](auto i) { rows[i] = acc[square * lanes + i][v]; });
        transpose_in_registers(rows);
        for (Index i = 0; i < lanes; ++i) {
          const Index channel = v * lanes + i;
          if (whole && channel < to.channels) pstoreu(to.out + channel * to.row_stride + square * lanes, rows[i]);
          else pstoreu(tile + channel * pixels + square * lanes, rows[i]);  // [channel][pixel]
        }
      });
    });
    if (whole) return;
    for (Index c = 0; c < to.channels; ++c)
      for (Index p = 0; p < to.count; ++p) to.out[c * to.row_stride + p] = tile[c * pixels + p];
  } else {
    static_for<pixels>([&](auto p) {
      static_for<vectors>([&](auto v) { pstoreu(tile + p * block + v * lanes, acc[p][v]); });  // [pixel][channel]
    });
    for (Index c = 0; c < to.channels; ++c)
      for (Index p = 0; p < to.count; ++p) to.out[c * to.row_stride + p] = tile[p * block + c];
  }
}

// The register blocks convolve_blocked can run: Eigen's packets, compiled for the including
// program's target, and (GCC on x86-64) AVX-512 for float, chosen at run time.
template <class T, class Shape>
struct eigen_register_block {
  using shape = Shape;
  static void run(const conv_geometry& g, const T* image, const Index* base, const T* weights, Index weight_stride,
                  const T* bias, const conv_block_output<T>& to) {
    conv_register_block<T, Shape::vectors, Shape::pixels>(g, image, base, weights, weight_stride, bias, to);
  }
};

// The taps of a convolution's register block: its group's input channels and kernel window.
inline float_blocks::tap_walk taps_of(const conv_geometry& g) noexcept {
  return {.channels = g.group_in(), .channel_stride = g.padded_h() * g.padded_w(), .rows = g.kernel_h,
          .row_stride = g.dilation_h * g.padded_w(), .columns = g.kernel_w, .column_stride = g.dilation_w};
}

#if MASE_DISPATCH
// float_blocks' copies for AVX2 + FMA and AVX-512, chosen at run time. Their sums are those of
// Eigen's blocks in a build with FMA (bias, then one fused multiply-add per tap, in order).
template <class Shape, auto Copy>
struct vector_register_block {
  using shape = Shape;
  static constexpr auto copy = Copy;
  static void run(const conv_geometry& g, const float* image, const Index* base, const float* weights,
                  Index weight_stride, const float* bias, const conv_block_output<float>& to) {
    Copy(taps_of(g), image, base, weights, weight_stride, bias,
         {.out = to.out, .pixel_stride = 1, .channel_stride = to.row_stride, .channels = to.channels, .count = to.count},
         false);
  }
};
using avx512_register_block = vector_register_block<conv_block_shape<16, 2, 12>, &float_blocks::channel_block_avx512>;
using avx2_register_block = vector_register_block<conv_block_shape<8, 2, 6>, &float_blocks::channel_block_avx2>;
using avx2_narrow_register_block =
    vector_register_block<conv_block_shape<8, 1, 12>, &float_blocks::narrow_channel_block_avx2>;
#endif

// Copies image n into its zero-bordered buffer (whose border is already zero) and returns where
// the convolution reads it: the buffer, or the input itself without padding.
template <class T>
const T* bordered_image(const conv_geometry& g, const T* x, Index n, T* buffer) {
  const T* source = x + n * g.in_channels * g.in_pixels();
  if (!g.padded()) return source;
  const Index row_length = g.padded_w();
  for (Index c = 0; c < g.in_channels; ++c)
    for (Index h = 0; h < g.in_h; ++h)
      std::copy_n(source + (c * g.in_h + h) * g.in_w, g.in_w,
                  buffer + (c * g.padded_h() + h + g.pad_h) * row_length + g.pad_w);
  return buffer;
}

// What the packed weights at the front of a scratch buffer were packed from. A later call with the
// same key reuses them: the weights (and bias) at those addresses must not have changed, which
// holds for the evaluator (its graph does not change while it is in use) and the bit-exact
// kernels (their weight codes are made once).
struct conv_packing_key {
  const void* weights;
  const void* bias;
  Index groups, group_out, patch, block_channels, block_pixels;
};
template <class T>
inline constexpr std::size_t conv_key_size = (sizeof(conv_packing_key) + sizeof(T) - 1) / sizeof(T);

// Register blocks per tile of output pixels (convolve_blocked).
inline constexpr Index conv_tile_blocks = 16;

// The output pixels are taken in tiles of up to 16 register blocks: for each tile, every channel
// block runs over the tile's pixels. The packed weights of one channel block and the image
// rows under one tile then stay in cache while they are reused (for 7×7×512 maps with 9 MiB of
// weights, running each pixel block over every channel block instead read all the weights from
// memory once per pixel block). The threads split the images, or, with fewer images than
// threads (batch 1), each image's tiles. Each output is summed in the same order either way.
template <class T, class Block, class AfterImage>
void convolve_blocked(const conv_geometry& g, const T* x, const T* w, const T* bias, T* y, T* scratch,
                      std::size_t threads, const AfterImage& after_image) {
  using shape = typename Block::shape;
  constexpr int pixels = shape::pixels;
  constexpr Index block = shape::channels;
  const Index patch = g.patch();
  const Index group_out = g.group_out();
  const Index padded_out = shape::padded_out(g);
  const Index out_pixels = g.out_pixels();
  const Index row_length = g.padded_w();

  T* weights = scratch + conv_key_size<T>;
  T* padded_bias = weights + shape::weights_size(g);
  T* images = padded_bias + shape::bias_size(g);
  const conv_packing_key key{.weights = w, .bias = bias, .groups = g.groups, .group_out = group_out, .patch = patch,
                             .block_channels = block, .block_pixels = pixels};
  if (std::memcmp(scratch, &key, sizeof key) != 0) {
    // Channel block b of a group is a panel [patch][block] at weights + (group·padded_out + b)·patch.
    std::fill(weights, images, T(0));
    for (Index group = 0; group < g.groups; ++group)
      for (Index first = 0; first < group_out; first += block) {
        T* panel = weights + (group * padded_out + first) * patch;
        const Index channels = std::min(block, group_out - first);
        for (Index k = 0; k < patch; ++k)
          for (Index o = 0; o < channels; ++o) panel[k * block + o] = w[(group * group_out + first + o) * patch + k];
        if (bias != nullptr)
          std::copy_n(bias + group * group_out + first, channels, padded_bias + group * padded_out + first);
      }
    std::memcpy(scratch, &key, sizeof key);
  }

  const bool split_images = static_cast<std::size_t>(g.batch) >= threads;
  // Tiles of whole register blocks, small enough that every thread gets one when they split an image.
  const Index blocks = (out_pixels + pixels - 1) / pixels;
  const auto thread_count = static_cast<Index>(split_images ? 1 : threads);
  const Index tile_pixels = std::min(conv_tile_blocks, (blocks + thread_count - 1) / thread_count) * pixels;
  const Index tiles = (out_pixels + tile_pixels - 1) / tile_pixels;

  const auto run_tiles = [&](const T* source, Index n, Index first_tile, Index last_tile) {
    Index base[conv_tile_blocks * shape::pixels];
    for (Index tile = first_tile; tile < last_tile; ++tile) {
      const Index first_pixel = tile * tile_pixels;
      const Index count = std::min(tile_pixels, out_pixels - first_pixel);
      // A last, partial block repeats its last pixel; only the real ones are stored.
      Index oh = first_pixel / g.out_w, ow = first_pixel % g.out_w;
      const Index rounded = (count + pixels - 1) / pixels * pixels;
      for (Index p = 0; p < rounded; ++p) {
        base[p] = oh * g.stride_h * row_length + ow * g.stride_w;
        if (p + 1 < count && ++ow == g.out_w) {
          ow = 0;
          ++oh;
        }
      }
      for (Index group = 0; group < g.groups; ++group) {
        const T* group_image = source + group * g.group_in() * g.padded_h() * row_length;
        for (Index first = 0; first < group_out; first += block) {
          const T* block_weights = weights + (group * padded_out + first) * patch;
          const T* block_bias = padded_bias + group * padded_out + first;
          T* out = y + (n * g.out_channels + group * group_out + first) * out_pixels + first_pixel;
          for (Index q = 0; q < count; q += pixels)
            Block::run(g, group_image, base + q, block_weights, block, block_bias,
                       {.out = out + q, .row_stride = out_pixels, .channels = std::min(block, group_out - first),
                        .count = std::min<Index>(pixels, count - q)});
        }
      }
    }
  };

  const std::size_t image_size = padded_image_size(g);
  if (split_images) {
    // Each thread has its own image buffer, whose border stays zero.
    thread_pool::shared_for(static_cast<std::size_t>(g.batch), threads,
                            [&](std::size_t first, std::size_t last, std::size_t part) {
                              T* buffer = images + part * image_size;
                              std::fill(buffer, buffer + image_size, T(0));
                              for (auto n = static_cast<Index>(first); n < static_cast<Index>(last); ++n) {
                                run_tiles(bordered_image(g, x, n, buffer), n, 0, tiles);
                                after_image(n);
                              }
                            });
    return;
  }
  std::fill(images, images + image_size, T(0));
  for (Index n = 0; n < g.batch; ++n) {
    const T* source = bordered_image(g, x, n, images);
    thread_pool::shared_for(static_cast<std::size_t>(tiles), threads,
                            [&](std::size_t first, std::size_t last, std::size_t) {
                              run_tiles(source, n, static_cast<Index>(first), static_cast<Index>(last));
                            });
    after_image(n);
  }
}

// Few output channels (LeNet's first layer: 6, from one input channel) waste lanes of a packet
// of channels and pay a transpose per block. With stride 1 along W a packet of output pixels
// instead reads one unaligned packet of the image per tap, shared by `channels` accumulators whose
// weights are broadcast from the untransposed w [O][patch]: channels × pixel packets of
// accumulators, each summed in the same tap order as the channel-blocked kernel (same results).
// `starts` are the pixel packets' first columns in the output row.
template <class T, int channels, int packets>
inline void conv_pixel_block(const conv_geometry& g, const T* window_row, const T* w, const T* bias, T* out,
                             const Index* starts) {
  using packet = packet_of<T>;
  using namespace Eigen::internal;
  const Index row_length = g.padded_w();
  const Index channel_size = g.padded_h() * row_length;
  const Index patch = g.patch();
  packet acc[channels][packets];
  static_for<channels>([&](auto c) {
    const packet b = pset1<packet>(bias == nullptr ? T(0) : bias[c]);
    static_for<packets>([&](auto p) { acc[c][p] = b; });
  });
  Index tap_index = 0;
  for (Index c = 0; c < g.group_in(); ++c) {
    for (Index ki = 0; ki < g.kernel_h; ++ki) {
      const T* row = window_row + c * channel_size + ki * g.dilation_h * row_length;
      for (Index kj = 0; kj < g.kernel_w; ++kj, ++tap_index) {
        const T* tap = row + kj * g.dilation_w;
        packet value[packets];
        static_for<packets>([&](auto p) { value[p] = ploadu<packet>(tap + starts[p]); });
        static_for<channels>([&](auto o) {
          const packet weight = pset1<packet>(w[o * patch + tap_index]);
          static_for<packets>([&](auto p) { acc[o][p] = pmadd(weight, value[p], acc[o][p]); });
        });
      }
    }
  }
  const Index out_pixels = g.out_pixels();
  static_for<channels>([&](auto o) {
    static_for<packets>([&](auto p) { pstoreu(out + o * out_pixels + starts[p], acc[o][p]); });
  });
}

using float_blocks::pixel_block_channels;

// The pixel blocks convolve_pixels can run: Eigen's packets (compiled for the including program's
// target) and, for float, float_blocks' AVX2 copy, chosen at run time.
template <class T>
struct eigen_pixel_block {
  static constexpr Index lanes = lanes_of<T>;
  template <int packets>
  static void run(Index channels, const conv_geometry& g, const T* window_row, const T* w, const T* bias, T* out,
                  const Index* starts) {
    switch (channels) {
      case 1: return conv_pixel_block<T, 1, packets>(g, window_row, w, bias, out, starts);
      case 2: return conv_pixel_block<T, 2, packets>(g, window_row, w, bias, out, starts);
      case 3: return conv_pixel_block<T, 3, packets>(g, window_row, w, bias, out, starts);
      case 4: return conv_pixel_block<T, 4, packets>(g, window_row, w, bias, out, starts);
      case 5: return conv_pixel_block<T, 5, packets>(g, window_row, w, bias, out, starts);
      default: return conv_pixel_block<T, pixel_block_channels, packets>(g, window_row, w, bias, out, starts);
    }
  }
};
#if MASE_DISPATCH
struct avx2_pixel_block {
  static constexpr Index lanes = 8;
  template <int packets>
  static void run(Index channels, const conv_geometry& g, const float* window_row, const float* w,
                  const float* bias, float* out, const Index* starts) {
    float_blocks::pixel_block_avx2<packets>(channels, taps_of(g), window_row, w, g.patch(), bias, out, g.out_pixels(),
                                            starts);
  }
};
#endif

// Whether convolve_pixels applies with vectors of `lanes` pixels: a group of at most one vector
// of output channels, stride 1 along W and output rows of at least one vector.
inline bool pixel_blocked(const conv_geometry& g, Index lanes) noexcept {
  return lanes > 1 && g.group_out() <= lanes && g.stride_w == 1 && g.out_w >= lanes;
}

template <class T, class PixelBlock, class AfterImage>
void convolve_pixels(const conv_geometry& g, const T* x, const T* w, const T* bias, T* y, T* images,
                     std::size_t threads, const AfterImage& after_image) {
  constexpr Index lanes = PixelBlock::lanes;
  const Index group_out = g.group_out();
  const Index patch = g.patch();
  const Index out_pixels = g.out_pixels();
  const Index row_length = g.padded_w();
  // Packets cover an output row from the left; the last one ends at the row's end and may
  // overlap its neighbour, which recomputes (and rewrites) the same values.
  const Index row_packets = (g.out_w + lanes - 1) / lanes;
  // The threads split the images, each with its own zero-bordered image buffer.
  thread_pool::shared_for(static_cast<std::size_t>(g.batch), threads,
                          [&](std::size_t first_image, std::size_t last_image, std::size_t part) {
  T* image = images + part * padded_image_size(g);
  // Only the zero border needs filling: each image overwrites the interior.
  if (g.padded()) std::fill(image, image + padded_image_size(g), T(0));
  for (auto n = static_cast<Index>(first_image); n < static_cast<Index>(last_image); ++n) {
    const T* source = bordered_image(g, x, n, image);
    for (Index group = 0; group < g.groups; ++group) {
      const T* group_image = source + group * g.group_in() * g.padded_h() * row_length;
      for (Index oh = 0; oh < g.out_h; ++oh) {
        const T* window_row = group_image + oh * g.stride_h * row_length;
        for (Index first = 0; first < group_out; first += pixel_block_channels) {
          const Index channels = std::min<Index>(pixel_block_channels, group_out - first);
          const Index o = group * group_out + first;
          const T* channel_weights = w + o * patch;
          const T* channel_bias = bias == nullptr ? nullptr : bias + o;
          T* out = y + (n * g.out_channels + o) * out_pixels + oh * g.out_w;
          Index k = 0;
          for (; k + 2 <= row_packets; k += 2) {
            const Index starts[2] = {k * lanes, std::min((k + 1) * lanes, g.out_w - lanes)};
            PixelBlock::template run<2>(channels, g, window_row, channel_weights, channel_bias, out, starts);
          }
          if (k < row_packets) {
            const Index starts[1] = {g.out_w - lanes};
            PixelBlock::template run<1>(channels, g, window_row, channel_weights, channel_bias, out, starts);
          }
        }
      }
    }
    after_image(n);
  }
  });
}

// Calls nothing after an image: the default of convolve's after_image.
struct no_image_step {
  void operator()(Index) const noexcept {}
};

// y = conv(x, w) (+ bias[O] on every pixel of channel O when bias is not null). `scratch` is
// grown to the size the chosen kernel needs when smaller, never shrunk (regrowing would zero-fill
// it on every run); the weights packed in it are reused by the next call with the same w, bias
// and geometry (conv_packing_key). The threads split the batch's images, or one image's pixel
// tiles. after_image(n) runs on image n's results as soon as they are complete, while they are
// still in cache (on the thread that computed them, or after the tiles of a split image).
template <class T, class AfterImage = no_image_step>
void convolve(const conv_geometry& g, const T* x, const T* w, const T* bias, T* y, std::vector<T>& scratch,
              std::size_t threads = 1, const AfterImage& after_image = {}) {
  threads = std::max<std::size_t>(threads, 1);
  // Images split between threads need a buffer each; tiles of one image share one.
  const std::size_t buffers = std::min<std::size_t>(threads, static_cast<std::size_t>(g.batch));
  const auto blocked = [&]<class Block>(Block) {
    using shape = typename Block::shape;
    const std::size_t size =
        conv_key_size<T> + shape::weights_size(g) + shape::bias_size(g) + padded_image_size(g) * buffers;
    if (scratch.size() < size) {
      scratch.assign(size, T(0));  // also clears a key left by another use of the buffer
    }
    convolve_blocked<T, Block>(g, x, w, bias, y, scratch.data(), threads, after_image);
  };
  const auto pixel_blocks = [&]<class PixelBlock>(PixelBlock) {
    const std::size_t size = conv_key_size<T> + padded_image_size(g) * buffers;
    if (scratch.size() < size) scratch.resize(size);
    std::fill_n(scratch.data(), conv_key_size<T>, T(0));  // no weights packed here now
    convolve_pixels<T, PixelBlock>(g, x, w, bias, y, scratch.data() + conv_key_size<T>, buffers, after_image);
  };
#if MASE_DISPATCH
  if constexpr (std::is_same_v<T, float>) {
    const dispatch::target best = dispatch::chosen();
    if (best >= dispatch::target::x86_64_v4 && g.group_out() > 16) return blocked(avx512_register_block{});
    // Eigen's blocks are as fast, with the same sums, where the build itself targets AVX2 and FMA.
    if (best >= dispatch::target::x86_64_v3 && !float_blocks::compiled_for_avx2_fma) {
      if (pixel_blocked(g, avx2_pixel_block::lanes)) return pixel_blocks(avx2_pixel_block{});
      if (g.group_out() > 8) return blocked(avx2_register_block{});
      return blocked(avx2_narrow_register_block{});
    }
  }
#endif
  using blocking = conv_blocking<T>;
  if (pixel_blocked(g, lanes_of<T>)) pixel_blocks(eigen_pixel_block<T>{});
  else if (blocking::is_wide(g)) blocked(eigen_register_block<T, typename blocking::wide>{});
  else blocked(eigen_register_block<T, typename blocking::narrow>{});
}
#if MASE_DISPATCH
// A float linear layer on a vector_register_block: y[rows, out] = x[rows, in] · w[out, in]ᵀ
// (+ bias), each result the bias then one fused multiply-add per input feature, in order; the
// same bits on every block and thread count. The weights are packed once into panels of
// Block's channels ([panel][in][channels], zero past `out`), kept with the padded bias at the
// front of `scratch` under a conv_packing_key as the convolution's are. The threads split the
// (panel, block of rows) pairs.
template <class Block>
void linear_blocked(const float* x, Index rows, Index in, const float* w, Index out, const float* bias, float* y,
                    std::vector<float>& scratch, std::size_t threads) {
  using shape = typename Block::shape;
  constexpr Index block = shape::channels;
  constexpr int pixels = shape::pixels;
  const Index panels = (out + block - 1) / block;
  const Index padded_out = panels * block;
  const std::size_t size = conv_key_size<float> + static_cast<std::size_t>(padded_out * (in + 1));
  if (scratch.size() < size) scratch.assign(size, 0.0f);  // also clears a key left by another use
  float* weights = scratch.data() + conv_key_size<float>;
  float* padded_bias = weights + padded_out * in;
  const conv_packing_key key{.weights = w, .bias = bias, .groups = 1, .group_out = out, .patch = in,
                             .block_channels = block, .block_pixels = pixels};
  if (std::memcmp(scratch.data(), &key, sizeof key) != 0) {
    std::fill(weights, padded_bias + padded_out, 0.0f);
    for (Index first = 0; first < out; first += block) {
      float* panel = weights + first * in;
      const Index channels = std::min(block, out - first);
      for (Index o = 0; o < channels; ++o)
        for (Index k = 0; k < in; ++k) panel[k * block + o] = w[(first + o) * in + k];
    }
    if (bias != nullptr) std::copy_n(bias, out, padded_bias);
    std::memcpy(scratch.data(), &key, sizeof key);
  }
  // The inner dimension is taken in runs whose slice of a panel fits in L1 (16 KiB) while every
  // block of rows passes over it; each run resumes the sums the one before stored.
  constexpr Index run_length = 4096 / block;
  const Index row_blocks = (rows + pixels - 1) / pixels;
  const auto units = static_cast<std::size_t>(panels * row_blocks);
  thread_pool::shared_for(units, threads, [&](std::size_t first_unit, std::size_t last_unit, std::size_t) {
    Index base[pixels];
    for (auto unit = static_cast<Index>(first_unit); unit < static_cast<Index>(last_unit);) {
      // This part's blocks of rows in one panel.
      const Index panel = unit / row_blocks, first_block = unit % row_blocks;
      const Index last_block = std::min(row_blocks, first_block + static_cast<Index>(last_unit) - unit);
      unit += last_block - first_block;
      const Index first = panel * block;
      const float* panel_weights = weights + first * in;
      for (Index k = 0; k < in; k += run_length) {
        const float_blocks::tap_walk taps{.channels = std::min(run_length, in - k)};
        for (Index b = first_block; b < last_block; ++b) {
          const Index row = b * pixels;
          // A last, partial block repeats its last row; only the real ones are stored.
          for (int p = 0; p < pixels; ++p) base[p] = std::min<Index>(row + p, rows - 1) * in;
          Block::copy(taps, x + k, base, panel_weights + k * block, block, padded_bias + first,
                      {.out = y + row * out + first, .pixel_stride = out, .channel_stride = 1,
                       .channels = std::min(block, out - first), .count = std::min<Index>(pixels, rows - row)},
                      k > 0);
        }
      }
    }
  });
}
#endif


}  // namespace linear_algebra_detail

// ---------------------------------------------------------------------------------------------
// Products shared with the bit-exact evaluator (T = float, double, std::int64_t). No bias: the
// caller adds it where its arithmetic wants it. With T = std::int64_t the accumulation is exact
// as long as no partial sum overflows int64 (the caller bounds the operand widths).

// y[rows, out] = x[rows, in] · w[out, in]ᵀ: torch.nn.Linear without bias, with every dimension
// of the input but the last folded into `rows`.
template <class T>
void linear_product(const T* x, Eigen::Index rows, Eigen::Index in, const T* w, Eigen::Index out, T* y,
                    std::size_t threads = 1) {
  linear_algebra_detail::linear_into<T>(x, rows, in, w, out, nullptr, y, threads);
}

// conv1d without bias: x [N, C, L] or [C, L], w [O, C/groups, k], y of the op's result shape.
// `scratch` holds packed weights and zero-bordered images; it is grown when too small and never
// shrunk. A later call with the same w and scratch reuses the packed weights, so a caller that
// changes the weights in place passes a fresh scratch. after_image(n) runs on image n's results
// once they are complete.
template <class T, class AfterImage = linear_algebra_detail::no_image_step>
void conv1d_product(const op::conv1d& op, const T* x, const shape& x_shape, const T* w, T* y, const shape& y_shape,
                    std::vector<T>& scratch, std::size_t threads = 1, const AfterImage& after_image = {}) {
  linear_algebra_detail::convolve<T>(linear_algebra_detail::geometry(op, x_shape, y_shape), x, w, nullptr, y, scratch,
                                     threads, after_image);
}

// conv2d without bias: x [N, C, H, W] or [C, H, W], w [O, C/groups, kH, kW], y of the op's
// result shape. `scratch` as for conv1d_product.
template <class T, class AfterImage = linear_algebra_detail::no_image_step>
void conv2d_product(const op::conv2d& op, const T* x, const shape& x_shape, const T* w, T* y, const shape& y_shape,
                    std::vector<T>& scratch, std::size_t threads = 1, const AfterImage& after_image = {}) {
  linear_algebra_detail::convolve<T>(linear_algebra_detail::geometry(op, x_shape, y_shape), x, w, nullptr, y, scratch,
                                     threads, after_image);
}

// torch.matmul: a 1-D left operand is a row and a 1-D right operand a column (their dimension is
// absent from y), the dimensions before the last two broadcast. Shapes must satisfy
// op::matmul's shape rule and y_shape must be its result; bmm is the case of equal batches.
template <class T>
void matmul_product(const T* a, const shape& a_shape, const T* b, const shape& b_shape, T* y, const shape& y_shape) {
  using namespace linear_algebra_detail;
  const bool a_is_matrix = a_shape.size() >= 2;
  const bool b_is_matrix = b_shape.size() >= 2;
  const Index rows = a_is_matrix ? a_shape.at(-2) : 1;
  const Index inner = a_shape.back();
  const Index cols = b_is_matrix ? b_shape.back() : 1;
  const shape a_batch = shape_rules::leading_dims(a_shape, 2);
  const shape b_batch = shape_rules::leading_dims(b_shape, 2);
  if (b_batch.numel() == 1) {
    // One right matrix for every left one: a single GEMM over all of a's rows (x @ W).
    multiply(a, a_batch.numel() * rows, inner, b, cols, y);
    return;
  }
  const shape y_batch = first_dims(y_shape, y_shape.size() - (a_is_matrix ? 1 : 0) - (b_is_matrix ? 1 : 0));
  const Index count = y_batch.numel();
  for (Index i = 0; i < count; ++i) {
    const T* a_matrix = a + broadcast_source(i, y_batch, a_batch) * rows * inner;
    const T* b_matrix = b + broadcast_source(i, y_batch, b_batch) * inner * cols;
    multiply(a_matrix, rows, inner, b_matrix, cols, y + i * rows * cols);
  }
}

// ---------------------------------------------------------------------------------------------
// Float kernels.

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::linear& op, const Args& args) {
  const tensor& x = args.input(0);
  const tensor* bias = op.bias ? &args.parameter("bias") : nullptr;
  const Eigen::Index rows = linear_algebra_detail::leading_count(x.shape());
  const float* weight = args.parameter("weight").data();
  const float* bias_values = bias ? bias->data() : nullptr;
#if MASE_DISPATCH
  using namespace linear_algebra_detail;
  const dispatch::target best = dispatch::chosen();
  if (best >= dispatch::target::x86_64_v4)
    return linear_blocked<avx512_register_block>(x.data(), rows, op.in_features, weight, op.out_features, bias_values,
                                                 args.output().data(), *args.scratch, args.threads);
  if (best >= dispatch::target::x86_64_v3)
    return linear_blocked<avx2_register_block>(x.data(), rows, op.in_features, weight, op.out_features, bias_values,
                                               args.output().data(), *args.scratch, args.threads);
#endif
  linear_algebra_detail::linear_into<float>(x.data(), rows, op.in_features, weight, op.out_features, bias_values,
                                            args.output().data(), args.threads);
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::matmul&, const Args& args) {
  const tensor& a = args.input(0);
  const tensor& b = args.input(1);
  tensor& y = args.output();
  matmul_product<float>(a.data(), a.shape(), b.data(), b.shape(), y.data(), y.shape());
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::bmm&, const Args& args) {
  const tensor& a = args.input(0);
  const tensor& b = args.input(1);
  tensor& y = args.output();
  matmul_product<float>(a.data(), a.shape(), b.data(), b.shape(), y.data(), y.shape());
}

namespace linear_algebra_detail {
template <class Op>
void float_convolution(const Op& op, const kernel_args& args) {
  const tensor& x = args.input(0);
  tensor& y = args.output();
  const conv_geometry g = geometry(op, x.shape(), y.shape());
  const tensor* bias = op.bias ? &args.parameter("bias") : nullptr;
  convolve<float>(g, x.data(), args.parameter("weight").data(), bias ? bias->data() : nullptr, y.data(),
                  *args.scratch, args.threads);
}
}  // namespace linear_algebra_detail

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::conv1d& op, const Args& args) {
  linear_algebra_detail::float_convolution(op, args);
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::conv2d& op, const Args& args) {
  linear_algebra_detail::float_convolution(op, args);
}

namespace linear_algebra_detail {

// A transposed convolution's sizes, the 1-D case as 2-D with height 1.
struct transposed_geometry {
  Index batch = 1, in_channels = 0, in_h = 1, in_w = 0, out_channels = 0, out_h = 1, out_w = 0, groups = 1;
  Index kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;

  Index group_in() const noexcept { return in_channels / groups; }
  Index group_out() const noexcept { return out_channels / groups; }
  Index taps() const noexcept { return kernel_h * kernel_w; }
  Index in_pixels() const noexcept { return in_h * in_w; }
  Index out_pixels() const noexcept { return out_h * out_w; }
  // The columns of one group and image: [group_out · taps, in_pixels].
  std::size_t columns_size() const noexcept { return static_cast<std::size_t>(group_out() * taps() * in_pixels()); }
};

inline transposed_geometry geometry(const op::conv_transpose1d& op, const shape& x, const shape& y) {
  return spatial_geometry<transposed_geometry>(op, x, y, 1);
}
inline transposed_geometry geometry(const op::conv_transpose2d& op, const shape& x, const shape& y) {
  return spatial_geometry<transposed_geometry>(op, x, y, 2);
}

// The input positions i in [0, in) whose output position i·stride + offset lies in [0, out):
// [first, last).
struct input_range {
  Index first;
  Index last;
};
inline input_range reaching(Index in, Index out, Index stride, Index offset) noexcept {
  const Index first = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  if (out - 1 - offset < 0) return {first, first};
  return {first, std::max(first, std::min(in, (out - 1 - offset) / stride + 1))};
}

// y = conv_transpose(x, w) + bias, PyTorch's way: per image and group one GEMM gives every
// input pixel's contribution to each (output channel, tap), columns = W_gᵀ · X_g with
// W_g [group_in, group_out · taps] and X_g [group_in, in_pixels]; col2im then adds each column
// row into the output at the positions its tap reaches, and the bias comes last. With stride 1
// along W the innermost addition runs over contiguous memory both sides and vectorises.
// `columns` holds columns_size() elements.
template <class T>
void transposed_convolve(const transposed_geometry& g, const T* x, const T* w, const T* bias, T* y, T* columns) {
  const Index group_in = g.group_in(), group_out = g.group_out(), taps = g.taps();
  const Index in_pixels = g.in_pixels(), out_pixels = g.out_pixels();
  matrix_view<T> cols(columns, group_out * taps, in_pixels);
  for (Index n = 0; n < g.batch; ++n) {
    for (Index group = 0; group < g.groups; ++group) {
      const const_matrix_view<T> weights(w + group * group_in * group_out * taps, group_in, group_out * taps);
      const const_matrix_view<T> image(x + (n * g.in_channels + group * group_in) * in_pixels, group_in, in_pixels);
      cols.noalias() = weights.transpose() * image;
      for (Index o = 0; o < group_out; ++o) {
        const Index channel = group * group_out + o;
        T* out = y + (n * g.out_channels + channel) * out_pixels;
        std::fill(out, out + out_pixels, T(0));
        for (Index kh = 0; kh < g.kernel_h; ++kh) {
          const Index offset_h = kh * g.dilation_h - g.pad_h;
          const input_range rows = reaching(g.in_h, g.out_h, g.stride_h, offset_h);
          for (Index kw = 0; kw < g.kernel_w; ++kw) {
            const Index offset_w = kw * g.dilation_w - g.pad_w;
            const input_range cols_in = reaching(g.in_w, g.out_w, g.stride_w, offset_w);
            const Index count = cols_in.last - cols_in.first;
            if (count <= 0) continue;
            const T* tap = columns + ((o * g.kernel_h + kh) * g.kernel_w + kw) * in_pixels;
            for (Index ih = rows.first; ih < rows.last; ++ih) {
              const T* from = tap + ih * g.in_w + cols_in.first;
              T* to = out + (ih * g.stride_h + offset_h) * g.out_w + cols_in.first * g.stride_w + offset_w;
              if (g.stride_w == 1) {
                for (Index j = 0; j < count; ++j) to[j] += from[j];
              } else {
                for (Index j = 0; j < count; ++j) to[j * g.stride_w] += from[j];
              }
            }
          }
        }
        if (bias != nullptr) {
          const T b = bias[channel];
          for (Index p = 0; p < out_pixels; ++p) out[p] += b;
        }
      }
    }
  }
}

template <class Op>
void float_transposed_convolution(const Op& op, const kernel_args& args) {
  check_unary_kernel_shapes(op, args);
  const tensor& x = args.input(0);
  tensor& y = args.output();
  const transposed_geometry g = geometry(op, x.shape(), y.shape());
  const tensor& weight = args.parameter("weight");
  const tensor* bias = op.bias ? &args.parameter("bias") : nullptr;
  // The graph checks parameter shapes when they are set; a direct call is checked here, once.
  const parameter_list expected = op.parameters();
  if (!(weight.shape() == expected[0].shape) || (bias != nullptr && !(bias->shape() == expected[1].shape)))
    throw error(fmt::format("node {}: {} needs weight {} and bias {}, got {} and {}", args.node_name, Op::name,
                            to_string(expected[0].shape), op.bias ? to_string(expected[1].shape) : "none",
                            to_string(weight.shape()), bias != nullptr ? to_string(bias->shape()) : "none"));
  transposed_convolve<float>(g, x.data(), weight.data(), bias ? bias->data() : nullptr, y.data(),
                             args.scratch_buffer(g.columns_size()).data());
}

}  // namespace linear_algebra_detail

// F.conv_transpose1d / F.conv_transpose2d (see transposed_convolve above).
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::conv_transpose1d& op, const Args& args) {
  linear_algebra_detail::float_transposed_convolution(op, args);
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::conv_transpose2d& op, const Args& args) {
  linear_algebra_detail::float_transposed_convolution(op, args);
}

namespace linear_algebra_detail {

// A 3-D convolution's sizes; axes in the order D, H, W.
struct volume_geometry {
  Index batch = 1, in_channels = 0, out_channels = 0, groups = 1;
  std::array<Index, 3> in{}, out{}, kernel{}, stride{}, pad{}, dilation{};
  // Most im2col elements built at once (32 MiB of floats); see slab_depth.
  Index column_budget = Index{1} << 23;

  Index group_in() const noexcept { return in_channels / groups; }
  Index group_out() const noexcept { return out_channels / groups; }
  Index taps() const noexcept { return kernel[0] * kernel[1] * kernel[2]; }
  // Weights of one output channel (the GEMM's inner dimension).
  Index patch() const noexcept { return group_in() * taps(); }
  Index in_voxels() const noexcept { return in[0] * in[1] * in[2]; }
  Index out_plane() const noexcept { return out[1] * out[2]; }
  Index out_voxels() const noexcept { return out[0] * out_plane(); }
  // A 1×1×1 kernel at stride 1 without padding reads the input itself as its columns.
  bool pointwise() const noexcept {
    return taps() == 1 && stride == std::array<Index, 3>{1, 1, 1} && pad == std::array<Index, 3>{0, 0, 0};
  }
  // Output depth slices whose columns are built at once: as many as fit in column_budget
  // (at least one), so that a large volume does not need its whole im2col matrix.
  Index slab_depth() const noexcept {
    const Index slice = std::max<Index>(1, patch() * out_plane());
    return std::clamp<Index>(column_budget / slice, 1, std::max<Index>(out[0], 1));
  }
  std::size_t columns_size() const noexcept {
    return pointwise() ? 0 : static_cast<std::size_t>(patch() * slab_depth() * out_plane());
  }
};

// Input [N, C, D, H, W] or unbatched [C, D, H, W]; result [N, O, Do, Ho, Wo] or [O, Do, Ho, Wo].
inline volume_geometry geometry(const op::conv3d& op, const shape& x, const shape& y) {
  volume_geometry g;
  g.batch = x.size() == 5 ? x[0] : 1;
  g.in_channels = op.in_channels;
  g.out_channels = op.out_channels;
  g.groups = op.groups;
  for (int i = 0; i < 3; ++i) {
    const auto u = static_cast<std::size_t>(i);
    g.in[u] = x.at(i - 3);
    g.out[u] = y.at(i - 3);
    g.kernel[u] = shape_rules::per_dim(op.kernel_size, i);
    g.stride[u] = shape_rules::per_dim(op.stride, i);
    g.pad[u] = shape_rules::per_dim(op.padding, i);
    g.dilation[u] = shape_rules::per_dim(op.dilation, i);
  }
  return g;
}

// im2col for output depth slices [first, first + depth) of one group's input channels `image`:
// columns[(c·taps + tap), voxel] is the input value tap `tap` of output voxel `voxel` sees in
// channel c, or 0 in the padding. Rows are written in whole runs of output columns (W): zeros,
// a contiguous or strided copy, zeros.
template <class T>
void volume_columns(const volume_geometry& g, const T* image, Index first, Index depth, T* columns) {
  const Index plane = g.out_plane();
  const Index width = g.out[2];
  const Index row_size = depth * plane;
  T* row = columns;
  for (Index c = 0; c < g.group_in(); ++c) {
    const T* channel = image + c * g.in_voxels();
    for (Index kd = 0; kd < g.kernel[0]; ++kd)
      for (Index kh = 0; kh < g.kernel[1]; ++kh)
        for (Index kw = 0; kw < g.kernel[2]; ++kw, row += row_size) {
          const Index offset_w = kw * g.dilation[2] - g.pad[2];
          // The output columns whose tap lands inside the input: [inside_first, inside_last).
          const input_range reach = reaching(width, g.in[2], g.stride[2], offset_w);
          const Index inside_first = std::min(reach.first, width);
          const Index inside_last = std::clamp(reach.last, inside_first, width);
          T* to = row;
          for (Index od = first; od < first + depth; ++od) {
            const Index id = od * g.stride[0] + kd * g.dilation[0] - g.pad[0];
            if (id < 0 || id >= g.in[0]) {
              std::fill(to, to + plane, T(0));
              to += plane;
              continue;
            }
            for (Index oh = 0; oh < g.out[1]; ++oh, to += width) {
              const Index ih = oh * g.stride[1] + kh * g.dilation[1] - g.pad[1];
              if (ih < 0 || ih >= g.in[1]) {
                std::fill(to, to + width, T(0));
                continue;
              }
              const T* from = channel + (id * g.in[1] + ih) * g.in[2];
              std::fill(to, to + inside_first, T(0));
              if (g.stride[2] == 1)
                std::copy(from + inside_first + offset_w, from + inside_last + offset_w, to + inside_first);
              else
                for (Index ow = inside_first; ow < inside_last; ++ow) to[ow] = from[ow * g.stride[2] + offset_w];
              std::fill(to + inside_last, to + width, T(0));
            }
          }
        }
  }
}

// y = conv3d(x, w) + bias: per image, group and slab of output depth slices one GEMM,
// W_g [group_out, patch] · columns [patch, voxels], written into the result through a map whose
// rows step over whole output channels. `columns` holds columns_size() elements.
template <class T>
void volume_convolve(const volume_geometry& g, const T* x, const T* w, const T* bias, T* y, T* columns) {
  using strided_rows = Eigen::Map<row_major<T>, Eigen::Unaligned, Eigen::OuterStride<>>;
  using const_column = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>;
  const Index group_in = g.group_in(), group_out = g.group_out(), patch = g.patch();
  const Index out_voxels = g.out_voxels(), plane = g.out_plane();
  const Index slab = g.pointwise() ? std::max<Index>(g.out[0], 1) : g.slab_depth();
  for (Index n = 0; n < g.batch; ++n)
    for (Index group = 0; group < g.groups; ++group) {
      const T* image = x + (n * g.in_channels + group * group_in) * g.in_voxels();
      const const_matrix_view<T> weights(w + group * group_out * patch, group_out, patch);
      T* result = y + (n * g.out_channels + group * group_out) * out_voxels;
      for (Index first = 0; first < g.out[0]; first += slab) {
        const Index depth = std::min(slab, g.out[0] - first);
        const T* source = image;
        if (!g.pointwise()) {
          volume_columns(g, image, first, depth, columns);
          source = columns;
        }
        const const_matrix_view<T> cols(source, patch, depth * plane);
        strided_rows out(result + first * plane, group_out, depth * plane, Eigen::OuterStride<>(out_voxels));
        if (bias == nullptr) {
          out.noalias() = weights * cols;
        } else {
          out.colwise() = const_column(bias + group * group_out, group_out);
          out.noalias() += weights * cols;
        }
      }
    }
}

}  // namespace linear_algebra_detail

// torch.nn.Conv3d / F.conv3d (see volume_convolve above).
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::conv3d& op, const Args& args) {
  using namespace linear_algebra_detail;
  check_unary_kernel_shapes(op, args);
  const tensor& x = args.input(0);
  tensor& y = args.output();
  const tensor& weight = args.parameter("weight");
  const tensor* bias = op.bias ? &args.parameter("bias") : nullptr;
  // The graph checks parameter shapes when they are set; a direct call is checked here, once.
  const parameter_list expected = op.parameters();
  if (!(weight.shape() == expected[0].shape) || (bias != nullptr && !(bias->shape() == expected[1].shape)))
    throw error(fmt::format("node {}: conv3d needs weight {} and bias {}, got {} and {}", args.node_name,
                            to_string(expected[0].shape), op.bias ? to_string(expected[1].shape) : "none",
                            to_string(weight.shape()), bias != nullptr ? to_string(bias->shape()) : "none"));
  const volume_geometry g = geometry(op, x.shape(), y.shape());
  volume_convolve<float>(g, x.data(), weight.data(), bias ? bias->data() : nullptr, y.data(),
                         args.scratch_buffer(g.columns_size()).data());
}

// F.scaled_dot_product_attention(q, k, v, is_causal=…, scale=…) at inference (dropout_p is not
// applied): softmax(q kᵀ · scale, masked to key j ≤ query i when causal) v per batch matrix,
// the batch dimensions of q, k and v broadcasting. The causal mask is PyTorch's
// ones(L, S).tril(): aligned to the top left, also when L ≠ S.
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::scaled_dot_product_attention& op, const Args& args) {
  using namespace linear_algebra_detail;
  const tensor& q = args.input(0);
  const tensor& k = args.input(1);
  const tensor& v = args.input(2);
  tensor& y = args.output();
  const Index queries = q.shape().at(-2);
  const Index embed = q.shape().back();
  const Index keys = k.shape().at(-2);
  const Index value_dim = v.shape().back();
  // PyTorch computes the default 1/√E in double, then multiplies in float.
  const float scale = static_cast<float>(op.scale == 0.0 ? 1.0 / std::sqrt(static_cast<double>(embed)) : op.scale);
  const shape q_batch = shape_rules::leading_dims(q.shape(), 2);
  const shape k_batch = shape_rules::leading_dims(k.shape(), 2);
  const shape v_batch = shape_rules::leading_dims(v.shape(), 2);
  const shape y_batch = shape_rules::leading_dims(y.shape(), 2);
  std::vector<float>& scratch = args.scratch_buffer(static_cast<std::size_t>(queries * keys));
  matrix_view<float> weights(scratch.data(), queries, keys);
  const Index count = y_batch.numel();
  for (Index i = 0; i < count; ++i) {
    const const_matrix_view<float> query(q.data() + broadcast_source(i, y_batch, q_batch) * queries * embed, queries,
                                         embed);
    const const_matrix_view<float> key(k.data() + broadcast_source(i, y_batch, k_batch) * keys * embed, keys, embed);
    const const_matrix_view<float> value(v.data() + broadcast_source(i, y_batch, v_batch) * keys * value_dim, keys,
                                         value_dim);
    // The scale is folded into the GEMM's alpha (no scaled copy of q).
    weights.noalias() = (scale * query) * key.transpose();
    for (Index row = 0; row < queries; ++row) {
      const Index visible = op.is_causal ? std::min(row + 1, keys) : keys;
      if (visible == 0) continue;  // no keys: an empty softmax, and the product below is 0
      auto scores = weights.row(row).head(visible).array();
      // Subtracting the row maximum keeps exp from overflowing; masked keys get weight 0.
      scores = (scores - scores.maxCoeff()).exp();
      scores /= scores.sum();
      weights.row(row).tail(keys - visible).setZero();
    }
    matrix_view<float>(y.data() + i * queries * value_dim, queries, value_dim).noalias() = weights * value;
  }
}

// F.embedding: each index (a float holding an integer) selects a row of weight
// [num_embeddings, embedding_dim]. padding_idx only affects training and is not applied here.
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::embedding& op, const Args& args) {
  const tensor& indices = args.input(0);
  const tensor& weight = args.parameter("weight");
  tensor& y = args.output();
  const std::size_t width = static_cast<std::size_t>(op.embedding_dim);
  const float rows = static_cast<float>(op.num_embeddings);
  const float* index = indices.data();
  for (std::size_t i = 0; i < indices.size(); ++i) {
    const float value = index[i];
    // Also false for NaN.
    if (!(value >= 0.0f && value < rows && value == std::floor(value))) {
      // Name the element by its coordinates in the indices tensor.
      shape at = indices.shape();
      std::size_t rest = i;
      for (int d = at.size() - 1; d >= 0; --d) {
        const auto extent = static_cast<std::size_t>(indices.shape()[d]);
        at[d] = static_cast<std::int64_t>(rest % extent);
        rest /= extent;
      }
      throw error(fmt::format("node {}: embedding index {} at position {} of the indices {} is not a row of the "
                              "weight; indices must be whole numbers in [0, {}) (num_embeddings)",
                              args.node_name, value, to_string(at), to_string(indices.shape()), op.num_embeddings));
    }
    std::memcpy(y.data() + i * width, weight.data() + static_cast<std::size_t>(value) * width, width * sizeof(float));
  }
}

}  // namespace mase::eval
