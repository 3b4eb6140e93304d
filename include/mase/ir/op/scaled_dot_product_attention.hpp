#pragma once
// torch.nn.functional.scaled_dot_product_attention(q, k, v): softmax(q kᵀ · scale [+ causal
// mask]) v, with dropout_p applied to the attention weights in training (the evaluator runs
// inference). q [..., L, E], k [..., S, E], v [..., S, Ev] → [..., L, Ev]; the leading
// dimensions broadcast, as the products in PyTorch's reference formula do. scale 0 stands for
// PyTorch's default (None), 1/√E. An attention mask input is not modelled.

#include <mase/ir/op/shape_rules.hpp>

namespace mase::op {

struct scaled_dot_product_attention {
  double dropout_p = 0.0;
  bool is_causal = false;
  double scale = 0.0;

  static constexpr std::string_view name = "scaled_dot_product_attention";
  using kind = mase::kind::builtin_func;
  static constexpr op_category category = op_category::dot_product;
  static constexpr arity inputs{3, 3};
  static constexpr auto attributes() {
    return attribute_list{attribute("dropout_p", &scaled_dot_product_attention::dropout_p),
                      attribute("is_causal", &scaled_dot_product_attention::is_causal),
                      attribute("scale", &scaled_dot_product_attention::scale)};
  }

  constexpr shape_result infer_shapes(std::span<const shape> in) const {
    const shape& q = in[0];
    const shape& k = in[1];
    const shape& v = in[2];
    if (!(dropout_p >= 0.0 && dropout_p <= 1.0))
      return shape_error("scaled_dot_product_attention: dropout_p must lie in [0, 1]");
    if (q.size() < 2 || k.size() < 2 || v.size() < 2)
      return shape_error("scaled_dot_product_attention: query, key and value need at least two dimensions");
    if (q.back() != k.back())
      return shape_error("scaled_dot_product_attention: query and key differ in the embedding size E (last dimension)");
    if (k[k.size() - 2] != v[v.size() - 2])
      return shape_error("scaled_dot_product_attention: key and value differ in the sequence length S "
                         "(second to last dimension)");
    using shape_rules::leading_dims;
    const shape_result qk = shape_rules::broadcast(leading_dims(q, 2), leading_dims(k, 2));
    const shape_result batch = qk.ok() ? shape_rules::broadcast(qk.shapes[0], leading_dims(v, 2)) : qk;
    if (!batch.ok())
      return shape_error("scaled_dot_product_attention: the batch dimensions of query, key and value do not broadcast");
    shape out = batch.shapes[0];
    out.push_back(q[q.size() - 2]);
    out.push_back(v.back());
    return shape_ok(out);
  }
  // Per query and key: the q·k dot product, the weighted sum of v, and four for the scaled
  // softmax; the gradient takes twice that.
  constexpr op_work work(std::span<const shape> in, std::span<const shape> out) const {
    const shape& q = in[0];
    const shape& k = in[1];
    const shape& v = in[2];
    const std::int64_t queries = v.back() == 0 ? 0 : out[0].numel() / v.back();  // batch · L
    const std::int64_t forward = queries * k[k.size() - 2] * (q.back() + v.back() + 4);
    return {forward, 2 * forward};
  }
  constexpr bool operator==(const scaled_dot_product_attention&) const = default;
};

}  // namespace mase::op
