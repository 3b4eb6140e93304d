#pragma once
// mase_cat's descriptor: its SystemVerilog text (rtl/mase_cat.hpp), its timing, the modules it
// needs, its cost and how an instance plans its ROMs and parameters (verilog/component.hpp).

#include <mase/verilog/stream_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/eval/lowering.hpp>
#include <mase/eval/fixed_rules.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/rtl/mase_cat.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string_view>

namespace mase::verilog {

namespace detail {

inline void cost_of_mase_cat(const cost_context& ctx, component_cost& c) {
  using mase::detail::entry_meta;
  const node& n = ctx.n;
  const auto p = [&](std::string_view key) { return param_int(n, key); };
  const fixed_fmt out = ctx.out;
  const std::int64_t out_lanes = ctx.out_lanes;
  const auto per_sample = [&](const shape& s) { return mase::detail::per_sample(s, ctx.batch); };
  // A beat of one operand or the other per cycle; a constant operand's table.
  c.cycles_per_sample = per_sample(entry_meta(n, "data_out_0")->shape) / out_lanes;
  if (p("CONSTANT_INPUT") >= 0) c.memories.push_back({"constant", out_lanes * out.width, p("TABLE_BEATS"), 1, true});
  c.register_bits = out_lanes * out.width;
  c.select_bits = out_lanes * out.width;
  c.modelled = false;  // not in the fitted logic model yet
}

inline void plan_of_mase_cat(const plan_context& ctx, instance_plan& plan) {
  // The constant operand's codes for one sample, in order (it repeats in every sample).
  const node& n = ctx.n;
  if (param_int(n, "CONSTANT_INPUT") < 0) return;
  const auto operand = static_cast<std::size_t>(param_int(n, "CONSTANT_INPUT"));
  const fixed_fmt f = mase::detail::hardware_format(n, data_in_name(operand));
  const tensor& values = ctx.constant_operand(operand);
  const std::int64_t lanes = param_int(n, "DATA_OUT_0_PARALLELISM_DIM_0");
  std::vector<std::int64_t> codes(static_cast<std::size_t>(param_int(n, "TABLE_BEATS") * lanes));
  for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = eval::raw_of(values.data()[i], f.frac);
  plan.rom("table", std::move(codes), lanes, f.width);
}

// add_hardware_metadata: its parameters beyond its streams', in MASE's names, and its result's lanes.
inline std::int64_t metadata_of_mase_cat(const metadata_context& ctx) {
  const node& n = ctx.n;
  const graph& g = ctx.g;
  const std::int64_t batch = ctx.batch;
  const std::int64_t stream_limit = ctx.stream_limit;
  auto& params = ctx.h.verilog_param;
  const fixed_fmt out_fmt = mase::detail::hardware_format(n, "data_out_0");
  const auto per_sample = [&](const shape& s) { return mase::detail::per_sample(s, ctx.batch); };
  const auto* join = &n.as<op::cat>();
  std::int64_t out_lanes = ctx.input_lanes(0);
  // Per index of the dimensions before the joined one (within the sample), a chunk of
  // operand 0 then one of operand 1, both at the result's lanes (the emitter converts a
  // stream); a constant operand is a table of its words.
  require(n.inputs.size() == 2,
          "add_hardware_metadata: node {} (cat): the hardware joins two operands; this one joins {} "
          "(split it into a chain of cats)",
          n.name, n.inputs.size());
  const shape& result = mase::detail::entry_meta(n, "data_out_0")->shape;
  const std::int64_t d = mase::detail::sample_dim(join->dim, result, batch);
  require(d > 0, "add_hardware_metadata: node {} (cat): the hardware joins within each sample; this one joins "
          "along the batch dimension", n.name);
  const shape result_sample = mase::detail::sample_shape(result, batch);
  std::int64_t outer = 1;
  for (std::int64_t a = 1; a < d; ++a) outer *= result_sample[a];
  // channels-last, channels are innermost: a chunk of each per pixel (the support check allows dim 1 only)
  if (mase::detail::channels_last_entry(n, "data_out_0")) outer = result[2] * result[3];
  std::array<std::int64_t, 2> chunk{};
  std::int64_t constant_input = -1;
  for (std::size_t i = 0; i < 2; ++i) {
    const shape& operand = mase::detail::entry_meta(n, data_in_name(i))->shape;
    require(mase::detail::hardware_format(n, data_in_name(i)) == out_fmt,
            "add_hardware_metadata: node {} (cat): its {} has format {} and its result {}; quantize the cat "
            "so that every input takes data_in's format",
            n.name, data_in_name(i), to_string(mase::detail::entry_meta(n, data_in_name(i))->precision),
            to_string(mase::detail::entry_meta(n, "data_out_0")->precision));
    chunk[i] = per_sample(operand) / outer;
    if (!is_stream_input(g, n, i)) {
      require(constant_input < 0, "add_hardware_metadata: node {} (cat): both operands are constants; fold "
              "the node into a constant", n.name);
      require(batch == 1 || operand[0] == 1,
              "add_hardware_metadata: node {} (cat): the constant {} has a batch of {}; the hardware repeats "
              "one sample's constant", n.name, g[n.inputs[i]].name, operand[0]);
      constant_input = static_cast<std::int64_t>(i);
    }
  }
  out_lanes = largest_divisor_at_most(std::gcd(chunk[0], chunk[1]), stream_limit);
  for (std::size_t i = 0; i < 2; ++i) {
    if (static_cast<std::int64_t>(i) == constant_input) mase::detail::add_tensor_parameters(params, n, data_in_name(i), {out_lanes});
    else params.insert_or_assign(fmt::format("DATA_IN_{}_PARALLELISM_DIM_0", i), out_lanes);
    params.insert_or_assign(fmt::format("CHUNK_{}_BEATS", i), chunk[i] / out_lanes);
  }
  params.insert_or_assign("CONSTANT_INPUT", constant_input);
  params.insert_or_assign("TABLE_BEATS", constant_input < 0 ? 1 : outer * chunk[static_cast<std::size_t>(constant_input)] / out_lanes);
  return out_lanes;
}

}  // namespace detail

namespace components {

// All of input 0 first. Channels-last only along the channels (the planner checks the dimension).
inline constexpr component mase_cat{
    .module = rtl::mase_cat.name,
    .text = rtl::mase_cat,
    .timing = component_timing::sample,
    .exact_by_formats = true,
    .metadata = detail::metadata_of_mase_cat,
    .cost = detail::cost_of_mase_cat,
    .plan = detail::plan_of_mase_cat};

}  // namespace components

}  // namespace mase::verilog
