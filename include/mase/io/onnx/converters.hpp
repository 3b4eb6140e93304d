#pragma once
// One converter per ONNX op type: reads the node through the importer (inputs, attributes with
// ONNX's defaults for the node's opset) and emits ops of mase's vocabulary. docs/onnx.md lists
// the mapping. Semantics that mase cannot represent raise onnx::unsupported, naming the node.

#include <mase/io/onnx/importer.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

namespace mase::onnx::detail {

using TP = ::onnx::TensorProto;

// --- helpers --------------------------------------------------------------------------------

// An axis counted from the end when negative, checked against `rank`.
inline std::int64_t normalize_axis(const importer& c, std::int64_t axis, int rank, std::string_view what = "axis") {
  const std::int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= std::max(rank, 1)) c.fail(fmt::format("{} {} is out of range for rank {}", what, axis, rank));
  return a;
}

inline dims to_dims(const importer& c, const std::vector<std::int64_t>& v, std::string_view what) {
  if (v.size() > static_cast<std::size_t>(shape::max_rank))
    c.not_supported(fmt::format("{} has {} entries; mase handles at most {}", what, v.size(), shape::max_rank));
  dims d;
  for (std::int64_t x : v) d.push_back(x);
  return d;
}

template <class Op>
void unary(importer& c, Op op = {}) {
  c.only_outputs(1, "");
  c.set_output(0, c.emit(op, {c.input(0)}));
}

// Input 1 of an element-wise op under opset 6 and older: with broadcast = 1 and an axis, B's
// dimensions line up with A's from that axis (numpy lines them up from the end), so B gets
// trailing 1s; from opset 7 both are numpy broadcasting.
inline node_id second_operand(importer& c) {
  const node_id b = c.input(1);
  if (c.opset() >= 7 || c.int_attribute("broadcast", 0) == 0 || !c.has_attribute("axis")) return b;
  const int rank_a = c.input_shape(0).size();
  const shape& sb = c.input_shape(1);
  const std::int64_t axis = normalize_axis(c, c.int_attribute("axis", 0), rank_a);
  shape aligned = sb;
  for (std::int64_t i = axis + sb.size(); i < rank_a; ++i) aligned.push_back(1);
  return aligned == sb ? b : c.emit(op::reshape{.shape = aligned}, {b});
}

template <class Op>
void binary(importer& c) {
  c.set_output(0, c.emit(Op{}, {c.input(0), second_operand(c)}));
}

// Sum, Max, Min, Mean: a chain of binary ops over every input.
template <class Op>
node_id fold_inputs(importer& c) {
  node_id acc = c.input(0);
  for (int i = 1; i < c.input_count(); ++i)
    if (c.has_input(i)) acc = c.emit(Op{}, {acc, c.input(i)});
  return acc;
}

// The result of Conv/Pool padding rules for one spatial dimension.
struct padding_pair {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};

// ONNX's pads (begin…, end…) or auto_pad for `spatial` dimensions of input `in`.
inline std::vector<padding_pair> spatial_padding(const importer& c, const shape& in, int spatial,
                                                 const std::vector<std::int64_t>& kernel,
                                                 const std::vector<std::int64_t>& strides,
                                                 const std::vector<std::int64_t>& dilations) {
  std::vector<padding_pair> pads(static_cast<std::size_t>(spatial));
  const std::string auto_pad = c.string_attribute("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    const auto p = c.ints_attribute("pads");
    if (!p.empty() && p.size() != 2 * pads.size())
      c.fail(fmt::format("pads has {} entries; a {}-D input needs {}", p.size(), in.size(), 2 * pads.size()));
    for (std::size_t i = 0; i < p.size() / 2; ++i) {
      pads[i] = {p[i], p[i + pads.size()]};
      if (pads[i].begin < 0 || pads[i].end < 0) c.not_supported("negative pads are not supported");
    }
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (std::size_t i = 0; i < pads.size(); ++i) {
      const std::int64_t size = in[static_cast<int>(i) + 2];
      const std::int64_t out = (size + strides[i] - 1) / strides[i];
      const std::int64_t total =
          std::max<std::int64_t>(0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - size);
      pads[i] = auto_pad == "SAME_UPPER" ? padding_pair{total / 2, total - total / 2}
                                         : padding_pair{total - total / 2, total / 2};
    }
  } else if (auto_pad != "VALID") {
    c.fail(fmt::format("auto_pad \"{}\" is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", auto_pad));
  }
  return pads;
}

inline bool symmetric(const std::vector<padding_pair>& pads) {
  return std::all_of(pads.begin(), pads.end(), [](const padding_pair& p) { return p.begin == p.end; });
}

// An explicit pad op in front of `x` for asymmetric Conv/Pool padding (torch's order: the last
// dimension first).
node_id pad_spatial(importer& c, node_id x, const std::vector<padding_pair>& pads, double value);

inline std::vector<std::int64_t> ones(std::size_t n) { return std::vector<std::int64_t>(n, 1); }

// --- converters -----------------------------------------------------------------------------

inline void convert_identity(importer& c) {
  c.only_outputs(1, "");
  c.set_output(0, c.input(0));
}

// A Dropout stays a dropout node (the identity at inference) with its ratio as p, so that a model
// exported with its dropouts keeps them for passes to see; remove_dropout takes them out.
inline void convert_dropout(importer& c) {
  c.only_outputs(1, "mask");
  if (c.has_input(2) && c.scalar_input(2, "training_mode") != 0.0)
    c.not_supported("training_mode = true: mase imports models for inference");
  const double ratio = c.has_input(1) ? c.scalar_input(1, "ratio") : c.float_attribute("ratio", 0.5);
  c.set_output(0, c.emit(op::dropout{.p = ratio}, {c.input(0)}));
}

inline void convert_constant(importer& c) {
  if (const TP* t = c.tensor_attribute("value")) {
    tensor_data d = read_tensor_proto(*t, fmt::format("node {} attribute value", c.node().name()));
    c.set_output(0, c.emit_constant(tensor(d.shape, std::move(d.values)), std::move(d.integers)), d.element_type);
  } else if (c.has_attribute("value_float")) {
    c.set_output(0, c.emit_scalar(static_cast<float>(c.float_attribute("value_float", 0))), TP::FLOAT);
  } else if (c.has_attribute("value_floats")) {
    std::vector<float> v = c.floats_attribute("value_floats");
    const auto n = static_cast<std::int64_t>(v.size());
    c.set_output(0, c.emit_constant(tensor(shape{n}, std::move(v))), TP::FLOAT);
  } else if (c.has_attribute("value_int")) {
    const std::int64_t v = c.int_attribute("value_int", 0);
    c.set_output(0, c.emit_constant(tensor(shape{}, {static_cast<float>(v)}), std::vector<std::int64_t>{v}), TP::INT64);
  } else if (c.has_attribute("value_ints")) {
    const std::vector<std::int64_t> v = c.ints_attribute("value_ints");
    std::vector<float> f(v.begin(), v.end());
    c.set_output(0, c.emit_constant(tensor(shape{static_cast<std::int64_t>(v.size())}, std::move(f)), v), TP::INT64);
  } else {
    c.not_supported("only value, value_float(s) and value_int(s) are supported (not sparse or string constants)");
  }
}

inline void convert_constant_of_shape(importer& c) {
  const std::vector<std::int64_t> s = c.integer_input(0, "shape");
  const dims d = to_dims(c, s, "shape");
  for (std::int64_t x : d)
    if (x < 0) c.fail(fmt::format("shape {} has a negative entry", to_string(d)));
  if (static_cast<std::size_t>(d.numel()) > max_folded_elements)
    c.not_supported(fmt::format("a constant of shape {} is larger than mase builds at import", to_string(d)));
  float fill = 0.0f;
  int type = TP::FLOAT;
  if (const TP* t = c.tensor_attribute("value")) {
    tensor_data v = read_tensor_proto(*t, "attribute value");
    if (v.values.size() != 1) c.fail("attribute value must hold one element");
    fill = v.values[0];
    type = v.element_type;
  }
  std::optional<std::vector<std::int64_t>> exact;
  if (is_integer_element_type(type))
    exact = std::vector<std::int64_t>(static_cast<std::size_t>(d.numel()), importer::saturating_integer(fill));
  c.set_output(0, c.emit_constant(tensor(d, std::vector<float>(static_cast<std::size_t>(d.numel()), fill)), std::move(exact)), type);
}

inline void convert_shape(importer& c) {
  const shape& s = c.input_shape(0);
  const int rank = s.size();
  std::int64_t start = c.int_attribute("start", 0);
  std::int64_t end = c.int_attribute("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<std::int64_t>(start, 0, rank);
  end = std::clamp<std::int64_t>(end, 0, rank);
  std::vector<std::int64_t> v;
  for (std::int64_t i = start; i < end; ++i) v.push_back(s[static_cast<int>(i)]);
  std::vector<float> f(v.begin(), v.end());
  c.set_output(0, c.emit_constant(tensor(shape{static_cast<std::int64_t>(v.size())}, std::move(f)), v), TP::INT64);
}

inline void convert_size(importer& c) {
  const auto n = static_cast<std::int64_t>(c.input_shape(0).numel());
  c.set_output(0, c.emit_constant(tensor(shape{}, {static_cast<float>(n)}), std::vector<std::int64_t>{n}), TP::INT64);
}

inline void convert_cast(importer& c, int to) {
  if (!is_numeric_element_type(to))
    c.not_supported(fmt::format("Cast to {} is not supported", element_type_name(to)));
  const int from = c.input_type(0);
  if (to == TP::FLOAT16 || to == TP::BFLOAT16 || from == TP::BFLOAT16)
    c.not_supported(fmt::format("Cast between {} and {} (mase computes in float32)", element_type_name(from),
                                element_type_name(to)));
  const bool to_float = !is_integer_element_type(to);
  if (to_float || is_integer_element_type(from)) {  // the float32 values stay the same
    c.set_output(0, c.input(0), to);
    return;
  }
  // Float to integer or bool: truncation toward zero, which mase has no op for; fold constants.
  const tensor& t = c.constant_input(0, "a float tensor cast to an integer type at run time");
  std::vector<float> v(t.values().begin(), t.values().end());
  std::vector<std::int64_t> exact;
  for (float& x : v) {
    x = to == TP::BOOL ? static_cast<float>(x != 0.0f) : std::trunc(x);
    exact.push_back(importer::saturating_integer(x));
  }
  c.set_output(0, c.emit_constant(tensor(t.shape(), std::move(v)), std::move(exact)), to);
}

inline void convert_div(importer& c) {
  const node_id y = c.emit(op::div{}, {c.input(0), second_operand(c)});
  if (!is_integer_element_type(c.input_type(0))) {
    c.set_output(0, y);
    return;
  }
  // Integer division truncates; mase folds it for constants (shape arithmetic) only.
  if (!c.is_constant(y)) c.not_supported("Div of integer tensors computed at run time is not supported");
  tensor& t = c.target()[y].parameters.at("value");
  for (float& x : t.values()) x = std::trunc(x);
  c.set_output(0, y);
}

// A constant scalar exponent is pow's attribute (what MASE's pow holds); any other is input 1.
inline void convert_pow(importer& c) {
  if (c.input_is_constant(1)) {
    const tensor& e = c.constant_input(1, "the exponent");
    if (e.size() == 1 && e.rank() <= c.input_shape(0).size())
      return c.set_output(0, c.emit(op::pow{.exponent = e.values()[0]}, {c.input(0)}));
  }
  c.set_output(0, c.emit(op::pow{}, {c.input(0), second_operand(c)}));
}

inline void convert_mean_of_inputs(importer& c) {
  int count = 0;
  for (int i = 0; i < c.input_count(); ++i) count += c.has_input(i) ? 1 : 0;
  const node_id sum = fold_inputs<op::add>(c);
  c.set_output(0, count == 1 ? sum : c.emit(op::div{}, {sum, c.emit_scalar(static_cast<float>(count))}));
}

inline void convert_matmul(importer& c) { binary<op::matmul>(c); }

inline void convert_gemm(importer& c) {
  const double alpha = c.float_attribute("alpha", 1.0);
  const double beta = c.float_attribute("beta", 1.0);
  const bool trans_a = c.int_attribute("transA", 0) != 0;
  const bool trans_b = c.int_attribute("transB", 0) != 0;
  const shape& a = c.input_shape(0);
  const shape& b = c.input_shape(1);
  if (a.size() != 2 || b.size() != 2) c.fail("A and B must be matrices");
  const std::int64_t k = trans_a ? a[0] : a[1];
  const std::int64_t n = trans_b ? b[0] : b[1];
  if ((trans_b ? b[1] : b[0]) != k)
    c.fail(fmt::format("A {} and B {} do not multiply (transA = {}, transB = {})", to_string(a), to_string(b),
                       trans_a ? 1 : 0, trans_b ? 1 : 0));
  const bool has_c = c.has_input(2);

  if (c.input_is_constant(1) && !trans_a && (!has_c || c.input_is_constant(2))) {
    // linear: y = x W^T + bias, with W = alpha·B^T (or alpha·B when transB) of shape [N, K].
    const tensor& bt = c.constant_input(1, "B");
    tensor weight(shape{n, k});
    for (std::int64_t o = 0; o < n; ++o)
      for (std::int64_t i = 0; i < k; ++i)
        weight.data()[o * k + i] =
            static_cast<float>(alpha * (trans_b ? bt.data()[o * k + i] : bt.data()[i * n + o]));
    ordered_map<tensor> parameters{{"weight", std::move(weight)}};
    std::optional<node_id> full_bias;
    if (has_c) {
      const tensor& ct = c.constant_input(2, "C");
      const shape& cs = ct.shape();
      const bool per_output = cs.numel() == 1 || (cs.size() == 1 && cs[0] == n) ||
                              (cs.size() == 2 && cs[0] == 1 && cs[1] == n);
      if (per_output) {
        tensor bias(shape{n});
        for (std::int64_t o = 0; o < n; ++o)
          bias.data()[o] = static_cast<float>(beta * ct.data()[cs.numel() == 1 ? 0 : o]);
        parameters.insert_or_assign("bias", std::move(bias));
      } else {  // a bias per row and column: added after the linear
        tensor scaled = ct;
        for (float& x : scaled.values()) x = static_cast<float>(beta * x);
        full_bias = c.emit_constant(std::move(scaled));
      }
    }
    const bool bias = parameters.contains("bias");
    node_id y = c.emit(op::linear{.in_features = k, .out_features = n, .bias = bias}, {c.input(0)},
                       std::move(parameters));
    if (full_bias) y = c.emit(op::add{}, {y, *full_bias});
    c.set_output(0, y);
    return;
  }
  node_id x = c.input(0);
  node_id w = c.input(1);
  if (trans_a) x = c.emit(op::permute{.dims = {1, 0}}, {x});
  if (trans_b) w = c.emit(op::permute{.dims = {1, 0}}, {w});
  node_id y = c.emit(op::matmul{}, {x, w});
  if (alpha != 1.0) y = c.emit(op::mul{}, {y, c.emit_scalar(static_cast<float>(alpha))});
  if (has_c) {
    node_id bias = c.input(2);
    if (beta != 1.0) bias = c.emit(op::mul{}, {bias, c.emit_scalar(static_cast<float>(beta))});
    y = c.emit(op::add{}, {y, bias});
  }
  c.set_output(0, y);
}

inline void convert_conv(importer& c) {
  const shape& x = c.input_shape(0);
  const tensor w = c.constant_input(1, "the weight");  // a copy: pad_spatial below emits a node
  const int spatial = x.size() - 2;
  if (spatial < 1 || spatial > 3) c.not_supported(fmt::format("{}-D convolution (mase has 1-D to 3-D)", spatial));
  if (w.rank() != x.size()) c.fail("the weight's rank differs from the input's");
  const std::int64_t groups = c.int_attribute("group", 1);
  std::vector<std::int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  const auto strides = c.ints_attribute("strides", ones(spatial));
  const auto dilations = c.ints_attribute("dilations", ones(spatial));
  if (strides.size() != kernel.size() || dilations.size() != kernel.size())
    c.fail("strides and dilations need one entry per spatial dimension");
  const auto pads = spatial_padding(c, x, spatial, kernel, strides, dilations);
  node_id in = c.input(0);
  dims padding;
  if (symmetric(pads)) {
    for (const auto& p : pads) padding.push_back(p.begin);
  } else {
    in = pad_spatial(c, in, pads, 0.0);
    for (int i = 0; i < spatial; ++i) padding.push_back(0);
  }
  ordered_map<tensor> parameters{{"weight", w}};
  const bool bias = c.has_input(2);
  if (bias) parameters.insert_or_assign("bias", c.constant_input(2, "the bias"));
  const std::int64_t in_channels = x[1];
  const std::int64_t out_channels = w.shape()[0];
  const auto make = [&]<class Op>(std::type_identity<Op>) {
    return c.emit(Op{.in_channels = in_channels, .out_channels = out_channels, .kernel_size = to_dims(c, kernel, "kernel"),
                     .stride = to_dims(c, strides, "strides"), .padding = padding,
                     .dilation = to_dims(c, dilations, "dilations"), .groups = groups, .bias = bias},
                  {in}, std::move(parameters));
  };
  c.set_output(0, spatial == 1   ? make(std::type_identity<op::conv1d>{})
                  : spatial == 2 ? make(std::type_identity<op::conv2d>{})
                                 : make(std::type_identity<op::conv3d>{}));
}

inline void convert_batch_norm(importer& c) {
  c.only_outputs(1, "running statistics in training mode");
  if (c.int_attribute("training_mode", 0) != 0) c.not_supported("training_mode = 1: mase imports models for inference");
  if (c.int_attribute("spatial", 1) == 0) c.not_supported("spatial = 0 (statistics per element, opset 6 and older)");
  const shape& x = c.input_shape(0);
  const double eps = c.float_attribute("epsilon", 1e-5);
  const double momentum = 1.0 - c.float_attribute("momentum", 0.9);  // ONNX's momentum weighs the old value
  ordered_map<tensor> p{{"weight", c.constant_input(1, "scale")},
                        {"bias", c.constant_input(2, "B")},
                        {"running_mean", c.constant_input(3, "input_mean")},
                        {"running_var", c.constant_input(4, "input_var")}};
  const std::int64_t channels = x.size() >= 2 ? x[1] : 0;
  if (x.size() == 2 || x.size() == 3)
    c.set_output(0, c.emit(op::batch_norm1d{.num_features = channels, .eps = eps, .momentum = momentum}, {c.input(0)},
                           std::move(p)));
  else if (x.size() == 4)
    c.set_output(0, c.emit(op::batch_norm2d{.num_features = channels, .eps = eps, .momentum = momentum}, {c.input(0)},
                           std::move(p)));
  else if (x.size() == 5)
    c.set_output(0, c.emit(op::batch_norm3d{.num_features = channels, .eps = eps, .momentum = momentum}, {c.input(0)},
                           std::move(p)));
  else
    c.not_supported(fmt::format("batch normalization of a rank-{} input (mase has 1-D to 3-D)", x.size()));
}

inline void convert_layer_norm(importer& c) {
  const shape& x = c.input_shape(0);
  const std::int64_t axis = normalize_axis(c, c.int_attribute("axis", -1), x.size());
  const double eps = c.float_attribute("epsilon", 1e-5);
  dims normalized;
  dims reduced;
  for (int i = static_cast<int>(axis); i < x.size(); ++i) {
    normalized.push_back(x[i]);
    reduced.push_back(i);
  }
  if (c.output_read(1) || c.output_read(2)) {
    // The optional Mean and InvStdDev outputs, computed beside the layer_norm op.
    const node_id mean = c.emit(op::mean{.dim = reduced, .keepdim = true}, {c.input(0)});
    const node_id centred = c.emit(op::sub{}, {c.input(0), mean});
    const node_id variance = c.emit(op::mean{.dim = reduced, .keepdim = true}, {c.emit(op::pow{.exponent = 2.0}, {centred})});
    const node_id std = c.emit(op::sqrt{}, {c.emit(op::add{}, {variance, c.emit_scalar(static_cast<float>(eps))})});
    c.set_output(1, mean);
    c.set_output(2, c.emit(op::reciprocal{}, {std}));
  }
  const auto as_normalized = [&](int i, std::string_view role) {
    const tensor& t = c.constant_input(i, role);
    if (static_cast<std::int64_t>(t.size()) != static_cast<std::int64_t>(normalized.numel()))
      c.not_supported(fmt::format("{} of shape {} is broadcast over the normalized shape {}; mase needs one value per "
                                  "element",
                                  role, to_string(t.shape()), to_string(normalized)));
    return t.reshaped(normalized);
  };
  ordered_map<tensor> p{{"weight", as_normalized(1, "scale")}};
  const bool bias = c.has_input(2);
  if (bias) p.insert_or_assign("bias", as_normalized(2, "B"));
  c.set_output(0, c.emit(op::layer_norm{.normalized_shape = normalized, .eps = eps,
                                        .elementwise_affine = true, .bias = bias},
                         {c.input(0)}, std::move(p)));
}

// Softmax and LogSoftmax: before opset 13 the input is coerced to 2-D at `axis` (default 1) and
// the softmax runs over the whole second part; from 13 it runs over `axis` (default -1) alone.
template <class Op>
void convert_softmax_like(importer& c) {
  const shape& x = c.input_shape(0);
  const int rank = x.size();
  if (c.opset() >= 13) {
    c.set_output(0, c.emit(Op{.dim = normalize_axis(c, c.int_attribute("axis", -1), rank)}, {c.input(0)}));
    return;
  }
  const std::int64_t axis = normalize_axis(c, c.int_attribute("axis", 1), rank);
  if (axis == rank - 1 || rank == 0) {
    c.set_output(0, c.emit(Op{.dim = -1}, {c.input(0)}));
    return;
  }
  std::int64_t outer = 1;
  std::int64_t inner = 1;
  for (int i = 0; i < rank; ++i) (i < axis ? outer : inner) *= x[i];
  const node_id flat = c.emit(op::reshape{.shape = {outer, inner}}, {c.input(0)});
  const node_id y = c.emit(Op{.dim = -1}, {flat});
  c.set_output(0, c.emit(op::reshape{.shape = x}, {y}));
}

// Reduce*: axes from the attribute, or from input 1 (ReduceSum from opset 13, all from 18).
inline std::optional<dims> reduce_axes(importer& c) {
  std::vector<std::int64_t> axes = c.ints_attribute("axes");
  if (c.has_input(1)) axes = c.integer_input(1, "axes");
  const int rank = c.input_shape(0).size();
  if (axes.empty()) {
    if (c.int_attribute("noop_with_empty_axes", 0) != 0) return std::nullopt;  // the identity
    return dims{};
  }
  for (std::int64_t& a : axes) a = normalize_axis(c, a, rank, "an axis");
  return to_dims(c, axes, "axes");
}

template <class Op>
void convert_reduce(importer& c) {
  const auto axes = reduce_axes(c);
  if (!axes) return c.set_output(0, c.input(0));
  c.set_output(0, c.emit(Op{.dim = *axes, .keepdim = c.int_attribute("keepdims", 1) != 0}, {c.input(0)}));
}

// GlobalAveragePool, GlobalMaxPool: the reduction over every spatial dimension, kept as size 1.
template <class Reduction>
void convert_global_pool(importer& c) {
  const shape x = c.input_shape(0);
  dims spatial;
  for (int i = 2; i < x.size(); ++i) spatial.push_back(i);
  if (spatial.empty()) c.fail("the input needs at least one spatial dimension");
  c.set_output(0, c.emit(Reduction{.dim = spatial, .keepdim = true}, {c.input(0)}));
}

// MaxPool and AveragePool.
template <bool Max>
void convert_pool(importer& c) {
  c.only_outputs(1, "Indices");
  const shape& x = c.input_shape(0);
  const int spatial = x.size() - 2;
  if (spatial < 1 || spatial > 3) c.not_supported(fmt::format("{}-D pooling (mase has 1-D to 3-D pools)", spatial));
  const auto kernel = c.ints_attribute("kernel_shape");
  if (kernel.size() != static_cast<std::size_t>(spatial)) c.fail("kernel_shape needs one entry per spatial dimension");
  const auto strides = c.ints_attribute("strides", ones(spatial));
  const auto dilations = c.ints_attribute("dilations", ones(spatial));
  if (!Max && dilations != ones(spatial)) c.not_supported("AveragePool with dilations");
  if (c.int_attribute("storage_order", 0) != 0) c.not_supported("storage_order = 1 (column-major indices)");
  const bool ceil_mode = c.int_attribute("ceil_mode", 0) != 0;
  const bool count_include_pad = c.int_attribute("count_include_pad", 0) != 0;
  auto pads = spatial_padding(c, x, spatial, kernel, strides, dilations);
  node_id in = c.input(0);
  // PyTorch pads at most half a kernel on each side, symmetrically; otherwise pad explicitly.
  bool fits = symmetric(pads);
  for (int i = 0; i < spatial; ++i) fits = fits && pads[i].begin * 2 <= kernel[i];
  bool pad_counted = count_include_pad;
  if (!fits) {
    if (!Max && !count_include_pad)
      c.not_supported("AveragePool with asymmetric pads that are not counted (count_include_pad = 0)");
    in = pad_spatial(c, in, pads, Max ? -std::numeric_limits<double>::infinity() : 0.0);
    for (auto& p : pads) p = {};
    pad_counted = true;
  }
  dims padding;
  for (const auto& p : pads) padding.push_back(p.begin);
  const dims k = to_dims(c, kernel, "kernel_shape");
  const dims s = to_dims(c, strides, "strides");
  const auto make = [&]<class Op>(std::type_identity<Op>) {
    if constexpr (Max)
      return c.emit(Op{.kernel_size = k, .stride = s, .padding = padding, .dilation = to_dims(c, dilations, "dilations"),
                       .ceil_mode = ceil_mode},
                    {in});
    else
      return c.emit(Op{.kernel_size = k, .stride = s, .padding = padding, .ceil_mode = ceil_mode,
                       .count_include_pad = pad_counted},
                    {in});
  };
  using pool1d = std::conditional_t<Max, op::max_pool1d, op::avg_pool1d>;
  using pool2d = std::conditional_t<Max, op::max_pool2d, op::avg_pool2d>;
  using pool3d = std::conditional_t<Max, op::max_pool3d, op::avg_pool3d>;
  c.set_output(0, spatial == 1   ? make(std::type_identity<pool1d>{})
                  : spatial == 2 ? make(std::type_identity<pool2d>{})
                                 : make(std::type_identity<pool3d>{}));
}

inline void convert_flatten(importer& c) {
  const shape& x = c.input_shape(0);
  const int rank = x.size();
  std::int64_t axis = c.int_attribute("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) c.fail(fmt::format("axis {} is out of range for rank {}", axis, rank));
  if (axis == 1 && rank >= 2) return c.set_output(0, c.emit(op::flatten{.start_dim = 1, .end_dim = -1}, {c.input(0)}));
  std::int64_t outer = 1;
  for (int i = 0; i < axis; ++i) outer *= x[i];
  const std::int64_t inner = outer == 0 ? 0 : static_cast<std::int64_t>(x.numel()) / outer;
  c.set_output(0, c.emit(op::reshape{.shape = {outer, inner}}, {c.input(0)}));
}

inline void convert_reshape(importer& c) {
  const shape& x = c.input_shape(0);
  std::vector<std::int64_t> target = c.opset() < 5 ? c.ints_attribute("shape") : c.integer_input(1, "shape");
  const bool allow_zero = c.int_attribute("allowzero", 0) != 0;
  for (std::size_t i = 0; i < target.size(); ++i)
    if (target[i] == 0 && !allow_zero) {
      if (static_cast<int>(i) >= x.size()) c.fail("a 0 in shape copies an input dimension that does not exist");
      target[i] = x[static_cast<int>(i)];
    }
  // The -1 resolved here, so that the graph (and the hardware after it) states every size.
  const auto unknown = std::find(target.begin(), target.end(), -1);
  if (unknown != target.end()) {
    std::int64_t known = 1;
    for (std::int64_t d : target)
      if (d != -1) known *= d;
    if (known > 0 && x.numel() % known == 0) *unknown = x.numel() / known;
  }
  c.set_output(0, c.emit(op::reshape{.shape = to_dims(c, target, "shape")}, {c.input(0)}));
}

inline void convert_transpose(importer& c) {
  const int rank = c.input_shape(0).size();
  std::vector<std::int64_t> perm = c.ints_attribute("perm");
  if (perm.empty())
    for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  c.set_output(0, c.emit(op::permute{.dims = to_dims(c, perm, "perm")}, {c.input(0)}));
}

inline std::vector<std::int64_t> axes_of(importer& c, int input) {
  if (c.opset() >= 13 && c.has_input(input)) return c.integer_input(input, "axes");
  return c.ints_attribute("axes");
}

inline void convert_squeeze(importer& c) {
  const shape& x = c.input_shape(0);
  std::vector<std::int64_t> axes = axes_of(c, 1);
  for (std::int64_t& a : axes) {
    a = normalize_axis(c, a, x.size(), "an axis");
    if (x[static_cast<int>(a)] != 1) c.fail(fmt::format("axis {} has size {}, not 1", a, x[static_cast<int>(a)]));
  }
  if (axes.empty())
    for (int i = 0; i < x.size(); ++i)
      if (x[i] == 1) axes.push_back(i);
  if (axes.empty()) return c.set_output(0, c.input(0));
  c.set_output(0, c.emit(op::squeeze{.dim = to_dims(c, axes, "axes")}, {c.input(0)}));
}

inline void convert_unsqueeze(importer& c) {
  const shape& x = c.input_shape(0);
  std::vector<std::int64_t> axes = axes_of(c, 1);
  const int rank = x.size() + static_cast<int>(axes.size());
  if (rank > shape::max_rank) c.not_supported(fmt::format("a result of rank {}", rank));
  std::vector<bool> inserted(static_cast<std::size_t>(rank), false);
  for (std::int64_t a : axes) {
    const std::int64_t n = normalize_axis(c, a, rank, "an axis");
    if (inserted[static_cast<std::size_t>(n)]) c.fail("an axis appears twice");
    inserted[static_cast<std::size_t>(n)] = true;
  }
  if (axes.size() == 1)
    return c.set_output(0, c.emit(op::unsqueeze{.dim = normalize_axis(c, axes[0], rank)}, {c.input(0)}));
  shape out;
  for (int i = 0, j = 0; i < rank; ++i) out.push_back(inserted[static_cast<std::size_t>(i)] ? 1 : x[j++]);
  c.set_output(0, c.emit(op::reshape{.shape = out}, {c.input(0)}));
}

inline void convert_concat(importer& c) {
  const int rank = c.input_shape(0).size();
  std::vector<node_id> inputs;
  for (int i = 0; i < c.input_count(); ++i)
    if (c.has_input(i)) inputs.push_back(c.input(i));
  // axis defaulted to 1 before opset 4
  const std::int64_t axis = c.opset() < 4 && !c.has_attribute("axis") ? 1 : c.required_int_attribute("axis");
  c.set_output(0, c.emit(op::cat{.dim = normalize_axis(c, axis, rank)}, inputs));
}

inline void convert_split(importer& c) {
  const shape& x = c.input_shape(0);
  const std::int64_t axis = normalize_axis(c, c.int_attribute("axis", 0), x.size());
  const std::int64_t length = x[static_cast<int>(axis)];
  std::vector<std::int64_t> sizes = c.ints_attribute("split");
  if (c.opset() >= 13 && c.has_input(1)) sizes = c.integer_input(1, "split");
  const int outputs = c.node().output_size();
  if (sizes.empty()) {
    if (outputs == 0 || length % outputs != 0)
      c.fail(fmt::format("a dimension of {} does not split into {} equal parts", length, outputs));
    sizes.assign(static_cast<std::size_t>(outputs), length / outputs);
  }
  if (sizes.size() != static_cast<std::size_t>(outputs))
    c.fail(fmt::format("split has {} sizes for {} outputs", sizes.size(), outputs));
  if (std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0}) != length)
    c.fail(fmt::format("the split sizes do not add up to the dimension's {}", length));
  std::int64_t start = 0;
  for (int i = 0; i < outputs; ++i) {
    const std::int64_t end = start + sizes[static_cast<std::size_t>(i)];
    c.set_output(i, c.emit(op::slice{.dim = axis, .start = start, .end = end, .step = 1}, {c.input(0)}));
    start = end;
  }
}

inline void convert_slice(importer& c) {
  const shape& x = c.input_shape(0);
  std::vector<std::int64_t> starts;
  std::vector<std::int64_t> ends;
  std::vector<std::int64_t> axes;
  std::vector<std::int64_t> steps;
  if (c.opset() < 10) {
    starts = c.ints_attribute("starts");
    ends = c.ints_attribute("ends");
    axes = c.ints_attribute("axes");
  } else {
    starts = c.integer_input(1, "starts");
    ends = c.integer_input(2, "ends");
    if (c.has_input(3)) axes = c.integer_input(3, "axes");
    if (c.has_input(4)) steps = c.integer_input(4, "steps");
  }
  if (axes.empty())
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
  if (steps.empty()) steps = ones(starts.size());
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.fail("starts, ends, axes and steps differ in length");
  node_id y = c.input(0);
  for (std::size_t i = 0; i < starts.size(); ++i) {
    if (steps[i] < 1) c.not_supported("a step below 1 (mase's slice goes forward)");
    y = c.emit(op::slice{.dim = normalize_axis(c, axes[i], x.size(), "an axis"), .start = starts[i], .end = ends[i],
                         .step = steps[i]},
               {y});
  }
  c.set_output(0, y);
}

inline void convert_clip(importer& c) {
  double low = -std::numeric_limits<double>::infinity();
  double high = std::numeric_limits<double>::infinity();
  if (c.opset() < 11) {
    low = c.float_attribute("min", low);
    high = c.float_attribute("max", high);
  } else {
    if (c.has_input(1)) low = c.scalar_input(1, "min");
    if (c.has_input(2)) high = c.scalar_input(2, "max");
  }
  c.set_output(0, c.emit(op::hardtanh{.min_val = low, .max_val = high}, {c.input(0)}));
}

inline void convert_leaky_relu(importer& c) {
  unary(c, op::leaky_relu{.negative_slope = c.float_attribute("alpha", 0.01)});
}
inline void convert_elu(importer& c) { unary(c, op::elu{.alpha = c.float_attribute("alpha", 1.0)}); }

inline void convert_selu(importer& c) {
  // PyTorch's constants, as ONNX's defaults are written (float32).
  const double alpha = c.float_attribute("alpha", 1.67326319217681884765625);
  const double gamma = c.float_attribute("gamma", 1.05070102214813232421875);
  if (static_cast<float>(alpha) == 1.67326319217681884765625f && static_cast<float>(gamma) == 1.05070102214813232421875f)
    return unary(c, op::selu{});
  const node_id e = c.emit(op::elu{.alpha = alpha}, {c.input(0)});
  c.set_output(0, c.emit(op::mul{}, {e, c.emit_scalar(static_cast<float>(gamma))}));
}

inline void convert_celu(importer& c) {
  // celu(x) = alpha · elu(x / alpha)
  const double alpha = c.float_attribute("alpha", 1.0);
  if (alpha == 1.0) return unary(c, op::elu{.alpha = 1.0});
  const node_id scaled = c.emit(op::mul{}, {c.input(0), c.emit_scalar(static_cast<float>(1.0 / alpha))});
  const node_id e = c.emit(op::elu{.alpha = 1.0}, {scaled});
  c.set_output(0, c.emit(op::mul{}, {e, c.emit_scalar(static_cast<float>(alpha))}));
}

inline void convert_hard_sigmoid(importer& c) {
  const double alpha = c.float_attribute("alpha", 0.2);
  const double beta = c.float_attribute("beta", 0.5);
  if (static_cast<float>(alpha) == static_cast<float>(1.0 / 6.0) && beta == 0.5) return unary(c, op::hardsigmoid{});
  // clamp(alpha·x + beta, 0, 1)
  const node_id scaled = c.emit(op::mul{}, {c.input(0), c.emit_scalar(static_cast<float>(alpha))});
  const node_id shifted = c.emit(op::add{}, {scaled, c.emit_scalar(static_cast<float>(beta))});
  c.set_output(0, c.emit(op::hardtanh{.min_val = 0.0, .max_val = 1.0}, {shifted}));
}

inline void convert_softplus(importer& c) {
  // ONNX's softplus is log(1 + e^x) everywhere; PyTorch's returns x above its threshold (20),
  // where the two differ by less than e^-20 relative.
  unary(c, op::softplus{});
}

}  // namespace mase::onnx::detail

// --- padding, transposed convolution, tiling, indexing ---------------------------------------
namespace mase::onnx::detail {

// ONNX pads for every dimension ([begin…, end…]) as torch's list: pairs from the last dimension
// back to the first that is padded (a dims holds four pairs).
inline dims torch_pads(const importer& c, const std::vector<std::int64_t>& begin, const std::vector<std::int64_t>& end) {
  std::size_t first = 0;
  while (first < begin.size() && begin[first] == 0 && end[first] == 0) ++first;
  if (begin.size() - first > static_cast<std::size_t>(shape::max_rank / 2))
    c.not_supported(fmt::format("padding {} dimensions (mase's pad covers the last {})", begin.size() - first,
                                shape::max_rank / 2));
  dims d;
  for (std::size_t i = begin.size(); i-- > first;) {
    d.push_back(begin[i]);
    d.push_back(end[i]);
  }
  return d;
}

inline node_id pad_spatial(importer& c, node_id x, const std::vector<padding_pair>& pads, double value) {
  std::vector<std::int64_t> begin{0, 0};
  std::vector<std::int64_t> end{0, 0};
  for (const padding_pair& p : pads) {
    begin.push_back(p.begin);
    end.push_back(p.end);
  }
  return c.emit(op::pad{.pads = torch_pads(c, begin, end), .mode = op::pad::constant_mode, .value = value}, {x});
}

inline void convert_pad(importer& c) {
  const int rank = c.input_shape(0).size();
  const std::string mode_name = c.string_attribute("mode", "constant");
  std::vector<std::int64_t> pads;
  double value = 0.0;
  if (c.opset() < 2 && c.has_attribute("paddings")) c.not_supported("Pad before opset 2 (attribute paddings)");
  if (c.opset() < 11) {
    pads = c.ints_attribute("pads");
    value = c.float_attribute("value", 0.0);
  } else {
    pads = c.integer_input(1, "pads");
    if (c.has_input(2)) value = c.scalar_input(2, "constant_value");
  }
  std::vector<std::int64_t> axes;
  if (c.has_input(3)) axes = c.integer_input(3, "axes");
  else
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  if (pads.size() != 2 * axes.size())
    c.fail(fmt::format("pads has {} entries for {} axes; it needs two per axis", pads.size(), axes.size()));
  std::vector<std::int64_t> begin(static_cast<std::size_t>(rank), 0);
  std::vector<std::int64_t> end(static_cast<std::size_t>(rank), 0);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const auto a = static_cast<std::size_t>(normalize_axis(c, axes[i], rank, "an axis"));
    begin[a] = pads[i];
    end[a] = pads[i + axes.size()];
  }
  const std::int64_t mode = op::pad::mode_of(mode_name);
  if (mode < 0 || mode == op::pad::circular_mode)
    c.not_supported(fmt::format("mode \"{}\" (mase pads with constant, reflect and edge)", mode_name));
  const dims torch_order = torch_pads(c, begin, end);
  if (torch_order.empty()) return c.set_output(0, c.input(0));
  c.set_output(0, c.emit(op::pad{.pads = torch_order, .mode = mode, .value = value}, {c.input(0)}));
}

inline void convert_conv_transpose(importer& c) {
  const shape& x = c.input_shape(0);
  const tensor& w = c.constant_input(1, "the weight");
  const int spatial = x.size() - 2;
  if (spatial != 1 && spatial != 2)
    c.not_supported(fmt::format("{}-D transposed convolution (mase has 1-D and 2-D)", spatial));
  if (w.rank() != x.size()) c.fail("the weight's rank differs from the input's");
  const std::int64_t groups = c.int_attribute("group", 1);
  const std::vector<std::int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  const auto strides = c.ints_attribute("strides", ones(spatial));
  const auto dilations = c.ints_attribute("dilations", ones(spatial));
  auto output_padding = c.ints_attribute("output_padding", std::vector<std::int64_t>(spatial, 0));
  if (strides.size() != kernel.size() || dilations.size() != kernel.size() || output_padding.size() != kernel.size())
    c.fail("strides, dilations and output_padding need one entry per spatial dimension");
  // The full result has (in - 1)·stride + (k - 1)·dilation + 1 + output_padding entries per
  // dimension; ONNX removes pads[begin] and pads[end] of them, or fits output_shape.
  std::vector<std::int64_t> full(static_cast<std::size_t>(spatial));
  for (int i = 0; i < spatial; ++i) {
    const auto u = static_cast<std::size_t>(i);
    full[u] = (x[i + 2] - 1) * strides[u] + (kernel[u] - 1) * dilations[u] + 1 + output_padding[u];
  }
  std::vector<padding_pair> pads(static_cast<std::size_t>(spatial));
  const std::string auto_pad = c.string_attribute("auto_pad", "NOTSET");
  const auto output_shape = c.ints_attribute("output_shape");
  if (!output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int i = 0; i < spatial; ++i) {
      const auto u = static_cast<std::size_t>(i);
      const std::int64_t target = !output_shape.empty()
                                      ? output_shape[output_shape.size() - static_cast<std::size_t>(spatial) + u]
                                      : x[i + 2] * strides[u];
      const std::int64_t total = full[u] - target;
      if (total < 0) c.not_supported("an output_shape larger than the full transposed convolution");
      pads[u] = auto_pad == "SAME_UPPER" ? padding_pair{total / 2, total - total / 2}
                                         : padding_pair{total - total / 2, total / 2};
    }
  } else if (auto_pad == "NOTSET") {
    const auto p = c.ints_attribute("pads");
    if (!p.empty() && p.size() != 2 * pads.size()) c.fail("pads needs two entries per spatial dimension");
    for (std::size_t i = 0; i < p.size() / 2; ++i) pads[i] = {p[i], p[i + pads.size()]};
  }
  // PyTorch's padding removes the same amount at both ends; the rest is cropped by slices.
  dims padding;
  for (const auto& p : pads) {
    if (p.begin < 0 || p.end < 0) c.not_supported("negative pads");
    padding.push_back(std::min(p.begin, p.end));
  }
  ordered_map<tensor> parameters{{"weight", w}};
  const bool bias = c.has_input(2);
  if (bias) parameters.insert_or_assign("bias", c.constant_input(2, "the bias"));
  const std::int64_t in_channels = x[1];
  const std::int64_t out_channels = w.shape()[1] * groups;
  const dims k = to_dims(c, kernel, "kernel");
  const dims s = to_dims(c, strides, "strides");
  const dims d = to_dims(c, dilations, "dilations");
  const dims op_dims = to_dims(c, output_padding, "output_padding");
  node_id y = spatial == 1
                  ? c.emit(op::conv_transpose1d{.in_channels = in_channels, .out_channels = out_channels,
                                                .kernel_size = k, .stride = s, .padding = padding,
                                                .output_padding = op_dims, .groups = groups, .bias = bias, .dilation = d},
                           {c.input(0)}, std::move(parameters))
                  : c.emit(op::conv_transpose2d{.in_channels = in_channels, .out_channels = out_channels,
                                                .kernel_size = k, .stride = s, .padding = padding,
                                                .output_padding = op_dims, .groups = groups, .bias = bias, .dilation = d},
                           {c.input(0)}, std::move(parameters));
  for (int i = 0; i < spatial; ++i) {
    const padding_pair& p = pads[static_cast<std::size_t>(i)];
    if (p.begin == p.end) continue;
    const std::int64_t length = c.shape_of(y)[i + 2];
    const std::int64_t extra_begin = p.begin - padding[i];
    const std::int64_t extra_end = p.end - padding[i];
    y = c.emit(op::slice{.dim = i + 2, .start = extra_begin, .end = length - extra_end, .step = 1}, {y});
  }
  c.set_output(0, y);
}

inline void convert_tile(importer& c) {
  const std::vector<std::int64_t> repeats = c.integer_input(1, "repeats");
  if (static_cast<int>(repeats.size()) != c.input_shape(0).size())
    c.fail(fmt::format("repeats has {} entries for a rank-{} input", repeats.size(), c.input_shape(0).size()));
  c.set_output(0, c.emit(op::tile{.dims = to_dims(c, repeats, "repeats")}, {c.input(0)}));
}

// ONNX's Expand broadcasts both ways (a 1 in the target keeps the input's size); torch's expand
// takes the final shape.
inline void convert_expand(importer& c) {
  const shape& x = c.input_shape(0);
  const std::vector<std::int64_t> target = c.integer_input(1, "shape");
  const std::size_t rank = std::max(target.size(), static_cast<std::size_t>(x.size()));
  if (rank > static_cast<std::size_t>(shape::max_rank)) c.not_supported(fmt::format("a result of rank {}", rank));
  dims out;
  for (std::size_t i = 0; i < rank; ++i) {
    const std::int64_t a = i + x.size() >= rank ? x[static_cast<int>(i + x.size() - rank)] : 1;
    const std::int64_t b = i + target.size() >= rank ? target[i + target.size() - rank] : 1;
    if (a != b && a != 1 && b != 1)
      c.fail(fmt::format("the input's shape {} does not broadcast to the target", to_string(x)));
    out.push_back(a == 1 ? b : a);
  }
  if (out == x) return c.set_output(0, c.input(0));
  c.set_output(0, c.emit(op::expand{.size = out}, {c.input(0)}));
}

inline void convert_gather(importer& c) {
  const std::int64_t axis = normalize_axis(c, c.int_attribute("axis", 0), c.input_shape(0).size());
  c.set_output(0, c.emit(op::index_select{.dim = axis}, {c.input(0), c.input(1)}));
}

// torch.gather, with ONNX's negative indices (counted from the end) resolved at import: the
// indices must be constants.
inline void convert_gather_elements(importer& c) {
  const shape& x = c.input_shape(0);
  const std::int64_t axis = normalize_axis(c, c.int_attribute("axis", 0), x.size());
  tensor index = c.constant_input(1, "indices");
  const std::int64_t size = x.size() == 0 ? 1 : x[static_cast<int>(axis)];
  for (float& i : index.values())
    if (i < 0) i += static_cast<float>(size);
  c.set_output(0, c.emit(op::gather{.dim = axis}, {c.input(0), c.emit_constant(std::move(index))}));
}

// ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp: an element-wise op, a
// sum, and an element-wise op.
template <class Before, class After>
void convert_reduce_composite(importer& c) {
  const auto axes = reduce_axes(c);
  node_id x = c.input(0);
  if constexpr (std::is_same_v<Before, op::pow>) x = c.emit(op::pow{.exponent = 2.0}, {x});
  else if constexpr (!std::is_same_v<Before, void>) x = c.emit(Before{}, {x});
  if (axes) x = c.emit(op::sum{.dim = *axes, .keepdim = c.int_attribute("keepdims", 1) != 0}, {x});
  if constexpr (!std::is_same_v<After, void>) x = c.emit(After{}, {x});
  c.set_output(0, x);
}

// PyTorch's PReLU holds one slope, or one per channel (dim 1); ONNX's slope broadcasts
// numpy-style. Other slope shapes become relu(x) - slope · relu(-x).
inline void convert_prelu(importer& c) {
  const shape& x = c.input_shape(0);
  if (c.input_is_constant(1)) {
    const tensor& slope = c.constant_input(1, "slope");
    const shape& s = slope.shape();
    // [C] before opset 7 (a slope per channel); [C, 1, …] to rank - 1 from 7 (numpy broadcasting).
    bool per_channel = x.size() >= 2 && s.size() >= 1 && s[0] == x[1] &&
                       (c.opset() < 7 ? s.size() <= x.size() - 1 : s.size() == x.size() - 1);
    for (int i = 1; i < s.size(); ++i) per_channel = per_channel && s[i] == 1;
    if (s.numel() == 1 || per_channel) {
      const std::int64_t n = s.numel();
      return c.set_output(0, c.emit(op::prelu{.num_parameters = n}, {c.input(0)},
                                    {{"weight", slope.reshaped(shape{n})}}));
    }
  }
  const node_id positive = c.emit(op::relu{}, {c.input(0)});
  const node_id negative = c.emit(op::relu{}, {c.emit(op::neg{}, {c.input(0)})});
  c.set_output(0, c.emit(op::sub{}, {positive, c.emit(op::mul{}, {c.input(1), negative})}));
}

inline void convert_instance_norm(importer& c) {
  const shape& x = c.input_shape(0);
  if (x.size() < 3) c.fail("the input needs a batch, a channel and at least one spatial dimension");
  c.set_output(0, c.emit(op::instance_norm{.num_features = x[1], .eps = c.float_attribute("epsilon", 1e-5),
                                           .affine = true},
                         {c.input(0)},
                         {{"weight", c.constant_input(1, "scale")}, {"bias", c.constant_input(2, "B")}}));
}

// Range(start, limit, delta) of constants: folded at import.
inline void convert_range(importer& c) {
  const double start = c.scalar_input(0, "start");
  const double limit = c.scalar_input(1, "limit");
  const double delta = c.scalar_input(2, "delta");
  if (delta == 0.0) c.fail("delta is 0");
  const double steps = std::ceil((limit - start) / delta);
  const auto count = static_cast<std::int64_t>(std::max(0.0, std::min(steps, 1e9)));
  if (static_cast<std::size_t>(count) > max_folded_elements) c.not_supported("a Range larger than mase folds");
  std::vector<float> v;
  std::vector<std::int64_t> exact;
  const bool integer = is_integer_element_type(c.input_type(0));
  for (std::int64_t i = 0; i < count; ++i) {
    const double value = start + static_cast<double>(i) * delta;
    v.push_back(static_cast<float>(value));
    exact.push_back(importer::saturating_integer(value));
  }
  c.set_output(0, c.emit_constant(tensor(shape{count}, std::move(v)),
                                  integer ? std::optional(std::move(exact)) : std::nullopt));
}

// --- ops folded only on constants ----------------------------------------------------------
// Comparisons and logic have no op in mase's vocabulary (hardware streams numbers, not masks), but
// exporters compute constants with them: torch 1.13 writes expand(-1, …) as Equal and Where on
// the target shape. importer::convert refuses them where an input is computed at run time.

// The flat index, in an operand of shape `from` broadcast (numpy rules) to `to`, of element
// `flat` of the result.
inline std::size_t broadcast_source_index(std::size_t flat, const shape& to, const shape& from) {
  std::size_t source = 0;
  std::size_t stride = 1;
  for (int d = to.size() - 1; d >= 0; --d) {
    const auto extent = static_cast<std::size_t>(to[d]);
    const std::size_t coordinate = flat % extent;
    flat /= extent;
    const int f = from.size() - to.size() + d;
    if (f < 0) continue;
    if (from[f] != 1) source += coordinate * stride;
    stride *= static_cast<std::size_t>(from[f]);
  }
  return source;
}

// Constant input `i` as the file stored it: exact integers for integer and bool types (Equal on
// int64 shapes must not round), float32 otherwise.
template <class T>
std::vector<T> constant_values(const importer& c, int i) {
  if constexpr (std::is_same_v<T, std::int64_t>) return c.integer_input(i, "operand");
  else {
    const auto v = c.constant_input(i, "operand").values();
    return {v.begin(), v.end()};
  }
}

// A 0/1 bool constant from `test` on the broadcast operands.
template <class T, class Test>
node_id fold_predicate(importer& c, Test test) {
  const int operands = c.input_count();
  shape out = c.input_shape(0);
  for (int i = 1; i < operands; ++i) {
    const shape_result r = shape_rules::broadcast(out, c.input_shape(i));
    if (!r.ok()) c.fail(fmt::format("the input shapes {} and {} do not broadcast", to_string(out), to_string(c.input_shape(i))));
    out = r.shapes[0];
  }
  std::vector<std::vector<T>> values;
  std::vector<shape> shapes;
  for (int i = 0; i < operands; ++i) {
    values.push_back(constant_values<T>(c, i));
    shapes.push_back(c.input_shape(i));
  }
  const auto n = static_cast<std::size_t>(out.numel());
  std::vector<float> result(n);
  std::vector<std::int64_t> exact(n);
  for (std::size_t k = 0; k < n; ++k) {
    const T a = values[0][broadcast_source_index(k, out, shapes[0])];
    const T b = operands > 1 ? values[1][broadcast_source_index(k, out, shapes[1])] : T{};
    const bool truth = test(a, b);
    result[k] = truth ? 1.0f : 0.0f;
    exact[k] = truth ? 1 : 0;
  }
  return c.emit_constant(tensor(out, std::move(result)), std::move(exact));
}

// Whether every input of the node is a constant (the node can be folded at import).
inline bool inputs_all_constant(const importer& c) {
  for (int i = 0; i < c.input_count(); ++i)
    if (!c.input_is_constant(i)) return false;
  return true;
}

// Equal, Less, …, And, Or, Xor, Not: folded at import when every input is a constant, with
// integer and bool operands compared exactly as int64 (shape arithmetic on int64 must not round)
// and others as double; otherwise the op (op::compare, op::logical) runs on float32 values. Both
// apply the op's own rule (Op::holds). The result is bool.
template <class Op>
void convert_predicate(importer& c) {
  c.only_outputs(1, "");
  if (!inputs_all_constant(c)) {
    std::vector<node_id> inputs;
    for (int i = 0; i < Op::inputs.max; ++i) inputs.push_back(c.input(i));
    c.set_output(0, c.emit(Op{}, std::move(inputs)), TP::BOOL);
    return;
  }
  bool integers = true;
  for (int i = 0; i < c.input_count(); ++i) integers = integers && is_integer_element_type(c.input_type(i));
  const node_id result =
      integers ? fold_predicate<std::int64_t>(c, [](std::int64_t a, std::int64_t b) { return Op::holds(a, b); })
               : fold_predicate<double>(c, [](double a, double b) { return Op::holds(a, b); });
  c.set_output(0, result, TP::BOOL);
}

inline const std::unordered_map<std::string_view, converter>& converters() {
  static const std::unordered_map<std::string_view, converter> table{
      {"Identity", convert_identity},
      {"Dropout", convert_dropout},
      {"Constant", convert_constant},
      {"ConstantOfShape", convert_constant_of_shape},
      {"Shape", convert_shape},
      {"Size", convert_size},
      {"Cast", [](importer& c) {
         if (c.opset() < 6) c.not_supported("Cast before opset 6 (its target type is a string)");
         convert_cast(c, static_cast<int>(c.required_int_attribute("to")));
       }},
      {"CastLike", [](importer& c) { convert_cast(c, c.input_type(1)); }},
      {"Equal", convert_predicate<op::eq>},
      {"Less", convert_predicate<op::lt>},
      {"LessOrEqual", convert_predicate<op::le>},
      {"Greater", convert_predicate<op::gt>},
      {"GreaterOrEqual", convert_predicate<op::ge>},
      {"Not", convert_predicate<op::logical_not>},
      {"And", convert_predicate<op::logical_and>},
      {"Or", convert_predicate<op::logical_or>},
      {"Xor", convert_predicate<op::logical_xor>},
      {"Add", binary<op::add>},
      {"Sub", binary<op::sub>},
      {"Mul", binary<op::mul>},
      {"Div", convert_div},
      {"Pow", convert_pow},
      {"Sum", [](importer& c) { c.set_output(0, fold_inputs<op::add>(c)); }},
      {"Mean", convert_mean_of_inputs},
      {"MatMul", convert_matmul},
      {"Gemm", convert_gemm},
      {"Conv", convert_conv},
      {"BatchNormalization", convert_batch_norm},
      {"LayerNormalization", convert_layer_norm},
      {"Softmax", convert_softmax_like<op::softmax>},
      {"ReduceMean", convert_reduce<op::mean>},
      {"GlobalAveragePool", convert_global_pool<op::mean>},
      {"MaxPool", convert_pool<true>},
      {"AveragePool", convert_pool<false>},
      {"Flatten", convert_flatten},
      {"Reshape", convert_reshape},
      {"Transpose", convert_transpose},
      {"Squeeze", convert_squeeze},
      {"Unsqueeze", convert_unsqueeze},
      {"Concat", convert_concat},
      {"Split", convert_split},
      {"Slice", convert_slice},
      {"Clip", convert_clip},
      {"Relu", [](importer& c) { unary(c, op::relu{}); }},
      {"LeakyRelu", convert_leaky_relu},
      {"Elu", convert_elu},
      {"Selu", convert_selu},
      {"Celu", convert_celu},
      {"Sigmoid", [](importer& c) { unary(c, op::sigmoid{}); }},
      {"HardSigmoid", convert_hard_sigmoid},
      {"HardSwish", [](importer& c) { unary(c, op::hardswish{}); }},
      {"Tanh", [](importer& c) { unary(c, op::tanh{}); }},
      {"Softplus", convert_softplus},
      {"Softsign", [](importer& c) { unary(c, op::softsign{}); }},
      {"Erf", [](importer& c) { unary(c, op::erf{}); }},
      {"Exp", [](importer& c) { unary(c, op::exp{}); }},
      {"Neg", [](importer& c) { unary(c, op::neg{}); }},
      {"Sqrt", [](importer& c) { unary(c, op::sqrt{}); }},
      {"GatherElements", convert_gather_elements},
      {"Gather", convert_gather},
      {"Pad", convert_pad},
      {"ConvTranspose", convert_conv_transpose},
      {"Tile", convert_tile},
      {"Abs", [](importer& c) { unary(c, op::abs{}); }},
      {"Log", [](importer& c) { unary(c, op::log{}); }},
      {"Reciprocal", [](importer& c) { unary(c, op::reciprocal{}); }},
      {"Floor", [](importer& c) { unary(c, op::floor{}); }},
      {"Ceil", [](importer& c) { unary(c, op::ceil{}); }},
      {"Sign", [](importer& c) { unary(c, op::sign{}); }},
      {"Max", [](importer& c) { c.set_output(0, fold_inputs<op::maximum>(c)); }},
      {"Min", [](importer& c) { c.set_output(0, fold_inputs<op::minimum>(c)); }},
      {"Where", [](importer& c) {
         c.set_output(0, c.emit(op::where{}, {c.input(0), c.input(1), c.input(2)}), c.input_type(1));
       }},
      {"ReduceSum", convert_reduce<op::sum>},
      {"ReduceMax", convert_reduce<op::amax>},
      {"ReduceMin", convert_reduce<op::amin>},
      {"ReduceL1", convert_reduce_composite<op::abs, void>},
      {"ReduceL2", convert_reduce_composite<op::pow, op::sqrt>},
      {"ReduceSumSquare", convert_reduce_composite<op::pow, void>},
      {"ReduceLogSum", convert_reduce_composite<void, op::log>},
      {"ReduceLogSumExp", convert_reduce_composite<op::exp, op::log>},
      {"LogSoftmax", convert_softmax_like<op::log_softmax>},
      {"PRelu", convert_prelu},
      {"InstanceNormalization", convert_instance_norm},
      {"GlobalMaxPool", convert_global_pool<op::amax>},
      {"Range", convert_range},
      {"Expand", convert_expand},
  };
  return table;
}

}  // namespace mase::onnx::detail
