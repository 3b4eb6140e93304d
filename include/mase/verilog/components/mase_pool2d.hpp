#pragma once
// mase_pool2d's descriptor: its SystemVerilog text (rtl/mase_pool2d.hpp), its timing, the modules it
// needs, its cost and how an instance plans its ROMs and parameters (verilog/component.hpp).

#include <mase/pass/add_hardware_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/eval/lowering.hpp>
#include <mase/verilog/components/divide.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/rtl/mase_pool2d.hpp>
#include <mase/verilog/components/window_cost.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace mase::verilog {

namespace detail {

inline void cost_of_mase_pool2d(const cost_context& ctx, component_cost& c) { window_cost(ctx, c, false); }

inline void plan_of_mase_pool2d(const plan_context& ctx, instance_plan& plan) {
  if (param_int(ctx.n, "MODE") != 1) return;
  // add_hardware_metadata has checked that every window takes the same divisor.
  const eval::window_mean_rule& rules = *ctx.lowering_of().window_means;
  require(rules.uniform_divisor() > 0, "emit_verilog: node {} (avg_pool2d): its windows take {} divisors; the "
                                       "hardware divides by one", ctx.n.name, rules.by_divisor.size());
  add_divide_parameters(plan, rules.by_divisor.front());
}

}  // namespace detail

namespace components {

// As mase_conv2d. A max is exact by its formats; an average's division is the evaluator's mean
// rule, which the emitter reads from the node's lowering (and so requires).
inline constexpr component mase_pool2d{
    .module = "mase_pool2d",
    .source = rtl::mase_pool2d,
    .timing = component_timing::sample,
    .sample_banks = 2,
    .exact_by_formats = true,
    .needs = component_needs::pool,
    .channels_last = true,
    .cost = detail::cost_of_mase_pool2d,
    .plan = detail::plan_of_mase_pool2d};

}  // namespace components

}  // namespace mase::verilog
