#pragma once
// MASE's block partition (chop/nn/quantizers/utils.py `block` / `unblock`), as a tile layout.
//
// Every blocking MASE uses (1-D bias runs, 2-D activation rows, 2-D weight tiles via F.unfold,
// 3-D per-batch tiles, MX runs along chosen axes, mxint_hardware tiles) is the same thing:
// cut the tensor into axis-aligned tiles of a fixed extent per dim, zero-padding the end of
// each dim up to a multiple of its tile extent. So one representation serves them all: the
// tensor shape, the tile extent per dim and the tile count per dim. Blocks are never
// materialised; `for_each_block` hands out the flat indices of each tile's real elements.
//
// Padding zeros belong to a block (they are quantized and then dropped by MASE), but since
// |0| never exceeds a block's max |x| they cannot change any per-block statistic used here;
// the layout still reports how many there are.

#include <mase/core/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace mase {

struct block_layout {
  std::vector<std::int64_t> shape;          // the tensor's shape
  std::vector<std::int64_t> tile;           // block extent per dim (1 on dims that are not blocked)
  std::vector<std::int64_t> tiles_per_dim;  // ceil(shape / tile)
  std::vector<std::int64_t> strides;        // row-major element strides of the tensor
  // MASE puts 2-D weight and 3-D blocks back with F.fold, which adds each block into a zero
  // tensor: a -0.0 result comes back as +0.0. The other forms reshape and keep -0.0.
  bool unblocked_by_fold = false;

  [[nodiscard]] std::int64_t block_count() const noexcept {
    std::int64_t count = 1;
    for (const std::int64_t n : tiles_per_dim) count *= n;
    return count;
  }
  // Elements per block, padding included.
  [[nodiscard]] std::int64_t block_volume() const noexcept {
    std::int64_t volume = 1;
    for (const std::int64_t t : tile) volume *= t;
    return volume;
  }
  [[nodiscard]] std::int64_t element_count() const noexcept {
    std::int64_t count = 1;
    for (const std::int64_t d : shape) count *= d;
    return count;
  }
};

namespace detail {

inline std::string shape_to_string(std::span<const std::int64_t> dims) {
  std::ostringstream out;
  out << '[';
  for (std::size_t i = 0; i < dims.size(); ++i) out << (i ? ", " : "") << dims[i];
  out << ']';
  return out.str();
}

inline std::vector<std::int64_t> row_major_strides(std::span<const std::int64_t> shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

}  // namespace detail

// Tiles of extent `tile[d]` along each dim, zero-padded at the end of each dim.
inline block_layout make_tile_layout(std::span<const std::int64_t> shape, std::span<const std::int64_t> tile) {
  require(shape.size() == tile.size(), "make_tile_layout: tile " + detail::shape_to_string(tile) +
                                           " must have one extent per dim of shape " + detail::shape_to_string(shape));
  block_layout layout;
  layout.shape.assign(shape.begin(), shape.end());
  layout.tile.assign(tile.begin(), tile.end());
  layout.strides = detail::row_major_strides(shape);
  for (std::size_t d = 0; d < shape.size(); ++d) {
    require(shape[d] >= 0, "make_tile_layout: negative dim in shape " + detail::shape_to_string(shape));
    require(tile[d] >= 1, "make_tile_layout: tile extents must be >= 1, got " + detail::shape_to_string(tile));
    layout.tiles_per_dim.push_back((shape[d] + tile[d] - 1) / tile[d]);
  }
  return layout;
}

// MASE `_infer_block_shape`: right-align block_size with the shape; a missing leading entry,
// -1, or an entry larger than its dim becomes the full dim.
inline std::vector<std::int64_t> infer_block_shape(std::span<const std::int64_t> shape,
                                                   std::span<const std::int64_t> block_size) {
  const std::size_t rank = shape.size();
  std::vector<std::int64_t> inferred(rank, -1);
  const std::size_t given = std::min(rank, block_size.size());
  for (std::size_t i = 0; i < given; ++i)  // right-aligned: the last entries win
    inferred[rank - given + i] = block_size[block_size.size() - given + i];
  for (std::size_t d = 0; d < rank; ++d) {
    require(inferred[d] == -1 || inferred[d] >= 1,
            "block_size " + detail::shape_to_string(block_size) + ": entries must be -1 (the full dim) or >= 1");
    if (inferred[d] == -1 || inferred[d] > shape[d]) inferred[d] = shape[d];
  }
  return inferred;
}

// MASE `block(x, block_shape, skip_first_dim)` for block_fp / block_minifloat / block_log:
//   1-D (skip_first_dim=false): runs of B;
//   2-D, skip_first_dim=true ("activation"): runs of block_size[-1] along each row;
//   2-D, skip_first_dim=false ("weight"): b0 x b1 tiles (F.unfold);
//   3-D, skip_first_dim=true: b1 x b2 tiles over the last two dims of each batch item.
// MASE rejects everything else; so does this.
inline block_layout make_mase_block_layout(std::span<const std::int64_t> shape,
                                           std::span<const std::int64_t> block_size, bool skip_first_dim) {
  const auto describe = [&] {
    return "shape " + detail::shape_to_string(shape) + ", block_size " + detail::shape_to_string(block_size) +
           ", skip_first_dim=" + (skip_first_dim ? "true" : "false");
  };
  const std::size_t rank = shape.size();
  require(rank >= 1 && rank <= 3, "MASE blocking: unsupported rank " + std::to_string(rank) + " (" + describe() +
                                      "); MASE blocks 1-D, 2-D and 3-D tensors only: reshape to at most 3 dims");
  require(!(rank == 1 && skip_first_dim),
          "MASE blocking: a 1-D tensor cannot skip its first dim (" + describe() + "); pass skip_first_dim=false");
  require(!(rank == 3 && !skip_first_dim),
          "MASE blocking: 3-D tensors need skip_first_dim=true (" + describe() + "); MASE does not block 3-D weights");
  for (const std::int64_t d : shape) require(d >= 0, "MASE blocking: negative dim in " + describe());

  // The activation forms infer the block against one batch item, so the first dim's tile is 1.
  std::vector<std::int64_t> inference_shape(shape.begin(), shape.end());
  if (skip_first_dim) inference_shape[0] = 1;
  std::vector<std::int64_t> tile = infer_block_shape(inference_shape, block_size);
  for (std::int64_t& t : tile) t = std::max<std::int64_t>(t, 1);  // zero-size dims: nothing to tile
  block_layout layout = make_tile_layout(shape, tile);
  layout.unblocked_by_fold = (rank == 2 && !skip_first_dim) || rank == 3;
  return layout;
}

// A block result as MASE's `unblock` returns it (see block_layout::unblocked_by_fold).
inline float unblocked_value(const block_layout& layout, float block_result) noexcept {
  return layout.unblocked_by_fold ? 0.0f + block_result : block_result;
}

inline block_layout make_mase_block_layout(const std::vector<std::int64_t>& shape,
                                           const std::vector<std::int64_t>& block_size, bool skip_first_dim) {
  return make_mase_block_layout(std::span<const std::int64_t>(shape), std::span<const std::int64_t>(block_size),
                                skip_first_dim);
}

// Calls fn(block_index, element_indices, padding) for every block, in row-major order of the
// block grid. `element_indices` are the flat row-major indices of the block's real elements
// (row-major within the tile); `padding` is the number of zeros MASE pads the block with.
template <class Fn>
void for_each_block(const block_layout& layout, Fn&& fn) {
  const std::size_t rank = layout.shape.size();
  const std::int64_t blocks = layout.block_count();
  if (layout.element_count() == 0) return;
  const std::int64_t volume = layout.block_volume();
  std::vector<std::int64_t> block_coord(rank, 0);
  std::vector<std::int64_t> begin(rank), extent(rank), inner(rank);
  std::vector<std::int64_t> indices;
  indices.reserve(static_cast<std::size_t>(volume));
  for (std::int64_t block = 0; block < blocks; ++block) {
    std::int64_t real = 1;
    for (std::size_t d = 0; d < rank; ++d) {
      begin[d] = block_coord[d] * layout.tile[d];
      extent[d] = std::min(layout.tile[d], layout.shape[d] - begin[d]);
      real *= extent[d];
    }
    indices.clear();
    std::fill(inner.begin(), inner.end(), 0);
    for (std::int64_t k = 0; k < real; ++k) {
      std::int64_t flat = 0;
      for (std::size_t d = 0; d < rank; ++d) flat += (begin[d] + inner[d]) * layout.strides[d];
      indices.push_back(flat);
      for (std::size_t d = rank; d-- > 0;) {  // odometer over the tile
        if (++inner[d] < extent[d]) break;
        inner[d] = 0;
      }
    }
    fn(block, std::span<const std::int64_t>(indices), volume - real);
    for (std::size_t d = rank; d-- > 0;) {  // odometer over the block grid
      if (++block_coord[d] < layout.tiles_per_dim[d]) break;
      block_coord[d] = 0;
    }
  }
}

// max |x| per block, as torch's max: a NaN anywhere in a block makes its max NaN.
// Padding zeros are included implicitly (|x| >= 0, so they never raise the max).
inline std::vector<float> block_max_abs(const block_layout& layout, std::span<const float> x) {
  require(static_cast<std::int64_t>(x.size()) == layout.element_count(),
          "block_max_abs: " + std::to_string(x.size()) + " values for shape " + detail::shape_to_string(layout.shape));
  std::vector<float> maxima(static_cast<std::size_t>(layout.block_count()), 0.0f);
  for_each_block(layout, [&](std::int64_t block, std::span<const std::int64_t> elements, std::int64_t) {
    float m = 0.0f;
    for (const std::int64_t i : elements) {
      const float a = std::fabs(x[static_cast<std::size_t>(i)]);
      if (std::isnan(a)) {
        m = a;
        break;
      }
      m = std::max(m, a);
    }
    maxima[static_cast<std::size_t>(block)] = m;
  });
  return maxima;
}

// MASE's guard against log2(0) in block_fp / block_minifloat / block_log:
//   if every block max is 0, all become 1;
//   otherwise each 0 takes the smallest non-zero block max (torch's min: NaN wins).
inline void fix_zero_block_maxima(std::span<float> maxima) {
  bool all_zero = true;
  bool any_nan = false;
  float smallest_non_zero = std::numeric_limits<float>::infinity();
  for (const float m : maxima) {
    if (m == 0.0f) continue;
    all_zero = false;
    if (std::isnan(m))
      any_nan = true;
    else
      smallest_non_zero = std::min(smallest_non_zero, m);
  }
  if (all_zero) {
    std::fill(maxima.begin(), maxima.end(), 1.0f);
    return;
  }
  const float replacement = any_nan ? std::numeric_limits<float>::quiet_NaN() : smallest_non_zero;
  for (float& m : maxima)
    if (m == 0.0f) m = replacement;
}

}  // namespace mase
