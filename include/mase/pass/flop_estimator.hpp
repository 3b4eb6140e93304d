#pragma once
// estimate_flops: parameter, operation and buffer counts per node and for the whole graph (MASE's
// run_flop_estimator in its "fine-grained" style, analysis/flop_estimator/calculator). Counts come
// from the shapes in common metadata (data_in_<i> and data_out_<i>) and the ops' attributes, so
// nothing is run. Every built-in op has a rule (a new one without a rule does not compile); a
// user's op brings its own as a flops member (ir/op/any_op.hpp).
//
// Per node, five figures (MASE's keys):
//   parameters             trainable numbers the node holds (PyTorch's sum of p.numel(): weight
//                          and bias, normalisation gamma/beta; running statistics are buffers and
//                          do not count); a constant counts its value
//   computations           forward operations, MASE's rules below (a multiply-accumulate is one)
//   backward_computations  the same for the backward pass
//   input_buffer_size      elements of the data inputs (sum over data_in_<i>)
//   output_buffer_size     elements of the results (sum over data_out_<i>)
// placeholder and output nodes count nothing; a constant counts only its parameters.
//
// x = data_in_0, y = data_out_0, |t| = number of elements, k… = kernel sizes.
//
// | op                                          | computations                   | backward                      |
// |---------------------------------------------|--------------------------------|-------------------------------|
// | linear                                      | |W|·|x|/x.last            (M)  | 2·computations           (M)  |
// | conv1d                                      | |y|·k·C_in/groups              | 2·|x|·k·C_in/groups           |
// | conv2d                                      | |y|·kh·kw·C_in/groups     (M*) | 2·|x|·kh·kw·C_in/groups  (M*) |
// | conv3d                                      | |y|·kd·kh·kw·C_in/groups       | 2·|x|·kd·kh·kw·C_in/groups    |
// | conv_transpose1d, conv_transpose2d          | |x|·k…·C_out/groups            | 2·computations                |
// | batch_norm1d, batch_norm2d                  | 4·|x|                     (M)  | 4·|x|                    (M)  |
// | batch_norm3d                                | 4·|x|                          | 4·|x|                         |
// | layer_norm, group_norm                      | 5·|x|                     (M)  | 5·|x|                    (M)  |
// | instance_norm                               | 5·|x|                          | 5·|x|                         |
// | rms_norm (square, sum, scale, gain)         | 4·|x|                          | 4·|x|                         |
// | relu, relu6                                 | |x|                       (M)  | |x|                      (M)  |
// | other activations, neg, exp, sqrt, erf      | |x|                            | |x|                           |
// | abs, log, reciprocal, floor, ceil, sign     | |x|                            | |x|                           |
// | softmax (exp, sum, divide)                  | 3·|x|                          | 3·|x|                         |
// | log_softmax (exp, sum, subtract)            | 3·|x|                          | 3·|x|                         |
// | max_pool1d/2d, avg_pool1d/2d                | |y|·window (k or kh·kw)   (M)  | |x|·window               (M)  |
// | max_pool3d, avg_pool3d                      | |y|·kd·kh·kw                   | |x|·kd·kh·kw                  |
// | adaptive_avg_pool1d/2d                      | |x|                       (M)  | |x|                      (M)  |
// | add, sub, mul, div                          | |y|                       (M*) | |y|                      (M*) |
// | maximum, minimum, where, pow                | |y|                            | |y|                           |
// | mean                                        | |x|                            | |x|                           |
// | sum, amax, amin                             | |x|                            | |x|                           |
// | matmul, bmm                                 | |y|·K (K = x.last)             | 2·computations                |
// | scaled_dot_product_attention                | (|y|/Ev)·S·(E + Ev + 4)        | 2·computations                |
// | dropout, identity                           | 0                         (M)  | 0                        (M)  |
// | embedding and the other data movement ops   | 0                              | 0                             |
// |   (getitem, flatten, reshape, view, permute, transpose, squeeze, unsqueeze, cat, split, slice, gather)     |
// |   (pad, tile, expand, index_select)                                                                          |
//
// (M): MASE's rule. (M*): MASE's rule, which ignores groups (= the rule for groups = 1) and counts
// add by its first input (= |y| without broadcasting). Attention: q [.., L, E], k [.., S, E],
// v [.., S, Ev]; scores L·S·E, scale L·S, softmax 3·L·S, weighted sum L·S·Ev per batch.
// Transposed convolution: each input element is multiplied by the C_out/groups·k… weights it
// scatters (those that padding crops away included); the backward pass (input and weight
// gradients) is two products of the same size.
//
// Where this differs from MASE's code, on purpose:
// - MASE indexes `in_data[0]` / `out_data[0]` of the module's batched input tensor, i.e. the first
//   sample, so its figures (except conv2d's window, which reads the channel count from the batch)
//   are per sample; here every figure covers the whole tensors in the metadata (divide by the batch
//   size for MASE's per-sample figures).
// - MASE's parameters are the weight only for linear and conv2d, 0 for layer_norm, and
//   embedding_dim·|indices| (the rows read) for embedding, whose buffers it reports as 0; here
//   parameters are PyTorch's count for every op (embedding: |W|) and buffers follow one rule.
// - MASE has no rule for the other ops (it prints "Unsupported"); the rows without (M) are ours.

#include <mase/pass/pipeline.hpp>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

namespace mase {

struct op_cost {
  std::int64_t parameters = 0;
  std::int64_t computations = 0;
  std::int64_t backward_computations = 0;
  std::int64_t input_buffer_size = 0;
  std::int64_t output_buffer_size = 0;

  op_cost& operator+=(const op_cost& other) noexcept {
    parameters += other.parameters;
    computations += other.computations;
    backward_computations += other.backward_computations;
    input_buffer_size += other.input_buffer_size;
    output_buffer_size += other.output_buffer_size;
    return *this;
  }
  friend bool operator==(const op_cost&, const op_cost&) = default;
};

struct flop_estimate {
  ordered_map<op_cost> nodes;  // by node name, in graph order
  op_cost total;               // the sum over nodes
  friend bool operator==(const flop_estimate&, const flop_estimate&) = default;
};

namespace detail {

template <class Op, class... Ops>
inline constexpr bool is_one_of = (std::is_same_v<Op, Ops> || ...);

// A node's data-input and result shapes, from its common metadata.
struct flop_shapes {
  std::vector<shape> in;
  std::vector<shape> out;
};

inline flop_shapes flop_shapes_of(const node& n) {
  const common_meta& c = n.meta.common;
  require(!c.results.empty(),
          "estimate_flops: node {} has no result shapes in its common metadata; run init_metadata | "
                      "add_common_metadata before estimating",
                      n.name);
  flop_shapes s;
  for (std::size_t i = 0;; ++i) {
    const auto it = c.args.find(data_in_name(i));
    if (it == c.args.end()) break;
    const tensor_meta* t = std::get_if<tensor_meta>(&it->second);
    require(t != nullptr, "estimate_flops: node {}: {} is not a tensor in its common metadata", n.name,
                                      data_in_name(i));
    s.in.push_back(t->shape);
  }
  require(s.in.size() == n.inputs.size(),
          "estimate_flops: node {} has {} inputs but {} data_in entries in its common metadata; run "
                      "add_common_metadata again after changing the graph",
                      n.name, n.inputs.size(), s.in.size());
  for (const auto& [name, meta] : c.results) s.out.push_back(meta.shape);
  return s;
}

inline std::int64_t total_numel(const std::vector<shape>& shapes) {
  std::int64_t n = 0;
  for (const shape& s : shapes) n += s.numel();
  return n;
}

// Rows of a tensor whose last dimension is a feature vector: |t| / t.last (0 for empty features).
inline std::int64_t feature_rows(const shape& s) {
  if (s.empty()) return 1;
  return s.back() == 0 ? 0 : s.numel() / s.back();
}

template <class Op>
std::int64_t trainable_parameters(const Op& op) {
  std::int64_t n = 0;
  for (const parameter_spec& p : parameters_of(op))
    if (p.role != "running_mean" && p.role != "running_var") n += p.shape.numel();
  return n;
}

template <class Op>
op_cost op_flops(const Op& op, const flop_shapes& s) {
  op_cost cost;
  if constexpr (is_one_of<Op, op::placeholder, op::output>) {
    return cost;
  } else if constexpr (std::is_same_v<Op, op::constant>) {
    cost.parameters = op.shape.numel();
    return cost;
  } else {
    cost.parameters = trainable_parameters(op);
    cost.input_buffer_size = total_numel(s.in);
    cost.output_buffer_size = total_numel(s.out);
    const std::int64_t x = s.in.empty() ? 0 : s.in[0].numel();
    const std::int64_t y = s.out.empty() ? 0 : s.out[0].numel();
    const auto set = [&](std::int64_t forward, std::int64_t backward) {
      cost.computations = forward;
      cost.backward_computations = backward;
    };
    using shape_rules::per_dim;
    if constexpr (std::is_same_v<Op, op::linear>) {
      const std::int64_t forward = op.out_features * op.in_features * feature_rows(s.in[0]);
      set(forward, 2 * forward);
    } else if constexpr (std::is_same_v<Op, op::conv1d>) {
      const std::int64_t window = per_dim(op.kernel_size, 0) * (op.in_channels / op.groups);
      set(y * window, 2 * x * window);
    } else if constexpr (std::is_same_v<Op, op::conv2d>) {
      const std::int64_t window =
          per_dim(op.kernel_size, 0) * per_dim(op.kernel_size, 1) * (op.in_channels / op.groups);
      set(y * window, 2 * x * window);
    } else if constexpr (std::is_same_v<Op, op::conv3d>) {
      const std::int64_t window = per_dim(op.kernel_size, 0) * per_dim(op.kernel_size, 1) *
                                  per_dim(op.kernel_size, 2) * (op.in_channels / op.groups);
      set(y * window, 2 * x * window);
    } else if constexpr (is_one_of<Op, op::conv_transpose1d, op::conv_transpose2d>) {
      std::int64_t window = op.out_channels / op.groups;
      for (int i = 0; i < (std::is_same_v<Op, op::conv_transpose1d> ? 1 : 2); ++i) window *= per_dim(op.kernel_size, i);
      set(x * window, 2 * x * window);
    } else if constexpr (is_one_of<Op, op::batch_norm1d, op::batch_norm2d, op::batch_norm3d, op::rms_norm>) {
      set(4 * x, 4 * x);
    } else if constexpr (is_one_of<Op, op::layer_norm, op::group_norm, op::instance_norm>) {
      set(5 * x, 5 * x);
    } else if constexpr (is_one_of<Op, op::relu, op::relu6, op::leaky_relu, op::gelu, op::silu, op::sigmoid, op::tanh,
                                   op::elu, op::selu, op::softplus, op::softsign, op::hardswish, op::hardsigmoid,
                                   op::hardtanh, op::neg, op::exp, op::sqrt, op::erf, op::mean,
                                   op::prelu, op::abs, op::log, op::reciprocal, op::floor, op::ceil, op::sign,
                                   op::sum, op::amax, op::amin,
                                   op::adaptive_avg_pool1d, op::adaptive_avg_pool2d>) {
      set(x, x);
    } else if constexpr (is_one_of<Op, op::softmax, op::log_softmax>) {
      set(3 * x, 3 * x);
    } else if constexpr (is_one_of<Op, op::max_pool1d, op::avg_pool1d>) {
      const std::int64_t window = per_dim(op.kernel_size, 0);
      set(y * window, x * window);
    } else if constexpr (is_one_of<Op, op::max_pool2d, op::avg_pool2d>) {
      const std::int64_t window = per_dim(op.kernel_size, 0) * per_dim(op.kernel_size, 1);
      set(y * window, x * window);
    } else if constexpr (is_one_of<Op, op::max_pool3d, op::avg_pool3d>) {
      const std::int64_t window = per_dim(op.kernel_size, 0) * per_dim(op.kernel_size, 1) * per_dim(op.kernel_size, 2);
      set(y * window, x * window);
    } else if constexpr (is_one_of<Op, op::add, op::sub, op::mul, op::div, op::maximum, op::minimum, op::where,
                                   op::pow>) {
      // One operation per result element (pow's result has its input's size when it has one input).
      set(y, y);
    } else if constexpr (is_one_of<Op, op::matmul, op::bmm>) {
      const std::int64_t forward = y * s.in[0].back();
      set(forward, 2 * forward);
    } else if constexpr (std::is_same_v<Op, op::scaled_dot_product_attention>) {
      const shape& q = s.in[0];
      const shape& k = s.in[1];
      const shape& v = s.in[2];
      const std::int64_t queries = v.back() == 0 ? 0 : y / v.back();  // batch · L
      const std::int64_t forward = queries * k[k.size() - 2] * (q.back() + v.back() + 4);
      set(forward, 2 * forward);
    } else if constexpr (std::is_same_v<Op, op::getitem>) {
      // Reads the one result it selects, which its data_in_0 entry (the input's first result) need
      // not describe.
      cost.input_buffer_size = cost.output_buffer_size;
    } else if constexpr (is_one_of<Op, op::dropout, op::identity, op::embedding, op::flatten, op::reshape, op::view,
                                   op::permute, op::transpose, op::squeeze, op::unsqueeze, op::cat, op::split,
                                   op::slice, op::gather, op::pad, op::tile, op::expand, op::index_select>) {
      // data movement: no arithmetic
    } else {
      static_assert(dependent_false<Op>, "estimate_flops: add a rule for this op to flop_estimator.hpp");
    }
    return cost;
  }
}

}  // namespace detail

// The counts of one node (which must have common metadata).
inline op_cost estimate_node_flops(const node& n) {
  const detail::flop_shapes shapes =
      n.is<op::placeholder>() || n.is<op::output>() || n.is<op::constant>() ? detail::flop_shapes{}
                                                                             : detail::flop_shapes_of(n);
  return visit_op<op_cost>(
      n.op, [&](const auto& op) { return detail::op_flops(op, shapes); },
      [&](const any_op& op) {
        op_cost cost;
        if (!op.flops(shapes.in, shapes.out, cost))
          throw error(fmt::format("estimate_flops: node {}: op {} has no flops rule; give its type a member "
                                  "mase::op_cost flops(std::span<const mase::shape> inputs, "
                                  "std::span<const mase::shape> results) const (docs/extending.md)",
                                  n.name, op.name()));
        return cost;
      });
}

// The counts of every node, in graph order, and their total.
inline flop_estimate estimate_flops(const graph& g) {
  flop_estimate estimate;
  g.for_each_node([&](const node& n) {
    const op_cost cost = estimate_node_flops(n);
    estimate.total += cost;
    estimate.nodes.insert_or_assign(n.name, cost);
  });
  return estimate;
}

// The pipeline form: run(g, init_metadata | add_common_metadata | flop_estimator).get<flop_estimate>().
struct flop_estimator_pass {
  using needs = facts<fact::common_metadata>;
  using provides = facts<>;
  flop_estimate run(const graph& g) const { return estimate_flops(g); }
};

inline constexpr flop_estimator_pass flop_estimator{};

}  // namespace mase
