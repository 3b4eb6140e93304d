#pragma once
// Shape rules several ops share: one definition each (broadcasting, dimension normalisation,
// the output size of a sliding window).

#include <mase/ir/op/op_base.hpp>

namespace mase::shape_rules {

// PyTorch's dimension index `d` (negative counts from the end) into [0, rank), or -1 when it is
// out of range.
constexpr int normalize_dim(std::int64_t d, int rank) noexcept {
  const std::int64_t n = d < 0 ? d + rank : d;
  return n < 0 || n >= rank ? -1 : static_cast<int>(n);
}

// NumPy/PyTorch broadcasting of two shapes; ok=false when they do not broadcast.
constexpr shape_result broadcast(const shape& a, const shape& b) {
  const int rank = a.size() > b.size() ? a.size() : b.size();
  shape out;
  for (int i = 0; i < rank; ++i) {
    const int ia = a.size() - rank + i;
    const int ib = b.size() - rank + i;
    const std::int64_t da = ia >= 0 ? a[ia] : 1;
    const std::int64_t db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1) return shape_error("the input shapes do not broadcast");
    out.push_back(da == 1 ? db : da);
  }
  return shape_ok(out);
}

// One input, result of the same shape (activations, dropout, identity, …).
constexpr shape_result same_as_input(std::span<const shape> in) { return shape_ok(in[0]); }

// Two or more inputs broadcast together (add, mul, …).
constexpr shape_result broadcast_all(std::span<const shape> in) {
  shape out = in[0];
  for (std::size_t i = 1; i < in.size(); ++i) {
    const shape_result r = broadcast(out, in[i]);
    if (!r.ok()) return r;
    out = r.shapes[0];
  }
  return shape_ok(out);
}

// Output length of a convolution or pooling window along one dimension (PyTorch's formula);
// -1 when the window does not fit.
constexpr std::int64_t window_output(std::int64_t length, std::int64_t kernel, std::int64_t stride,
                                     std::int64_t padding, std::int64_t dilation, bool ceil_mode = false) noexcept {
  const std::int64_t span = dilation * (kernel - 1) + 1;
  const std::int64_t room = length + 2 * padding - span;
  if (room < 0 || stride <= 0) return -1;
  std::int64_t out = room / stride + 1;
  // ceil_mode: a last partial window counts if it starts inside the input or the left padding.
  if (ceil_mode && room % stride != 0 && (out * stride) < length + padding) ++out;
  return out;
}

}  // namespace mase::shape_rules
