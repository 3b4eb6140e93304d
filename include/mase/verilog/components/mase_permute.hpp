#pragma once
// mase_permute's descriptor: its SystemVerilog text (rtl/mase_permute.hpp), its timing, the modules it
// needs, its cost and how an instance plans its ROMs and parameters (verilog/component.hpp).

#include <mase/pass/add_hardware_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/eval/lowering.hpp>
#include <mase/verilog/layout.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/rtl/mase_permute.hpp>

#include <algorithm>
#include <cstdint>
#include <string_view>

namespace mase::verilog {

namespace detail {

inline void cost_of_mase_permute(const cost_context& ctx, component_cost& c) {
  using mase::detail::entry_meta;
  const node& n = ctx.n;
  const fixed_fmt x = ctx.x;
  const std::int64_t in_elements = ctx.in_elements, out_lanes = ctx.out_lanes;
  const auto per_sample = [&](const shape& s) { return mase::detail::per_sample(s, ctx.batch); };
  // One element in per cycle (its input is converted to one lane); two banks of a sample.
  c.cycles_per_sample = std::max(in_elements, per_sample(entry_meta(n, "data_out_0")->shape) / out_lanes);
  c.memories.push_back({"sample banks", x.width, 2 * in_elements, 1, false});
  c.modelled = false;
}

inline void plan_of_mase_permute(const plan_context& ctx, instance_plan& plan) {
  using mase::detail::entry_meta;
  using mase::detail::sample_dim;
  using mase::detail::sample_shape;
  const node& n = ctx.n;
  const shape& tensor_in = entry_meta(n, "data_in_0")->shape;
  const shape in = sample_shape(tensor_in, ctx.batch);
  std::vector<std::int64_t> order;
  if (const auto* select = n.op.get_if<op::index_select>()) {
    const std::int64_t d = sample_dim(select->dim, tensor_in, ctx.batch);
    order = gather_order(in, d, selected_rows(n, in, d, ctx.g[n.inputs[1]].parameters.at("value")));
  } else if (const auto* cut = n.op.get_if<op::slice>()) {
    const std::int64_t d = sample_dim(cut->dim, tensor_in, ctx.batch);
    order = gather_order(in, d, sliced_rows(*cut, in, d, sample_shape(entry_meta(n, "data_out_0")->shape, ctx.batch)[d]));
  } else {
    dims permutation = n.as<op::permute>().dims;
    if (in.size() != tensor_in.size()) {  // the added batch dimension stays first
      dims moved{0};
      for (std::int64_t d : permutation) moved.push_back(sample_dim(d, tensor_in, ctx.batch));
      permutation = moved;
    }
    order = permute_order(in, permutation);
  }
  plan.rom("order", std::move(order), param_int(n, "DATA_OUT_0_PARALLELISM_DIM_0"),
           bits_for(mase::detail::per_sample(tensor_in, ctx.batch)));
}

}  // namespace detail

namespace components {

// Waits for a sample, one in each of its two banks.
inline constexpr component mase_permute{
    .module = "mase_permute",
    .source = rtl::mase_permute,
    .timing = component_timing::sample,
    .sample_banks = 2,
    .exact_by_formats = true,
    .cost = detail::cost_of_mase_permute,
    .plan = detail::plan_of_mase_permute};

}  // namespace components

}  // namespace mase::verilog
