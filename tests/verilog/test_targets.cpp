// Targets (verilog/target.hpp) against the tools that implement them: yosys synth_ice40's netlist
// counted by the target's cell rules, nextpnr-ice40's placement and routing on the part (its own
// count of what the part holds must be the target's), and icepack's bitstream, whose size is the
// part's configuration image.

#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantize.hpp>
#include <mase/verilog.hpp>

#include "project_dir.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

using namespace mase;
namespace fs = std::filesystem;

namespace {

using mase_test_verilog::project_dir;

format fixed(int width, int frac) { return format(fixed_fmt{.width = width, .frac = frac}); }

// A 48-16-10 MLP in 8-bit fixed point: at two lanes and tiles of 2 x 2, eight multipliers.
auto mlp_hardware() {
  builder b(11);
  auto x = b.input("x", {1, 48});
  auto h = b.add("fc1", op::linear{.in_features = 48, .out_features = 16}, x);
  h = b.add("relu1", op::relu{}, h);
  const graph g = b.output(b.add("fc2", op::linear{.in_features = 16, .out_features = 10}, h));
  const quantize_config config{.by = quantize_by::type,
                               .default_config = operand_formats{.data_in = fixed(8, 4), .weight = fixed(8, 6),
                                                                 .bias = fixed(8, 5), .data_out = fixed(8, 4)}};
  return g | init_metadata | add_common_metadata | quantize(config) | add_hardware_metadata({.max_parallelism = {2, 2, 2, 2}});
}

std::uintmax_t bytes_of(const fs::path& file) { return fs::file_size(file); }

}  // namespace

TEST_CASE("targets: found by name, and an unknown name lists them", "[verilog]") {
  CHECK(&verilog::target_from_string("xc7") == &verilog::targets::xc7);
  CHECK(&verilog::target_from_string("ice40-up5k") == &verilog::targets::ice40_up5k);
  CHECK(&verilog::target_from_string("ice40-hx8k") == &verilog::targets::ice40_hx8k);
  CHECK_THROWS_WITH(verilog::target_from_string("ecp5"),
                    Catch::Contains("unknown target \"ecp5\"; the targets are xc7, ice40-up5k, ice40-hx8k"));
  CHECK_FALSE(verilog::targets::xc7.places_and_routes());
  CHECK(verilog::targets::ice40_up5k.places_and_routes());
}

TEST_CASE("targets: a netlist's cells count by the family's rules", "[verilog]") {
  using verilog::cell_role;
  const auto role = [](const verilog::target& t, std::string_view cell) {
    const verilog::cell_rule* r = verilog::cell_rule_of(t, cell);
    REQUIRE(r != nullptr);
    return r->role;
  };
  CHECK(role(verilog::targets::xc7, "RAMB36E1") == cell_role::block_ram_pair);
  CHECK(role(verilog::targets::xc7, "RAMB18E1") == cell_role::block_ram);
  CHECK(role(verilog::targets::xc7, "RAM64M") == cell_role::lut_ram);
  CHECK(role(verilog::targets::xc7, "FDRE") == cell_role::flip_flop);
  CHECK(role(verilog::targets::ice40_up5k, "SB_DFFESR") == cell_role::flip_flop);
  CHECK(role(verilog::targets::ice40_up5k, "SB_MAC16") == cell_role::dsp);
  CHECK(role(verilog::targets::ice40_hx8k, "SB_RAM40_4K") == cell_role::block_ram);
  CHECK(verilog::cell_rule_of(verilog::targets::ice40_up5k, "SB_IO") == nullptr);
  CHECK(verilog::cell_rule_of(verilog::targets::xc7, "BUFG") == nullptr);
}

TEST_CASE("targets: placing and routing needs an iCE40 target and its synthesis", "[verilog][tools]") {
  const fs::path dir = project_dir("target_order");
  run(mlp_hardware(), emit_verilog({.project_dir = dir, .samples = 1}));
  CHECK_THROWS_WITH(verilog::place_and_route(dir, verilog::targets::xc7),
                    Catch::Contains("the target xc7 has no open-source placement and routing"));
  CHECK_THROWS_WITH(verilog::place_and_route(dir, verilog::targets::ice40_up5k),
                    Catch::Contains("no netlist synthesized for ice40-up5k; run synthesize(project, target) first"));
  const verilog::synthesis_report xc7 = verilog::synthesize(dir);
  CHECK(xc7.target == "xc7");
  CHECK(verilog::read_synthesis_report(dir).target == "xc7");
  CHECK_FALSE(fs::exists(dir / "reports/netlist.json"));
  CHECK_THROWS_WITH(verilog::place_and_route(dir, verilog::targets::ice40_up5k),
                    Catch::Contains("no netlist synthesized for ice40-up5k"));
}

TEST_CASE("targets: the MLP on iCE40 UP5K: a SB_MAC16 per multiplier, the part as nextpnr counts it, a bitstream",
          "[verilog][tools]") {
  const fs::path dir = project_dir("target_up5k");
  const auto [design, info] = run(mlp_hardware(), emit_verilog({.project_dir = dir, .samples = 1}));
  const verilog::emit_info& emitted = std::get<0>(info);
  REQUIRE(emitted.multipliers == 8);
  const verilog::target& up5k = verilog::targets::ice40_up5k;

  const verilog::synthesis_report s = verilog::synthesize(dir, up5k);
  INFO(s.stat);
  CHECK(s.target == "ice40-up5k");
  CHECK(s.multipliers == emitted.multipliers);  // 8-bit products: one SB_MAC16 each (synth_ice40 -dsp)
  CHECK(s.luts > 0);
  CHECK(s.flip_flops > 0);
  CHECK(s.cells > s.luts + s.flip_flops);
  const verilog::synthesis_report again = verilog::read_synthesis_report(dir);
  CHECK(again.target == s.target);
  CHECK(again.luts == s.luts);

  const verilog::place_and_route_report r = verilog::place_and_route(dir, up5k);
  INFO(r.report.substr(r.report.find("\"utilization\"")));
  CHECK(r.target == "ice40-up5k");
  CHECK(r.logic_cells.available == up5k.capacity.logic_cells);
  CHECK(r.dsps.available == up5k.capacity.dsps);
  CHECK(r.block_rams.available == up5k.capacity.block_rams);
  CHECK(r.ios.available == up5k.capacity.ios);
  CHECK(r.dsps.used == emitted.multipliers);
  CHECK(r.logic_cells.used > 0);
  CHECK(r.logic_cells.used <= r.logic_cells.available);
  CHECK(r.ios.used == 2 * 8 + 2 * 8 + 6);  // two 8-bit lanes in and out, their valid and ready, clk, rst
  CHECK(r.fmax_mhz > 0);
  CHECK(r.constraint_mhz == 12);
  CHECK(r.bitstream == fs::absolute(dir) / "reports/top_core.bin");
  CHECK(bytes_of(r.bitstream) == 104090);  // the UP5K's configuration image
}

TEST_CASE("targets: the MLP on iCE40 HX8K: no DSPs, the multipliers in logic cells, a bitstream", "[verilog][tools]") {
  const fs::path dir = project_dir("target_hx8k");
  run(mlp_hardware(), emit_verilog({.project_dir = dir, .samples = 1}));
  const verilog::target& hx8k = verilog::targets::ice40_hx8k;
  const verilog::synthesis_report s = verilog::synthesize(dir, hx8k);
  INFO(s.stat);
  CHECK(s.multipliers == 0);
  const verilog::place_and_route_report r = verilog::place_and_route(dir, hx8k);
  INFO(r.report.substr(r.report.find("\"utilization\"")));
  CHECK(r.logic_cells.available == hx8k.capacity.logic_cells);
  CHECK(r.block_rams.available == hx8k.capacity.block_rams);
  CHECK(r.ios.available == hx8k.capacity.ios);
  CHECK(r.dsps.used == 0);
  CHECK(r.logic_cells.used > 0);
  CHECK(r.fmax_mhz > 0);
  CHECK(bytes_of(r.bitstream) == 135100);  // the HX8K's configuration image
}
