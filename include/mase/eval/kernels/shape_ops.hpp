#pragma once
// Float kernels of the shape ops. Tensors are contiguous row-major, so the ops that only relabel
// the shape (flatten, reshape, view, squeeze, unsqueeze, getitem) are one memcpy, and the ops
// that move elements (permute, transpose, cat, split, slice) are strided copies whose innermost
// contiguous runs are memcpys. gather reads one element per index; index_select copies one
// contiguous block per index. pad, tile and expand write each output row from the input row it
// reads (memcpy for the runs that are contiguous in both).
//
// Each kernel first checks its output buffers against the op's shape rule (a few comparisons per
// call), so a kernel called with mismatched buffers reports it instead of reading out of bounds.

#include <mase/core/error.hpp>
#include <mase/core/shape.hpp>
#include <mase/core/tensor.hpp>
#include <mase/eval/kernel.hpp>
#include <mase/ir/op/shape_rules.hpp>
#include <mase/ir/op/expand.hpp>
#include <mase/ir/op/index_select.hpp>
#include <mase/ir/op/pad.hpp>
#include <mase/ir/op/tile.hpp>
#include <mase/ir/ops.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace mase::eval {

namespace shape_ops_detail {

inline std::string shapes_text(std::span<const tensor* const> tensors) {
  std::string text;
  for (const tensor* t : tensors) text += fmt::format("{}{}", text.empty() ? "" : ", ", to_string(t->shape()));
  return text;
}
inline std::string shapes_text(std::span<const tensor> tensors) {
  std::string text;
  for (const tensor& t : tensors) text += fmt::format("{}{}", text.empty() ? "" : ", ", to_string(t.shape()));
  return text;
}

// Throws unless the op's shape rule accepts the inputs and gives exactly the output buffers'
// shapes. Allocates nothing unless an op has more than 16 inputs (a large cat).
template <class Op>
void check_shapes(const Op& op, const kernel_args& args) {
  constexpr std::size_t on_stack = 16;
  std::array<shape, on_stack> stack_shapes;
  std::vector<shape> heap_shapes;
  std::span<shape> in(stack_shapes.data(), std::min(args.inputs.size(), on_stack));
  if (args.inputs.size() > on_stack) {
    heap_shapes.resize(args.inputs.size());
    in = heap_shapes;
  }
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = args.inputs[i]->shape();
  bool count_ok = !in.empty();
  if constexpr (!requires { Op::takes_all_results; }) count_ok = Op::inputs.accepts(in.size());
  if (!count_ok)
    throw error(fmt::format("node {}: {} takes between {} and {} inputs, but the kernel got {}", args.node_name,
                            Op::name, Op::inputs.min, Op::inputs.max, in.size()));
  const shape_result expected = op.infer_shapes(in);
  if (!expected.ok())
    throw error(fmt::format("node {}: {} (input shapes {})", args.node_name, expected.error, shapes_text(args.inputs)));
  const bool same = static_cast<std::size_t>(expected.shapes.size()) == args.outputs.size() &&
                    std::equal(expected.shapes.begin(), expected.shapes.end(), args.outputs.begin(),
                               [](const shape& s, const tensor& t) { return s == t.shape(); });
  if (!same) {
    std::string want;
    for (const shape& s : expected.shapes) want += fmt::format("{}{}", want.empty() ? "" : ", ", to_string(s));
    throw error(fmt::format("node {}: {} of input shapes {} gives results of shapes {}, but the output buffers have "
                            "shapes {}; size them from the op's shape rule",
                            args.node_name, Op::name, shapes_text(args.inputs), want, shapes_text(args.outputs)));
  }
  // Storage that does not match the shape (a default-constructed tensor has shape [] and no
  // values) would be read or written out of bounds.
  const auto check_storage = [&](const tensor& t, std::string_view role) {
    if (t.size() != static_cast<std::size_t>(t.shape().numel()))
      throw error(fmt::format("node {}: {}: an {} tensor has shape {} but holds {} values; size it with tensor(shape)",
                              args.node_name, Op::name, role, to_string(t.shape()), t.size()));
  };
  for (const tensor* t : args.inputs) check_storage(*t, "input");
  for (const tensor& t : args.outputs) check_storage(t, "output");
}

// Row-major strides of `s`.
inline std::array<std::int64_t, shape::max_rank> strides_of(const shape& s) {
  std::array<std::int64_t, shape::max_rank> strides{};
  std::int64_t step = 1;
  for (int i = s.size() - 1; i >= 0; --i) {
    strides[static_cast<std::size_t>(i)] = step;
    step *= s[i];
  }
  return strides;
}

inline void copy_values(const tensor& from, tensor& to) {
  if (from.size() > 0) std::memcpy(to.data(), from.data(), from.size_in_bytes());
}

// A copy between two strided layouts as nested loops, outermost first. Loops of one iteration
// are dropped and a loop is merged into the one outside it when both sides step over it
// contiguously, so a copy that moves whole blocks becomes few loops around long runs.
struct copy_loops {
  int rank = 0;
  std::array<std::int64_t, shape::max_rank> size{};
  std::array<std::int64_t, shape::max_rank> from_stride{};
  std::array<std::int64_t, shape::max_rank> to_stride{};

  // Adds the next loop inward.
  void push(std::int64_t n, std::int64_t from, std::int64_t to) {
    if (n == 1) return;
    if (rank > 0) {
      const auto last = static_cast<std::size_t>(rank - 1);
      if (from_stride[last] == from * n && to_stride[last] == to * n) {
        size[last] *= n;
        from_stride[last] = from;
        to_stride[last] = to;
        return;
      }
    }
    const auto k = static_cast<std::size_t>(rank++);
    size[k] = n;
    from_stride[k] = from;
    to_stride[k] = to;
  }
};

// Calls body(from_offset, to_offset) for every combination of the first `outer` loops.
template <class Body>
void for_each_outer(const copy_loops& loops, int outer, Body&& body) {
  std::int64_t count = 1;
  for (int d = 0; d < outer; ++d) count *= loops.size[static_cast<std::size_t>(d)];
  std::array<std::int64_t, shape::max_rank> counter{};
  std::int64_t from = 0;
  std::int64_t to = 0;
  for (std::int64_t r = 0; r < count; ++r) {
    body(from, to);
    for (int d = outer - 1; d >= 0; --d) {
      const auto u = static_cast<std::size_t>(d);
      from += loops.from_stride[u];
      to += loops.to_stride[u];
      if (++counter[u] < loops.size[u]) break;
      from -= loops.from_stride[u] * loops.size[u];
      to -= loops.to_stride[u] * loops.size[u];
      counter[u] = 0;
    }
  }
}

// Runs the loops, copying from[...] to to[...]. The caller has checked that no size is zero.
inline void copy_strided(const float* from, float* to, const copy_loops& loops) {
  if (loops.rank == 0) {
    to[0] = from[0];
    return;
  }
  const auto inner = static_cast<std::size_t>(loops.rank - 1);
  const std::int64_t n = loops.size[inner];
  if (loops.from_stride[inner] == 1 && loops.to_stride[inner] == 1) {
    const auto bytes = static_cast<std::size_t>(n) * sizeof(float);
    for_each_outer(loops, loops.rank - 1,
                   [&](std::int64_t f, std::int64_t t) { std::memcpy(to + t, from + f, bytes); });
    return;
  }
  const std::int64_t fb = loops.from_stride[inner];
  const std::int64_t tb = loops.to_stride[inner];
  const std::int64_t fa = loops.rank > 1 ? loops.from_stride[inner - 1] : 0;
  const std::int64_t ta = loops.rank > 1 ? loops.to_stride[inner - 1] : 0;
  if (loops.rank == 1 || (fa >= fb && ta >= tb)) {
    // Both sides advance along the inner loop no faster than along the outer one (a strided
    // slice): row by row.
    for_each_outer(loops, loops.rank - 1, [&](std::int64_t f, std::int64_t t) {
      for (std::int64_t j = 0; j < n; ++j) to[t + j * tb] = from[f + j * fb];
    });
    return;
  }
  // A transpose: one side walks the inner loop across lines. The two innermost loops go in
  // small square tiles so that the lines read stay in cache while the other side is written.
  // 8 keeps a tile's lines apart in cache sets even when the lines are a power of two apart
  // (larger tiles thrash there: a 1024x1024 transpose runs 3-5x slower with 32).
  constexpr std::int64_t tile = 8;
  const std::int64_t m = loops.size[inner - 1];
  for_each_outer(loops, loops.rank - 2, [&](std::int64_t f, std::int64_t t) {
    for (std::int64_t a0 = 0; a0 < m; a0 += tile) {
      const std::int64_t a1 = std::min(m, a0 + tile);
      for (std::int64_t b0 = 0; b0 < n; b0 += tile) {
        const std::int64_t b1 = std::min(n, b0 + tile);
        for (std::int64_t a = a0; a < a1; ++a)
          for (std::int64_t b = b0; b < b1; ++b) to[t + a * ta + b * tb] = from[f + a * fa + b * fb];
      }
    }
  });
}

// y = x with its dimensions reordered: result dimension i is input dimension order[i].
inline void permute_into(const tensor& x, tensor& y, const std::array<int, shape::max_rank>& order) {
  if (y.size() == 0) return;
  const auto from = strides_of(x.shape());
  const auto to = strides_of(y.shape());
  copy_loops loops;
  for (int i = 0; i < y.rank(); ++i) {
    const auto u = static_cast<std::size_t>(i);
    loops.push(y.shape()[i], from[static_cast<std::size_t>(order[u])], to[u]);
  }
  copy_strided(x.data(), y.data(), loops);
}

// y = x[..., start : start + step * y.shape[d] : step, ...] along dimension d.
inline void slice_into(const tensor& x, tensor& y, int d, std::int64_t start, std::int64_t step) {
  if (y.size() == 0) return;
  const auto from = strides_of(x.shape());
  const auto to = strides_of(y.shape());
  copy_loops loops;
  for (int i = 0; i < y.rank(); ++i) {
    const auto u = static_cast<std::size_t>(i);
    loops.push(y.shape()[i], i == d ? from[u] * step : from[u], to[u]);
  }
  copy_strided(x.data() + start * from[static_cast<std::size_t>(d)], y.data(), loops);
}

// The input coordinate that coordinate `o` of a padded dimension reads, or -1 where constant mode
// fills. `before` and `after` are the dimension's pad entries, `length` its input size (op::pad's
// shape rule has accepted them).
inline std::int64_t pad_source(std::int64_t mode, std::int64_t o, std::int64_t before, std::int64_t after,
                               std::int64_t length) noexcept {
  const std::int64_t i = o - before;
  if (i >= 0 && i < length) return i;
  switch (mode) {
    case op::pad::reflect_mode: return i < 0 ? -i : 2 * (length - 1) - i;
    case op::pad::replicate_mode: return i < 0 ? 0 : length - 1;
    case op::pad::circular_mode: {
      // PyTorch wraps around what is left after cropping.
      const std::int64_t first = before < 0 ? -before : 0;
      const std::int64_t kept = length - first - (after < 0 ? -after : 0);
      const std::int64_t r = (i - first) % kept;
      return first + (r < 0 ? r + kept : r);
    }
    default: return -1;
  }
}

// Advances the counter of an output row (the dimensions before the last of `s`) by one.
inline void next_row(std::array<std::int64_t, shape::max_rank>& counter, const shape& s) {
  for (int d = s.size() - 2; d >= 0; --d) {
    const auto u = static_cast<std::size_t>(d);
    if (++counter[u] < s[d]) return;
    counter[u] = 0;
  }
}

}  // namespace shape_ops_detail

// ---------------------------------------------------------------------------------------------
// Ops that keep the element order: the values are copied unchanged under the new shape.

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::flatten& op, const Args& args) {
  shape_ops_detail::check_shapes(op, args);
  shape_ops_detail::copy_values(args.input(0), args.output(0));
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::reshape& op, const Args& args) {
  shape_ops_detail::check_shapes(op, args);
  shape_ops_detail::copy_values(args.input(0), args.output(0));
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::view& op, const Args& args) {
  shape_ops_detail::check_shapes(op, args);
  shape_ops_detail::copy_values(args.input(0), args.output(0));
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::squeeze& op, const Args& args) {
  shape_ops_detail::check_shapes(op, args);
  shape_ops_detail::copy_values(args.input(0), args.output(0));
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::unsqueeze& op, const Args& args) {
  shape_ops_detail::check_shapes(op, args);
  shape_ops_detail::copy_values(args.input(0), args.output(0));
}

// args.inputs holds every result of the input node; the op picks one (Python indexing).
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::getitem& op, const Args& args) {
  shape_ops_detail::check_shapes(op, args);
  const auto count = static_cast<std::int64_t>(args.inputs.size());
  const std::int64_t i = op.index < 0 ? op.index + count : op.index;  // in range: checked above
  shape_ops_detail::copy_values(args.input(static_cast<std::size_t>(i)), args.output(0));
}

// ---------------------------------------------------------------------------------------------
// Ops that move elements.

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::permute& op, const Args& args) {
  shape_ops_detail::check_shapes(op, args);
  const tensor& x = args.input(0);
  std::array<int, shape::max_rank> order{};
  for (int i = 0; i < x.rank(); ++i)
    order[static_cast<std::size_t>(i)] = shape_rules::normalize_dim(op.dims[i], x.rank());
  shape_ops_detail::permute_into(x, args.output(0), order);
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::transpose& op, const Args& args) {
  shape_ops_detail::check_shapes(op, args);
  const tensor& x = args.input(0);
  if (x.rank() == 0) {
    shape_ops_detail::copy_values(x, args.output(0));
    return;
  }
  std::array<int, shape::max_rank> order{};
  for (int i = 0; i < x.rank(); ++i) order[static_cast<std::size_t>(i)] = i;
  std::swap(order[static_cast<std::size_t>(shape_rules::normalize_dim(op.dim0, x.rank()))],
            order[static_cast<std::size_t>(shape_rules::normalize_dim(op.dim1, x.rank()))]);
  shape_ops_detail::permute_into(x, args.output(0), order);
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::cat& op, const Args& args) {
  shape_ops_detail::check_shapes(op, args);
  tensor& y = args.output(0);
  if (y.size() == 0) return;
  const int d = shape_rules::normalize_dim(op.dim, y.rank());
  const auto to = shape_ops_detail::strides_of(y.shape());
  std::int64_t position = 0;  // where the next input starts along d
  for (const tensor* x : args.inputs) {
    // An empty input adds nothing: a 1-D [0] joins anything (PyTorch's legacy rule), and one of
    // the result's rank is empty along d (were it empty elsewhere, so would the result be).
    if (x->size() == 0) continue;
    const auto from = shape_ops_detail::strides_of(x->shape());
    shape_ops_detail::copy_loops loops;
    for (int i = 0; i < x->rank(); ++i) {
      const auto u = static_cast<std::size_t>(i);
      loops.push(x->shape()[i], from[u], to[u]);
    }
    shape_ops_detail::copy_strided(x->data(), y.data() + position * to[static_cast<std::size_t>(d)], loops);
    position += x->shape()[d];
  }
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::split& op, const Args& args) {
  shape_ops_detail::check_shapes(op, args);
  const tensor& x = args.input(0);
  const int d = shape_rules::normalize_dim(op.dim, x.rank());
  std::int64_t start = 0;
  for (tensor& y : args.outputs) {
    shape_ops_detail::slice_into(x, y, d, start, 1);
    start += y.shape()[d];
  }
}

template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::slice& op, const Args& args) {
  shape_ops_detail::check_shapes(op, args);
  const tensor& x = args.input(0);
  const int d = shape_rules::normalize_dim(op.dim, x.rank());
  shape_ops_detail::slice_into(x, args.output(0), d, op.first_index(x.shape()[d]), op.step);
}

// torch.gather: y[i0, …, i_d, …] = x[i0, …, index[i0, …, i_d, …], …]. The index tensor holds
// integers as floats; each must lie in [0, x.shape[dim]) (PyTorch does not wrap negative ones).
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::gather& op, const Args& args) {
  shape_ops_detail::check_shapes(op, args);
  const tensor& x = args.input(0);
  const tensor& index = args.input(1);
  tensor& y = args.output(0);
  if (y.size() == 0) return;
  // A zero-dimensional tensor is indexed as one of shape [1] (the shape rule's convention).
  const shape x_shape = x.rank() == 0 ? shape{1} : x.shape();
  const shape i_shape = index.rank() == 0 ? shape{1} : index.shape();
  const int rank = i_shape.size();
  const int d = shape_rules::normalize_dim(op.dim, rank);
  const auto x_strides = shape_ops_detail::strides_of(x_shape);
  const std::int64_t limit = x_shape[d];
  const std::int64_t stride_d = x_strides[static_cast<std::size_t>(d)];

  // Loops over the index's positions; every dimension but d also moves through x.
  const int inner = rank - 1;
  const std::int64_t n = i_shape[inner];
  const std::int64_t inner_step = inner == d ? 0 : x_strides[static_cast<std::size_t>(inner)];
  std::int64_t runs = 1;
  for (int k = 0; k < inner; ++k) runs *= i_shape[k];
  std::array<std::int64_t, shape::max_rank> counter{};
  std::int64_t base = 0;
  const float* xs = x.data();
  const float* is = index.data();
  float* ys = y.data();
  for (std::int64_t r = 0, o = 0; r < runs; ++r, o += n) {
    for (std::int64_t j = 0; j < n; ++j) {
      const float v = is[o + j];
      // In range first, so that the conversion to an integer is defined.
      const bool in_range = static_cast<double>(v) >= 0.0 && static_cast<double>(v) < static_cast<double>(limit);
      const auto i = in_range ? static_cast<std::int64_t>(v) : std::int64_t{0};
      if (!in_range || static_cast<float>(i) != v)
        throw error(fmt::format("node {}: gather: index value {} (element {} of the index) is not an integer in "
                                "[0, {}), the size of dimension {} of the input {}",
                                args.node_name, v, o + j, limit, d, to_string(x.shape())));
      ys[o + j] = xs[base + j * inner_step + i * stride_d];
    }
    for (int k = inner - 1; k >= 0; --k) {
      const auto u = static_cast<std::size_t>(k);
      const std::int64_t step = k == d ? 0 : x_strides[u];
      base += step;
      if (++counter[u] < i_shape[k]) break;
      base -= step * i_shape[k];
      counter[u] = 0;
    }
  }
}

// F.pad. Constant mode fills the result and copies the kept part of x into it. The other modes
// write each output row (all dimensions but the last) from the input row its coordinates map to
// through shape_ops_detail::pad_source: the part that comes from the input unchanged is one
// memcpy, the borders are written element by element.
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::pad& op, const Args& args) {
  using shape_ops_detail::pad_source;
  shape_ops_detail::check_shapes(op, args);
  const tensor& x = args.input(0);
  tensor& y = args.output(0);
  if (y.size() == 0) return;
  const int rank = x.rank();
  if (rank == 0) {
    shape_ops_detail::copy_values(x, y);
    return;
  }
  const float fill = static_cast<float>(op.value);
  const shape& xs = x.shape();
  const shape& ys = y.shape();
  const auto in_strides = shape_ops_detail::strides_of(xs);
  if (op.mode == op::pad::constant_mode) {
    // As PyTorch does: fill, then one strided copy of the part of x that survives the crops.
    std::fill(y.data(), y.data() + y.size(), fill);
    const auto out_strides = shape_ops_detail::strides_of(ys);
    shape_ops_detail::copy_loops loops;
    std::int64_t from = 0, to = 0;
    for (int d = 0; d < rank; ++d) {
      const auto u = static_cast<std::size_t>(d);
      const std::int64_t b = op.before(d, rank), a = op.after(d, rank);
      const std::int64_t kept = xs[d] - (b < 0 ? -b : 0) - (a < 0 ? -a : 0);
      if (kept == 0) return;  // all border
      from += (b < 0 ? -b : 0) * in_strides[u];
      to += (b > 0 ? b : 0) * out_strides[u];
      loops.push(kept, in_strides[u], out_strides[u]);
    }
    shape_ops_detail::copy_strided(x.data() + from, y.data() + to, loops);
    return;
  }
  const int last = rank - 1;
  const std::int64_t length = xs[last];
  const std::int64_t width = ys[last];
  const std::int64_t before = op.before(last, rank);
  const std::int64_t after = op.after(last, rank);
  // The run copied unchanged: input [kept_from, kept_from + kept) to output [written_from, …).
  const std::int64_t kept_from = before < 0 ? -before : 0;
  const std::int64_t written_from = before > 0 ? before : 0;
  const std::int64_t kept = length - kept_from - (after < 0 ? -after : 0);
  const std::int64_t rows = static_cast<std::int64_t>(y.size()) / width;
  std::array<std::int64_t, shape::max_rank> counter{};
  const float* xs_data = x.data();
  float* out = y.data();
  // Outside constant mode every output position reads an input position (pad_source ≥ 0).
  for (std::int64_t r = 0; r < rows; ++r, out += width) {
    std::int64_t offset = 0;
    for (int d = 0; d < last; ++d)
      offset += pad_source(op.mode, counter[static_cast<std::size_t>(d)], op.before(d, rank), op.after(d, rank),
                           xs[d]) *
                in_strides[static_cast<std::size_t>(d)];
    shape_ops_detail::next_row(counter, ys);
    const float* row = xs_data + offset;
    if (kept > 0) std::memcpy(out + written_from, row + kept_from, static_cast<std::size_t>(kept) * sizeof(float));
    for (std::int64_t o = 0; o < written_from; ++o) out[o] = row[pad_source(op.mode, o, before, after, length)];
    for (std::int64_t o = written_from + kept; o < width; ++o)
      out[o] = row[pad_source(op.mode, o, before, after, length)];
  }
}

// torch.tile: output row (all dimensions but the last) c reads input row c mod the input's sizes
// (the input read with leading 1s up to the result's rank), whose values are copied
// dims[last] times side by side.
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::tile& op, const Args& args) {
  shape_ops_detail::check_shapes(op, args);
  const tensor& x = args.input(0);
  tensor& y = args.output(0);
  if (y.size() == 0) return;
  const shape& ys = y.shape();
  const int rank = ys.size();
  if (rank == 0) {
    shape_ops_detail::copy_values(x, y);
    return;
  }
  // The input's sizes and strides aligned with the result's dimensions.
  std::array<std::int64_t, shape::max_rank> sizes{};
  std::array<std::int64_t, shape::max_rank> strides{};
  const auto x_strides = shape_ops_detail::strides_of(x.shape());
  for (int d = 0; d < rank; ++d) {
    const int xd = x.rank() - rank + d;
    sizes[static_cast<std::size_t>(d)] = xd >= 0 ? x.shape()[xd] : 1;
    strides[static_cast<std::size_t>(d)] = xd >= 0 ? x_strides[static_cast<std::size_t>(xd)] : 0;
  }
  const std::int64_t length = sizes[static_cast<std::size_t>(rank - 1)];
  const std::int64_t width = ys[rank - 1];
  const std::int64_t repeats = width / length;  // y is not empty, so neither is the input
  const auto bytes = static_cast<std::size_t>(length) * sizeof(float);
  const std::int64_t rows = static_cast<std::int64_t>(y.size()) / width;
  std::array<std::int64_t, shape::max_rank> counter{};  // the output row's coordinates
  std::array<std::int64_t, shape::max_rank> source{};   // the input row's: counter mod sizes
  std::int64_t offset = 0;
  float* out = y.data();
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t k = 0; k < repeats; ++k, out += length) std::memcpy(out, x.data() + offset, bytes);
    for (int d = rank - 2; d >= 0; --d) {
      const auto u = static_cast<std::size_t>(d);
      offset += strides[u];
      if (++source[u] == sizes[u]) {
        source[u] = 0;
        offset -= strides[u] * sizes[u];
      }
      if (++counter[u] < ys[d]) break;
      counter[u] = 0;  // ys[d] is a multiple of sizes[d]: source[u] has wrapped to 0 as well
    }
  }
}

// Tensor.expand: a copy in which each grown dimension reads the input with stride 0.
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::expand& op, const Args& args) {
  shape_ops_detail::check_shapes(op, args);
  const tensor& x = args.input(0);
  tensor& y = args.output(0);
  if (y.size() == 0) return;
  const shape& ys = y.shape();
  const int added = ys.size() - x.rank();
  const auto from = shape_ops_detail::strides_of(x.shape());
  const auto to = shape_ops_detail::strides_of(ys);
  shape_ops_detail::copy_loops loops;
  for (int i = 0; i < ys.size(); ++i) {
    const int xi = i - added;
    const bool repeated = xi < 0 || x.shape()[xi] != ys[i];
    loops.push(ys[i], repeated ? 0 : from[static_cast<std::size_t>(xi)], to[static_cast<std::size_t>(i)]);
  }
  shape_ops_detail::copy_strided(x.data(), y.data(), loops);
}

// index_select as ONNX's Gather (see op/index_select.hpp): for every position of x before dim
// and every index, one contiguous block of the dimensions after dim.
template <class Args = kernel_args>  // a template so that including the header compiles nothing
void float_kernel(const op::index_select& op, const Args& args) {
  shape_ops_detail::check_shapes(op, args);
  const tensor& x = args.input(0);
  const tensor& index = args.input(1);
  tensor& y = args.output(0);
  if (y.size() == 0) return;
  const shape& xs = x.shape();
  const int d = shape_rules::normalize_dim(op.dim, xs.size());
  std::int64_t outer = 1, inner = 1;
  for (int i = 0; i < d; ++i) outer *= xs[i];
  for (int i = d + 1; i < xs.size(); ++i) inner *= xs[i];
  const std::int64_t length = xs[d];
  const auto count = static_cast<std::int64_t>(index.size());
  const float* is = index.data();
  const float* from = x.data();
  float* out = y.data();
  const auto bytes = static_cast<std::size_t>(inner) * sizeof(float);
  for (std::int64_t o = 0; o < outer; ++o) {
    const float* block = from + o * length * inner;
    for (std::int64_t k = 0; k < count; ++k, out += inner) {
      const float v = is[k];
      // In range first, so that the conversion to an integer is defined; NaN fails too.
      const bool in_range =
          static_cast<double>(v) >= -static_cast<double>(length) && static_cast<double>(v) < static_cast<double>(length);
      const auto i = in_range ? static_cast<std::int64_t>(v) : std::int64_t{0};
      if (!in_range || static_cast<float>(i) != v)
        throw error(fmt::format("node {}: index_select: index value {} (element {} of the index {}) is not an integer "
                                "in [-{}, {}), the size of dimension {} of the input {}",
                                args.node_name, v, k, to_string(index.shape()), length, length, d, to_string(xs)));
      const std::int64_t row = i < 0 ? i + length : i;
      if (inner == 1) *out = block[row];
      else std::memcpy(out, block + row * inner, bytes);
    }
  }
}

}  // namespace mase::eval
