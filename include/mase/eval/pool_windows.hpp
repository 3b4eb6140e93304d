#pragma once
// The windows of PyTorch's max and average pools, without the kernels: the float kernels
// (kernels/pooling.hpp), the bit-exact average pool (mean_rule.hpp) and the hardware metadata read
// the same geometry and divisors from here.

#include <mase/ir/op/shape_rules.hpp>

#include <algorithm>
#include <cstdint>

namespace mase::eval::pooling_detail {

// One spatial dimension of a sliding window.
struct axis {
  std::int64_t in = 1;
  std::int64_t out = 1;
  std::int64_t kernel = 1;
  std::int64_t stride = 1;
  std::int64_t padding = 0;
  std::int64_t dilation = 1;

  // Where output position o's window starts, in input coordinates (negative inside the padding).
  std::int64_t start(std::int64_t o) const noexcept { return o * stride - padding; }

  // The window taps k in [first, last) of output position o that land inside the input
  // (0 <= start + k·dilation < in); the others read the padding.
  void taps(std::int64_t o, std::int64_t& first, std::int64_t& last) const noexcept {
    const std::int64_t s = start(o);
    if (s >= 0 && s + (kernel - 1) * dilation < in) {  // the common interior case: no division
      first = 0;
      last = kernel;
      return;
    }
    first = s >= 0 ? 0 : (-s + dilation - 1) / dilation;
    last = s >= in ? 0 : std::min(kernel, (in - 1 - s) / dilation + 1);
    if (first > last) first = last;
  }

  // The output positions [first, last) whose whole window lies inside the input.
  void interior(std::int64_t& first, std::int64_t& last) const noexcept {
    first = (padding + stride - 1) / stride;
    const std::int64_t last_start = in - 1 - (kernel - 1) * dilation + padding;  // in padded coordinates
    last = last_start < 0 ? 0 : std::min(out, last_start / stride + 1);
    first = std::min(first, last);
  }
  constexpr bool operator==(const axis&) const = default;
};

struct planes {
  std::int64_t count = 0;  // N·C, or C when unbatched (times D when the depth axis is folded in)
  axis d;
  axis h;
  axis w;
};

// The volumes and window axes of a max or avg pool over the last `spatial` (1, 2 or 3) dimensions
// of an input of shape `in` pooled to `out`.
template <class Op>
inline planes window_planes(const Op& op, const shape& in, const shape& out, int spatial) {
  const dims& stride = op.stride.empty() ? op.kernel_size : op.stride;
  planes p;
  axis* axes[3] = {&p.d, &p.h, &p.w};
  for (int i = 0; i < spatial; ++i) {
    axis& a = *axes[3 - spatial + i];
    const int d = in.size() - spatial + i;
    a.in = in[d];
    a.out = out[d];
    a.kernel = shape_rules::per_dim(op.kernel_size, i);
    a.stride = shape_rules::per_dim(stride, i);
    a.padding = shape_rules::per_dim(op.padding, i);
    if constexpr (requires { op.dilation; }) a.dilation = shape_rules::per_dim(op.dilation, i);
  }
  const std::int64_t volume = p.d.in * p.h.in * p.w.in;
  p.count = volume == 0 ? 0 : in.numel() / volume;
  // A depth window of one tap at stride 1 without padding pools each depth slice on its own: the
  // slices are then planes of a 2-d pool (a 3-d pool of kernel (1, k, k) runs the 2-d kernels).
  if (p.d.kernel == 1 && p.d.stride == 1 && p.d.padding == 0) {
    p.count *= p.d.in;
    p.d = axis{};
  }
  return p;
}

// PyTorch's average pool window along one axis: output o's window [start, end) clipped to the
// padded input (its `padded` taps: count_include_pad's divisor), then to the input ([first, last):
// the taps it sums).
struct average_window {
  std::int64_t first, last, padded;
  std::int64_t inside() const noexcept { return last - first; }
};
inline average_window average_window_of(const axis& a, std::int64_t o) noexcept {
  const std::int64_t start = a.start(o);
  const std::int64_t end = std::min(start + a.kernel, a.in + a.padding);
  return {std::max<std::int64_t>(start, 0), std::min(end, a.in), end - start};
}

// PyTorch's divisor of an average pool's window: divisor_override when positive, else the taps
// counted along each axis (with the padding, or inside the input only).
inline std::int64_t average_divisor(const average_window& depth, const average_window& height,
                                    const average_window& width, bool count_include_pad,
                                    std::int64_t divisor_override) noexcept {
  if (divisor_override > 0) return divisor_override;
  return count_include_pad ? depth.padded * height.padded * width.padded
                           : depth.inside() * height.inside() * width.inside();
}

}  // namespace mase::eval::pooling_detail
