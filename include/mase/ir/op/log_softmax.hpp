#pragma once
// log(softmax(x)) along dim (torch.nn.LogSoftmax / torch.log_softmax), computed stably as
// x - max - log(sum(exp(x - max))). dim is explicit, the last one by default (as softmax).

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct log_softmax {
  std::int64_t dim = -1;

  static constexpr std::string_view name = "log_softmax";
  using kind = mase::kind::module_related_func;
  static constexpr op_category category = op_category::reduction;
  static constexpr arity inputs{1, 1};
  static constexpr auto attributes() { return attribute_list{attribute("dim", &log_softmax::dim)}; }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    if (shape_rules::normalize_dim_scalar_ok(dim, in[0].size()) < 0)
      return shape_error("log_softmax: dim is out of range for the input");
    return shape_rules::same_as_input(in);
  }
  // 3 operations per element (exponent, sum, divide), each way.
  constexpr op_work work(std::span<const shape> in, std::span<const shape>) const {
    return {3 * in[0].numel(), 3 * in[0].numel()};
  }
  constexpr bool operator==(const log_softmax&) const = default;
};

}  // namespace mase::op
