#pragma once
// Float kernels of the normalisations (layer_norm, group_norm, rms_norm, instance_norm,
// batch_norm1d/2d/3d), softmax and log_softmax, and the reductions (mean, sum, amax, amin), with
// PyTorch's CPU semantics.
//
// Statistics are accumulated in float, as PyTorch's CPU kernels do for float32 tensors. Means and
// variances are two-pass: the mean first, then the mean of the squared deviations from it (PyTorch
// uses a vectorised Welford; both are stable, two-pass is the simpler of the two and never yields a
// negative variance). The normalised value is written as x * scale + shift, with scale and shift
// per row or per channel, in the order PyTorch's kernels use, so results agree to a few ulps.
//
// Every loop runs over contiguous memory through Eigen maps (the rows of layer_norm, rms_norm and
// a last-dimension softmax; one channel plane at a time for group and batch norm). Working memory
// comes from the node's scratch buffer, so a steady-state run does not allocate.

#include <mase/core/tensor_eigen.hpp>
#include <mase/eval/kernel.hpp>
#include <mase/ir/ops.hpp>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

#include <fmt/core.h>

namespace mase::eval {

namespace normalization_detail {

using const_array_map = Eigen::Map<const Eigen::ArrayXf>;
using array_map = Eigen::Map<Eigen::ArrayXf>;
using row_major_array = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using const_block_map = Eigen::Map<const row_major_array>;
using block_map = Eigen::Map<row_major_array>;
using row_map = Eigen::Map<Eigen::Array<float, 1, Eigen::Dynamic>>;


// A parameter the op declares, checked to hold `count` values (the graph checks shapes when
// parameters are set; a kernel called directly does not go through it).
inline const float* parameter_data(const kernel_args& args, std::string_view role, std::int64_t count) {
  const tensor& p = args.parameter(role);
  if (static_cast<std::int64_t>(p.size()) != count)
    throw error(fmt::format("node {}: parameter \"{}\" holds {} values but the op needs {}; set one of shape [{}]",
                            args.node_name, role, p.size(), count, count));
  return p.data();
}

struct moments {
  float mean;
  float inverse_std;  // 1 / sqrt(biased variance + eps)
};

// Two-pass mean and biased variance of `values`, in float.
inline moments two_pass_moments(const const_array_map& values, float eps) {
  const float count = static_cast<float>(values.size());
  const float mean = values.sum() / count;
  const float variance = (values - mean).square().sum() / count;
  return {mean, 1.0f / std::sqrt(variance + eps)};
}

// Eigen's float exp clamps its argument at about -88.7, so exp(-inf) (a masked attention score)
// comes out as ~1.7e-39 instead of 0. Results below the smallest normal float are flushed to 0:
// PyTorch gives exactly 0 for masked entries, and the flush changes no value by more than 2⁻¹²⁶.
// One vectorised min per block; the scalar pass only runs when something is that small.
template <class Block>
inline void flush_subnormal(Block&& values) {
  constexpr float smallest_normal = std::numeric_limits<float>::min();
  if (!(values.minCoeff() < smallest_normal)) return;
  for (Eigen::Index i = 0; i < values.rows(); ++i)
    for (Eigen::Index j = 0; j < values.cols(); ++j)
      if (values(i, j) < smallest_normal) values(i, j) = 0.0f;
}

inline std::int64_t product(const dims& d) {
  std::int64_t n = 1;
  for (std::int64_t v : d) n *= v;
  return n;
}

// Batch norm at inference is y = x * alpha[c] + beta[c] per channel c (PyTorch folds it the
// same way). Input [N, C, S...] with `spatial` = prod(S) (1 for [N, C]).
inline void apply_per_channel(const tensor& x, tensor& y, std::int64_t batch, std::int64_t channels,
                              std::int64_t spatial, const float* alpha, const float* beta) {
  if (spatial == 1) {
    // [N, C]: the channels are the contiguous last dimension; one vectorised pass over rows.
    const const_block_map in(x.data(), batch, channels);
    block_map out(y.data(), batch, channels);
    const Eigen::Map<const Eigen::Array<float, 1, Eigen::Dynamic>> a(alpha, channels);
    const Eigen::Map<const Eigen::Array<float, 1, Eigen::Dynamic>> b(beta, channels);
    out = (in.rowwise() * a).rowwise() + b;
    return;
  }
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t c = 0; c < channels; ++c) {
      const std::int64_t offset = (n * channels + c) * spatial;
      array_map(y.data() + offset, spatial) = const_array_map(x.data() + offset, spatial) * alpha[c] + beta[c];
    }
}

template <class Op>
inline void batch_norm(const Op& op, const kernel_args& args) {
  check_unary_kernel_shapes(op, args);
  const tensor& x = args.input(0);
  tensor& y = args.output();
  const std::int64_t batch = x.shape()[0];
  const std::int64_t channels = op.num_features;
  std::int64_t spatial = 1;  // L of [N, C, L], H * W of [N, C, H, W], D * H * W of [N, C, D, H, W]
  for (int d = 2; d < x.rank(); ++d) spatial *= x.shape()[d];
  const float* weight = op.affine ? normalization_detail::parameter_data(args, "weight", channels) : nullptr;
  const float* bias = op.affine ? normalization_detail::parameter_data(args, "bias", channels) : nullptr;
  const float eps = static_cast<float>(op.eps);

  std::vector<float>& scratch = args.scratch_buffer(2 * static_cast<std::size_t>(channels));
  float* alpha = scratch.data();
  float* beta = scratch.data() + channels;
  if (op.track_running_stats) {
    const float* running_mean = normalization_detail::parameter_data(args, "running_mean", channels);
    const float* running_var = normalization_detail::parameter_data(args, "running_var", channels);
    for (std::int64_t c = 0; c < channels; ++c) {
      const float inverse_std = 1.0f / std::sqrt(running_var[c] + eps);
      alpha[c] = inverse_std * (weight ? weight[c] : 1.0f);
      beta[c] = (bias ? bias[c] : 0.0f) - running_mean[c] * alpha[c];
    }
  } else {
    // Without running statistics PyTorch normalises with the batch's own statistics even in
    // eval(), and refuses exactly one value per channel (its variance would be 0).
    const std::int64_t count = batch * spatial;
    if (count == 1)
      throw error(
          fmt::format("node {}: {} without running statistics normalises with the batch's statistics, "
                      "which needs more than 1 value per channel; the input has shape {}",
                      args.node_name, Op::name, to_string(x.shape())));
    for (std::int64_t c = 0; c < channels; ++c) {
      float sum = 0.0f;
      for (std::int64_t n = 0; n < batch; ++n)
        sum += const_array_map(x.data() + (n * channels + c) * spatial, spatial).sum();
      const float mean = sum / static_cast<float>(count);
      float squares = 0.0f;
      for (std::int64_t n = 0; n < batch; ++n)
        squares += (const_array_map(x.data() + (n * channels + c) * spatial, spatial) - mean).square().sum();
      const float inverse_std = 1.0f / std::sqrt(squares / static_cast<float>(count) + eps);
      alpha[c] = inverse_std * (weight ? weight[c] : 1.0f);
      beta[c] = (bias ? bias[c] : 0.0f) - mean * alpha[c];
    }
  }
  apply_per_channel(x, y, batch, channels, spatial, alpha, beta);
}

// torch.nn.LayerNorm: each row of prod(normalized_shape) trailing values is normalised by its
// own mean and variance, then scaled and shifted elementwise. PyTorch's order:
// (x * rstd + (-mean * rstd)) * weight + bias.
inline void run(const op::layer_norm& op, const kernel_args& args) {
  check_unary_kernel_shapes(op, args);
  const tensor& x = args.input(0);
  tensor& y = args.output();
  const std::int64_t width = normalization_detail::product(op.normalized_shape);
  const std::int64_t rows = static_cast<std::int64_t>(x.size()) / width;
  const float* weight = op.elementwise_affine ? normalization_detail::parameter_data(args, "weight", width) : nullptr;
  const float* bias =
      op.elementwise_affine && op.bias ? normalization_detail::parameter_data(args, "bias", width) : nullptr;
  const float eps = static_cast<float>(op.eps);
  for (std::int64_t r = 0; r < rows; ++r) {
    const const_array_map in(x.data() + r * width, width);
    array_map out(y.data() + r * width, width);
    const moments m = two_pass_moments(in, eps);
    const float shift = -m.mean * m.inverse_std;
    if (weight == nullptr) out = in * m.inverse_std + shift;
    else if (bias == nullptr) out = (in * m.inverse_std + shift) * const_array_map(weight, width);
    else out = (in * m.inverse_std + shift) * const_array_map(weight, width) + const_array_map(bias, width);
  }
}

// torch.nn.GroupNorm: input [N, C, *]; the C/G channels of a group and their spatial values are
// one contiguous block per sample, normalised together; the affine part is per channel.
inline void run(const op::group_norm& op, const kernel_args& args) {
  check_unary_kernel_shapes(op, args);
  const tensor& x = args.input(0);
  tensor& y = args.output();
  const std::int64_t batch = x.shape()[0];
  const std::int64_t channels = op.num_channels;
  const std::int64_t spatial = batch == 0 ? 0 : static_cast<std::int64_t>(x.size()) / (batch * channels);
  const std::int64_t group_channels = channels / op.num_groups;
  const float* weight = op.affine ? normalization_detail::parameter_data(args, "weight", channels) : nullptr;
  const float* bias = op.affine ? normalization_detail::parameter_data(args, "bias", channels) : nullptr;
  const float eps = static_cast<float>(op.eps);
  if (spatial == 0) return;
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t g = 0; g < op.num_groups; ++g) {
      const std::int64_t group_offset = (n * channels + g * group_channels) * spatial;
      const moments m = two_pass_moments(const_array_map(x.data() + group_offset, group_channels * spatial), eps);
      for (std::int64_t k = 0; k < group_channels; ++k) {
        const std::int64_t c = g * group_channels + k;
        const float scale = weight ? m.inverse_std * weight[c] : m.inverse_std;
        const float shift = (bias ? bias[c] : 0.0f) - m.mean * scale;
        const std::int64_t offset = group_offset + k * spatial;
        array_map(y.data() + offset, spatial) = const_array_map(x.data() + offset, spatial) * scale + shift;
      }
    }
}

// Instance norm (torch.nn.InstanceNorm*d without running statistics): input [N, C, *]; each
// channel of each sample is one contiguous block, normalised by its own statistics, then the
// per-channel affine part. PyTorch computes it as batch norm with batch statistics over
// [1, N·C, *]: y = x * alpha + beta with alpha = rstd * weight, beta = bias - mean * alpha.
inline void run(const op::instance_norm& op, const kernel_args& args) {
  check_unary_kernel_shapes(op, args);
  const tensor& x = args.input(0);
  tensor& y = args.output();
  const std::int64_t batch = x.shape()[0];
  const std::int64_t channels = op.num_features;
  const float* weight = op.affine ? normalization_detail::parameter_data(args, "weight", channels) : nullptr;
  const float* bias = op.affine ? normalization_detail::parameter_data(args, "bias", channels) : nullptr;
  const float eps = static_cast<float>(op.eps);
  if (x.size() == 0) return;
  const std::int64_t spatial = static_cast<std::int64_t>(x.size()) / (batch * channels);
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t c = 0; c < channels; ++c) {
      const std::int64_t offset = (n * channels + c) * spatial;
      const const_array_map in(x.data() + offset, spatial);
      const moments m = two_pass_moments(in, eps);
      const float alpha = weight ? m.inverse_std * weight[c] : m.inverse_std;
      const float beta = (bias ? bias[c] : 0.0f) - m.mean * alpha;
      array_map(y.data() + offset, spatial) = in * alpha + beta;
    }
}

// torch.nn.RMSNorm (PyTorch 2.4): x * rsqrt(mean(x², over normalized_shape) + eps) * weight.
inline void run(const op::rms_norm& op, const kernel_args& args) {
  check_unary_kernel_shapes(op, args);
  const tensor& x = args.input(0);
  tensor& y = args.output();
  const std::int64_t width = normalization_detail::product(op.normalized_shape);
  const std::int64_t rows = static_cast<std::int64_t>(x.size()) / width;
  const float* weight = op.elementwise_affine ? normalization_detail::parameter_data(args, "weight", width) : nullptr;
  const float eps = static_cast<float>(op.eps);
  for (std::int64_t r = 0; r < rows; ++r) {
    const const_array_map in(x.data() + r * width, width);
    array_map out(y.data() + r * width, width);
    const float mean_square = in.square().sum() / static_cast<float>(width);
    const float inverse_rms = 1.0f / std::sqrt(mean_square + eps);
    if (weight == nullptr) out = in * inverse_rms;
    else out = (in * inverse_rms) * const_array_map(weight, width);
  }
}

// A non-empty tensor as [outer, length, inner] around dimension `dim` (a scalar as [1, 1, 1]):
// the layout softmax and log_softmax reduce along.
struct dim_split {
  std::int64_t outer = 1;
  std::int64_t length = 1;
  std::int64_t inner = 1;
};
inline dim_split split_around(const tensor& x, std::int64_t dim) {
  const shape& s = x.shape();
  dim_split split;
  if (s.size() > 0) {
    const int d = shape_rules::normalize_dim_scalar_ok(dim, s.size());
    split.length = s[d];
    for (int i = d + 1; i < s.size(); ++i) split.inner *= s[i];
  }
  split.outer = static_cast<std::int64_t>(x.size()) / (split.length * split.inner);
  return split;
}

// torch.softmax along dim, stable: exp(x - max) / sum, the sum applied as one reciprocal per
// row as PyTorch's vectorised kernel does. A NaN anywhere in a row makes the row NaN; -inf
// entries (masks) get exactly 0.
inline void run(const op::softmax& op, const kernel_args& args) {
  check_unary_kernel_shapes(op, args);
  const tensor& x = args.input(0);
  tensor& y = args.output();
  if (x.size() == 0) return;
  const auto [outer, length, inner] = split_around(x, op.dim);
  if (inner == 1) {
    // The contiguous case (attention scores, classifier logits): one row at a time.
    for (std::int64_t r = 0; r < outer; ++r) {
      const const_array_map in(x.data() + r * length, length);
      array_map out(y.data() + r * length, length);
      const float max = in.maxCoeff();
      out = (in - max).exp();
      flush_subnormal(out);
      out *= 1.0f / out.sum();
    }
    return;
  }
  // Along an inner dimension: each outer slice is a [length, inner] block reduced down its
  // columns, vectorised across the inner dimension.
  std::vector<float>& scratch = args.scratch_buffer(static_cast<std::size_t>(inner));
  row_map column_stat(scratch.data(), inner);
  for (std::int64_t o = 0; o < outer; ++o) {
    const const_block_map in(x.data() + o * length * inner, length, inner);
    block_map out(y.data() + o * length * inner, length, inner);
    column_stat = in.colwise().maxCoeff();
    out = (in.rowwise() - column_stat).exp();
    flush_subnormal(out);
    column_stat = out.colwise().sum().inverse();
    out.rowwise() *= column_stat;
  }
}

// torch.log_softmax along dim, stable: (x - max) - log(sum(exp(x - max))), in PyTorch's order.
// A NaN anywhere in a row makes the row NaN, as does +inf or a row of only -inf (as in PyTorch);
// a -inf entry beside finite ones gives -inf.
inline void run(const op::log_softmax& op, const kernel_args& args) {
  check_unary_kernel_shapes(op, args);
  const tensor& x = args.input(0);
  tensor& y = args.output();
  if (x.size() == 0) return;
  const auto [outer, length, inner] = split_around(x, op.dim);
  if (inner == 1) {
    for (std::int64_t r = 0; r < outer; ++r) {
      const const_array_map in(x.data() + r * length, length);
      array_map out(y.data() + r * length, length);
      out = in - in.maxCoeff();
      out -= std::log(out.exp().sum());
    }
    return;
  }
  // Along an inner dimension: [length, inner] blocks reduced down their columns, as softmax.
  std::vector<float>& scratch = args.scratch_buffer(static_cast<std::size_t>(inner));
  row_map column_stat(scratch.data(), inner);
  for (std::int64_t o = 0; o < outer; ++o) {
    const const_block_map in(x.data() + o * length * inner, length, inner);
    block_map out(y.data() + o * length * inner, length, inner);
    column_stat = in.colwise().maxCoeff();
    out = in.rowwise() - column_stat;
    column_stat = out.exp().colwise().sum().log();
    out.rowwise() -= column_stat;
  }
}

// A reduction (mean, sum, amax, amin) of x over the dimensions in `reduced` into y, which the
// shape rule sized. y starts at `init`; fold_block(acc, block) folds a contiguous block of
// reduced values into one result, fold_run(results, block) folds a block of as many values as
// results into them, element by element. keepdim changes only the shape, not the order.
template <class FoldBlock, class FoldRun>
inline void reduce(const tensor& x, tensor& y, const std::array<bool, shape::max_rank>& reduced, float init,
                   FoldBlock fold_block, FoldRun fold_run) {
  const shape& s = x.shape();
  y.array().setConstant(init);
  if (x.size() == 0) return;
  // Collapse the shape into runs of adjacent dimensions that are all kept or all reduced,
  // dropping size-1 dimensions (they change no offsets): [K0, R0, K1, …]. The input is then
  // a sequence of contiguous blocks, each the innermost run.
  std::array<std::int64_t, shape::max_rank> run_size{};
  std::array<bool, shape::max_rank> run_reduced{};
  int runs = 0;
  for (int d = 0; d < s.size(); ++d) {
    const auto i = static_cast<std::size_t>(d);
    if (s[d] == 1) continue;
    if (runs > 0 && run_reduced[static_cast<std::size_t>(runs - 1)] == reduced[i]) {
      run_size[static_cast<std::size_t>(runs - 1)] *= s[d];
    } else {
      run_size[static_cast<std::size_t>(runs)] = s[d];
      run_reduced[static_cast<std::size_t>(runs)] = reduced[i];
      ++runs;
    }
  }
  if (runs == 0) {
    run_size[0] = 1;
    run_reduced[0] = false;
    runs = 1;
  }
  // How far the output offset moves per step of each run (0 for reduced runs).
  std::array<std::int64_t, shape::max_rank> out_stride{};
  std::int64_t stride = 1;
  for (int r = runs - 1; r >= 0; --r) {
    const auto i = static_cast<std::size_t>(r);
    out_stride[i] = run_reduced[i] ? 0 : stride;
    if (!run_reduced[i]) stride *= run_size[i];
  }

  const auto last = static_cast<std::size_t>(runs - 1);
  const std::int64_t inner = run_size[last];
  const bool inner_reduced = run_reduced[last];
  const std::int64_t blocks = static_cast<std::int64_t>(x.size()) / inner;
  std::array<std::int64_t, shape::max_rank> position{};
  std::int64_t out_offset = 0;
  for (std::int64_t b = 0; b < blocks; ++b) {
    const const_array_map block(x.data() + b * inner, inner);
    if (inner_reduced) fold_block(y.data()[out_offset], block);
    else fold_run(array_map(y.data() + out_offset, inner), block);
    // Advance the odometer over the outer runs.
    for (int r = runs - 2; r >= 0; --r) {
      const auto i = static_cast<std::size_t>(r);
      if (++position[i] < run_size[i]) {
        out_offset += out_stride[i];
        break;
      }
      position[i] = 0;
      out_offset -= (run_size[i] - 1) * out_stride[i];
    }
  }
}

// The dimensions a reduction op covers (its shape rule has checked them).
template <class Op>
inline std::array<bool, shape::max_rank> reduced_dims_of(const Op& op, const tensor& x) {
  return shape_rules::reduction_mask(op.dim, x.shape().size(), {.out_of_range = "", .repeated = ""}).mask;
}

inline void sum_into(const tensor& x, tensor& y, const std::array<bool, shape::max_rank>& reduced) {
  reduce(x, y, reduced, 0.0f, [](float& acc, const const_array_map& block) { acc += block.sum(); },
         [](array_map acc, const const_array_map& block) { acc += block; });
}

// torch.sum(x, dim, keepdim): float sums, blocks summed by Eigen's vectorised reduction. An empty
// reduction gives 0, as in PyTorch.
inline void run(const op::sum& op, const kernel_args& args) {
  check_unary_kernel_shapes(op, args);
  sum_into(args.input(0), args.output(), reduced_dims_of(op, args.input(0)));
}

// torch.mean(x, dim, keepdim): the sum over the reduced dimensions divided by their element
// count, as PyTorch's CPU mean does (sum, then one division). An empty reduction gives NaN
// (0 / 0), as in PyTorch.
inline void run(const op::mean& op, const kernel_args& args) {
  check_unary_kernel_shapes(op, args);
  const tensor& x = args.input(0);
  tensor& y = args.output();
  const std::array<bool, shape::max_rank> reduced = reduced_dims_of(op, x);
  if (x.size() == 0) {
    y.array().setConstant(std::numeric_limits<float>::quiet_NaN());
    return;
  }
  std::int64_t count = 1;
  for (int d = 0; d < x.shape().size(); ++d)
    if (reduced[static_cast<std::size_t>(d)]) count *= x.shape()[d];
  sum_into(x, y, reduced);
  y.array() /= static_cast<float>(count);
}

// torch.amax / amin: the extreme value, NaN when any reduced value is NaN (Eigen's NaN-propagating
// max and min). The shape rule refuses reductions over no values.
inline void run(const op::amax& op, const kernel_args& args) {
  check_unary_kernel_shapes(op, args);
  using functor = Eigen::internal::scalar_max_op<float, float, Eigen::PropagateNaN>;
  reduce(args.input(0), args.output(), reduced_dims_of(op, args.input(0)), -std::numeric_limits<float>::infinity(),
         [](float& acc, const const_array_map& block) {
           acc = functor{}(acc, block.template maxCoeff<Eigen::PropagateNaN>());
         },
         [](array_map acc, const const_array_map& block) { acc = acc.binaryExpr(block, functor{}); });
}
inline void run(const op::amin& op, const kernel_args& args) {
  check_unary_kernel_shapes(op, args);
  using functor = Eigen::internal::scalar_min_op<float, float, Eigen::PropagateNaN>;
  reduce(args.input(0), args.output(), reduced_dims_of(op, args.input(0)), std::numeric_limits<float>::infinity(),
         [](float& acc, const const_array_map& block) {
           acc = functor{}(acc, block.template minCoeff<Eigen::PropagateNaN>());
         },
         [](array_map acc, const const_array_map& block) { acc = acc.binaryExpr(block, functor{}); });
}

}  // namespace normalization_detail

// The float kernels, documented above. Their bodies live in normalization_detail and call the
// helpers that take kernel_args qualified, so that a same-named function elsewhere in mase::eval
// (which argument-dependent lookup would also find) cannot make a call ambiguous.
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::layer_norm& op, const Args& args) { normalization_detail::run(op, args); }
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::group_norm& op, const Args& args) { normalization_detail::run(op, args); }
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::rms_norm& op, const Args& args) { normalization_detail::run(op, args); }
// torch.nn.BatchNorm1d / BatchNorm2d / BatchNorm3d in eval() (one kernel: a per-channel affine map
// over however many spatial elements): running statistics when tracked, otherwise the
// batch's own (what PyTorch does in eval() with track_running_stats=False).
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::batch_norm1d& op, const Args& args) {
  normalization_detail::batch_norm(op, args);
}
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::batch_norm2d& op, const Args& args) {
  normalization_detail::batch_norm(op, args);
}
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::batch_norm3d& op, const Args& args) {
  normalization_detail::batch_norm(op, args);
}
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::softmax& op, const Args& args) { normalization_detail::run(op, args); }
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::mean& op, const Args& args) { normalization_detail::run(op, args); }
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::sum& op, const Args& args) { normalization_detail::run(op, args); }
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::amax& op, const Args& args) { normalization_detail::run(op, args); }
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::amin& op, const Args& args) { normalization_detail::run(op, args); }
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::log_softmax& op, const Args& args) { normalization_detail::run(op, args); }
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::instance_norm& op, const Args& args) { normalization_detail::run(op, args); }

}  // namespace mase::eval
