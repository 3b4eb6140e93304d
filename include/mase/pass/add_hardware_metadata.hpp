#pragma once
// add_hardware_metadata: MASE's add_hardware_metadata_analysis_pass (DeepWok/mase at ae4660b1:
// src/chop/passes/graph/analysis/add_metadata/add_hardware_metadata.py) for mase's own
// streaming components (<mase/verilog.hpp> emits them).
//
// Every node gets hardware metadata with MASE's names:
// - is_implicit: placeholders, the output, and nodes that only reshape a stream (flatten,
//   reshape, view, dropout, identity) have no component; the emitter wires through them.
// - toolchain INTERNAL_RTL, module (mase_linear, mase_relu, …), dependence_files, device_id 0,
//   max_parallelism, and interface {storage BRAM, transpose false} per parameter.
// - verilog_param: for every tensor entry X (DATA_IN_0, WEIGHT, BIAS, DATA_OUT_0, …)
//   X_PRECISION_0 (width), X_PRECISION_1 (fraction bits), X_TENSOR_SIZE_DIM_d (d = 0 the
//   innermost dimension) and X_PARALLELISM_DIM_d, plus each module's own (HAS_BIAS, KERNEL_X, …).
//
// Parallelism: a stream carries DATA_*_PARALLELISM_DIM_0 elements ("lanes") per beat, in
// row-major order. A graph input and every conv / pool output take the largest divisor of their
// innermost dimension that is at most max_parallelism[0]; a linear layer's output-feature tile
// (WEIGHT_PARALLELISM_DIM_1, and so its output lanes) the largest divisor of out_features at most
// max_parallelism[1]; an embedding's and a permute's or gather's output the largest divisor of
// the innermost dimension at most max_parallelism[0]; every other node keeps its input's lanes
// (an element-wise node, those of its first operand with the result's shape: the emitter converts
// another such stream; a constant operand is a table at those lanes, and a smaller operand that
// broadcasts arrives one element per beat). MASE takes min(max, size), which
// its components then require to divide the size; taking a divisor makes that hold by
// construction.
//
// A node's component is its op's hardware facet (ir/op/op_base.hpp): a user's op names its own
// module (emit_options::components holds its text) and may add parameters with a
// hardware_parameters member.
//
// The pass needs a quantized graph (a compile-time fact); at run time every node with a
// component must be fixed point, and a node whose op has no component is an error naming it.

#include <mase/core/compiled.hpp>
#include <mase/core/error.hpp>
#include <mase/format/fixed.hpp>
#include <mase/ir/graph.hpp>
#include <mase/ir/metadata.hpp>
#include <mase/ir/op/shape_rules.hpp>
#include <mase/pass/pipeline.hpp>
#include <mase/pass/quantize.hpp>
#include <mase/verilog/component.hpp>
#include <mase/verilog/stream_metadata.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <numeric>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

namespace mase {

struct hardware_options {
  // [0]: lanes of graph inputs and conv / pool outputs; [1]: a linear layer's output tile.
  std::array<int, 4> max_parallelism{4, 4, 4, 4};
  // Stream every rank-4 tensor ([N, C, H, W]) channels-last, H x W pixels of C channels, as
  // hls4ml and FINN do: a convolution then keeps k rows of every channel (k.W.C elements) instead
  // of two whole samples, and its lanes are output channels. Conv, pool, batch norm, global mean,
  // cat along channels and element-wise ops (broadcasts and constants too) take such streams; a
  // reshape of a map of several pixels, and another op on one, is an error naming it.
  bool channels_last = false;
};



struct add_hardware_metadata_pass {
  using needs = facts<fact::common_metadata, fact::quantized>;
  using provides = facts<fact::hardware_metadata>;

  hardware_options options{};

  add_hardware_metadata_pass operator()(hardware_options o) const { return {o}; }

  void run(graph& g) const;

};

inline constexpr add_hardware_metadata_pass add_hardware_metadata{};

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/pass/add_hardware_metadata_definitions.hpp>
#endif
