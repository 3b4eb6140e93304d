#pragma once
// split_attention: rewrites each scaled_dot_product_attention(q, k, v) into the ops mase's
// hardware has components for, in place:
//
//   <node>_key_t     permute(k) swapping its last two dimensions    kᵀ
//   <node>_scores    matmul(q, kᵀ)
//   <node>_scaled    mul(scores, <node>_scale), the scale a scalar constant (1/√E when the node's
//                    scale is 0, PyTorch's default; no mul when it is 1)
//   <node>_weights   softmax over the last dimension
//   <node>           matmul(weights, v)                               (the node's name: its readers keep it)
//
// The same function, computed in the order the split ops compute it (scores, then the scale), so
// float results may differ from the fused kernel's in the last bits. raise_granularity fuses
// attention for the evaluator and for reading a graph; the hardware flow splits it again so that
// each step takes its own fixed-point format (the quantize config names the nodes above) and its
// own component. A causal attention or one with dropout has no hardware and is refused.
//
// New nodes have no metadata: run it before init_metadata, as raise_granularity.

#include <mase/ir/graph.hpp>
#include <mase/pass/pipeline.hpp>
#include <mase/pass/raise_granularity.hpp>

#include <cmath>
#include <string>
#include <vector>

#include <fmt/core.h>

namespace mase {

struct split_attention_info {
  std::vector<std::string> split;  // the attention nodes rewritten, in graph order
  friend bool operator==(const split_attention_info&, const split_attention_info&) = default;
};

inline split_attention_info split_attention_of(graph& g) {
  split_attention_info info;
  std::vector<node_id> attention;
  for (node_id id : g.order())
    if (g[id].is<op::scaled_dot_product_attention>()) attention.push_back(id);
  if (attention.empty()) return info;
  const detail::raise::view shapes(g);
  for (node_id id : attention) {
    const node& n = g[id];
    const auto& a = *n.op.get_if<op::scaled_dot_product_attention>();
    require(!a.is_causal && a.dropout_p == 0.0,
            "split_attention: node {} (scaled_dot_product_attention) is {}; only a non-causal attention without "
            "dropout splits into hardware ops",
            n.name, a.is_causal ? "causal" : "with dropout");
    const std::string name = n.name;
    const node_id q = n.inputs[0], k = n.inputs[1], v = n.inputs[2];
    const auto rank = static_cast<std::int64_t>(shapes.shape_of(k).size());
    dims swap_last;
    for (std::int64_t d = 0; d < rank; ++d) swap_last.push_back(d < rank - 2 ? d : d == rank - 2 ? rank - 1 : rank - 2);
    const node_id key_t = g.insert_before(id, name + "_key_t", op::permute{.dims = swap_last}, {k});
    node_id scores = g.insert_before(id, name + "_scores", op::matmul{}, {q, key_t});
    // PyTorch's default scale is 1/√E, computed in double.
    const double scale_value =
        a.scale == 0.0 ? 1.0 / std::sqrt(static_cast<double>(shapes.shape_of(q).back())) : a.scale;
    if (scale_value != 1.0) {
      const node_id scale = g.insert_before(id, name + "_scale", op::constant{.shape = {}}, {});
      tensor value(shape{});
      value.values()[0] = static_cast<float>(scale_value);
      g.set_parameter(scale, "value", std::move(value));
      scores = g.insert_before(id, name + "_scaled", op::mul{}, {scores, scale});
    }
    const node_id weights = g.insert_before(id, name + "_weights", op::softmax{.dim = -1}, {scores});
    g.replace(id, name, op::matmul{}, {weights, v});
    info.split.push_back(name);
  }
  return info;
}

struct split_attention_pass {
  using needs = facts<>;
  using provides = facts<>;
  using invalidates = facts<fact::metadata_initialised, fact::common_metadata, fact::software_metadata,
                            fact::statistics, fact::quantized, fact::hardware_metadata>;

  split_attention_info run(graph& g) const { return split_attention_of(g); }
};

inline constexpr split_attention_pass split_attention{};

}  // namespace mase
