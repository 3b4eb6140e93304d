#pragma once
// Every float kernel, grouped by family, and the check that each op of the vocabulary has one.

#include <mase/eval/kernel.hpp>
#include <mase/eval/kernels/elementwise.hpp>
#include <mase/eval/kernels/linear_algebra.hpp>
#include <mase/eval/kernels/normalization.hpp>
#include <mase/eval/kernels/pooling.hpp>
#include <mase/eval/kernels/shape_ops.hpp>

namespace mase::eval {

template <class Op>
concept has_float_kernel = requires(const Op& op, const kernel_args& args) { float_kernel(op, args); };

}  // namespace mase::eval
