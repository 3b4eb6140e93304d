#pragma once
// The kernel contract. A kernel computes one op on float32 tensors:
//
//   void float_kernel(const op::linear&, const kernel_args&);
//
// one overload per op, found by overload resolution from the evaluator's std::visit, so an op
// without a kernel is a compile error (see eval/kernels.hpp). The evaluator sizes every output
// from the op's shape rule before the call; a kernel writes every element of every output
// (buffers are reused between runs and are not cleared). Inputs are never modified.

#include <mase/core/error.hpp>
#include <mase/core/ordered_map.hpp>
#include <mase/core/tensor.hpp>
#include <mase/ir/op/op_base.hpp>

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include <fmt/core.h>

namespace mase::eval {

// Elements per thread below which splitting an element-wise loop costs more than it saves. Small
// enough that the element-wise op after a product splits too (the MLP's 64 x 256 ReLU): each
// thread then reads the rows it just wrote, rather than one thread reading the other's from its
// cache (1.6 µs of the MLP's 31 on two threads, against 0.7 split).
inline constexpr std::size_t parallel_grain = 8192;

struct kernel_args {
  // The node's inputs in order. For an op that takes all results of its input (getitem), every
  // result of that one input.
  std::span<const tensor* const> inputs;
  // The node's parameters by role ("weight", "bias", "running_mean", "value", …). In fake-quant
  // mode these are the quantized copies.
  const ordered_map<tensor>* parameters = nullptr;
  // Sized by the evaluator; the kernel fills them.
  std::span<tensor> outputs;
  // Working memory the kernel may resize and use freely (im2col columns, …); it persists
  // between runs of the same node so a steady-state run does not allocate.
  std::vector<float>* scratch = nullptr;
  // For messages.
  std::string_view node_name;
  // How many threads of thread_pool::shared() the kernel may use. Kernels that use more than one
  // give the same results, bit for bit, as on one.
  std::size_t threads = 1;

  const tensor& input(std::size_t i) const { return *inputs[i]; }
  tensor& output(std::size_t i = 0) const { return outputs[i]; }
  // The parameter the op declares for `role`. The graph checks roles and shapes when parameters
  // are set; a missing one (a graph built without initialising it) is reported here.
  const tensor& parameter(std::string_view role) const {
    if (const tensor* t = optional_parameter(role)) return *t;
    throw error(fmt::format("node {}: parameter \"{}\" is not set; set it with graph::set_parameter before evaluating",
                            node_name, role));
  }
  const tensor* optional_parameter(std::string_view role) const {
    if (parameters == nullptr) return nullptr;
    const auto it = parameters->find(role);
    return it == parameters->end() ? nullptr : &it->second;
  }
  std::vector<float>& scratch_buffer(std::size_t size) const {
    scratch->resize(size);
    return *scratch;
  }
};

// For kernels of one input and one result: the guarantee the evaluator gives (the result sized
// by the op's shape rule), checked once per call so that a direct call cannot index outside a
// buffer. Throws directly rather than through require(), which would format its message (and
// allocate) on every run.
template <class Op>
void check_unary_kernel_shapes(const Op& op, const kernel_args& args) {
  if (args.inputs.size() != 1 || args.outputs.size() != 1)
    throw error(fmt::format("node {}: {} takes one input and produces one result, got {} and {}", args.node_name,
                            Op::name, args.inputs.size(), args.outputs.size()));
  const shape in = args.input(0).shape();
  const shape_result expected = op.infer_shapes(std::span<const shape>(&in, 1));
  if (!expected.ok())
    throw error(fmt::format("node {}: {} (input shape {})", args.node_name,
                            expected.error == nullptr ? "" : expected.error, to_string(in)));
  if (!(expected.shapes[0] == args.output().shape()))
    throw error(fmt::format("node {}: the result buffer has shape {} but {} of {} gives {}", args.node_name,
                            to_string(args.output().shape()), Op::name, to_string(in), to_string(expected.shapes[0])));
}

}  // namespace mase::eval
