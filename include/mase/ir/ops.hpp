#pragma once
// mase's built-in op vocabulary: every op type, listed once in builtin_ops (the order is the
// index tables use). Adding an op to the library is one file under ir/op/ (with its facets) plus
// its include and its entry below; a user's own op needs neither (ir/op/any_op.hpp,
// docs/extending.md).

#include <mase/ir/op/abs.hpp>
#include <mase/ir/op/adaptive_avg_pool.hpp>
#include <mase/ir/op/add.hpp>
#include <mase/ir/op/any_op.hpp>
#include <mase/ir/op/amax.hpp>
#include <mase/ir/op/amin.hpp>
#include <mase/ir/op/avg_pool1d.hpp>
#include <mase/ir/op/avg_pool2d.hpp>
#include <mase/ir/op/avg_pool3d.hpp>
#include <mase/ir/op/batch_norm.hpp>
#include <mase/ir/op/bmm.hpp>
#include <mase/ir/op/cat.hpp>
#include <mase/ir/op/compare.hpp>
#include <mase/ir/op/ceil.hpp>
#include <mase/ir/op/constant.hpp>
#include <mase/ir/op/conv.hpp>
#include <mase/ir/op/conv_transpose.hpp>
#include <mase/ir/op/div.hpp>
#include <mase/ir/op/dropout.hpp>
#include <mase/ir/op/elu.hpp>
#include <mase/ir/op/embedding.hpp>
#include <mase/ir/op/erf.hpp>
#include <mase/ir/op/exp.hpp>
#include <mase/ir/op/expand.hpp>
#include <mase/ir/op/flatten.hpp>
#include <mase/ir/op/floor.hpp>
#include <mase/ir/op/gather.hpp>
#include <mase/ir/op/gelu.hpp>
#include <mase/ir/op/getitem.hpp>
#include <mase/ir/op/group_norm.hpp>
#include <mase/ir/op/hardsigmoid.hpp>
#include <mase/ir/op/hardswish.hpp>
#include <mase/ir/op/hardtanh.hpp>
#include <mase/ir/op/identity.hpp>
#include <mase/ir/op/index_select.hpp>
#include <mase/ir/op/instance_norm.hpp>
#include <mase/ir/op/layer_norm.hpp>
#include <mase/ir/op/leaky_relu.hpp>
#include <mase/ir/op/linear.hpp>
#include <mase/ir/op/log.hpp>
#include <mase/ir/op/logical.hpp>
#include <mase/ir/op/log_softmax.hpp>
#include <mase/ir/op/matmul.hpp>
#include <mase/ir/op/max_pool.hpp>
#include <mase/ir/op/maximum.hpp>
#include <mase/ir/op/mean.hpp>
#include <mase/ir/op/minimum.hpp>
#include <mase/ir/op/mul.hpp>
#include <mase/ir/op/neg.hpp>
#include <mase/ir/op/output.hpp>
#include <mase/ir/op/pad.hpp>
#include <mase/ir/op/permute.hpp>
#include <mase/ir/op/placeholder.hpp>
#include <mase/ir/op/pow.hpp>
#include <mase/ir/op/prelu.hpp>
#include <mase/ir/op/reciprocal.hpp>
#include <mase/ir/op/relu.hpp>
#include <mase/ir/op/relu6.hpp>
#include <mase/ir/op/reshape.hpp>
#include <mase/ir/op/rms_norm.hpp>
#include <mase/ir/op/scaled_dot_product_attention.hpp>
#include <mase/ir/op/selu.hpp>
#include <mase/ir/op/sigmoid.hpp>
#include <mase/ir/op/sign.hpp>
#include <mase/ir/op/silu.hpp>
#include <mase/ir/op/slice.hpp>
#include <mase/ir/op/softmax.hpp>
#include <mase/ir/op/softplus.hpp>
#include <mase/ir/op/softsign.hpp>
#include <mase/ir/op/split.hpp>
#include <mase/ir/op/sqrt.hpp>
#include <mase/ir/op/squeeze.hpp>
#include <mase/ir/op/sub.hpp>
#include <mase/ir/op/sum.hpp>
#include <mase/ir/op/tanh.hpp>
#include <mase/ir/op/tile.hpp>
#include <mase/ir/op/transpose.hpp>
#include <mase/ir/op/unsqueeze.hpp>
#include <mase/ir/op/view.hpp>
#include <mase/ir/op/where.hpp>

#include <cstddef>
#include <type_traits>

namespace mase {

// A list of op types.
template <class... Ops>
struct op_list {
  static constexpr std::size_t size = sizeof...(Ops);
};

using builtin_ops = op_list<  //
    op::placeholder, op::constant, op::output,
    // module
    op::batch_norm1d, op::batch_norm2d, op::batch_norm3d, op::prelu,
    // module_related_func
    op::linear, op::conv1d, op::conv2d, op::conv3d, op::conv_transpose1d, op::conv_transpose2d, op::layer_norm, op::group_norm, op::rms_norm,
    op::instance_norm,
    op::relu, op::relu6, op::leaky_relu, op::gelu, op::silu, op::sigmoid, op::tanh, op::elu, op::selu, op::softplus,
    op::softsign, op::hardswish, op::hardsigmoid, op::hardtanh, op::softmax, op::log_softmax,
    op::max_pool1d, op::max_pool2d, op::max_pool3d, op::avg_pool1d, op::avg_pool2d, op::avg_pool3d, op::adaptive_avg_pool1d,
    op::adaptive_avg_pool2d,
    op::dropout, op::identity,
    // builtin_func
    op::add, op::sub, op::mul, op::div, op::matmul, op::bmm, op::mean, op::pow, op::sqrt, op::erf, op::neg, op::exp,
    op::scaled_dot_product_attention, op::getitem, op::log, op::reciprocal, op::floor, op::ceil, op::sign,
    op::maximum, op::minimum, op::sum, op::amax, op::amin,
    // implicit_func
    op::embedding, op::flatten, op::reshape, op::view, op::permute, op::transpose, op::squeeze, op::unsqueeze, op::cat, op::split,
    op::slice, op::gather, op::pad, op::tile, op::expand, op::index_select, op::abs, op::where,
    // comparison and logic
    op::eq, op::lt, op::le, op::gt, op::ge, op::logical_not, op::logical_and, op::logical_or, op::logical_xor>;

namespace detail {
template <class Op, class... Ops>
constexpr int index_in(op_list<Ops...>) noexcept {
  int index = -1, at = 0;
  ((std::is_same_v<Op, Ops> ? (index = at, ++at) : ++at), ...);
  return index;
}
}  // namespace detail

template <class Op>
constexpr int builtin_op_index() noexcept {
  return detail::index_in<Op>(builtin_ops{});
}

inline any_op::any_op() {
  static const any_op input{op::placeholder{}};
  self_ = input.self_;
}

}  // namespace mase
