#pragma once
// Every float kernel, grouped by family, and the check that each op of the vocabulary has one.
// A user's op brings its own as a member (ir/op/any_op.hpp): run_user_kernel calls it.

#include <mase/eval/kernel.hpp>
#include <mase/eval/kernels/elementwise.hpp>
#include <mase/eval/kernels/linear_algebra.hpp>
#include <mase/eval/kernels/normalization.hpp>
#include <mase/eval/kernels/pooling.hpp>
#include <mase/eval/kernels/shape_ops.hpp>
#include <mase/ir/op/any_op.hpp>
#include <mase/ir/op_traits.hpp>

namespace mase::eval {

template <class Op>
concept has_float_kernel = requires(const Op& op, const kernel_args& args) { float_kernel(op, args); };

// A user's op: its evaluate member, or an error naming the op and what to add.
inline void run_user_kernel(const any_op& op, const kernel_args& args) {
  if (!op.evaluate(args))
    throw error(fmt::format("node {}: op {} has no float kernel; give its type a member "
                            "void evaluate(const mase::eval::kernel_args&) const (docs/extending.md)",
                            args.node_name, op.name()));
}

}  // namespace mase::eval
