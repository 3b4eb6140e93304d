#pragma once
// mase_reciprocal_divide's parameters for a mean rule: the division mase_mean and mase_pool2d's
// average instantiate it for (eval/mean_rule.hpp).

#include <mase/eval/mean_rule.hpp>
#include <mase/verilog/component.hpp>

namespace mase::verilog::detail {

inline void add_divide_parameters(instance_plan& plan, const eval::mean_rule& rule) {
  plan.parameter("NUMERATOR_SHIFT", rule.numerator_shift);
  plan.parameter("NUMERATOR_WIDTH", rule.numerator_width());
  plan.parameter("MULTIPLIER_WIDTH", rule.multiplier_width());
  plan.parameter("SHIFT", rule.shift);
  plan.parameters["OFFSET"] = sized_constant{.width = 64, .value = rule.offset};
  plan.parameters["OFFSET_QUOTIENT"] = sized_constant{.width = 64, .value = rule.offset_quotient};
  plan.parameters["MULTIPLIER"] = sized_constant{.width = 64, .value = rule.multiplier};
}

}  // namespace mase::verilog::detail
