#pragma once
// estimate_flops: parameter, operation and buffer counts per node and for the whole graph (MASE's
// run_flop_estimator in its "fine-grained" style, analysis/flop_estimator/calculator). Counts come
// from the shapes in common metadata (data_in_<i> and data_out_<i>) and the ops' attributes, so
// nothing is run. The computations are the op's work facet (ir/op/op_base.hpp): its own rule, or
// its category's default (element-wise ops one per result element, reductions one per input
// element, data movement none); a user's op follows the same rules. The table below is what the
// built-in ops' rules give.
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

#include <mase/core/compiled.hpp>
#include <mase/pass/pipeline.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// The counts of one node (which must have common metadata).
MASE_COMPILED_INLINE op_cost estimate_node_flops(const node& n);

// The counts of every node, in graph order, and their total.
MASE_COMPILED_INLINE flop_estimate estimate_flops(const graph& g);

// The pipeline form: run(g, init_metadata | add_common_metadata | flop_estimator).get<flop_estimate>().
struct flop_estimator_pass {
  using needs = facts<fact::common_metadata>;
  using provides = facts<>;
  flop_estimate run(const graph& g) const { return estimate_flops(g); }
};

inline constexpr flop_estimator_pass flop_estimator{};

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/pass/flop_estimator_definitions.hpp>
#endif
