#pragma once
// Register blocks of the float products, written once with GCC's vector extensions and compiled
// for each x86-64 level (AVX2 + FMA, AVX-512) in functions that carry the target: a build for
// the x86-64 baseline (CMake's default flags) then runs the matrix products and convolutions at
// the speed of its processor, not of SSE2.
//
// Every block sums each output in one order: the bias (or zero), then one fused multiply-add per
// tap, taps in order. The blocks differ only in how many outputs they hold in registers, so every
// block shape and target gives the same bits, which are those of the scalar chain
// acc = fma(value, weight, acc) (tests/eval/test_kernels_linear_algebra.cpp compares them). Fusing
// needs contraction, which the copies switch on with optimize("O3", "fp-contract=fast"): GCC
// contracts only when optimising, so the copies are optimised even in a -O0 build.

#include <mase/core/dispatch.hpp>

#include <cstddef>
#include <cstring>

namespace mase::eval::float_blocks {

using Index = std::ptrdiff_t;

// `Lanes` floats in one vector register (8: AVX2, 16: AVX-512).
template <int Lanes>
struct vector_of {
  using type [[gnu::vector_size(4 * Lanes)]] = float;
};
template <int Lanes>
using float_vector = typename vector_of<Lanes>::type;

// Where the value a tap multiplies lies in the source, for an output whose first value is at
// `base`: base + c·channel_stride + i·row_stride + j·column_stride for the taps (c, i, j) in
// [0, channels) × [0, rows) × [0, columns), in that order. A convolution's taps run over its input
// channels and kernel window; a matrix product's over its inner dimension (rows = columns = 1).
struct tap_walk {
  Index channels = 0, channel_stride = 1;
  Index rows = 1, row_stride = 0;
  Index columns = 1, column_stride = 0;
};

// Where a block's results go: result (pixel p, channel c) at out + p·pixel_stride + c·channel_stride
// for the first `count` pixels and `channels` channels of the block. A convolution's result is
// [channel][pixel]; a matrix product's [row][column].
struct block_output {
  float* out;
  Index pixel_stride, channel_stride;
  Index channels, count;
};

// Channels in the lanes: out[p][c] = bias[c] + Σ_taps weights[tap][c] · source[base[p] + tap]
// for Pixels outputs (a partial block repeats a real base) and Vectors·Lanes channels, the
// weights one row of Vectors·Lanes per tap, `weight_stride` apart; bias padded to the block.
// With `resume` the sums start from the results already in `to` instead of the bias: a product
// whose taps are taken in several runs (to keep a run's weights in cache) continues each chain
// from its stored value, so it sums in the same order as one run.
template <int Lanes, int Vectors, int Pixels>
[[gnu::always_inline]] inline void channel_block(const tap_walk& taps, const float* source, const Index* base,
                                                 const float* weights, Index weight_stride, const float* bias,
                                                 const block_output& to, bool resume) {
  using vector = float_vector<Lanes>;
  constexpr int block = Vectors * Lanes;
  const bool whole = to.channel_stride == 1 && to.channels == block && to.count == Pixels;
  vector acc[Pixels][Vectors];
  if (!resume) {
#pragma GCC unroll 4
    for (int v = 0; v < Vectors; ++v) {
      vector b;
      std::memcpy(&b, bias + v * Lanes, sizeof b);
#pragma GCC unroll 16
      for (int p = 0; p < Pixels; ++p) acc[p][v] = b;
    }
  } else if (whole) {
#pragma GCC unroll 16
    for (int p = 0; p < Pixels; ++p)
#pragma GCC unroll 4
      for (int v = 0; v < Vectors; ++v) std::memcpy(&acc[p][v], to.out + p * to.pixel_stride + v * Lanes, sizeof acc[p][v]);
  } else {
    float tile[Pixels][block] = {};
    for (Index c = 0; c < to.channels; ++c)
      for (Index p = 0; p < to.count; ++p) tile[p][c] = to.out[p * to.pixel_stride + c * to.channel_stride];
#pragma GCC unroll 16
    for (int p = 0; p < Pixels; ++p)
#pragma GCC unroll 4
      for (int v = 0; v < Vectors; ++v) std::memcpy(&acc[p][v], &tile[p][v * Lanes], sizeof acc[p][v]);
  }
  const float* tap_weights = weights;
  const auto step = [&](const float* tap) __attribute__((always_inline)) {
    vector w[Vectors];
#pragma GCC unroll 4
    for (int v = 0; v < Vectors; ++v) std::memcpy(&w[v], tap_weights + v * Lanes, sizeof w[v]);
    tap_weights += weight_stride;
#pragma GCC unroll 16
    for (int p = 0; p < Pixels; ++p) {
      const float value = tap[base[p]];
#pragma GCC unroll 4
      for (int v = 0; v < Vectors; ++v) acc[p][v] += value * w[v];
    }
  };
  if (taps.rows == 1 && taps.columns == 1) {
    // A matrix product or a 1×1 kernel: one loop, with the registers the window's loops would take.
    for (Index c = 0; c < taps.channels; ++c) step(source + c * taps.channel_stride);
  } else {
    for (Index c = 0; c < taps.channels; ++c)
      for (Index i = 0; i < taps.rows; ++i) {
        const float* row = source + c * taps.channel_stride + i * taps.row_stride;
        for (Index j = 0; j < taps.columns; ++j) step(row + j * taps.column_stride);
      }
  }
  if (whole) {
#pragma GCC unroll 16
    for (int p = 0; p < Pixels; ++p)
#pragma GCC unroll 4
      for (int v = 0; v < Vectors; ++v) std::memcpy(to.out + p * to.pixel_stride + v * Lanes, &acc[p][v], sizeof acc[p][v]);
    return;
  }
  float tile[Pixels][block];
#pragma GCC unroll 16
  for (int p = 0; p < Pixels; ++p)
#pragma GCC unroll 4
    for (int v = 0; v < Vectors; ++v) std::memcpy(&tile[p][v * Lanes], &acc[p][v], sizeof acc[p][v]);
  for (Index c = 0; c < to.channels; ++c)
    for (Index p = 0; p < to.count; ++p) to.out[p * to.pixel_stride + c * to.channel_stride] = tile[p][c];
}

// Pixels in the lanes, for convolutions with few output channels and stride 1 along the row:
// out[o][starts[k] + l] = bias[o] + Σ_taps w[o][tap] · source[starts[k] + l + tap] for Channels
// output channels (w [channel][patch], `patch` taps each, `out_channel_stride` apart in out)
// and Packets vectors of Lanes consecutive pixels from `starts`.
template <int Lanes, int Channels, int Packets>
[[gnu::always_inline]] inline void pixel_block(const tap_walk& taps, const float* source, const float* w, Index patch,
                                               const float* bias, float* out, Index out_channel_stride,
                                               const Index* starts) {
  using vector = float_vector<Lanes>;
  vector acc[Channels][Packets];
#pragma GCC unroll 8
  for (int o = 0; o < Channels; ++o) {
    const vector b = (bias == nullptr ? 0.0f : bias[o]) - vector{};  // x − (+0) is x, also for −0
#pragma GCC unroll 4
    for (int k = 0; k < Packets; ++k) acc[o][k] = b;
  }
  Index tap_index = 0;
  for (Index c = 0; c < taps.channels; ++c) {
    for (Index i = 0; i < taps.rows; ++i) {
      const float* row = source + c * taps.channel_stride + i * taps.row_stride;
      for (Index j = 0; j < taps.columns; ++j, ++tap_index) {
        const float* tap = row + j * taps.column_stride;
        vector values[Packets];
#pragma GCC unroll 4
        for (int k = 0; k < Packets; ++k) std::memcpy(&values[k], tap + starts[k], sizeof values[k]);
#pragma GCC unroll 8
        for (int o = 0; o < Channels; ++o) {
          const float weight = w[o * patch + tap_index];
#pragma GCC unroll 4
          for (int k = 0; k < Packets; ++k) acc[o][k] += weight * values[k];
        }
      }
    }
  }
#pragma GCC unroll 8
  for (int o = 0; o < Channels; ++o)
#pragma GCC unroll 4
    for (int k = 0; k < Packets; ++k) std::memcpy(out + o * out_channel_stride + starts[k], &acc[o][k], sizeof acc[o][k]);
}

// Whether the including program is itself compiled for AVX2 and FMA (then Eigen's packets are
// as wide, and fuse the same multiply-adds).
#if defined(__AVX2__) && defined(__FMA__)
inline constexpr bool compiled_for_avx2_fma = true;
#else
inline constexpr bool compiled_for_avx2_fma = false;
#endif

// Output channels per pixel block at most (LeNet's first layer has 6).
inline constexpr int pixel_block_channels = 6;

#if MASE_DISPATCH

#define MASE_FLOAT_BLOCK_COPY(isa) __attribute__((target(isa), optimize("O3", "fp-contract=fast")))

// The copies. One call covers a whole block and every tap of it, so the call costs nothing.
MASE_FLOAT_BLOCK_COPY("avx2,fma")
inline void channel_block_avx2(const tap_walk& taps, const float* source, const Index* base, const float* weights,
                               Index weight_stride, const float* bias, const block_output& to, bool resume) {
  channel_block<8, 2, 6>(taps, source, base, weights, weight_stride, bias, to, resume);
}
MASE_FLOAT_BLOCK_COPY("avx2,fma")
inline void narrow_channel_block_avx2(const tap_walk& taps, const float* source, const Index* base,
                                      const float* weights, Index weight_stride, const float* bias,
                                      const block_output& to, bool resume) {
  channel_block<8, 1, 12>(taps, source, base, weights, weight_stride, bias, to, resume);
}
MASE_FLOAT_BLOCK_COPY("avx512f")
inline void channel_block_avx512(const tap_walk& taps, const float* source, const Index* base, const float* weights,
                                 Index weight_stride, const float* bias, const block_output& to, bool resume) {
  channel_block<16, 2, 12>(taps, source, base, weights, weight_stride, bias, to, resume);
}

template <int Packets>
MASE_FLOAT_BLOCK_COPY("avx2,fma")
void pixel_block_avx2(Index channels, const tap_walk& taps, const float* source, const float* w, Index patch,
                      const float* bias, float* out, Index out_channel_stride, const Index* starts) {
  switch (channels) {
    case 1: return pixel_block<8, 1, Packets>(taps, source, w, patch, bias, out, out_channel_stride, starts);
    case 2: return pixel_block<8, 2, Packets>(taps, source, w, patch, bias, out, out_channel_stride, starts);
    case 3: return pixel_block<8, 3, Packets>(taps, source, w, patch, bias, out, out_channel_stride, starts);
    case 4: return pixel_block<8, 4, Packets>(taps, source, w, patch, bias, out, out_channel_stride, starts);
    case 5: return pixel_block<8, 5, Packets>(taps, source, w, patch, bias, out, out_channel_stride, starts);
    default:
      return pixel_block<8, pixel_block_channels, Packets>(taps, source, w, patch, bias, out, out_channel_stride,
                                                           starts);
  }
}

#undef MASE_FLOAT_BLOCK_COPY

#endif  // MASE_DISPATCH

}  // namespace mase::eval::float_blocks
