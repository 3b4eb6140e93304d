#pragma once
// torch.squeeze: removes size-1 dimensions. `dim` lists the candidates (one entry for
// squeeze(x, d), several for PyTorch 2's tuple form and ONNX's axes); empty means every
// dimension, as squeeze(x) without dim. A listed dimension whose size is not 1 stays, as in
// PyTorch (not an error); a listed dimension out of range is an error.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct squeeze {
  dims dim{};

  static constexpr std::string_view name = "squeeze";
  using kind = mase::kind::implicit_func;
  static constexpr op_category category = op_category::view;
  static constexpr hardware_mapping hardware = wired_through;
  static constexpr result_format_rule result_format = result_format_rule::same_as_input;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{attribute("dim", &squeeze::dim)}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const shape& x = in[0];
    std::array<bool, shape::max_rank> listed{};
    if (dim.empty()) listed.fill(true);
    for (std::int64_t d : dim) {
      const int n = shape_rules::normalize_dim_scalar_ok(d, x.size());
      if (n < 0) return shape_error("squeeze: a dim is out of range for the input");
      if (listed[static_cast<std::size_t>(n)]) return shape_error("squeeze: a dim appears more than once");
      listed[static_cast<std::size_t>(n)] = true;
    }
    shape out;
    for (int i = 0; i < x.size(); ++i)
      if (!(listed[static_cast<std::size_t>(i)] && x[i] == 1)) out.push_back(x[i]);
    return shape_ok(out);
  }
  constexpr bool operator==(const squeeze&) const = default;
};

}  // namespace mase::op
