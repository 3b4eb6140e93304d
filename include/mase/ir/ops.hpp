#pragma once
// The op vocabulary: every op type, and op_variant, the dynamic graph's op. Adding an op is one
// file under ir/op/ plus its line in each of the two lists below.

#include <mase/ir/op/add.hpp>
#include <mase/ir/op/constant.hpp>
#include <mase/ir/op/dropout.hpp>
#include <mase/ir/op/getitem.hpp>
#include <mase/ir/op/identity.hpp>
#include <mase/ir/op/linear.hpp>
#include <mase/ir/op/output.hpp>
#include <mase/ir/op/placeholder.hpp>
#include <mase/ir/op/relu.hpp>
#include <mase/ir/op/split.hpp>

#include <variant>

namespace mase {

using op_variant = std::variant<  //
    op::placeholder, op::constant, op::output,
    op::linear, op::relu, op::dropout, op::identity, op::add, op::split, op::getitem>;

}  // namespace mase
