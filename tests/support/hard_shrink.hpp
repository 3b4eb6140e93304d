#pragma once
// A user's op, as a user would write it outside the library: PyTorch's Hardshrink (x where
// |x| > lambda, else 0), with a float kernel, a work rule and a quantization facet. The tests of
// user ops share it; examples/custom_op.cpp keeps its own copy, so that it reads on its own.

#include <mase/eval/kernel.hpp>
#include <mase/ir/op/op_base.hpp>

#include <cmath>
#include <span>
#include <string_view>
#include <tuple>

namespace user {

struct hard_shrink {
  double lambda = 0.5;

  static constexpr std::string_view name = "hard_shrink";
  using kind = mase::kind::module_related_func;
  static constexpr mase::op_category category = mase::op_category::elementwise;
  static constexpr mase::quantizable quantization{};  // data_in and data_out, as the built-in activations
  static constexpr mase::arity inputs{1, 1};
  static constexpr auto attributes() { return mase::attribute_list{mase::attribute("lambda", &hard_shrink::lambda)}; }
  constexpr mase::shape_result infer_shapes(std::span<const mase::shape> in) const { return mase::shape_ok(in[0]); }
  constexpr bool operator==(const hard_shrink&) const = default;

  void evaluate(const mase::eval::kernel_args& args) const {
    const mase::tensor& x = args.input(0);
    mase::tensor& y = args.output();
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float v = x.data()[i];
      y.data()[i] = std::fabs(v) > lambda ? v : 0.0f;
    }
  }

  // A comparison and a select per element; the gradient is a select.
  constexpr mase::op_work work(std::span<const mase::shape> in, std::span<const mase::shape>) const {
    return {2 * in[0].numel(), in[0].numel()};
  }
};

}  // namespace user
