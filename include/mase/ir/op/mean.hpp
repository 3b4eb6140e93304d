#pragma once
// torch.mean(x, dim, keepdim): the average over the dimensions in `dim` (every dimension when
// `dim` is empty); keepdim keeps them as size 1.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct mean {
  dims dim{};
  bool keepdim = false;

  static constexpr std::string_view name = "mean";
  using kind = mase::kind::builtin_func;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return std::tuple{attribute("dim", &mean::dim), attribute("keepdim", &mean::keepdim)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const shape& x = in[0];
    std::array<bool, shape::max_rank> reduced{};
    if (dim.empty()) reduced.fill(true);
    for (std::int64_t d : dim) {
      const int n = shape_rules::normalize_dim_scalar_ok(d, x.size());
      if (n < 0) return shape_error("mean: a dim is out of range for the input");
      if (reduced[static_cast<std::size_t>(n)]) return shape_error("mean: a dim appears more than once");
      reduced[static_cast<std::size_t>(n)] = true;
    }
    shape out;
    for (int i = 0; i < x.size(); ++i) {
      if (!reduced[static_cast<std::size_t>(i)]) out.push_back(x[i]);
      else if (keepdim) out.push_back(1);
    }
    return shape_ok(out);
  }
  constexpr bool operator==(const mean&) const = default;
};

}  // namespace mase::op
