#pragma once
// Float kernels of the element-wise ops: arithmetic, maximum/minimum, comparisons, logic and
// where with PyTorch broadcasting, the unary functions and activations (prelu's per-channel slopes included), and
// the pass-through ops (dropout at inference, identity).
//
// Every unary op also has scalar_function(op, x): its exact definition in double, written from
// the PyTorch documentation, which the bit-exact evaluator samples to build lookup tables.
// The float kernels follow PyTorch's own float formulas (the same operation order, expm1 and
// log1p where PyTorch uses them), so they agree with PyTorch to a few ulps.

#include <mase/core/error.hpp>
#include <mase/core/shape.hpp>
#include <mase/core/tensor_eigen.hpp>
#include <mase/core/thread_pool.hpp>
#include <mase/eval/kernel.hpp>
#include <mase/ir/op/shape_rules.hpp>
#include <mase/ir/ops.hpp>

#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string_view>
#include <type_traits>

#include <unsupported/Eigen/SpecialFunctions>  // Array::erf (vectorized for float)
#include <fmt/core.h>

#if defined(__SSE2__) || defined(__AVX__)
#include <immintrin.h>
#elif defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#endif

namespace mase::eval {

namespace elementwise_detail {

// The SELU constants (torch.nn.SELU, from Klambauer et al., "Self-Normalizing Neural Networks").
inline constexpr double selu_alpha = 1.6732632423543772848170429916717;
inline constexpr double selu_scale = 1.0507009873554804934193349852946;
// GELU: 1/sqrt(2) for the erf form; sqrt(2/pi) and the cubic coefficient for the tanh form.
inline constexpr double sqrt1_2 = 0.70710678118654752440084436210485;
inline constexpr double sqrt_2_over_pi = 0.79788456080286535587989211986876;
inline constexpr double gelu_cubic = 0.044715;

// A tensor whose storage does not match its shape (a default-constructed tensor has shape []
// and no values) would be read or written out of bounds.
inline void check_storage(const tensor& t, const kernel_args& args, std::string_view op_name, std::string_view role) {
  if (t.size() != static_cast<std::size_t>(t.shape().numel()))
    throw error(fmt::format("node {}: {}: the {} tensor has shape {} but holds {} values; size it with tensor(shape)",
                            args.node_name, op_name, role, to_string(t.shape()), t.size()));
}

struct unary_maps {
  tensor_const_array_map x;
  tensor_array_map y;
};

// The input and output of a one-input op, checked to have the same shape (the evaluator sizes
// them so; a direct caller may not have).
inline unary_maps unary(const kernel_args& args, std::string_view op_name) {
  if (args.inputs.size() != 1 || args.outputs.size() != 1)
    throw error(fmt::format("node {}: {} takes 1 input and gives 1 result, but the kernel got {} inputs and {} outputs",
                            args.node_name, op_name, args.inputs.size(), args.outputs.size()));
  const tensor& x = args.input(0);
  tensor& y = args.output(0);
  if (!(x.shape() == y.shape()))
    throw error(fmt::format("node {}: {} gives a result of its input's shape {}, but the output buffer has shape {}",
                            args.node_name, op_name, to_string(x.shape()), to_string(y.shape())));
  check_storage(x, args, op_name, "input");
  check_storage(y, args, op_name, "output");
  return {x.array(), y.array()};
}

// For the rules whose every element is one exactly rounded operation or an exact one (max, min,
// negation, +, ×, ÷): f(x_part, y_part) on consecutive segments of the input and the result,
// split between the kernel's threads. Eigen computes the segments' heads and tails with scalar
// code and their middles with packets, which for these rules give the same bits, so the result
// does not depend on the split. (Not for exp, tanh, erf, log: Eigen's packet and scalar versions
// of those may differ in the last bit.)
template <class F>
void exact_pointwise(const kernel_args& args, std::string_view op_name, F&& f) {
  // Named members, not a structured binding: C++20 lets a lambda capture a binding, clang 14 does not.
  unary_maps maps = unary(args, op_name);
  auto& x = maps.x;
  auto& y = maps.y;
  thread_pool::shared_chunks(static_cast<std::size_t>(x.size()), args.threads, parallel_grain,
                             [&](std::size_t first, std::size_t last, std::size_t) {
                               const auto at = static_cast<Eigen::Index>(first);
                               const auto n = static_cast<Eigen::Index>(last - first);
                               f(x.segment(at, n), y.segment(at, n));
                             });
}

// The correctly rounded square root, as PyTorch computes it. Eigen's vectorized float sqrt is an
// rsqrt estimate refined by one Newton step under EIGEN_FAST_MATH (its default), which loses 1-2
// bits and flushes subnormals to zero; the hardware instruction is exact and as fast.
inline void exact_sqrt(const float* x, float* y, Eigen::Index n) {
  Eigen::Index i = 0;
#if defined(__AVX__)
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_sqrt_ps(_mm256_loadu_ps(x + i)));
#elif defined(__SSE2__)
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(y + i, _mm_sqrt_ps(_mm_loadu_ps(x + i)));
#elif defined(__aarch64__) && defined(__ARM_NEON)
  for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vsqrtq_f32(vld1q_f32(x + i)));
#endif
  for (; i < n; ++i) y[i] = std::sqrt(x[i]);
}

// A broadcast binary op as loops: dimensions of size 1 in the result are dropped and adjacent
// dimensions both operands walk contiguously are merged, so the innermost loop is one run that
// each operand reads either contiguously (stride 1) or as one repeated value (stride 0).
struct broadcast_loops {
  int rank = 0;
  std::array<std::int64_t, shape::max_rank> size{};
  std::array<std::int64_t, shape::max_rank> stride_a{};
  std::array<std::int64_t, shape::max_rank> stride_b{};
};

inline broadcast_loops plan_broadcast(const shape& a, const shape& b, const shape& out) {
  // Row-major strides of each operand, aligned to the result's last dimension; 0 where the
  // operand's extent is 1 (or missing), so that it repeats.
  std::array<std::int64_t, shape::max_rank> sa{};
  std::array<std::int64_t, shape::max_rank> sb{};
  std::int64_t step_a = 1;
  std::int64_t step_b = 1;
  for (int i = out.size() - 1; i >= 0; --i) {
    const int ia = a.size() - out.size() + i;
    const int ib = b.size() - out.size() + i;
    const std::int64_t da = ia >= 0 ? a[ia] : 1;
    const std::int64_t db = ib >= 0 ? b[ib] : 1;
    sa[static_cast<std::size_t>(i)] = da == 1 ? 0 : step_a;
    sb[static_cast<std::size_t>(i)] = db == 1 ? 0 : step_b;
    step_a *= da;
    step_b *= db;
  }
  broadcast_loops plan;
  for (int i = 0; i < out.size(); ++i) {
    const auto u = static_cast<std::size_t>(i);
    if (out[i] == 1) continue;
    if (plan.rank > 0) {
      const auto last = static_cast<std::size_t>(plan.rank - 1);
      // The previous (outer) loop steps exactly over this one for both operands: merge them.
      if (plan.stride_a[last] == sa[u] * out[i] && plan.stride_b[last] == sb[u] * out[i]) {
        plan.size[last] *= out[i];
        plan.stride_a[last] = sa[u];
        plan.stride_b[last] = sb[u];
        continue;
      }
    }
    const auto k = static_cast<std::size_t>(plan.rank++);
    plan.size[k] = out[i];
    plan.stride_a[k] = sa[u];
    plan.stride_b[k] = sb[u];
  }
  return plan;
}

// Calls run(offset_a, offset_b, offset_out) for each innermost run, in the result's order.
template <class Run>
void for_each_run(const broadcast_loops& plan, Run&& run) {
  const int outer = plan.rank - 1;
  const std::int64_t length = plan.size[static_cast<std::size_t>(outer)];
  std::int64_t runs = 1;
  for (int d = 0; d < outer; ++d) runs *= plan.size[static_cast<std::size_t>(d)];
  std::array<std::int64_t, shape::max_rank> counter{};
  std::int64_t offset_a = 0;
  std::int64_t offset_b = 0;
  for (std::int64_t r = 0, offset_out = 0; r < runs; ++r, offset_out += length) {
    run(offset_a, offset_b, offset_out);
    for (int d = outer - 1; d >= 0; --d) {
      const auto u = static_cast<std::size_t>(d);
      offset_a += plan.stride_a[u];
      offset_b += plan.stride_b[u];
      if (++counter[u] < plan.size[u]) break;
      offset_a -= plan.stride_a[u] * plan.size[u];
      offset_b -= plan.stride_b[u] * plan.size[u];
      counter[u] = 0;
    }
  }
}

// out = f(a, b) with PyTorch broadcasting. `f` takes Eigen arrays or floats on either side
// (a lambda such as [](const auto& p, const auto& q) { return p + q; }).
template <class F>
void binary(const kernel_args& args, std::string_view op_name, F f) {
  if (args.inputs.size() != 2 || args.outputs.size() != 1)
    throw error(fmt::format("node {}: {} takes 2 inputs and gives 1 result, but the kernel got {} inputs and {} outputs",
                            args.node_name, op_name, args.inputs.size(), args.outputs.size()));
  const tensor& a = args.input(0);
  const tensor& b = args.input(1);
  tensor& y = args.output(0);
  const shape_result expected = shape_rules::broadcast(a.shape(), b.shape());
  if (!expected.ok())
    throw error(fmt::format("node {}: {}: the input shapes {} and {} do not broadcast", args.node_name, op_name,
                            to_string(a.shape()), to_string(b.shape())));
  if (!(expected.shapes[0] == y.shape()))
    throw error(fmt::format("node {}: {} of shapes {} and {} gives shape {}, but the output buffer has shape {}",
                            args.node_name, op_name, to_string(a.shape()), to_string(b.shape()),
                            to_string(expected.shapes[0]), to_string(y.shape())));
  check_storage(a, args, op_name, "first input");
  check_storage(b, args, op_name, "second input");
  check_storage(y, args, op_name, "output");
  if (y.size() == 0) return;
  if (a.shape() == b.shape()) {  // the common case: one vectorized pass
    y.array() = f(a.array(), b.array());
    return;
  }
  const broadcast_loops plan = plan_broadcast(a.shape(), b.shape(), y.shape());
  const float* pa = a.data();
  const float* pb = b.data();
  float* py = y.data();
  if (plan.rank == 0) {  // every operand holds one value
    py[0] = f(pa[0], pb[0]);
    return;
  }
  const auto inner = static_cast<std::size_t>(plan.rank - 1);
  const Eigen::Index n = plan.size[inner];
  using in_map = Eigen::Map<const Eigen::ArrayXf>;
  using out_map = Eigen::Map<Eigen::ArrayXf>;
  // The case of the innermost run is decided once, outside the loops.
  if (plan.stride_a[inner] != 0 && plan.stride_b[inner] != 0)
    for_each_run(plan, [&](std::int64_t oa, std::int64_t ob, std::int64_t oy) {
      out_map(py + oy, n) = f(in_map(pa + oa, n), in_map(pb + ob, n));
    });
  else if (plan.stride_a[inner] != 0)
    for_each_run(plan, [&](std::int64_t oa, std::int64_t ob, std::int64_t oy) {
      out_map(py + oy, n) = f(in_map(pa + oa, n), pb[ob]);
    });
  else
    for_each_run(plan, [&](std::int64_t oa, std::int64_t ob, std::int64_t oy) {
      out_map(py + oy, n) = f(pa[oa], in_map(pb + ob, n));
    });
}

// Applies an Eigen binary functor to what binary() passes (arrays or floats on either side); a
// float beside an array becomes a constant array, so the packet path still runs.
template <class Functor, class P, class Q>
auto apply_functor(const P& p, const Q& q) {
  constexpr bool p_scalar = std::is_same_v<P, float>;
  constexpr bool q_scalar = std::is_same_v<Q, float>;
  if constexpr (p_scalar && q_scalar) return Functor{}(p, q);
  else if constexpr (p_scalar) return Eigen::ArrayXf::Constant(q.size(), p).binaryExpr(q, Functor{});
  else if constexpr (q_scalar) return p.binaryExpr(Eigen::ArrayXf::Constant(p.size(), q), Functor{});
  else return p.binaryExpr(q, Functor{});
}
// torch.maximum / minimum give NaN when either operand is NaN; Eigen's default max and min
// return one of the operands.
using nan_propagating_max = Eigen::internal::scalar_max_op<float, float, Eigen::PropagateNaN>;
using nan_propagating_min = Eigen::internal::scalar_min_op<float, float, Eigen::PropagateNaN>;
// The C library's powf (within 1 ulp, every IEEE special case), element by element: PyTorch's
// pow(Tensor, Tensor) is std::pow or SLEEF's 1-ulp pow, with no special-cased exponents.
struct c_library_pow {
  float operator()(float base, float exponent) const { return std::pow(base, exponent); }
};

// torch.where's three operands as loops over the result, the way broadcast_loops does for two:
// size-1 dimensions dropped, adjacent dimensions every operand walks contiguously merged, so the
// innermost loop reads each operand contiguously or as one repeated value.
struct where_loops {
  int rank = 0;
  std::array<std::int64_t, shape::max_rank> size{};
  std::array<std::array<std::int64_t, shape::max_rank>, 3> stride{};
};

inline where_loops plan_where(const std::array<const shape*, 3>& operands, const shape& out) {
  std::array<std::array<std::int64_t, shape::max_rank>, 3> full{};
  for (std::size_t k = 0; k < 3; ++k) {
    const shape& s = *operands[k];
    std::int64_t step = 1;
    for (int i = out.size() - 1; i >= 0; --i) {
      const int j = s.size() - out.size() + i;
      const std::int64_t extent = j >= 0 ? s[j] : 1;
      full[k][static_cast<std::size_t>(i)] = extent == 1 ? 0 : step;
      step *= extent;
    }
  }
  where_loops plan;
  for (int i = 0; i < out.size(); ++i) {
    const auto u = static_cast<std::size_t>(i);
    if (out[i] == 1) continue;
    if (plan.rank > 0) {
      const auto last = static_cast<std::size_t>(plan.rank - 1);
      bool mergeable = true;
      for (std::size_t k = 0; k < 3; ++k) mergeable = mergeable && plan.stride[k][last] == full[k][u] * out[i];
      if (mergeable) {
        plan.size[last] *= out[i];
        for (std::size_t k = 0; k < 3; ++k) plan.stride[k][last] = full[k][u];
        continue;
      }
    }
    const auto next = static_cast<std::size_t>(plan.rank++);
    plan.size[next] = out[i];
    for (std::size_t k = 0; k < 3; ++k) plan.stride[k][next] = full[k][u];
  }
  return plan;
}

}  // namespace elementwise_detail

// ---------------------------------------------------------------------------------------------
// Arithmetic (torch.add, sub, mul, div with true division), broadcasting as PyTorch does.

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::add&, const Args& args) {
  elementwise_detail::binary(args, op::add::name, [](const auto& p, const auto& q) { return p + q; });
}
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::sub&, const Args& args) {
  elementwise_detail::binary(args, op::sub::name, [](const auto& p, const auto& q) { return p - q; });
}
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::mul&, const Args& args) {
  elementwise_detail::binary(args, op::mul::name, [](const auto& p, const auto& q) { return p * q; });
}
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::div&, const Args& args) {
  elementwise_detail::binary(args, op::div::name, [](const auto& p, const auto& q) { return p / q; });
}

// torch.maximum, torch.minimum: broadcasting, NaN when either operand is NaN.
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::maximum&, const Args& args) {
  elementwise_detail::binary(args, op::maximum::name, [](const auto& p, const auto& q) {
    return elementwise_detail::apply_functor<elementwise_detail::nan_propagating_max>(p, q);
  });
}
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::minimum&, const Args& args) {
  elementwise_detail::binary(args, op::minimum::name, [](const auto& p, const auto& q) {
    return elementwise_detail::apply_functor<elementwise_detail::nan_propagating_min>(p, q);
  });
}

// An element-wise op that states its rule for one element (apply: op_with_unary_rule,
// op_with_binary_rule in ir/op/op_base.hpp) gets its float kernel here, with broadcasting for two
// operands: adding such an op (the comparisons, the logic ops) needs no kernel code. The rule is
// the op's own, so the kernel and the ONNX importer's constant folding cannot disagree.
namespace elementwise_detail {
template <class Op>
struct rule_functor {
  float operator()(float a, float b) const noexcept { return Op::apply(a, b); }
};
}  // namespace elementwise_detail

template <class Op, class Args = kernel_args>
  requires op_with_binary_rule<Op>
void float_kernel(const Op&, const Args& args) {
  elementwise_detail::binary(args, Op::name, [](const auto& p, const auto& q) {
    return elementwise_detail::apply_functor<elementwise_detail::rule_functor<Op>>(p, q);
  });
}
template <class Op, class Args = kernel_args>
  requires op_with_unary_rule<Op>
void float_kernel(const Op&, const Args& args) {
  auto [x, y] = elementwise_detail::unary(args, Op::name);
  y = x.unaryExpr([](float a) { return Op::apply(a); });
}

// torch.where(condition, x, y) with the three broadcast together; a nonzero condition (NaN
// included) selects x.
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::where& op, const Args& args) {
  using namespace elementwise_detail;
  if (args.inputs.size() != 3 || args.outputs.size() != 1)
    throw error(fmt::format("node {}: where takes 3 inputs (condition, x, y) and gives 1 result, but the kernel got {} "
                            "inputs and {} outputs",
                            args.node_name, args.inputs.size(), args.outputs.size()));
  const tensor& c = args.input(0);
  const tensor& x = args.input(1);
  const tensor& y = args.input(2);
  tensor& out = args.output(0);
  const std::array<shape, 3> shapes{c.shape(), x.shape(), y.shape()};
  const shape_result expected = op.infer_shapes(shapes);
  if (!expected.ok())
    throw error(fmt::format("node {}: where: the shapes {}, {} and {} of condition, x and y do not broadcast",
                            args.node_name, to_string(c.shape()), to_string(x.shape()), to_string(y.shape())));
  if (!(expected.shapes[0] == out.shape()))
    throw error(fmt::format("node {}: where of shapes {}, {} and {} gives shape {}, but the output buffer has shape {}",
                            args.node_name, to_string(c.shape()), to_string(x.shape()), to_string(y.shape()),
                            to_string(expected.shapes[0]), to_string(out.shape())));
  check_storage(c, args, op::where::name, "condition");
  check_storage(x, args, op::where::name, "x");
  check_storage(y, args, op::where::name, "y");
  check_storage(out, args, op::where::name, "output");
  if (out.size() == 0) return;
  const float* pc = c.data();
  const float* px = x.data();
  const float* py = y.data();
  float* po = out.data();
  const where_loops plan = plan_where({&shapes[0], &shapes[1], &shapes[2]}, out.shape());
  if (plan.rank == 0) {  // every operand holds one value
    po[0] = pc[0] != 0.0f ? px[0] : py[0];
    return;
  }
  const auto inner = static_cast<std::size_t>(plan.rank - 1);
  const std::int64_t n = plan.size[inner];
  const std::int64_t sc = plan.stride[0][inner];
  const std::int64_t sx = plan.stride[1][inner];
  const std::int64_t sy = plan.stride[2][inner];
  std::int64_t runs = 1;
  for (std::size_t d = 0; d < inner; ++d) runs *= plan.size[d];
  std::array<std::int64_t, shape::max_rank> counter{};
  std::array<std::int64_t, 3> offset{};
  for (std::int64_t r = 0; r < runs; ++r, po += n) {
    const float* rc = pc + offset[0];
    const float* rx = px + offset[1];
    const float* ry = py + offset[2];
    if (sc == 1 && sx == 1 && sy == 1)  // the common case, which the compiler turns into vector blends
      for (std::int64_t i = 0; i < n; ++i) po[i] = rc[i] != 0.0f ? rx[i] : ry[i];
    else
      for (std::int64_t i = 0; i < n; ++i) po[i] = rc[i * sc] != 0.0f ? rx[i * sx] : ry[i * sy];
    // Advance the odometer over the outer loops.
    for (int d = static_cast<int>(inner) - 1; d >= 0; --d) {
      const auto u = static_cast<std::size_t>(d);
      for (std::size_t k = 0; k < 3; ++k) offset[k] += plan.stride[k][u];
      if (++counter[u] < plan.size[u]) break;
      for (std::size_t k = 0; k < 3; ++k) offset[k] -= plan.stride[k][u] * plan.size[u];
      counter[u] = 0;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Unary ops. Branches (x > 0 ? … : …) are written without selects, which Eigen 3.4 does not
// vectorize: max(x, 0) + g(min(x, 0)) gives each branch exactly, since g(0) = 0 and adding 0
// changes nothing.

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::pow& op, const Args& args) {
  if (args.inputs.size() == 2) {  // torch.pow(Tensor, Tensor): the exponent attribute is ignored
    elementwise_detail::binary(args, op::pow::name, [](const auto& p, const auto& q) {
      return elementwise_detail::apply_functor<elementwise_detail::c_library_pow>(p, q);
    });
    return;
  }
  auto [x, y] = elementwise_detail::unary(args, op::pow::name);
  const double e = op.exponent;
  // PyTorch computes these exponents by multiplication, division or sqrt rather than pow.
  if (e == 1.0) y = x;
  else if (e == 2.0) y = x * x;
  else if (e == 3.0) y = x * x * x;
  else if (e == 0.5) elementwise_detail::exact_sqrt(x.data(), y.data(), x.size());
  else if (e == -0.5) {
    elementwise_detail::exact_sqrt(x.data(), y.data(), x.size());
    y = y.inverse();
  }
  else if (e == -1.0) y = x.inverse();
  else if (e == -2.0) y = (x * x).inverse();
  else if (e == 0.0) y.setOnes();  // pow(x, 0) is 1 for every x, NaN included
  else {
    // The C library's pow, within 1 ulp, with every special case IEEE defines (negative bases
    // with integral exponents, zeros, infinities). PyTorch rounds the exponent to float too.
    const auto exponent = static_cast<float>(e);
    const float* in = x.data();
    float* out = y.data();
    for (Eigen::Index i = 0; i < x.size(); ++i) out[i] = std::pow(in[i], exponent);
  }
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::sqrt&, const Args& args) {
  auto [x, y] = elementwise_detail::unary(args, op::sqrt::name);
  elementwise_detail::exact_sqrt(x.data(), y.data(), x.size());
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::erf&, const Args& args) {
  auto [x, y] = elementwise_detail::unary(args, op::erf::name);
  y = x.erf();
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::neg&, const Args& args) {
  elementwise_detail::exact_pointwise(args, op::neg::name, [](auto x, auto y) { y = -x; });
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::exp&, const Args& args) {
  auto [x, y] = elementwise_detail::unary(args, op::exp::name);
  y = x.exp();
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::abs&, const Args& args) {
  elementwise_detail::exact_pointwise(args, op::abs::name, [](auto x, auto y) { y = x.abs(); });
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::log&, const Args& args) {
  auto [x, y] = elementwise_detail::unary(args, op::log::name);
  y = x.log();
  // Eigen's vectorized log reads a subnormal input as the smallest normal float (log 2⁻¹²⁶
  // instead of down to log 2⁻¹⁴⁹); PyTorch's is exact there. Those inputs take the C library's.
  const float* in = x.data();
  float* out = y.data();
  for (Eigen::Index i = 0; i < x.size(); ++i)
    if (in[i] > 0.0f && in[i] < std::numeric_limits<float>::min()) out[i] = std::log(in[i]);
}

// 1 / x, one correctly rounded division, as PyTorch computes it.
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::reciprocal&, const Args& args) {
  elementwise_detail::exact_pointwise(args, op::reciprocal::name, [](auto x, auto y) { y = x.inverse(); });
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::floor&, const Args& args) {
  elementwise_detail::exact_pointwise(args, op::floor::name, [](auto x, auto y) { y = x.floor(); });
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::ceil&, const Args& args) {
  elementwise_detail::exact_pointwise(args, op::ceil::name, [](auto x, auto y) { y = x.ceil(); });
}

// PyTorch's (0 < x) - (x < 0): ±0 and NaN give +0. A plain loop of comparisons, which the
// compiler vectorizes.
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::sign&, const Args& args) {
  auto [x, y] = elementwise_detail::unary(args, op::sign::name);
  const float* in = x.data();
  float* out = y.data();
  for (Eigen::Index i = 0; i < x.size(); ++i)
    out[i] = static_cast<float>(in[i] > 0.0f) - static_cast<float>(in[i] < 0.0f);
}

// max(x, 0) keeps a NaN (Eigen's max returns its left operand when either is NaN), as
// torch.relu does.
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::relu&, const Args& args) {
  elementwise_detail::exact_pointwise(args, op::relu::name, [](auto x, auto y) { y = x.max(0.0f); });
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::relu6&, const Args& args) {
  elementwise_detail::exact_pointwise(args, op::relu6::name, [](auto x, auto y) { y = x.max(0.0f).min(6.0f); });
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::leaky_relu& op, const Args& args) {
  auto [x, y] = elementwise_detail::unary(args, op::leaky_relu::name);
  const auto slope = static_cast<float>(op.negative_slope);
  y = x.max(0.0f) + x.min(0.0f) * slope;
}

// torch.nn.PReLU: leaky_relu with a learned slope, one for all elements or one per channel
// (dim 1 of [N, C, *], each channel's values contiguous per sample).
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::prelu& op, const Args& args) {
  auto [x, y] = elementwise_detail::unary(args, op::prelu::name);
  const shape& s = args.input(0).shape();
  const std::int64_t channels = op.num_parameters;
  const shape_result fits = op.infer_shapes(std::span<const shape>(&s, 1));
  if (!fits.ok())
    throw error(fmt::format("node {}: {} (input shape {}, num_parameters {})", args.node_name, fits.error,
                            to_string(s), channels));
  const tensor& weight = args.parameter("weight");
  if (static_cast<std::int64_t>(weight.size()) != channels)
    throw error(fmt::format("node {}: parameter \"weight\" holds {} values but prelu has num_parameters {}; set one "
                            "of shape [{}]",
                            args.node_name, weight.size(), channels, channels));
  const float* w = weight.data();
  if (channels == 1) {
    y = x.max(0.0f) + x.min(0.0f) * w[0];
    return;
  }
  if (x.size() == 0) return;
  const std::int64_t batch = s[0];
  const std::int64_t spatial = x.size() / (batch * channels);
  using in_map = Eigen::Map<const Eigen::ArrayXf>;
  using out_map = Eigen::Map<Eigen::ArrayXf>;
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t c = 0; c < channels; ++c) {
      const std::int64_t offset = (n * channels + c) * spatial;
      const in_map in(x.data() + offset, spatial);
      out_map(y.data() + offset, spatial) = in.max(0.0f) + in.min(0.0f) * w[c];
    }
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::gelu& op, const Args& args) {
  auto [x, y] = elementwise_detail::unary(args, op::gelu::name);
  if (op.approximate_tanh) {
    const auto k = static_cast<float>(elementwise_detail::sqrt_2_over_pi);
    const auto c = static_cast<float>(elementwise_detail::gelu_cubic);
    y = 0.5f * x * (1.0f + (k * (x + c * (x * x * x))).tanh());
  } else {
    y = x * 0.5f * (1.0f + (x * static_cast<float>(elementwise_detail::sqrt1_2)).erf());
  }
}

// x / (1 + exp(-x)) rather than Eigen's logistic(), whose rational approximation is accurate
// only in absolute terms (its relative error reaches 1e-4 for x < -8).
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::silu&, const Args& args) {
  auto [x, y] = elementwise_detail::unary(args, op::silu::name);
  y = x / (1.0f + (-x).exp());
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::sigmoid&, const Args& args) {
  auto [x, y] = elementwise_detail::unary(args, op::sigmoid::name);
  y = (1.0f + (-x).exp()).inverse();
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::tanh&, const Args& args) {
  auto [x, y] = elementwise_detail::unary(args, op::tanh::name);
  y = x.tanh();
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::elu& op, const Args& args) {
  auto [x, y] = elementwise_detail::unary(args, op::elu::name);
  const auto alpha = static_cast<float>(op.alpha);
  y = x.max(0.0f) + x.min(0.0f).expm1() * alpha;
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::selu&, const Args& args) {
  auto [x, y] = elementwise_detail::unary(args, op::selu::name);
  // PyTorch multiplies the negative branch by alpha * scale rounded to float.
  const auto scale = static_cast<float>(elementwise_detail::selu_scale);
  const float alpha_scale = static_cast<float>(elementwise_detail::selu_alpha) * scale;
  y = x.max(0.0f) * scale + x.min(0.0f).expm1() * alpha_scale;
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::softplus& op, const Args& args) {
  auto [x, y] = elementwise_detail::unary(args, op::softplus::name);
  if (op.beta == 0.0)
    throw error(fmt::format("node {}: softplus: beta must be non-zero (the result divides by it)", args.node_name));
  const auto beta = static_cast<float>(op.beta);
  const auto threshold = static_cast<float>(op.threshold);
  y = (x * beta).exp().log1p() / beta;
  // Above the threshold PyTorch returns x itself (the curve is linear to float precision
  // there); a plain loop over raw pointers, which the compiler turns into a vector blend.
  const float* in = x.data();
  float* out = y.data();
  for (Eigen::Index i = 0; i < x.size(); ++i) out[i] = in[i] * beta > threshold ? in[i] : out[i];
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::softsign&, const Args& args) {
  elementwise_detail::exact_pointwise(args, op::softsign::name, [](auto x, auto y) { y = x / (1.0f + x.abs()); });
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::hardswish&, const Args& args) {
  elementwise_detail::exact_pointwise(args, op::hardswish::name, [](auto x, auto y) { y = x * (x + 3.0f).max(0.0f).min(6.0f) / 6.0f; });
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::hardsigmoid&, const Args& args) {
  elementwise_detail::exact_pointwise(args, op::hardsigmoid::name, [](auto x, auto y) { y = (x + 3.0f).max(0.0f).min(6.0f) / 6.0f; });
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::hardtanh& op, const Args& args) {
  auto [x, y] = elementwise_detail::unary(args, op::hardtanh::name);
  if (!(op.min_val <= op.max_val))
    throw error(fmt::format("node {}: hardtanh: min_val ({}) must not exceed max_val ({})", args.node_name, op.min_val,
                            op.max_val));
  y = x.max(static_cast<float>(op.min_val)).min(static_cast<float>(op.max_val));
}

// Inference: dropout passes its input through unscaled (PyTorch's eval mode).
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::dropout&, const Args& args) {
  auto [x, y] = elementwise_detail::unary(args, op::dropout::name);
  if (x.size() > 0) std::memcpy(y.data(), x.data(), static_cast<std::size_t>(x.size()) * sizeof(float));
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::identity&, const Args& args) {
  auto [x, y] = elementwise_detail::unary(args, op::identity::name);
  if (x.size() > 0) std::memcpy(y.data(), x.data(), static_cast<std::size_t>(x.size()) * sizeof(float));
}

// ---------------------------------------------------------------------------------------------
// The exact scalar definitions (PyTorch documentation), in double. NaN propagates through each
// but sign.

// pow with one input (the exponent attribute); a two-input pow is a binary op, not a function of x.
inline double scalar_function(const op::pow& op, double x) { return std::pow(x, op.exponent); }
inline double scalar_function(const op::sqrt&, double x) { return std::sqrt(x); }
inline double scalar_function(const op::erf&, double x) { return std::erf(x); }
inline double scalar_function(const op::neg&, double x) { return -x; }
inline double scalar_function(const op::exp&, double x) { return std::exp(x); }
inline double scalar_function(const op::abs&, double x) { return std::fabs(x); }
inline double scalar_function(const op::log&, double x) { return std::log(x); }
inline double scalar_function(const op::reciprocal&, double x) { return 1.0 / x; }
inline double scalar_function(const op::floor&, double x) { return std::floor(x); }
inline double scalar_function(const op::ceil&, double x) { return std::ceil(x); }
// sign(x) = (0 < x) - (x < 0), PyTorch's definition: 0 for NaN (the one function here that does
// not propagate NaN, as in PyTorch).
inline double scalar_function(const op::sign&, double x) {
  return static_cast<double>(x > 0.0) - static_cast<double>(x < 0.0);
}
// ReLU(x) = max(0, x)
inline double scalar_function(const op::relu&, double x) { return x < 0.0 ? 0.0 : x; }
// ReLU6(x) = min(max(0, x), 6)
inline double scalar_function(const op::relu6&, double x) { return x < 0.0 ? 0.0 : x > 6.0 ? 6.0 : x; }
// LeakyReLU(x) = x if x >= 0, else negative_slope * x
inline double scalar_function(const op::leaky_relu& op, double x) { return x > 0.0 ? x : op.negative_slope * x; }
// GELU(x) = x * Phi(x) = x/2 * (1 + erf(x / sqrt 2)); tanh form:
// x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
inline double scalar_function(const op::gelu& op, double x) {
  using namespace elementwise_detail;
  if (op.approximate_tanh) return 0.5 * x * (1.0 + std::tanh(sqrt_2_over_pi * (x + gelu_cubic * x * x * x)));
  return 0.5 * x * std::erfc(-x * sqrt1_2);  // = x/2 (1 + erf(x/sqrt 2)), without cancellation
}
// SiLU(x) = x * sigmoid(x)
inline double scalar_function(const op::silu&, double x) { return x / (1.0 + std::exp(-x)); }
// Sigmoid(x) = 1 / (1 + exp(-x))
inline double scalar_function(const op::sigmoid&, double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline double scalar_function(const op::tanh&, double x) { return std::tanh(x); }
// ELU(x) = x if x > 0, else alpha * (exp(x) - 1)
inline double scalar_function(const op::elu& op, double x) { return x > 0.0 ? x : op.alpha * std::expm1(x); }
// SELU(x) = scale * (max(0, x) + min(0, alpha * (exp(x) - 1)))
inline double scalar_function(const op::selu&, double x) {
  using namespace elementwise_detail;
  return selu_scale * (x > 0.0 ? x : selu_alpha * std::expm1(x));
}
// Softplus(x) = 1/beta * log(1 + exp(beta x)); x itself where beta x > threshold
inline double scalar_function(const op::softplus& op, double x) {
  return x * op.beta > op.threshold ? x : std::log1p(std::exp(op.beta * x)) / op.beta;
}
// SoftSign(x) = x / (1 + |x|)
inline double scalar_function(const op::softsign&, double x) { return x / (1.0 + std::fabs(x)); }
// Hardswish(x) = x * ReLU6(x + 3) / 6
inline double scalar_function(const op::hardswish&, double x) {
  return x * scalar_function(op::relu6{}, x + 3.0) / 6.0;
}
// Hardsigmoid(x) = ReLU6(x + 3) / 6
inline double scalar_function(const op::hardsigmoid&, double x) { return scalar_function(op::relu6{}, x + 3.0) / 6.0; }
// HardTanh(x) = min_val below min_val, max_val above max_val, else x
inline double scalar_function(const op::hardtanh& op, double x) {
  return x < op.min_val ? op.min_val : x > op.max_val ? op.max_val : x;
}

// The ops a lookup table can stand for: one input, one result, a function of each element.
template <class Op>
concept has_scalar_function = requires(const Op& op, double x) {
  { scalar_function(op, x) } -> std::same_as<double>;
};

}  // namespace mase::eval
