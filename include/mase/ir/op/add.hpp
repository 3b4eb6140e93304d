#pragma once
// a + b with broadcasting (operator.add / torch.add).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct add {
  static constexpr std::string_view name = "add";
  using kind = mase::kind::builtin_func;
  static constexpr op_category category = op_category::elementwise;
  static constexpr lowering_kind integer_rule = lowering_kind::elementwise;
  static constexpr result_format_rule result_format = result_format_rule::sum;
  static constexpr quantizable quantization{};
  static constexpr hardware_mapping hardware{.module = "mase_binary", .constant_operands = true};
  static constexpr arity inputs{2, 2};
  static constexpr auto attributes() { return attribute_list{}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const shape_result r = shape_rules::broadcast_all(in);
    return r.ok() ? r : shape_error("add: the input shapes do not broadcast");
  }
  constexpr bool operator==(const add&) const = default;
};

}  // namespace mase::op
