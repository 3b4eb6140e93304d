#pragma once
// torch.reshape / Tensor.reshape: the same elements in the target shape, where one entry may be
// -1 (inferred from the element count): [2, 3, 4] with (4, -1) → [4, 6].

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct reshape {
  dims shape{};

  static constexpr std::string_view name = "reshape";
  using kind = mase::kind::implicit_func;
  static constexpr op_category category = op_category::view;
  static constexpr result_format_rule result_format = result_format_rule::same_as_input;
  static constexpr hardware_mapping hardware = wired_through;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{attribute("shape", &reshape::shape)}; }

  constexpr shape_result infer_shapes(std::span<const mase::shape> in) const {
    return shape_rules::reshape_to(in[0], shape,
                                   {.bad_entry = "reshape: a shape entry is below -1",
                                    .two_unknowns = "reshape: the shape has more than one -1",
                                    .unknown_is_ambiguous = "reshape: -1 beside a 0 entry could be any size",
                                    .count_mismatch = "reshape: the shape's element count differs from the input's"});
  }
  constexpr bool operator==(const reshape&) const = default;
};

}  // namespace mase::op
