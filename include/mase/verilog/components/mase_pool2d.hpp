#pragma once
// mase_pool2d's descriptor: its SystemVerilog text (rtl/mase_pool2d.hpp), its timing, the modules it
// needs, its cost and how an instance plans its ROMs and parameters (verilog/component.hpp).

#include <mase/verilog/stream_metadata.hpp>
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

// add_hardware_metadata: its parameters beyond its streams', in MASE's names, and its result's lanes.
inline std::int64_t metadata_of_mase_pool2d(const metadata_context& ctx) {
  const node& n = ctx.n;
  const std::int64_t stream_limit = ctx.stream_limit;
  auto& params = ctx.h.verilog_param;
  std::int64_t out_lanes = ctx.input_lanes(0);
  if (const auto* maxp = n.op.get_if<op::max_pool2d>()) {
    // ceil_mode's windows past the padded input read the sweep's padding code, which never wins.
    require(mase::detail::hardware_format(n, "data_in_0") == mase::detail::hardware_format(n, "data_out_0"),
            "add_hardware_metadata: node {} (max_pool2d): its input and result formats differ; a max "
                        "pool keeps its input's format",
                        n.name);
    out_lanes = largest_divisor_at_most(mase::detail::stream_innermost(n, "data_out_0"), stream_limit);
    params.insert_or_assign("MODE", std::int64_t{0});
    params.insert_or_assign("CHANNELS_LAST", ctx.h.channels_last);
    mase::detail::add_window_parameters(params, maxp->kernel_size, maxp->stride.empty() ? maxp->kernel_size : maxp->stride,
                          maxp->padding, maxp->dilation);
  } else {
    const auto* avgp = &n.as<op::avg_pool2d>();
    // Checked before its result's format is read: without hardware_formats, quantize leaves a
    // pool of a divisor other than 2^a float.
    const tensor_meta* result = mase::detail::entry_meta(n, "data_out_0");
    require(result != nullptr && result->precision.holds<fixed_fmt>(),
            "add_hardware_metadata: node {} (avg_pool2d): its result has no fixed-point format; quantize gives "
            "one to a pool of fixed-point values whose divisor is a power of two, and to any other with "
            "quantize_config::hardware_formats (mase emit-verilog sets it)",
            n.name);
    const std::optional<eval::window_mean_rule> rules = eval::window_mean_rule_of(
        n, *avgp, mase::detail::hardware_format(n, "data_in_0"), result->precision.get<fixed_fmt>());
    require(rules.has_value() && rules->uniform_divisor() > 0,
            "add_hardware_metadata: node {} (avg_pool2d): the hardware divides every window by one constant, "
            "but this pool's windows take {} divisors{}; use count_include_pad=True, no ceil_mode windows "
            "past the padding, or a divisor_override",
            n.name, rules ? rules->by_divisor.size() : 0, avgp->ceil_mode ? " (ceil_mode)" : "");
    out_lanes = largest_divisor_at_most(mase::detail::stream_innermost(n, "data_out_0"), stream_limit);
    params.insert_or_assign("MODE", std::int64_t{1});
    params.insert_or_assign("CHANNELS_LAST", ctx.h.channels_last);
    mase::detail::add_window_parameters(params, avgp->kernel_size, avgp->stride.empty() ? avgp->kernel_size : avgp->stride,
                          avgp->padding, dims{1});
  }
  return out_lanes;
}

}  // namespace detail

namespace components {

// As mase_conv2d. A max is exact by its formats; an average's division is the evaluator's mean
// rule, which the emitter reads from the node's lowering (and so requires).
inline constexpr component mase_pool2d{
    .module = rtl::mase_pool2d.name,
    .text = rtl::mase_pool2d,
    .timing = component_timing::sample,
    .sample_banks = 2,
    .exact_by_formats = true,
    .needs = component_needs::pool,
    .channels_last = true,
    .window_sweep = true,
    .metadata = detail::metadata_of_mase_pool2d,
    .cost = detail::cost_of_mase_pool2d,
    .plan = detail::plan_of_mase_pool2d};

}  // namespace components

}  // namespace mase::verilog
