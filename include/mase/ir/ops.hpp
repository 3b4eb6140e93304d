#pragma once
// The op vocabulary: every op type, and op_variant, the dynamic graph's op. Adding an op is one
// file under ir/op/ plus its line in each of the two lists below.

#include <mase/ir/op/add.hpp>
#include <mase/ir/op/bmm.hpp>
#include <mase/ir/op/cat.hpp>
#include <mase/ir/op/constant.hpp>
#include <mase/ir/op/div.hpp>
#include <mase/ir/op/dropout.hpp>
#include <mase/ir/op/erf.hpp>
#include <mase/ir/op/exp.hpp>
#include <mase/ir/op/flatten.hpp>
#include <mase/ir/op/gather.hpp>
#include <mase/ir/op/getitem.hpp>
#include <mase/ir/op/identity.hpp>
#include <mase/ir/op/linear.hpp>
#include <mase/ir/op/matmul.hpp>
#include <mase/ir/op/mean.hpp>
#include <mase/ir/op/mul.hpp>
#include <mase/ir/op/neg.hpp>
#include <mase/ir/op/output.hpp>
#include <mase/ir/op/permute.hpp>
#include <mase/ir/op/placeholder.hpp>
#include <mase/ir/op/pow.hpp>
#include <mase/ir/op/relu.hpp>
#include <mase/ir/op/reshape.hpp>
#include <mase/ir/op/scaled_dot_product_attention.hpp>
#include <mase/ir/op/slice.hpp>
#include <mase/ir/op/split.hpp>
#include <mase/ir/op/sqrt.hpp>
#include <mase/ir/op/squeeze.hpp>
#include <mase/ir/op/sub.hpp>
#include <mase/ir/op/transpose.hpp>
#include <mase/ir/op/unsqueeze.hpp>
#include <mase/ir/op/view.hpp>

#include <variant>

namespace mase {

using op_variant = std::variant<  //
    op::placeholder, op::constant, op::output,
    // module_related_func
    op::linear, op::relu, op::dropout, op::identity,
    // builtin_func
    op::add, op::sub, op::mul, op::div, op::matmul, op::bmm, op::mean, op::pow, op::sqrt, op::erf, op::neg, op::exp,
    op::scaled_dot_product_attention, op::getitem,
    // implicit_func
    op::flatten, op::reshape, op::view, op::permute, op::transpose, op::squeeze, op::unsqueeze, op::cat, op::split,
    op::slice, op::gather>;

}  // namespace mase
