#pragma once
// torch.gather(input, dim, index): out[i][j][k] = input[index[i][j][k]][j][k] for dim 0, and so
// on. The result has the index's shape; input and index have the same rank, and the index is no
// larger than the input in every dimension but dim. As in PyTorch, a rank-0 tensor counts as
// [1] in these checks, and an empty index skips them.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct gather {
  std::int64_t dim = 0;

  static constexpr std::string_view name = "gather";
  using kind = mase::kind::implicit_func;
  static constexpr op_category category = op_category::data_movement;
  static constexpr arity inputs{2, 2};
  static constexpr auto attributes() { return attribute_list{attribute("dim", &gather::dim)}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const shape& x = in[0];
    const shape& index = in[1];
    const int d = shape_rules::normalize_dim_scalar_ok(dim, x.size());
    if (d < 0) return shape_error("gather: dim is out of range for the input");
    for (std::int64_t n : index)
      if (n == 0) return shape_ok(index);
    constexpr auto rank_of = [](const shape& s) { return s.empty() ? 1 : s.size(); };
    constexpr auto size_at = [](const shape& s, int i) { return s.empty() ? std::int64_t{1} : s[i]; };
    if (rank_of(x) != rank_of(index)) return shape_error("gather: input and index differ in rank");
    for (int i = 0; i < rank_of(x); ++i)
      if (i != d && size_at(index, i) > size_at(x, i))
        return shape_error("gather: index is larger than input in a dimension other than dim");
    return shape_ok(index);
  }
  constexpr bool operator==(const gather&) const = default;
};

}  // namespace mase::op
