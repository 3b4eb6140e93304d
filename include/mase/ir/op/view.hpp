#pragma once
// Tensor.view: as reshape (one -1 entry may be inferred). PyTorch also requires the input's
// strides to allow a view without a copy; the IR has no strides (every tensor is contiguous), so
// the shape rule is reshape's.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct view {
  dims shape{};

  static constexpr std::string_view name = "view";
  using kind = mase::kind::implicit_func;
  static constexpr op_category category = op_category::view;
  static constexpr result_format_rule result_format = result_format_rule::same_as_input;
  static constexpr hardware_mapping hardware = wired_through;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{attribute("shape", &view::shape)}; }

  constexpr shape_result infer_shapes(std::span<const mase::shape> in) const {
    return shape_rules::reshape_to(in[0], shape,
                                   {.bad_entry = "view: a shape entry is below -1",
                                    .two_unknowns = "view: the shape has more than one -1",
                                    .unknown_is_ambiguous = "view: -1 beside a 0 entry could be any size",
                                    .count_mismatch = "view: the shape's element count differs from the input's"});
  }
  constexpr bool operator==(const view&) const = default;
};

}  // namespace mase::op
