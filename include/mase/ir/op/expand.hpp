#pragma once
// torch.Tensor.expand(*size): x broadcast to `size` without copying in PyTorch (a copy here).
// size is aligned with the input's dimensions from the right; an entry of -1 keeps the input's
// size, a size-1 dimension may grow to any size, every other dimension must keep its size. Extra
// leading entries add dimensions (those may not be -1). ONNX's Expand, which broadcasts both ways,
// maps here once the importer has computed the broadcast shape.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct expand {
  dims size{};

  static constexpr std::string_view name = "expand";
  using kind = mase::kind::implicit_func;
  static constexpr op_category category = op_category::data_movement;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{attribute("size", &expand::size)}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const shape& x = in[0];
    if (size.size() < x.size()) return shape_error("expand: size needs at least one entry per input dimension");
    const int added = size.size() - x.size();
    shape out;
    for (int i = 0; i < size.size(); ++i) {
      const std::int64_t want = size[i];
      if (i < added) {
        if (want < 0) return shape_error("expand: a new leading dimension needs a size, not -1");
        out.push_back(want);
        continue;
      }
      const std::int64_t have = x[i - added];
      if (want == -1 || want == have) {
        out.push_back(have);
      } else if (want < -1) {
        return shape_error("expand: sizes must be non-negative or -1");
      } else if (have != 1) {
        return shape_error("expand: only a dimension of size 1 can change its size");
      } else {
        out.push_back(want);
      }
    }
    return shape_ok(out);
  }
  constexpr bool operator==(const expand&) const = default;
};

}  // namespace mase::op
