#pragma once
// One result of a node with several (operator.getitem on split's tuple). It reads every result
// of its one input, so its shape rule gets them all (takes_all_results).

#include <mase/ir/op/op_base.hpp>

namespace mase::op {

struct getitem {
  std::int64_t index = 0;

  static constexpr std::string_view name = "getitem";
  using kind = mase::kind::builtin_func;
  static constexpr op_category category = op_category::data_movement;
  static constexpr result_format_rule result_format = result_format_rule::same_as_input;
  static constexpr arity inputs{1, 1};
  static constexpr bool takes_all_results = true;
  static constexpr auto attributes() { return attribute_list{attribute("index", &getitem::index)}; }

  // `in` holds every result of the input node.
  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const std::int64_t i = index < 0 ? index + static_cast<std::int64_t>(in.size()) : index;
    if (i < 0 || i >= static_cast<std::int64_t>(in.size())) return shape_error("getitem: index is out of range");
    return shape_ok(in[static_cast<std::size_t>(i)]);
  }
  constexpr bool operator==(const getitem&) const = default;
};

}  // namespace mase::op
