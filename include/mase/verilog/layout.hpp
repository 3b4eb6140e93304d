#pragma once
// The orders in which a design holds a tensor: a component's ROM words (a linear layer's tiles, a
// channels-last conv's taps) and a stream's or a table's read positions within a sample
// (channels-last pixels, permutes, gathers, broadcasts). Component descriptors lay out their ROMs
// with them, the emitter its stimulus and expected outputs.

#include <mase/core/error.hpp>
#include <mase/core/shape.hpp>
#include <mase/core/tensor.hpp>
#include <mase/ir/graph.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace mase::verilog::detail {

// The linear weight ROM: address g·CHUNKS + k holds the P1×P0 tile W[g·P1 + r][k·P0 + c] at lane r·P0 + c.
inline std::vector<std::int64_t> linear_weight_order(std::span<const std::int64_t> w, std::int64_t out, std::int64_t in,
                                                     std::int64_t p0, std::int64_t p1) {
  std::vector<std::int64_t> ordered;
  ordered.reserve(w.size());
  for (std::int64_t g = 0; g < out / p1; ++g)
    for (std::int64_t k = 0; k < in / p0; ++k)
      for (std::int64_t r = 0; r < p1; ++r)
        for (std::int64_t c = 0; c < p0; ++c) ordered.push_back(w[static_cast<std::size_t>((g * p1 + r) * in + k * p0 + c)]);
  return ordered;
}

// A channels-last conv's weight ROM (mase_pixel_sweep): word b*T + t holds output channels
// b*lanes .. b*lanes + lanes - 1 (lane 0 lowest) at tap t = (ky*KX + kx)*CG + ci, from PyTorch's
// [CO][CG][KY][KX] layout.
inline std::vector<std::int64_t> channels_last_weight_order(std::span<const std::int64_t> w, std::int64_t out_channels,
                                                            std::int64_t group_channels, std::int64_t kernel_y,
                                                            std::int64_t kernel_x, std::int64_t lanes) {
  std::vector<std::int64_t> ordered;
  ordered.reserve(w.size());
  for (std::int64_t b = 0; b < out_channels / lanes; ++b)
    for (std::int64_t ky = 0; ky < kernel_y; ++ky)
      for (std::int64_t kx = 0; kx < kernel_x; ++kx)
        for (std::int64_t ci = 0; ci < group_channels; ++ci)
          for (std::int64_t l = 0; l < lanes; ++l)
            ordered.push_back(w[static_cast<std::size_t>((((b * lanes + l) * group_channels + ci) * kernel_y + ky) * kernel_x + kx)]);
  return ordered;
}

// Each sample of [N, C, H, W] values in channels-last order (pixel by pixel, C channels each).
template <class T>
std::vector<T> to_channels_last(std::span<const T> values, std::int64_t channels, std::int64_t rows, std::int64_t cols) {
  std::vector<T> ordered;
  ordered.reserve(values.size());
  const std::int64_t plane = rows * cols, sample = channels * plane;
  for (std::int64_t base = 0; base + sample <= static_cast<std::int64_t>(values.size()); base += sample)
    for (std::int64_t pixel = 0; pixel < plane; ++pixel)
      for (std::int64_t c = 0; c < channels; ++c) ordered.push_back(values[static_cast<std::size_t>(base + c * plane + pixel)]);
  return ordered;
}

// A read order within a sample: for each element of one sample of `result` (its dimensions after
// the batch, row-major), the source position Σ index[a]·stride[a] (stride per result dimension).
inline std::vector<std::int64_t> strided_order(const shape& result, const std::vector<std::int64_t>& stride) {
  const int rank = result.size();
  std::int64_t elements = 1;
  for (int a = 1; a < rank; ++a) elements *= result[a];
  std::vector<std::int64_t> order(static_cast<std::size_t>(elements));
  std::vector<std::int64_t> index(static_cast<std::size_t>(rank), 0);
  for (std::int64_t& source : order) {
    source = 0;
    for (int a = 1; a < rank; ++a) source += index[static_cast<std::size_t>(a)] * stride[static_cast<std::size_t>(a)];
    for (int a = rank - 1; a >= 1; --a) {
      if (++index[static_cast<std::size_t>(a)] < result[a]) break;
      index[static_cast<std::size_t>(a)] = 0;
    }
  }
  return order;
}

// A permute's read order within a sample: entry j is the arrival position (row-major over the
// input's dimensions after the batch) of the j-th element of the output, in its row-major order.
inline std::vector<std::int64_t> permute_order(const shape& in, const dims& permutation) {
  const int rank = in.size();
  std::vector<std::int64_t> in_stride(static_cast<std::size_t>(rank), 1);
  for (int d = rank - 2; d >= 0; --d) in_stride[static_cast<std::size_t>(d)] = in_stride[static_cast<std::size_t>(d + 1)] * in[d + 1];
  shape out;
  std::vector<std::int64_t> stride(static_cast<std::size_t>(rank));
  for (int a = 0; a < rank; ++a) {
    const std::int64_t d = permutation[static_cast<std::size_t>(a)];
    const int source = static_cast<int>(d < 0 ? d + rank : d);
    out.push_back(in[source]);
    stride[static_cast<std::size_t>(a)] = in_stride[static_cast<std::size_t>(source)];
  }
  return strided_order(out, stride);
}

// A gather's read order within a sample (index_select by constant indices, or a slice, along a
// dimension d after the batch): entry j is the arrival position of the j-th element of the output,
// which takes the positions `rows` of dimension d.
inline std::vector<std::int64_t> gather_order(const shape& in, std::int64_t d, const std::vector<std::int64_t>& rows) {
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t a = 1; a < d; ++a) outer *= in[a];
  for (std::int64_t a = d + 1; a < static_cast<std::int64_t>(in.size()); ++a) inner *= in[a];
  std::vector<std::int64_t> order;
  order.reserve(static_cast<std::size_t>(outer * inner) * rows.size());
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t row : rows)
      for (std::int64_t i = 0; i < inner; ++i) order.push_back((o * in[d] + row) * inner + i);
  return order;
}

// The rows an index_select's constant indices name along dimension d of `in`. Negative indices
// count from the end, as in the evaluator.
inline std::vector<std::int64_t> selected_rows(const node& n, const shape& in, std::int64_t d, const tensor& indices) {
  std::vector<std::int64_t> rows;
  for (float v : indices.values()) {
    const auto row = static_cast<std::int64_t>(v) + (v < 0 ? in[d] : 0);
    require(static_cast<float>(static_cast<std::int64_t>(v)) == v && row >= 0 && row < in[d],
            "emit_verilog: node {} (index_select): index {} is not a position of dimension {} (size {})", n.name, v,
            d, in[d]);
    rows.push_back(row);
  }
  return rows;
}

// The rows a slice keeps along dimension d of `in` (its result has `count` of them).
inline std::vector<std::int64_t> sliced_rows(const op::slice& cut, const shape& in, std::int64_t d, std::int64_t count) {
  const std::int64_t first = cut.first_index(in[d]);
  std::vector<std::int64_t> rows;
  for (std::int64_t i = 0; i < count; ++i) rows.push_back(first + i * cut.step);
  return rows;
}

// Broadcasting within a sample: entry j is the position, within one sample of `operand` (PyTorch's
// broadcasting: right-aligned, size-1 dimensions repeated), of the value the j-th element of a
// sample of `result` reads. A dimension of operand aligned with result's batch is left out (a
// stream's batch, or a constant's 1).
inline std::vector<std::int64_t> broadcast_order(const shape& result, const shape& operand) {
  const int rank = result.size(), offset = rank - operand.size();
  std::vector<std::int64_t> stride(static_cast<std::size_t>(rank), 0);  // 0 along a repeated dimension
  std::int64_t step = 1;
  for (int a = rank - 1; a >= 1 && a - offset >= 0; --a) {
    const std::int64_t size = operand[a - offset];
    if (size != 1) stride[static_cast<std::size_t>(a)] = step;
    step *= size;
  }
  return strided_order(result, stride);
}

}  // namespace mase::verilog::detail
