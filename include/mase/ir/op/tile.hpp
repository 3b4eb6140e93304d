#pragma once
// torch.tile(x, dims): x repeated dims[i] times along dimension i. As in PyTorch, a dims list
// shorter than the input's rank is read with ones in front ((2,) on a [3, 4] input is (1, 2)), and
// a longer one treats the input as having leading dimensions of size 1 (a [4] input tiled by
// (2, 3) gives [2, 12]). The result is x.shape[i] · dims[i] per dimension.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct tile {
  mase::dims dims{};

  static constexpr std::string_view name = "tile";
  using kind = mase::kind::implicit_func;
  static constexpr op_category category = op_category::data_movement;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{attribute("dims", &tile::dims)}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const shape& x = in[0];
    const int rank = x.size() > dims.size() ? x.size() : dims.size();
    shape out;
    for (int i = 0; i < rank; ++i) {
      const int xi = x.size() - rank + i;
      const int di = dims.size() - rank + i;
      const std::int64_t length = xi >= 0 ? x[xi] : 1;
      const std::int64_t repeats = di >= 0 ? dims[di] : 1;
      if (repeats < 0) return shape_error("tile: repeat counts must be non-negative");
      std::int64_t n = 0;
      if (!shape_rules::multiply_checked(length, repeats, n)) return shape_error("tile: the result is too large");
      out.push_back(n);
    }
    return shape_ok(out);
  }
  constexpr bool operator==(const tile&) const = default;
};

}  // namespace mase::op
