#pragma once
// Test-side scalar references of the block formats, written from the formulas in the comments
// of mase/format/block.hpp and mase/quant/block.hpp and from OCP MX v1.0, independently of the
// library's code:
//
//   partition   MASE's blocking: block shape right-aligned to the dims, -1 / missing / larger than
//               the dim = the whole dim, zero padding at the end; 2-D activations block each row,
//               2-D weights are tiled, 3-D activations are tiled per batch item. mxint tiles the
//               last two dims with block.rows x block.cols; MX blocks runs of block_size along
//               the last dim.
//   block_fp    elements k * 2^(e-m), |k| <= 2^m - 1, m = width - 1; e the smallest exponent in
//               [-bias, 2^exp_bits - 1 - bias] with round(amax * 2^(m-e)) <= 2^m - 1 (else the top).
//   block_minifloat  finite saturating minifloat elements (exp_bits, m = width - 1 - exp_bits) with
//               subnormals; the per-block bias is the largest b in [0, min(2^bias_bits - 1, 127,
//               150 - m)] whose largest value is at least amax rounded to m mantissa bits.
//   block_log   log elements with bias b = clamp(top_code - nearest_log2(amax), 0, min(2^bias_bits - 1, 127)).
//   mxint       scale s = clamp(floor(log2 amax), -(2^(exp_bits-1) - 1), 2^(exp_bits-1) - 1),
//               elements k * 2^(s - (width - 2)), |k| <= 2^(width-1) - 1.
//   mx          s = clamp(floor(log2 amax) - emax_elem, -127, 127); elements quantize(x / 2^s) in the
//               element format with saturation and the format's rounding, times 2^s.
//
// amax is the largest finite |x| of a block; NaN elements stay NaN, ±inf elements become ±(the
// largest magnitude of the block's grid); an all-zero block gives zeros.

#include <mase/format/block.hpp>

#include "format_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

namespace mase_test {

// ---------------------------------------------------------------------------------------------
// Partitions: each block as the flat indices of its real elements.

using blocks_t = std::vector<std::vector<std::size_t>>;

inline blocks_t tile_blocks(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& tile) {
  blocks_t blocks;
  const std::size_t rank = shape.size();
  std::vector<std::int64_t> counts(rank), strides(rank, 1);
  std::int64_t total_blocks = 1;
  for (std::size_t d = 0; d < rank; ++d) {
    counts[d] = (shape[d] + tile[d] - 1) / tile[d];
    total_blocks *= counts[d];
  }
  for (std::size_t d = rank; d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  for (std::int64_t b = 0; b < total_blocks; ++b) {
    // block coordinates, row-major over the block grid
    std::vector<std::int64_t> coord(rank);
    std::int64_t rest = b;
    for (std::size_t d = rank; d-- > 0;) {
      coord[d] = rest % counts[d];
      rest /= counts[d];
    }
    std::vector<std::size_t> indices;
    // every element of the tensor inside this tile (simple and obviously right)
    std::vector<std::int64_t> lo(rank), hi(rank);
    for (std::size_t d = 0; d < rank; ++d) {
      lo[d] = coord[d] * tile[d];
      hi[d] = std::min(lo[d] + tile[d], shape[d]);
    }
    std::vector<std::int64_t> i = lo;
    bool done = false;
    for (std::size_t d = 0; d < rank; ++d) done = done || lo[d] >= hi[d];
    while (!done) {
      std::int64_t flat = 0;
      for (std::size_t d = 0; d < rank; ++d) flat += i[d] * strides[d];
      indices.push_back(static_cast<std::size_t>(flat));
      std::size_t d = rank;
      while (d-- > 0) {
        if (++i[d] < hi[d]) break;
        i[d] = lo[d];
        if (d == 0) done = true;
      }
    }
    blocks.push_back(std::move(indices));
  }
  return blocks;
}

// MASE's block partition for block_fp / block_minifloat / block_log.
inline blocks_t mase_blocks(const std::vector<std::int64_t>& shape, const mase::block_shape& b) {
  const std::size_t rank = shape.size();
  // the block size MASE is given: [cols] when the height is "whole dim", else [rows, cols]
  std::vector<std::int64_t> given = b.rows == mase::block_shape::full ? std::vector<std::int64_t>{b.cols}
                                                                      : std::vector<std::int64_t>{b.rows, b.cols};
  std::vector<std::int64_t> dims = shape;
  if (b.skip_first_dim) dims[0] = 1;  // activations: one batch item (or row) at a time
  std::vector<std::int64_t> tile(rank, -1);
  for (std::size_t k = 0; k < given.size() && k < rank; ++k) tile[rank - 1 - k] = given[given.size() - 1 - k];
  for (std::size_t d = 0; d < rank; ++d) {
    if (tile[d] == -1 || tile[d] > dims[d]) tile[d] = dims[d];
    tile[d] = std::max<std::int64_t>(tile[d], 1);
  }
  return tile_blocks(shape, tile);
}

inline blocks_t mxint_blocks(const std::vector<std::int64_t>& shape, const mase::block_shape& b) {
  std::vector<std::int64_t> tile(shape.size(), 1);
  tile.back() = b.cols == mase::block_shape::full ? std::max<std::int64_t>(shape.back(), 1) : b.cols;
  if (shape.size() >= 2) {
    const std::int64_t rows = shape[shape.size() - 2];
    tile[shape.size() - 2] = b.rows == mase::block_shape::full ? std::max<std::int64_t>(rows, 1) : b.rows;
  }
  return tile_blocks(shape, tile);
}

inline blocks_t mx_blocks(const std::vector<std::int64_t>& shape, int block_size) {
  std::vector<std::int64_t> tile(shape.size(), 1);
  tile.back() = block_size;
  return tile_blocks(shape, tile);
}

// ---------------------------------------------------------------------------------------------
// Per-block rules.

inline ld max_finite_abs(const std::vector<ld>& x) {
  ld m = 0;
  for (ld v : x)
    if (std::isfinite(v)) m = std::max(m, std::fabs(v));
  return m;
}

inline int floor_log2(ld a) {  // a > 0, finite: the true exponent (also for float32 subnormals)
  int e = 0;
  std::frexp(a, &e);
  return e - 1;
}

// Elements k * step, |k| <= kmax, rounded with r; ±inf give ±kmax * step; NaN stays NaN.
inline void scaled_integers(const std::vector<ld>& x, std::vector<ld>& y, ld step, ld kmax, mase::rounding r) {
  y.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) {
      y[i] = ld_nan;
    } else if (std::isinf(x[i])) {
      y[i] = (x[i] > 0 ? kmax : -kmax) * step;
    } else {
      y[i] = std::clamp(round_integer(x[i] / step, r), -kmax, kmax) * step;
    }
  }
}

// The largest magnitude the block's grid holds, reported next to the values for the bound law.
struct block_result {
  std::vector<ld> y;
  ld largest = 0;
};

inline block_result block_fp_block(const mase::block_fp_fmt& f, const std::vector<ld>& x) {
  const int m = f.width - 1;
  const ld kmax = pow2(m) - 1;
  const ld amax = max_finite_abs(x);
  int e = f.emax();
  if (amax == 0) {
    e = f.emin();
  } else {
    for (int c = f.emin(); c <= f.emax(); ++c)
      if (round_integer(amax * pow2(m - c), f.round) <= kmax) {
        e = c;
        break;
      }
  }
  block_result r;
  scaled_integers(x, r.y, pow2(e - m), kmax, f.round);
  r.largest = kmax * pow2(e - m);
  return r;
}

inline block_result mxint_block(const mase::mxint_fmt& f, const std::vector<ld>& x) {
  const ld amax = max_finite_abs(x);
  const int s = amax == 0 ? f.scale_emin() : std::clamp(floor_log2(amax), f.scale_emin(), f.scale_emax());
  const ld kmax = pow2(f.width - 1) - 1;
  block_result r;
  scaled_integers(x, r.y, pow2(s - (f.width - 2)), kmax, f.round);
  r.largest = kmax * pow2(s - (f.width - 2));
  return r;
}

// A cache of minifloat grids (element formats of block_minifloat and MX).
struct minifloat_grids {
  std::map<std::tuple<int, int, int, int, int>, grid> cache;
  const grid& get(const mase::minifloat_fmt& f) {
    const auto key = std::make_tuple(f.exp_bits, f.man_bits, f.bias, static_cast<int>(f.specials), f.subnormals ? 1 : 0);
    auto it = cache.find(key);
    if (it == cache.end()) it = cache.emplace(key, minifloat_grid(f)).first;
    return it->second;
  }
};

// x rounded to nearest-even with m mantissa bits and an unbounded exponent.
inline ld round_mantissa(ld a, int m) {
  if (a == 0) return 0;
  const int e = floor_log2(a);
  return round_integer(a * pow2(m - e), mase::rounding::half_even) * pow2(e - m);
}

inline block_result block_minifloat_block(const mase::block_minifloat_fmt& f, const std::vector<ld>& x,
                                          minifloat_grids& grids) {
  const int m = f.man_bits();
  const int max_bias = std::min({(1 << f.bias_bits) - 1, 127, 150 - m});
  const ld amax = max_finite_abs(x);
  auto element = [&](int bias) {
    return mase::minifloat_fmt{.exp_bits = f.exp_bits, .man_bits = m, .bias = bias, .subnormals = true,
                               .specials = mase::special_values::finite, .saturating = true,
                               .round = mase::rounding::half_even};
  };
  int bias = 0;
  if (amax == 0) {
    bias = max_bias;
  } else {
    const ld rounded = round_mantissa(amax, m);
    for (int b = max_bias; b >= 0; --b)
      if (grids.get(element(b)).values.back() >= rounded) {
        bias = b;
        break;
      }
  }
  const mase::minifloat_fmt e = element(bias);
  const grid& g = grids.get(e);
  block_result r;
  r.y.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) r.y[i] = minifloat_reference(e, g, x[i]);
  r.largest = g.values.back();
  return r;
}

inline int nearest_log2(ld a) {  // a > 0 finite: log2 rounded to the nearest integer (no ties)
  int e = 0;
  const ld mantissa = 2 * std::frexp(a, &e);  // [1, 2)
  return (e - 1) + (mantissa * mantissa >= 2 ? 1 : 0);
}

inline block_result block_log_block(const mase::block_log_fmt& f, const std::vector<ld>& x) {
  const int top_code = (1 << (f.width - 1)) - 1;
  const int max_bias = std::min((1 << f.bias_bits) - 1, 127);
  const ld amax = max_finite_abs(x);
  const int top = amax == 0 ? 0 : nearest_log2(amax);
  const int bias = std::clamp(top_code - top, 0, max_bias);
  const mase::log_fmt e{.width = f.width, .bias = bias};
  const std::vector<ld> magnitudes = log_magnitudes(e);
  block_result r;
  r.y.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) r.y[i] = log_reference(e, magnitudes, x[i]);
  r.largest = magnitudes.back();
  return r;
}

inline block_result mx_block(const mase::mx_fmt& f, const std::vector<ld>& x, minifloat_grids& grids) {
  const ld amax = max_finite_abs(x);
  const int emax_element = mase::is_integer_element(f.element) ? 0 : mase::element_minifloat(f.element).emax();
  const int s = amax == 0 ? -127 : std::clamp(floor_log2(amax) - emax_element, -127, 127);
  block_result r;
  if (mase::is_integer_element(f.element)) {
    const int w = mase::integer_element_bits(f.element);
    const ld kmax = pow2(w - 1) - 1;  // symmetric: -2^(w-1) is not used (OCP MXINT8)
    scaled_integers(x, r.y, pow2(s - (w - 2)), kmax, f.round);
    r.largest = kmax * pow2(s - (w - 2));
    return r;
  }
  mase::minifloat_fmt e = mase::element_minifloat(f.element);
  e.saturating = true;
  e.round = f.round;
  const grid& g = grids.get(e);
  r.y.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) r.y[i] = minifloat_reference(e, g, x[i] * pow2(-s)) * pow2(s);
  r.largest = g.values.back() * pow2(s);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Whole tensors: the reference value of every element and the bound of its block.

struct tensor_result {
  std::vector<ld> y;
  std::vector<ld> bound;  // the block's largest magnitude, per element
};

template <class BlockFn>
tensor_result apply_blocks(const blocks_t& blocks, const std::vector<float>& in, BlockFn&& fn) {
  tensor_result t;
  t.y.assign(in.size(), ld_nan);
  t.bound.assign(in.size(), 0);
  for (const auto& block : blocks) {
    std::vector<ld> x;
    for (std::size_t i : block) x.push_back(in[i]);
    const block_result r = fn(x);
    for (std::size_t k = 0; k < block.size(); ++k) {
      t.y[block[k]] = r.y[k];
      t.bound[block[k]] = r.largest;
    }
  }
  return t;
}

inline tensor_result reference(const mase::block_fp_fmt& f, const std::vector<float>& in,
                               const std::vector<std::int64_t>& shape, minifloat_grids&) {
  return apply_blocks(mase_blocks(shape, f.block), in, [&](const std::vector<ld>& x) { return block_fp_block(f, x); });
}
inline tensor_result reference(const mase::block_minifloat_fmt& f, const std::vector<float>& in,
                               const std::vector<std::int64_t>& shape, minifloat_grids& grids) {
  return apply_blocks(mase_blocks(shape, f.block), in,
                      [&](const std::vector<ld>& x) { return block_minifloat_block(f, x, grids); });
}
inline tensor_result reference(const mase::block_log_fmt& f, const std::vector<float>& in,
                               const std::vector<std::int64_t>& shape, minifloat_grids&) {
  return apply_blocks(mase_blocks(shape, f.block), in, [&](const std::vector<ld>& x) { return block_log_block(f, x); });
}
inline tensor_result reference(const mase::mxint_fmt& f, const std::vector<float>& in,
                               const std::vector<std::int64_t>& shape, minifloat_grids&) {
  return apply_blocks(mxint_blocks(shape, f.block), in, [&](const std::vector<ld>& x) { return mxint_block(f, x); });
}
inline tensor_result reference(const mase::mx_fmt& f, const std::vector<float>& in,
                               const std::vector<std::int64_t>& shape, minifloat_grids& grids) {
  return apply_blocks(mx_blocks(shape, f.block_size), in,
                      [&](const std::vector<ld>& x) { return mx_block(f, x, grids); });
}

}  // namespace mase_test
