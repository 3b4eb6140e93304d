#pragma once
// mase_permute's descriptor: its SystemVerilog text (rtl/mase_permute.hpp), its timing, the modules it
// needs, its cost and how an instance plans its ROMs and parameters (verilog/component.hpp).

#include <mase/verilog/stream_metadata.hpp>
#include <mase/verilog/component.hpp>
#include <mase/eval/lowering.hpp>
#include <mase/verilog/layout.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/components/mase_slice.hpp>
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
  c.memories.push_back({"sample banks", x.width, 2 * in_elements, 1, false, /*combinational_read=*/true});
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

// add_hardware_metadata: its parameters beyond its streams', in MASE's names, and its result's lanes.
inline std::int64_t metadata_of_mase_permute(const metadata_context& ctx) {
  const node& n = ctx.n;
  const graph& g = ctx.g;
  const std::int64_t batch = ctx.batch;
  const std::int64_t stream_limit = ctx.stream_limit;
  const std::string_view op = n.op_name();
  auto& params = ctx.h.verilog_param;
  const fixed_fmt out_fmt = mase::detail::hardware_format(n, "data_out_0");
  const auto per_sample = [&](const shape& s) { return mase::detail::per_sample(s, ctx.batch); };
  std::int64_t out_lanes = ctx.input_lanes(0);
  // Each sample is buffered and read out reordered (permute) or gathered (index_select by
  // constant indices): one element per beat in, output beats as wide as the innermost
  // output dimension allows.
  const shape& in = mase::detail::entry_meta(n, "data_in_0")->shape;
  if (const auto* perm = n.op.get_if<op::permute>())
    require(batch == 1 || (!perm->dims.empty() && (perm->dims[0] == 0 || perm->dims[0] == -static_cast<std::int64_t>(in.size()))),
            "add_hardware_metadata: node {} (permute): the hardware reorders each sample, so the batch "
            "dimension must stay first; this permute moves it (at batch 1 the whole tensor is one sample)",
            n.name);
  if (const auto* cut = n.op.get_if<op::slice>())
    require(mase::detail::sample_dim(cut->dim, in, batch) > 0,
            "add_hardware_metadata: node {} (slice): the hardware gathers within each sample; this one "
            "slices the batch dimension",
            n.name);
  if (const auto* select = n.op.get_if<op::index_select>()) {
    require(mase::detail::sample_dim(select->dim, in, batch) > 0,
            "add_hardware_metadata: node {} (index_select): the hardware gathers within each sample; this "
            "one selects along the batch dimension",
            n.name);
    require(g[n.inputs[1]].is<op::constant>(),
            "add_hardware_metadata: node {} (index_select): its indices {} are not a constant; the hardware "
            "gathers by indices fixed at emission",
            n.name, g[n.inputs[1]].name);
  }
  require(mase::detail::hardware_format(n, "data_in_0") == out_fmt,
          "add_hardware_metadata: node {} ({}): its input and result formats differ; moving elements keeps "
          "their format",
          n.name, op);
  if (const std::optional<mase::detail::beat_slice> kept = mase::detail::slice_by_beats(n, batch, ctx.input_lanes(0))) {
    // Whole beats of contiguous positions: passed or dropped as they stream, nothing buffered.
    ctx.h.module = std::string(components::mase_slice.module);
    ctx.h.dependence_files = hardware_dependence_files(components::mase_slice.module);
    params.insert_or_assign("PERIOD_BEATS", kept->period);
    params.insert_or_assign("FIRST_BEAT", kept->first);
    params.insert_or_assign("KEPT_BEATS", kept->kept);
  } else {
    params.insert_or_assign("DATA_IN_0_PARALLELISM_DIM_0", std::int64_t{1});
    params.insert_or_assign("SAMPLE_SIZE", per_sample(in));
    params.insert_or_assign("OUT_SAMPLE_SIZE", per_sample(mase::detail::entry_meta(n, "data_out_0")->shape));
    out_lanes = largest_divisor_at_most(mase::detail::innermost(n, "data_out_0"), stream_limit);
  }
  return out_lanes;
}

}  // namespace detail

namespace components {

// Waits for a sample, one in each of its two banks.
inline constexpr component mase_permute{
    .module = rtl::mase_permute.name,
    .text = rtl::mase_permute,
    .timing = component_timing::sample,
    .sample_banks = 2,
    .exact_by_formats = true,
    .metadata = detail::metadata_of_mase_permute,
    .cost = detail::cost_of_mase_permute,
    .plan = detail::plan_of_mase_permute};

}  // namespace components

}  // namespace mase::verilog
