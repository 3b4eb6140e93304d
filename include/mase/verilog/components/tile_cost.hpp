#pragma once
// The cost of mase_tile_accumulate, the pipelined tile engine mase_linear and mase_matmul share:
// its registers, adders and selects, counted from its RTL (rtl/mase_tile_accumulate.hpp).
#include <mase/verilog/cost.hpp>

#include <bit>
#include <cstdint>

namespace mase::verilog::detail {

struct tile_engine_shape {
  std::int64_t x_lanes = 0, out_lanes = 0;  // a tile is out_lanes x x_lanes products
  int x_width = 0, w_width = 0, accumulator_width = 0, out_width = 0;
  bool has_bias = false;
};

// The adder tree's leaves (the products, and the bias leaf), padded to a power of two.
inline std::int64_t tile_tree_leaves(const tile_engine_shape& s) { return s.x_lanes + (s.has_bias ? 1 : 0); }

// Registered tree nodes per output lane: the heap's inner nodes with a leaf that is not the
// padding's constant zero below them (those fold away in synthesis).
inline std::int64_t tile_tree_registers(const tile_engine_shape& s) {
  const std::int64_t leaves = tile_tree_leaves(s);
  const auto padded = static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(leaves)));
  std::int64_t registers = 0;
  // A node at height h covers 2^h leaves; the ones that reach a real leaf number ceil(leaves / 2^h).
  for (std::int64_t span = 2; span <= padded; span *= 2) registers += (leaves + span - 1) / span;
  return registers;
}

// The pipeline's stages after the issue: the read, the operands, the products and the tree.
inline std::int64_t tile_engine_stages(const tile_engine_shape& s) {
  return 3 + std::bit_width(static_cast<std::uint64_t>(tile_tree_leaves(s) - 1));
}

// The tile engine's part of a component's cost: each multiplier's operand and product registers
// (inside the DSP where one takes it), the tree's registered nodes, the running and finished
// sums, the cast's output queue of two words and the stages' valid and last flags.
inline void add_tile_engine_cost(const tile_engine_shape& s, component_cost& c) {
  const std::int64_t multipliers = s.x_lanes * s.out_lanes;
  c.multipliers.push_back({.count = multipliers, .a_width = s.x_width, .b_width = s.w_width,
                           .pipeline_bits = 2 * (s.x_width + s.w_width)});
  const std::int64_t acc = s.accumulator_width;
  c.register_bits += s.out_lanes * (tile_tree_registers(s) + 2) * acc + 2 * s.out_lanes * s.out_width +
                     2 * tile_engine_stages(s);
  c.adder_bits += s.out_lanes * tile_tree_leaves(s) * acc;  // the tree's adders and the running sum
  c.select_bits += 2 * s.out_lanes * s.out_width;            // the cast's saturation and the queue's head
}

}  // namespace mase::verilog::detail
