#pragma once
// Hardware out: emits a streaming SystemVerilog design for a fixed-point graph and proves it by
// simulation against the bit-exact evaluator. Not part of <mase/mase.hpp>: MASE keeps emission
// apart, and so the rest of the library compiles without it.
//
//   auto g = model | mase::init_metadata | mase::add_common_metadata(inputs) | mase::quantize(cfg)
//                  | mase::add_hardware_metadata({.max_parallelism = {4, 4, 4, 4}});
//   auto [design, info] = mase::run(g, mase::emit_verilog({.project_dir = "build/mlp_hw"}));
//   mase::verilog::simulation_result r = mase::verilog::simulate("build/mlp_hw", mase::verilog::simulator::verilator);
//
// emit_verilog is a pass that needs the facts `quantized` and `hardware_metadata`: placing it
// before quantize or add_hardware_metadata does not compile. At run time a node that is not
// fixed point, or whose op has no component, is an error naming it (docs/hardware.md).

#include <mase/pass/add_hardware_metadata.hpp>
#include <mase/pass/pipeline.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/emit.hpp>
#include <mase/verilog/tools.hpp>

namespace mase {

struct emit_verilog_pass {
  using needs = facts<fact::quantized, fact::hardware_metadata>;
  using provides = facts<>;

  verilog::emit_options options{};

  emit_verilog_pass operator()(verilog::emit_options o) const { return {std::move(o)}; }
  verilog::emit_info run(const graph& g) const { return verilog::emit_verilog_project(g, options); }
};

inline const emit_verilog_pass emit_verilog{};

}  // namespace mase
