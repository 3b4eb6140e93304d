#pragma once
// Dropout with probability p (torch.nn.Dropout): the identity at inference, which is how the
// evaluator runs it; remove_dropout takes it out of the graph.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct dropout {
  double p = 0.5;
  bool inplace = false;

  static constexpr std::string_view name = "dropout";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::view;
  static constexpr result_format_rule result_format = result_format_rule::same_as_input;
  static constexpr hardware_mapping hardware = wired_through;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() {
    return attribute_list{attribute("p", &dropout::p), attribute("inplace", &dropout::inplace)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    if (!(p >= 0.0 && p <= 1.0)) return shape_error("dropout: p must lie in [0, 1]");
    return shape_rules::same_as_input(in);
  }
  constexpr bool operator==(const dropout&) const = default;
};

}  // namespace mase::op
