#pragma once
// The hardware tests' proof of a design: emit it, lint it with `verilator --lint-only -Wall`, and
// simulate it with Verilator and Icarus Verilog under random stalls; every output word must equal
// the bit-exact evaluator's.
#include "project_dir.hpp"

#include <mase/verilog.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

namespace mase_test_verilog {

template <class HardwareGraph>
mase::verilog::emit_info prove_design(const HardwareGraph& hw, const std::string& name,
                                      const mase::ordered_map<mase::tensor>& inputs = {}, std::int64_t samples = 6,
                                      std::uint32_t seed = 3) {
  namespace verilog = mase::verilog;
  const std::filesystem::path dir = project_dir(name);
  const auto [design, info] =
      mase::run(hw, mase::emit_verilog({.project_dir = dir, .inputs = inputs, .samples = samples, .seed = seed}));
  const verilog::emit_info& emitted = std::get<0>(info);
  std::int64_t words = 0;
  for (const verilog::stream_port& p : emitted.outputs) words += p.beats * p.lanes;
  REQUIRE(words > 0);
  CHECK(verilog::lint(dir).empty());
  for (verilog::simulator sim : {verilog::simulator::verilator, verilog::simulator::iverilog}) {
    INFO(name << " with " << verilog::to_string(sim));
    const verilog::simulation_result r = verilog::simulate(dir, sim);
    INFO(r.log);
    CHECK(r.failed == 0);
    CHECK(r.passed == words);
  }
  return emitted;
}

}  // namespace mase_test_verilog
