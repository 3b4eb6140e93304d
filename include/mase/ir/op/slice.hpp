#pragma once
// x[start:end:step] along one dimension (aten::slice, what Python slicing of a tensor records).
// Python's rules: a negative start or end counts from the end, then both are clamped to
// [0, length]; an empty range gives size 0. PyTorch allows only step ≥ 1.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct slice {
  std::int64_t dim = 0;
  std::int64_t start = 0;
  std::int64_t end = std::numeric_limits<std::int64_t>::max();  // PyTorch's "to the end"
  std::int64_t step = 1;

  static constexpr std::string_view name = "slice";
  using kind = mase::kind::implicit_func;
  static constexpr op_category category = op_category::data_movement;
  static constexpr result_format_rule result_format = result_format_rule::same_as_input;
  // Along a dimension after the batch: a gather of each sample (nn.MultiheadAttention's packed
  // projection split into q, k and v).
  static constexpr hardware_mapping hardware{"mase_permute"};
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("dim", &slice::dim), attribute("start", &slice::start), attribute("end", &slice::end),
                      attribute("step", &slice::step)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const shape& x = in[0];
    if (x.empty()) return shape_error("slice: a zero-dimensional input cannot be sliced");
    const int d = shape_rules::normalize_dim(dim, x.size());
    if (d < 0) return shape_error("slice: dim is out of range for the input");
    if (step < 1) return shape_error("slice: step must be at least 1");
    const std::int64_t from = first_index(x[d]);
    const std::int64_t to = bound_index(end, x[d]);
    shape out = x;
    // Counted without forming to - from + step - 1, which could overflow for a huge step.
    out[d] = to <= from ? 0 : (to - from - 1) / step + 1;
    return shape_ok(out);
  }
  // The first index kept along a dimension of `length` (the shape rule's, the kernel's and the
  // hardware's).
  constexpr std::int64_t first_index(std::int64_t length) const noexcept { return bound_index(start, length); }
  // Python's rule for a bound: a negative one counts from the end, then it is clamped to [0, length].
  static constexpr std::int64_t bound_index(std::int64_t i, std::int64_t length) noexcept {
    if (i < 0) i += length;
    return i < 0 ? 0 : i > length ? length : i;
  }
  constexpr bool operator==(const slice&) const = default;
};

}  // namespace mase::op
