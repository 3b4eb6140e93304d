// The layer ops: convolutions, normalisations, embedding, activations and pools. Expected shapes
// are worked out by hand from PyTorch's documented formulas, e.g. for a window
//   out = floor((L + 2 p - d (k - 1) - 1) / s) + 1
// and, with ceil_mode, the ceiling instead, dropping a last window that would start in the right
// padding. Every shape check also runs in a static_assert, since static graphs use the same rules.

#include <mase/ir/op/adaptive_avg_pool.hpp>
#include <mase/ir/op/avg_pool1d.hpp>
#include <mase/ir/op/avg_pool2d.hpp>
#include <mase/ir/op/avg_pool3d.hpp>
#include <mase/ir/op/batch_norm.hpp>
#include <mase/ir/op/conv.hpp>
#include <mase/ir/op/elu.hpp>
#include <mase/ir/op/embedding.hpp>
#include <mase/ir/op/gelu.hpp>
#include <mase/ir/op/group_norm.hpp>
#include <mase/ir/op/hardsigmoid.hpp>
#include <mase/ir/op/hardswish.hpp>
#include <mase/ir/op/hardtanh.hpp>
#include <mase/ir/op/layer_norm.hpp>
#include <mase/ir/op/leaky_relu.hpp>
#include <mase/ir/op/max_pool.hpp>
#include <mase/ir/op/relu6.hpp>
#include <mase/ir/op/rms_norm.hpp>
#include <mase/ir/op/selu.hpp>
#include <mase/ir/op/sigmoid.hpp>
#include <mase/ir/op/silu.hpp>
#include <mase/ir/op/softmax.hpp>
#include <mase/ir/op/softplus.hpp>
#include <mase/ir/op/softsign.hpp>
#include <mase/ir/op/tanh.hpp>

#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

using namespace mase;
using i64 = std::int64_t;

namespace Catch {
template <>
struct StringMaker<mase::shape> {
  static std::string convert(const mase::shape& s) { return mase::to_string(s); }
};
}  // namespace Catch

namespace {

template <class Op>
constexpr shape_result infer(const Op& op, const shape& x) {
  const std::array<shape, 1> in{x};
  return op.infer_shapes(in);
}

template <class Op>
constexpr bool gives(const Op& op, const shape& x, const shape& expected) {
  const shape_result r = infer(op, x);
  return r.ok() && r.shapes.size() == 1 && r.shapes[0] == expected;
}

template <class Op>
constexpr bool fails(const Op& op, const shape& x, std::string_view message_prefix) {
  const shape_result r = infer(op, x);
  return !r.ok() && std::string_view(r.error).starts_with(message_prefix);
}

std::string error_text(const shape_result& r) { return r.ok() ? "(no error)" : r.error; }

// Checks `op` on `input` gives `expected`, at compile time and at run time.
#define CHECK_SHAPE(op, input, expected)           \
  do {                                             \
    static_assert(gives(op, input, expected));     \
    const shape_result result_ = infer(op, input); \
    INFO(error_text(result_));                     \
    REQUIRE(result_.ok());                         \
    REQUIRE(result_.shapes.size() == 1);           \
    CHECK(result_.shapes[0] == (expected));        \
  } while (false)

// Checks `op` rejects `input` with a message starting with `message`, at compile and run time.
#define CHECK_FAILS(op, input, message)                                   \
  do {                                                                    \
    static_assert(fails(op, input, message));                             \
    CHECK_THAT(error_text(infer(op, input)), Catch::StartsWith(message)); \
  } while (false)

using attribute_list = std::vector<std::pair<std::string, attribute_value>>;

template <class Op>
attribute_list attributes_of(const Op& op) {
  attribute_list out;
  for_each_attribute(op, [&](std::string_view name, const auto& value) {
    out.emplace_back(std::string(name), attribute_value(std::in_place_type<std::decay_t<decltype(value)>>, value));
  });
  return out;
}

// Sets the attributes of a default op from `list` (in declaration order); with `only` >= 0 just
// that one.
template <class Op>
Op from_attributes(const attribute_list& list, int only = -1) {
  Op op{};
  int i = 0;
  for_each_attribute(op, [&](std::string_view, auto& field) {
    if (only < 0 || only == i)
      field = std::get<std::decay_t<decltype(field)>>(list[static_cast<std::size_t>(i)].second);
    ++i;
  });
  return op;
}

// `op` has every attribute set away from its default, so that the round trip covers each member:
// the names and values come out as `expected`, and building an op back from them gives `op`.
template <class Op>
void check_attributes(const Op& op, const attribute_list& expected) {
  const attribute_list got = attributes_of(op);
  REQUIRE(got.size() == expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO(Op::name << " attribute " << i << ": " << got[i].first);
    CHECK(got[i].first == expected[i].first);
    CHECK(got[i].second == expected[i].second);
    // Each attribute alone moves the op off its default: names map to distinct members, and
    // operator== compares them.
    CHECK_FALSE(from_attributes<Op>(got, static_cast<int>(i)) == Op{});
  }
  CHECK(from_attributes<Op>(got) == op);
}

// The value of the attribute called `name`, to tie names to members where a sample op cannot
// give same-typed attributes distinct values (two bools).
template <class Op>
attribute_value attribute_named(const Op& op, std::string_view name) {
  for (const auto& [n, v] : attributes_of(op))
    if (n == name) return v;
  FAIL("no attribute " << name);
  return {};
}

struct expected_parameter {
  std::string_view role;
  shape dims;
};

template <class Op>
void check_parameters(const Op& op, const std::vector<expected_parameter>& expected) {
  const parameter_list got = parameters_of(op);
  REQUIRE(got.size() == static_cast<int>(expected.size()));
  for (int i = 0; i < got.size(); ++i) {
    INFO(Op::name << " parameter " << i);
    CHECK(got[i].role == expected[static_cast<std::size_t>(i)].role);
    CHECK(got[i].shape == expected[static_cast<std::size_t>(i)].dims);
  }
}

template <auto Op>
struct holder {
  static constexpr auto value = Op;
};

template <class Op>
constexpr bool has_kind(node_kind k) {
  return Op::kind::value == k && Op::inputs.min == 1 && Op::inputs.max == 1;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The contract, at compile time.

static_assert(op_type<op::conv1d> && op_type<op::conv2d> && op_type<op::batch_norm1d> && op_type<op::batch_norm2d> &&
              op_type<op::layer_norm> && op_type<op::group_norm> && op_type<op::rms_norm> && op_type<op::embedding>);
static_assert(op_type<op::relu6> && op_type<op::leaky_relu> && op_type<op::gelu> && op_type<op::silu> &&
              op_type<op::sigmoid> && op_type<op::tanh> && op_type<op::elu> && op_type<op::selu> &&
              op_type<op::softplus> && op_type<op::softsign> && op_type<op::hardswish> && op_type<op::hardsigmoid> &&
              op_type<op::hardtanh> && op_type<op::softmax>);
static_assert(op_type<op::max_pool1d> && op_type<op::max_pool2d> && op_type<op::avg_pool1d> &&
              op_type<op::avg_pool2d> && op_type<op::adaptive_avg_pool1d> && op_type<op::adaptive_avg_pool2d>);

// The ops with weights or buffers say so; activations and pools do not.
static_assert(op_with_parameters<op::conv1d> && op_with_parameters<op::conv2d> &&
              op_with_parameters<op::batch_norm1d> && op_with_parameters<op::batch_norm2d> &&
              op_with_parameters<op::layer_norm> && op_with_parameters<op::group_norm> &&
              op_with_parameters<op::rms_norm> && op_with_parameters<op::embedding>);
static_assert(!op_with_parameters<op::gelu> && !op_with_parameters<op::max_pool2d> &&
              !op_with_parameters<op::adaptive_avg_pool2d>);

// MASE's mase_type of each (spec §1.3): batch norms are modules, embedding is implicit_func.
static_assert(has_kind<op::batch_norm1d>(node_kind::module) && has_kind<op::batch_norm2d>(node_kind::module));
static_assert(has_kind<op::embedding>(node_kind::implicit_func));
static_assert(has_kind<op::conv1d>(node_kind::module_related_func) &&
              has_kind<op::conv2d>(node_kind::module_related_func) &&
              has_kind<op::layer_norm>(node_kind::module_related_func) &&
              has_kind<op::group_norm>(node_kind::module_related_func) &&
              has_kind<op::rms_norm>(node_kind::module_related_func));
static_assert(
    has_kind<op::relu6>(node_kind::module_related_func) && has_kind<op::leaky_relu>(node_kind::module_related_func) &&
    has_kind<op::gelu>(node_kind::module_related_func) && has_kind<op::silu>(node_kind::module_related_func) &&
    has_kind<op::sigmoid>(node_kind::module_related_func) && has_kind<op::tanh>(node_kind::module_related_func) &&
    has_kind<op::elu>(node_kind::module_related_func) && has_kind<op::selu>(node_kind::module_related_func) &&
    has_kind<op::softplus>(node_kind::module_related_func) && has_kind<op::softsign>(node_kind::module_related_func) &&
    has_kind<op::hardswish>(node_kind::module_related_func) &&
    has_kind<op::hardsigmoid>(node_kind::module_related_func) &&
    has_kind<op::hardtanh>(node_kind::module_related_func) && has_kind<op::softmax>(node_kind::module_related_func));
static_assert(has_kind<op::max_pool1d>(node_kind::module_related_func) &&
              has_kind<op::max_pool2d>(node_kind::module_related_func) &&
              has_kind<op::avg_pool1d>(node_kind::module_related_func) &&
              has_kind<op::avg_pool2d>(node_kind::module_related_func) &&
              has_kind<op::adaptive_avg_pool1d>(node_kind::module_related_func) &&
              has_kind<op::adaptive_avg_pool2d>(node_kind::module_related_func));

// MASE's mase_op spellings.
static_assert(op::conv1d::name == "conv1d" && op::conv2d::name == "conv2d" &&
              op::batch_norm1d::name == "batch_norm1d" && op::batch_norm2d::name == "batch_norm2d" &&
              op::layer_norm::name == "layer_norm" && op::group_norm::name == "group_norm" &&
              op::rms_norm::name == "rms_norm" && op::embedding::name == "embedding");
static_assert(op::relu6::name == "relu6" && op::leaky_relu::name == "leaky_relu" && op::gelu::name == "gelu" &&
              op::silu::name == "silu" && op::sigmoid::name == "sigmoid" && op::tanh::name == "tanh" &&
              op::elu::name == "elu" && op::selu::name == "selu" && op::softplus::name == "softplus" &&
              op::softsign::name == "softsign" && op::hardswish::name == "hardswish" &&
              op::hardsigmoid::name == "hardsigmoid" && op::hardtanh::name == "hardtanh" &&
              op::softmax::name == "softmax");
static_assert(op::max_pool1d::name == "max_pool1d" && op::max_pool2d::name == "max_pool2d" &&
              op::avg_pool1d::name == "avg_pool1d" && op::avg_pool2d::name == "avg_pool2d" &&
              op::adaptive_avg_pool1d::name == "adaptive_avg_pool1d" &&
              op::adaptive_avg_pool2d::name == "adaptive_avg_pool2d");

// Every op is a structural type: a value of it is a template argument, and different attribute
// values give different types.
static_assert(holder<op::conv1d{.in_channels = 4, .out_channels = 6, .kernel_size = {5}}>::value.kernel_size ==
              dims{5});
static_assert(holder<op::conv2d{.in_channels = 3, .out_channels = 16, .kernel_size = {3}, .stride = {2}}>::value
                  .stride == dims{2});
static_assert(!std::is_same_v<holder<op::conv2d{.in_channels = 3}>, holder<op::conv2d{.in_channels = 4}>>);
static_assert(holder<op::batch_norm1d{.num_features = 16, .eps = 1e-3}>::value.eps == 1e-3);
static_assert(holder<op::batch_norm2d{.num_features = 16, .affine = false}>::value.affine == false);
static_assert(holder<op::layer_norm{.normalized_shape = {5, 10}}>::value.normalized_shape == dims{5, 10});
static_assert(holder<op::group_norm{.num_groups = 4, .num_channels = 12}>::value.num_groups == 4);
static_assert(holder<op::rms_norm{.normalized_shape = {64}, .eps = 1e-6}>::value.eps == 1e-6);
static_assert(holder<op::embedding{.num_embeddings = 10, .embedding_dim = 4}>::value.padding_idx == -1);
static_assert(holder<op::relu6{.inplace = true}>::value.inplace);
static_assert(holder<op::leaky_relu{.negative_slope = 0.2}>::value.negative_slope == 0.2);
static_assert(
    !std::is_same_v<holder<op::leaky_relu{.negative_slope = 0.2}>, holder<op::leaky_relu{.negative_slope = 0.3}>>);
static_assert(holder<op::gelu{.approximate_tanh = true}>::value.approximate_tanh);
static_assert(holder<op::silu{}>::value == op::silu{});
static_assert(holder<op::sigmoid{}>::value == op::sigmoid{});
static_assert(holder<op::tanh{}>::value == op::tanh{});
static_assert(holder<op::elu{.alpha = 0.5}>::value.alpha == 0.5);
static_assert(holder<op::selu{.inplace = true}>::value.inplace);
static_assert(holder<op::softplus{.beta = 2.0, .threshold = 10.0}>::value.threshold == 10.0);
static_assert(holder<op::softsign{}>::value == op::softsign{});
static_assert(holder<op::hardswish{}>::value == op::hardswish{});
static_assert(holder<op::hardsigmoid{}>::value == op::hardsigmoid{});
static_assert(holder<op::hardtanh{.min_val = -2.0, .max_val = 3.0}>::value.max_val == 3.0);
static_assert(holder<op::softmax{.dim = 1}>::value.dim == 1);
static_assert(holder<op::max_pool1d{.kernel_size = {3}}>::value.kernel_size == dims{3});
static_assert(holder<op::max_pool2d{.kernel_size = {2}, .ceil_mode = true}>::value.ceil_mode);
static_assert(holder<op::avg_pool1d{.kernel_size = {4}, .count_include_pad = false}>::value.count_include_pad == false);
static_assert(holder<op::avg_pool2d{.kernel_size = {2}, .divisor_override = 3}>::value.divisor_override == 3);
static_assert(holder<op::adaptive_avg_pool1d{.output_size = {4}}>::value.output_size == dims{4});
static_assert(holder<op::adaptive_avg_pool2d{.output_size = {5, 7}}>::value.output_size == dims{5, 7});

// PyTorch's defaults.
static_assert(op::conv2d{}.stride == dims{1} && op::conv2d{}.padding == dims{0} && op::conv2d{}.dilation == dims{1} &&
              op::conv2d{}.groups == 1 && op::conv2d{}.bias);
static_assert(op::batch_norm2d{}.eps == 1e-5 && op::batch_norm2d{}.momentum == 0.1 && op::batch_norm2d{}.affine &&
              op::batch_norm2d{}.track_running_stats);
static_assert(op::layer_norm{}.eps == 1e-5 && op::layer_norm{}.elementwise_affine && op::layer_norm{}.bias);
static_assert(op::group_norm{}.eps == 1e-5 && op::group_norm{}.affine);
static_assert(op::rms_norm{}.eps == 0x1p-23 && op::rms_norm{}.eps == std::numeric_limits<float>::epsilon());
static_assert(op::leaky_relu{}.negative_slope == 0.01 && op::elu{}.alpha == 1.0 && !op::gelu{}.approximate_tanh);
static_assert(op::softplus{}.beta == 1.0 && op::softplus{}.threshold == 20.0);
static_assert(op::hardtanh{}.min_val == -1.0 && op::hardtanh{}.max_val == 1.0 && op::softmax{}.dim == -1);
static_assert(op::max_pool2d{}.stride.empty() && op::max_pool2d{}.padding == dims{0} &&
              op::max_pool2d{}.dilation == dims{1});
static_assert(op::avg_pool2d{}.count_include_pad && op::avg_pool2d{}.divisor_override == 0 &&
              !op::avg_pool2d{}.ceil_mode);

// ---------------------------------------------------------------------------------------------
// Convolutions.

TEST_CASE("conv2d shapes follow PyTorch's formula") {
  constexpr op::conv2d c{.in_channels = 3, .out_channels = 16, .kernel_size = {3}, .stride = {2}, .padding = {1}};
  // floor((32 + 2 - 2 - 1) / 2) + 1 = 16
  CHECK_SHAPE(c, (shape{1, 3, 32, 32}), (shape{1, 16, 16, 16}));
  CHECK_SHAPE(c, (shape{3, 32, 32}), (shape{16, 16, 16}));    // unbatched
  CHECK_SHAPE(c, (shape{4, 3, 7, 9}), (shape{4, 16, 4, 5}));  // floor(6/2)+1, floor(8/2)+1

  // Per-dimension parameters: H: floor((20 - 2*2 - 1) / 1) + 1 = 16; W: floor((30 + 4 - 4 - 1) / 2) + 1 = 15.
  constexpr op::conv2d rect{.in_channels = 4,
                            .out_channels = 8,
                            .kernel_size = {3, 5},
                            .stride = {1, 2},
                            .padding = {0, 2},
                            .dilation = {2, 1}};
  CHECK_SHAPE(rect, (shape{2, 4, 20, 30}), (shape{2, 8, 16, 15}));

  // Dilation 3 spans 7 > 6, but padding 1 makes room: floor((6 + 2 - 7) / 1) + 1 = 2.
  constexpr op::conv2d dilated{
      .in_channels = 1, .out_channels = 1, .kernel_size = {3}, .padding = {1}, .dilation = {3}};
  CHECK_SHAPE(dilated, (shape{1, 1, 6, 6}), (shape{1, 1, 2, 2}));
  // A kernel exactly the size of the input gives one output.
  CHECK_SHAPE((op::conv2d{.in_channels = 2, .out_channels = 5, .kernel_size = {4}}), (shape{1, 2, 4, 4}),
              (shape{1, 5, 1, 1}));

  constexpr op::conv2d grouped{.in_channels = 6, .out_channels = 16, .kernel_size = {3}, .groups = 2};
  CHECK_SHAPE(grouped, (shape{1, 6, 10, 10}), (shape{1, 16, 8, 8}));
}

TEST_CASE("conv2d rejects inputs and attributes PyTorch rejects") {
  constexpr op::conv2d c{.in_channels = 3, .out_channels = 16, .kernel_size = {3}};
  CHECK_FAILS(c, (shape{1, 4, 32, 32}), "conv2d: the input's channel dimension differs from in_channels");
  CHECK_FAILS(c, (shape{4, 32, 32}), "conv2d: the input's channel dimension differs from in_channels");
  CHECK_FAILS(c, (shape{3, 32}), "conv2d: the input must be [N, C, H, W] or unbatched [C, H, W]");
  CHECK_FAILS(c, (shape{1, 1, 3, 32, 32}), "conv2d: the input must be");
  CHECK_FAILS(c, (shape{1, 3, 2, 32}), "conv2d: the dilated kernel is larger than the padded input");
  CHECK_FAILS((op::conv2d{.in_channels = 1, .out_channels = 1, .kernel_size = {3}, .dilation = {3}}),
              (shape{1, 1, 6, 6}), "conv2d: the dilated kernel is larger than the padded input");
  CHECK_FAILS((op::conv2d{.in_channels = 6, .out_channels = 16, .kernel_size = {3}, .groups = 4}), (shape{1, 6, 8, 8}),
              "conv2d: in_channels and out_channels must be divisible by groups");
  CHECK_FAILS((op::conv2d{.in_channels = 6, .out_channels = 16, .kernel_size = {3}, .groups = 3}), (shape{1, 6, 8, 8}),
              "conv2d: in_channels and out_channels must be divisible by groups");
  CHECK_FAILS((op::conv2d{.in_channels = 6, .out_channels = 16, .kernel_size = {3}, .groups = 0}), (shape{1, 6, 8, 8}),
              "conv2d: in_channels, out_channels and groups must be positive");
  CHECK_FAILS((op::conv2d{.in_channels = 3, .out_channels = 0, .kernel_size = {3}}), (shape{1, 3, 8, 8}),
              "conv2d: in_channels, out_channels and groups must be positive");
  CHECK_FAILS((op::conv2d{.in_channels = 3, .out_channels = 8}), (shape{1, 3, 8, 8}),
              "conv2d: kernel_size, stride, padding and dilation need 1 or 2 entries");
  CHECK_FAILS((op::conv2d{.in_channels = 3, .out_channels = 8, .kernel_size = {3, 3, 3}}), (shape{1, 3, 8, 8}),
              "conv2d: kernel_size, stride, padding and dilation need 1 or 2 entries");
  CHECK_FAILS((op::conv2d{.in_channels = 3, .out_channels = 8, .kernel_size = {3}, .padding = {}}), (shape{1, 3, 8, 8}),
              "conv2d: kernel_size, stride, padding and dilation need 1 or 2 entries");
  CHECK_FAILS((op::conv2d{.in_channels = 3, .out_channels = 8, .kernel_size = {3, 0}}), (shape{1, 3, 8, 8}),
              "conv2d: kernel_size, stride and dilation must be positive and padding non-negative");
  CHECK_FAILS((op::conv2d{.in_channels = 3, .out_channels = 8, .kernel_size = {3}, .stride = {0}}), (shape{1, 3, 8, 8}),
              "conv2d: kernel_size, stride and dilation must be positive and padding non-negative");
  CHECK_FAILS((op::conv2d{.in_channels = 3, .out_channels = 8, .kernel_size = {3}, .padding = {1, -1}}),
              (shape{1, 3, 8, 8}),
              "conv2d: kernel_size, stride and dilation must be positive and padding non-negative");
  CHECK_FAILS((op::conv2d{.in_channels = 3, .out_channels = 8, .kernel_size = {3}, .dilation = {0}}),
              (shape{1, 3, 8, 8}),
              "conv2d: kernel_size, stride and dilation must be positive and padding non-negative");
}

TEST_CASE("conv2d's weight is (out, in / groups, kH, kW)") {
  check_parameters(op::conv2d{.in_channels = 6, .out_channels = 16, .kernel_size = {3}, .groups = 2},
                   {{"weight", {16, 3, 3, 3}}, {"bias", {16}}});
  check_parameters(op::conv2d{.in_channels = 3, .out_channels = 8, .kernel_size = {3, 5}, .bias = false},
                   {{"weight", {8, 3, 3, 5}}});
  // Depthwise: one input channel per group.
  check_parameters(op::conv2d{.in_channels = 8, .out_channels = 8, .kernel_size = {3}, .groups = 8},
                   {{"weight", {8, 1, 3, 3}}, {"bias", {8}}});
  static_assert(
      parameters_of(op::conv2d{.in_channels = 6, .out_channels = 16, .kernel_size = {3}, .groups = 2})[0].shape ==
      shape{16, 3, 3, 3});
}

TEST_CASE("conv2d's attributes round-trip") {
  check_attributes(op::conv2d{.in_channels = 6,
                              .out_channels = 16,
                              .kernel_size = {3, 5},
                              .stride = {2, 1},
                              .padding = {1, 2},
                              .dilation = {3, 4},
                              .groups = 2,
                              .bias = false},
                   {{"in_channels", i64{6}},
                    {"out_channels", i64{16}},
                    {"kernel_size", dims{3, 5}},
                    {"stride", dims{2, 1}},
                    {"padding", dims{1, 2}},
                    {"dilation", dims{3, 4}},
                    {"groups", i64{2}},
                    {"bias", false}});
}

TEST_CASE("conv1d shapes, errors, parameters and attributes") {
  constexpr op::conv1d c{.in_channels = 4, .out_channels = 6, .kernel_size = {5}, .stride = {2}, .padding = {1}};
  // floor((50 + 2 - 4 - 1) / 2) + 1 = 24
  CHECK_SHAPE(c, (shape{2, 4, 50}), (shape{2, 6, 24}));
  CHECK_SHAPE(c, (shape{4, 50}), (shape{6, 24}));
  // Dilation 3, kernel 3 spans 7: floor((10 - 7) / 1) + 1 = 4.
  CHECK_SHAPE((op::conv1d{.in_channels = 4, .out_channels = 6, .kernel_size = {3}, .dilation = {3}}), (shape{1, 4, 10}),
              (shape{1, 6, 4}));

  CHECK_FAILS(c, (shape{2, 5, 50}), "conv1d: the input's channel dimension differs from in_channels");
  CHECK_FAILS(c, (shape{50}), "conv1d: the input must be [N, C, L] or unbatched [C, L]");
  CHECK_FAILS(c, (shape{1, 4, 5, 5}), "conv1d: the input must be");
  CHECK_FAILS(c, (shape{1, 4, 2}), "conv1d: the dilated kernel is larger than the padded input");
  CHECK_FAILS((op::conv1d{.in_channels = 4, .out_channels = 6, .kernel_size = {3, 3}}), (shape{1, 4, 10}),
              "conv1d: kernel_size, stride, padding and dilation need exactly 1 entry");
  CHECK_FAILS((op::conv1d{.in_channels = 4, .out_channels = 6, .kernel_size = {3}, .stride = {-1}}), (shape{1, 4, 10}),
              "conv1d: kernel_size, stride and dilation must be positive and padding non-negative");
  CHECK_FAILS((op::conv1d{.in_channels = 4, .out_channels = 6, .kernel_size = {3}, .groups = 4}), (shape{1, 4, 10}),
              "conv1d: in_channels and out_channels must be divisible by groups");
  CHECK_FAILS((op::conv1d{.in_channels = -4, .out_channels = 6, .kernel_size = {3}}), (shape{1, 4, 10}),
              "conv1d: in_channels, out_channels and groups must be positive");

  check_parameters(op::conv1d{.in_channels = 4, .out_channels = 6, .kernel_size = {5}, .groups = 2, .bias = false},
                   {{"weight", {6, 2, 5}}});
  check_parameters(c, {{"weight", {6, 4, 5}}, {"bias", {6}}});

  check_attributes(op::conv1d{.in_channels = 4,
                              .out_channels = 6,
                              .kernel_size = {5},
                              .stride = {2},
                              .padding = {1},
                              .dilation = {3},
                              .groups = 2,
                              .bias = false},
                   {{"in_channels", i64{4}},
                    {"out_channels", i64{6}},
                    {"kernel_size", dims{5}},
                    {"stride", dims{2}},
                    {"padding", dims{1}},
                    {"dilation", dims{3}},
                    {"groups", i64{2}},
                    {"bias", false}});
}

// ---------------------------------------------------------------------------------------------
// Normalisations.

TEST_CASE("batch_norm1d and batch_norm2d") {
  constexpr op::batch_norm1d bn1{.num_features = 16};
  CHECK_SHAPE(bn1, (shape{8, 16}), (shape{8, 16}));
  CHECK_SHAPE(bn1, (shape{8, 16, 100}), (shape{8, 16, 100}));
  CHECK_FAILS(bn1, (shape{8, 16, 10, 10}), "batch_norm1d: the input must be [N, C] or [N, C, L]");
  CHECK_FAILS(bn1, (shape{16}), "batch_norm1d: the input must be");
  CHECK_FAILS(bn1, (shape{8, 32}), "batch_norm1d: the input's channel dimension differs from num_features");
  CHECK_FAILS(op::batch_norm1d{}, (shape{8, 16}), "batch_norm1d: num_features must be positive");

  constexpr op::batch_norm2d bn2{.num_features = 16};
  CHECK_SHAPE(bn2, (shape{8, 16, 4, 4}), (shape{8, 16, 4, 4}));
  CHECK_FAILS(bn2, (shape{16, 4, 4}), "batch_norm2d: the input must be [N, C, H, W]");
  CHECK_FAILS(bn2, (shape{8, 15, 4, 4}), "batch_norm2d: the input's channel dimension differs from num_features");
  CHECK_FAILS((op::batch_norm2d{.num_features = -1}), (shape{8, 16, 4, 4}),
              "batch_norm2d: num_features must be positive");

  check_parameters(bn2, {{"weight", {16}}, {"bias", {16}}, {"running_mean", {16}}, {"running_var", {16}}});
  check_parameters(op::batch_norm2d{.num_features = 16, .affine = false},
                   {{"running_mean", {16}}, {"running_var", {16}}});
  check_parameters(op::batch_norm1d{.num_features = 8, .track_running_stats = false}, {{"weight", {8}}, {"bias", {8}}});
  check_parameters(op::batch_norm1d{.num_features = 8, .affine = false, .track_running_stats = false}, {});

  check_attributes(
      op::batch_norm1d{.num_features = 16, .eps = 1e-3, .momentum = 0.2, .affine = false, .track_running_stats = false},
      {{"num_features", i64{16}}, {"eps", 1e-3}, {"momentum", 0.2}, {"affine", false}, {"track_running_stats", false}});
  check_attributes(
      op::batch_norm2d{.num_features = 3, .eps = 1e-4, .momentum = 0.5, .affine = false, .track_running_stats = false},
      {{"num_features", i64{3}}, {"eps", 1e-4}, {"momentum", 0.5}, {"affine", false}, {"track_running_stats", false}});
}

TEST_CASE("layer_norm normalises the trailing dimensions") {
  constexpr op::layer_norm ln{.normalized_shape = {5, 10}};
  CHECK_SHAPE(ln, (shape{4, 5, 10}), (shape{4, 5, 10}));
  CHECK_SHAPE(ln, (shape{5, 10}), (shape{5, 10}));
  CHECK_SHAPE((op::layer_norm{.normalized_shape = {10}}), (shape{2, 3, 10}), (shape{2, 3, 10}));
  CHECK_FAILS(ln, (shape{4, 10, 5}), "layer_norm: the input's trailing dimensions differ from normalized_shape");
  CHECK_FAILS(ln, (shape{10}), "layer_norm: the input's trailing dimensions differ from normalized_shape");
  CHECK_FAILS(op::layer_norm{}, (shape{4, 10}), "layer_norm: normalized_shape needs at least one entry");
  CHECK_FAILS((op::layer_norm{.normalized_shape = {0}}), (shape{4, 0}),
              "layer_norm: normalized_shape's entries must be positive");

  check_parameters(ln, {{"weight", {5, 10}}, {"bias", {5, 10}}});
  check_parameters(op::layer_norm{.normalized_shape = {64}, .bias = false}, {{"weight", {64}}});
  check_parameters(op::layer_norm{.normalized_shape = {64}, .elementwise_affine = false}, {});

  check_attributes(op::layer_norm{.normalized_shape = {5, 10}, .eps = 1e-6, .elementwise_affine = false, .bias = false},
                   {{"normalized_shape", dims{5, 10}}, {"eps", 1e-6}, {"elementwise_affine", false}, {"bias", false}});
}

TEST_CASE("group_norm splits the channels into groups") {
  constexpr op::group_norm gn{.num_groups = 4, .num_channels = 12};
  CHECK_SHAPE(gn, (shape{2, 12, 5, 5}), (shape{2, 12, 5, 5}));
  CHECK_SHAPE(gn, (shape{2, 12}), (shape{2, 12}));
  CHECK_FAILS(gn, (shape{12}), "group_norm: the input must be [N, C, *]");
  CHECK_FAILS(gn, (shape{2, 8, 5}), "group_norm: the input's channel dimension differs from num_channels");
  CHECK_FAILS((op::group_norm{.num_groups = 5, .num_channels = 12}), (shape{2, 12}),
              "group_norm: num_channels must be divisible by num_groups");
  CHECK_FAILS((op::group_norm{.num_groups = 0, .num_channels = 12}), (shape{2, 12}),
              "group_norm: num_groups and num_channels must be positive");

  check_parameters(gn, {{"weight", {12}}, {"bias", {12}}});
  check_parameters(op::group_norm{.num_groups = 4, .num_channels = 12, .affine = false}, {});

  check_attributes(op::group_norm{.num_groups = 4, .num_channels = 12, .eps = 1e-6, .affine = false},
                   {{"num_groups", i64{4}}, {"num_channels", i64{12}}, {"eps", 1e-6}, {"affine", false}});
}

TEST_CASE("rms_norm normalises the trailing dimensions, weight only") {
  constexpr op::rms_norm rms{.normalized_shape = {64}};
  CHECK_SHAPE(rms, (shape{2, 7, 64}), (shape{2, 7, 64}));
  CHECK_FAILS(rms, (shape{2, 64, 7}), "rms_norm: the input's trailing dimensions differ from normalized_shape");
  CHECK_FAILS(op::rms_norm{}, (shape{2, 64}), "rms_norm: normalized_shape needs at least one entry");
  CHECK_FAILS((op::rms_norm{.normalized_shape = {-64}}), (shape{2, 64}),
              "rms_norm: normalized_shape's entries must be positive");

  check_parameters(op::rms_norm{.normalized_shape = {8, 64}}, {{"weight", {8, 64}}});
  check_parameters(op::rms_norm{.normalized_shape = {64}, .elementwise_affine = false}, {});

  check_attributes(op::rms_norm{.normalized_shape = {8, 64}, .eps = 1e-6, .elementwise_affine = false},
                   {{"normalized_shape", dims{8, 64}}, {"eps", 1e-6}, {"elementwise_affine", false}});
}

// ---------------------------------------------------------------------------------------------
// Embedding.

TEST_CASE("embedding appends embedding_dim to the indices' shape") {
  constexpr op::embedding e{.num_embeddings = 1000, .embedding_dim = 64};
  CHECK_SHAPE(e, (shape{4, 7}), (shape{4, 7, 64}));
  CHECK_SHAPE(e, (shape{}), (shape{64}));  // one index
  CHECK_SHAPE((op::embedding{.num_embeddings = 1000, .embedding_dim = 64, .padding_idx = 999}), (shape{3}),
              (shape{3, 64}));
  CHECK_SHAPE((op::embedding{.num_embeddings = 1000, .embedding_dim = 64, .padding_idx = 0}), (shape{3}),
              (shape{3, 64}));
  CHECK_FAILS(e, (shape{1, 1, 1, 1, 1, 1, 1, 1}), "embedding: the result would have too many dimensions");
  CHECK_FAILS((op::embedding{.num_embeddings = 1000, .embedding_dim = 64, .padding_idx = 1000}), (shape{3}),
              "embedding: padding_idx must be -1 (none) or a row index below num_embeddings");
  CHECK_FAILS((op::embedding{.num_embeddings = 1000, .embedding_dim = 64, .padding_idx = -2}), (shape{3}),
              "embedding: padding_idx must be -1 (none) or a row index below num_embeddings");
  CHECK_FAILS((op::embedding{.num_embeddings = 1000}), (shape{3}),
              "embedding: num_embeddings and embedding_dim must be positive");

  check_parameters(e, {{"weight", {1000, 64}}});
  check_attributes(op::embedding{.num_embeddings = 1000, .embedding_dim = 64, .padding_idx = 0},
                   {{"num_embeddings", i64{1000}}, {"embedding_dim", i64{64}}, {"padding_idx", i64{0}}});
}

// ---------------------------------------------------------------------------------------------
// Activations.

namespace {
template <class... Ops>
constexpr bool all_keep_shape(const shape& x) {
  return (gives(Ops{}, x, x) && ...);
}
template <class... Ops>
void check_keep_shape(const shape& x) {
  (
      [&] {
        INFO(Ops::name);
        const shape_result r = infer(Ops{}, x);
        REQUIRE(r.ok());
        CHECK(r.shapes[0] == x);
        CHECK_FALSE(op_with_parameters<Ops>);
      }(),
      ...);
}
#define MASE_ACTIVATIONS                                                                                               \
  op::relu6, op::leaky_relu, op::gelu, op::silu, op::sigmoid, op::tanh, op::elu, op::selu, op::softplus, op::softsign, \
      op::hardswish, op::hardsigmoid, op::hardtanh, op::softmax
}  // namespace

TEST_CASE("activations keep their input's shape") {
  static_assert(all_keep_shape<MASE_ACTIVATIONS>(shape{2, 3, 4}));
  static_assert(all_keep_shape<MASE_ACTIVATIONS>(shape{7}));
  static_assert(all_keep_shape<MASE_ACTIVATIONS>(shape{}));  // a scalar; softmax's dim -1 fits it too
  check_keep_shape<MASE_ACTIVATIONS>(shape{2, 3, 4});
  check_keep_shape<MASE_ACTIVATIONS>(shape{1, 1, 1, 1, 1, 1, 1, 9});
  check_keep_shape<MASE_ACTIVATIONS>(shape{});
}

TEST_CASE("hardtanh, softplus and softmax check their attributes") {
  CHECK_FAILS((op::hardtanh{.min_val = 2.0, .max_val = 1.0}), (shape{3}), "hardtanh: min_val must not exceed max_val");
  CHECK_SHAPE((op::hardtanh{.min_val = 0.5, .max_val = 0.5}), (shape{3}), (shape{3}));
  CHECK_FAILS((op::softplus{.beta = 0.0}), (shape{3}), "softplus: beta must be non-zero");
  CHECK_SHAPE((op::softplus{.beta = -1.0}), (shape{3}), (shape{3}));

  CHECK_SHAPE((op::softmax{.dim = 1}), (shape{2, 3}), (shape{2, 3}));
  CHECK_SHAPE((op::softmax{.dim = -2}), (shape{2, 3}), (shape{2, 3}));
  CHECK_SHAPE((op::softmax{.dim = 0}), (shape{}), (shape{}));
  CHECK_FAILS((op::softmax{.dim = 2}), (shape{2, 3}), "softmax: dim is out of range for the input");
  CHECK_FAILS((op::softmax{.dim = -3}), (shape{2, 3}), "softmax: dim is out of range for the input");
  CHECK_FAILS((op::softmax{.dim = 1}), (shape{}), "softmax: dim is out of range for the input");
}

TEST_CASE("activations' attributes round-trip") {
  check_attributes(op::relu6{.inplace = true}, {{"inplace", true}});
  check_attributes(op::leaky_relu{.negative_slope = 0.2, .inplace = true},
                   {{"negative_slope", 0.2}, {"inplace", true}});
  check_attributes(op::gelu{.approximate_tanh = true}, {{"approximate_tanh", true}});
  check_attributes(op::silu{.inplace = true}, {{"inplace", true}});
  check_attributes(op::sigmoid{}, {});
  check_attributes(op::tanh{}, {});
  check_attributes(op::elu{.alpha = 0.5, .inplace = true}, {{"alpha", 0.5}, {"inplace", true}});
  check_attributes(op::selu{.inplace = true}, {{"inplace", true}});
  check_attributes(op::softplus{.beta = 2.0, .threshold = 10.0}, {{"beta", 2.0}, {"threshold", 10.0}});
  check_attributes(op::softsign{}, {});
  check_attributes(op::hardswish{.inplace = true}, {{"inplace", true}});
  check_attributes(op::hardsigmoid{.inplace = true}, {{"inplace", true}});
  check_attributes(op::hardtanh{.min_val = -2.0, .max_val = 3.0, .inplace = true},
                   {{"min_val", -2.0}, {"max_val", 3.0}, {"inplace", true}});
  check_attributes(op::softmax{.dim = 1}, {{"dim", i64{1}}});
}

// ---------------------------------------------------------------------------------------------
// Pools.

TEST_CASE("max_pool2d shapes, with floor and ceil mode") {
  // stride defaults to the kernel: floor((6 - 2) / 2) + 1 = 3
  CHECK_SHAPE((op::max_pool2d{.kernel_size = {2}}), (shape{1, 1, 6, 6}), (shape{1, 1, 3, 3}));
  CHECK_SHAPE((op::max_pool2d{.kernel_size = {2}}), (shape{1, 6, 6}), (shape{1, 3, 3}));  // unbatched
  // k 3, s 2 on 6: floor(3/2) + 1 = 2; ceil(3/2) + 1 = 3.
  CHECK_SHAPE((op::max_pool2d{.kernel_size = {3}, .stride = {2}}), (shape{1, 1, 6, 6}), (shape{1, 1, 2, 2}));
  CHECK_SHAPE((op::max_pool2d{.kernel_size = {3}, .stride = {2}, .ceil_mode = true}), (shape{1, 1, 6, 6}),
              (shape{1, 1, 3, 3}));
  // k 3, s 2, p 1 on 6: floor(5/2) + 1 = 3; ceil(5/2) + 1 = 4, whose last window starts at
  // 3 * 2 = 6 < 6 + 1 (inside the input or left padding), so it stays.
  CHECK_SHAPE((op::max_pool2d{.kernel_size = {3}, .stride = {2}, .padding = {1}}), (shape{1, 1, 6, 6}),
              (shape{1, 1, 3, 3}));
  CHECK_SHAPE((op::max_pool2d{.kernel_size = {3}, .stride = {2}, .padding = {1}, .ceil_mode = true}),
              (shape{1, 1, 6, 6}), (shape{1, 1, 4, 4}));
  // k 2, s 2, p 1 on 5: ceil(5/2) + 1 = 4, but the 4th window would start at 3 * 2 = 6 >= 5 + 1,
  // wholly in the right padding, so PyTorch drops it: 3, as in floor mode.
  CHECK_SHAPE((op::max_pool2d{.kernel_size = {2}, .stride = {2}, .padding = {1}, .ceil_mode = true}),
              (shape{1, 1, 5, 5}), (shape{1, 1, 3, 3}));
  // Dilation 2 makes k 3 span 5: floor((7 - 5) / 1) + 1 = 3.
  CHECK_SHAPE((op::max_pool2d{.kernel_size = {3}, .stride = {1}, .dilation = {2}}), (shape{1, 1, 7, 7}),
              (shape{1, 1, 3, 3}));
  // Per dimension, stride = kernel (2, 3): H floor(6/2) + 1 = 4, W floor(6/3) + 1 = 3.
  CHECK_SHAPE((op::max_pool2d{.kernel_size = {2, 3}}), (shape{2, 8, 8, 9}), (shape{2, 8, 4, 3}));
}

TEST_CASE("max_pool2d rejects what PyTorch rejects") {
  CHECK_FAILS((op::max_pool2d{.kernel_size = {3}, .padding = {2}}), (shape{1, 1, 8, 8}),
              "max_pool2d: padding must be at most half the kernel size");
  CHECK_FAILS((op::max_pool2d{.kernel_size = {3, 4}, .stride = {5}, .padding = {2, 1}}), (shape{1, 20, 28, 28}),
              "max_pool2d: padding must be at most half the kernel size");
  CHECK_FAILS(op::max_pool2d{}, (shape{1, 1, 8, 8}),
              "max_pool2d: kernel_size, stride, padding and dilation need 1 or 2 entries");
  CHECK_FAILS((op::max_pool2d{.kernel_size = {2}, .stride = {1, 1, 1}}), (shape{1, 1, 8, 8}),
              "max_pool2d: kernel_size, stride, padding and dilation need 1 or 2 entries");
  CHECK_FAILS((op::max_pool2d{.kernel_size = {0}}), (shape{1, 1, 8, 8}),
              "max_pool2d: kernel_size, stride and dilation must be positive and padding non-negative");
  CHECK_FAILS((op::max_pool2d{.kernel_size = {2}, .dilation = {0}}), (shape{1, 1, 8, 8}),
              "max_pool2d: kernel_size, stride and dilation must be positive and padding non-negative");
  CHECK_FAILS((op::max_pool2d{.kernel_size = {2}}), (shape{8, 8}),
              "max_pool2d: the input must be [N, C, H, W] or unbatched [C, H, W]");
  CHECK_FAILS((op::max_pool2d{.kernel_size = {5}}), (shape{1, 1, 4, 8}),
              "max_pool2d: the dilated window is larger than the padded input");
  CHECK_FAILS((op::max_pool2d{.kernel_size = {3}, .dilation = {3}}), (shape{1, 1, 6, 6}),
              "max_pool2d: the dilated window is larger than the padded input");
}

TEST_CASE("max_pool1d shapes and errors") {
  // stride = kernel 3 on 10: floor(7/3) + 1 = 3; ceil(7/3) + 1 = 4 (the last window starts at 9 < 10).
  CHECK_SHAPE((op::max_pool1d{.kernel_size = {3}}), (shape{2, 4, 10}), (shape{2, 4, 3}));
  CHECK_SHAPE((op::max_pool1d{.kernel_size = {3}}), (shape{4, 10}), (shape{4, 3}));
  CHECK_SHAPE((op::max_pool1d{.kernel_size = {3}, .ceil_mode = true}), (shape{2, 4, 10}), (shape{2, 4, 4}));
  CHECK_SHAPE((op::max_pool1d{.kernel_size = {4}, .stride = {1}, .padding = {2}}), (shape{1, 1, 5}),
              (shape{1, 1, 6}));  // floor((5 + 4 - 4) / 1) + 1
  CHECK_FAILS((op::max_pool1d{.kernel_size = {3, 3}}), (shape{2, 4, 10}),
              "max_pool1d: kernel_size, stride, padding and dilation need exactly 1 entry");
  CHECK_FAILS((op::max_pool1d{.kernel_size = {3}, .padding = {-1}}), (shape{2, 4, 10}),
              "max_pool1d: kernel_size, stride and dilation must be positive and padding non-negative");
  CHECK_FAILS((op::max_pool1d{.kernel_size = {4}, .padding = {3}}), (shape{2, 4, 10}),
              "max_pool1d: padding must be at most half the kernel size");
  CHECK_FAILS((op::max_pool1d{.kernel_size = {3}}), (shape{10}),
              "max_pool1d: the input must be [N, C, L] or unbatched [C, L]");
  CHECK_FAILS((op::max_pool1d{.kernel_size = {11}}), (shape{2, 4, 10}),
              "max_pool1d: the dilated window is larger than the padded input");
}

TEST_CASE("avg_pool2d and avg_pool1d") {
  CHECK_SHAPE((op::avg_pool2d{.kernel_size = {2}}), (shape{1, 3, 32, 32}), (shape{1, 3, 16, 16}));
  // k 3, s 2, p 1 on 7: floor(6/2) + 1 = 4, and ceil adds nothing (6 is a multiple of 2).
  CHECK_SHAPE((op::avg_pool2d{.kernel_size = {3}, .stride = {2}, .padding = {1}}), (shape{1, 3, 7, 7}),
              (shape{1, 3, 4, 4}));
  CHECK_SHAPE((op::avg_pool2d{.kernel_size = {3}, .stride = {2}, .padding = {1}, .ceil_mode = true}),
              (shape{1, 3, 7, 7}), (shape{1, 3, 4, 4}));
  // k 3, s 2 on 8: floor(5/2) + 1 = 3; ceil 4 (the last window starts at 6 < 8).
  CHECK_SHAPE((op::avg_pool2d{.kernel_size = {3}, .stride = {2}, .ceil_mode = true}), (shape{3, 8, 8}),
              (shape{3, 4, 4}));
  CHECK_SHAPE((op::avg_pool2d{.kernel_size = {2}, .divisor_override = 5}), (shape{1, 1, 4, 6}), (shape{1, 1, 2, 3}));
  CHECK_FAILS((op::avg_pool2d{.kernel_size = {3}, .padding = {2}}), (shape{1, 1, 8, 8}),
              "avg_pool2d: padding must be at most half the kernel size");
  CHECK_FAILS((op::avg_pool2d{.kernel_size = {2}, .divisor_override = -1}), (shape{1, 1, 8, 8}),
              "avg_pool2d: divisor_override must be positive, or 0 for none");
  CHECK_FAILS((op::avg_pool2d{.kernel_size = {2, 2, 2}}), (shape{1, 1, 8, 8}),
              "avg_pool2d: kernel_size, stride and padding need 1 or 2 entries");
  CHECK_FAILS((op::avg_pool2d{.kernel_size = {2}, .stride = {0}}), (shape{1, 1, 8, 8}),
              "avg_pool2d: kernel_size and stride must be positive and padding non-negative");
  CHECK_FAILS((op::avg_pool2d{.kernel_size = {2}}), (shape{1, 1, 1, 8, 8}), "avg_pool2d: the input must be");
  CHECK_FAILS((op::avg_pool2d{.kernel_size = {9}}), (shape{1, 1, 8, 8}),
              "avg_pool2d: the window is larger than the padded input");

  // k 4, s 2, p 2 on 9: floor(9/2) + 1 = 5; ceil(9/2) + 1 = 6 (the last window starts at 10 < 9 + 2).
  CHECK_SHAPE((op::avg_pool1d{.kernel_size = {4}, .stride = {2}, .padding = {2}}), (shape{1, 2, 9}), (shape{1, 2, 5}));
  CHECK_SHAPE((op::avg_pool1d{.kernel_size = {4}, .stride = {2}, .padding = {2}, .ceil_mode = true}), (shape{1, 2, 9}),
              (shape{1, 2, 6}));
  CHECK_SHAPE((op::avg_pool1d{.kernel_size = {3}}), (shape{2, 9}), (shape{2, 3}));
  CHECK_FAILS((op::avg_pool1d{.kernel_size = {3}, .padding = {2}}), (shape{1, 2, 9}),
              "avg_pool1d: padding must be at most half the kernel size");
  CHECK_FAILS((op::avg_pool1d{.kernel_size = {3}, .stride = {1, 1}}), (shape{1, 2, 9}),
              "avg_pool1d: kernel_size, stride and padding need exactly 1 entry");
  CHECK_FAILS((op::avg_pool1d{.kernel_size = {-3}}), (shape{1, 2, 9}),
              "avg_pool1d: kernel_size and stride must be positive and padding non-negative");
  CHECK_FAILS((op::avg_pool1d{.kernel_size = {3}}), (shape{1, 2, 3, 9}),
              "avg_pool1d: the input must be [N, C, L] or unbatched [C, L]");
  CHECK_FAILS((op::avg_pool1d{.kernel_size = {10}}), (shape{1, 2, 9}),
              "avg_pool1d: the window is larger than the padded input");
}

TEST_CASE("adaptive average pools produce output_size") {
  CHECK_SHAPE((op::adaptive_avg_pool2d{.output_size = {1}}), (shape{8, 512, 7, 7}), (shape{8, 512, 1, 1}));
  CHECK_SHAPE((op::adaptive_avg_pool2d{.output_size = {5, 7}}), (shape{1, 3, 32, 32}), (shape{1, 3, 5, 7}));
  CHECK_SHAPE((op::adaptive_avg_pool2d{.output_size = {10}}), (shape{3, 4, 4}), (shape{3, 10, 10}));     // may grow
  CHECK_SHAPE((op::adaptive_avg_pool2d{.output_size = {2}}), (shape{0, 3, 4, 4}), (shape{0, 3, 2, 2}));  // empty batch
  CHECK_FAILS((op::adaptive_avg_pool2d{.output_size = {1, 2, 3}}), (shape{1, 3, 4, 4}),
              "adaptive_avg_pool2d: output_size needs 1 or 2 entries");
  CHECK_FAILS(op::adaptive_avg_pool2d{}, (shape{1, 3, 4, 4}), "adaptive_avg_pool2d: output_size needs 1 or 2 entries");
  CHECK_FAILS((op::adaptive_avg_pool2d{.output_size = {2, 0}}), (shape{1, 3, 4, 4}),
              "adaptive_avg_pool2d: output_size's entries must be positive");
  CHECK_FAILS((op::adaptive_avg_pool2d{.output_size = {2}}), (shape{4, 4}),
              "adaptive_avg_pool2d: the input must be [N, C, H, W] or unbatched [C, H, W]");
  CHECK_FAILS((op::adaptive_avg_pool2d{.output_size = {2}}), (shape{1, 3, 0, 4}),
              "adaptive_avg_pool2d: the input's channel and spatial dimensions must be non-empty");
  CHECK_FAILS((op::adaptive_avg_pool2d{.output_size = {2}}), (shape{1, 0, 4, 4}),
              "adaptive_avg_pool2d: the input's channel and spatial dimensions must be non-empty");

  CHECK_SHAPE((op::adaptive_avg_pool1d{.output_size = {4}}), (shape{2, 3, 16}), (shape{2, 3, 4}));
  CHECK_SHAPE((op::adaptive_avg_pool1d{.output_size = {4}}), (shape{3, 5}), (shape{3, 4}));
  CHECK_FAILS((op::adaptive_avg_pool1d{.output_size = {1, 1}}), (shape{2, 3, 16}),
              "adaptive_avg_pool1d: output_size needs exactly 1 entry");
  CHECK_FAILS((op::adaptive_avg_pool1d{.output_size = {-4}}), (shape{2, 3, 16}),
              "adaptive_avg_pool1d: output_size's entries must be positive");
  CHECK_FAILS((op::adaptive_avg_pool1d{.output_size = {4}}), (shape{16}),
              "adaptive_avg_pool1d: the input must be [N, C, L] or unbatched [C, L]");
  CHECK_FAILS((op::adaptive_avg_pool1d{.output_size = {4}}), (shape{2, 3, 0}),
              "adaptive_avg_pool1d: the input's channel and spatial dimensions must be non-empty");
}

TEST_CASE("pools have no parameters, and their attributes round-trip") {
  check_parameters(op::max_pool2d{.kernel_size = {2}}, {});
  check_parameters(op::adaptive_avg_pool1d{.output_size = {4}}, {});
  check_attributes(
      op::max_pool1d{.kernel_size = {3}, .stride = {2}, .padding = {1}, .dilation = {4}, .ceil_mode = true},
      {{"kernel_size", dims{3}},
       {"stride", dims{2}},
       {"padding", dims{1}},
       {"dilation", dims{4}},
       {"ceil_mode", true}});
  check_attributes(
      op::max_pool2d{.kernel_size = {3, 3}, .stride = {2, 2}, .padding = {1, 1}, .dilation = {1, 2}, .ceil_mode = true},
      {{"kernel_size", dims{3, 3}},
       {"stride", dims{2, 2}},
       {"padding", dims{1, 1}},
       {"dilation", dims{1, 2}},
       {"ceil_mode", true}});
  check_attributes(
      op::avg_pool1d{.kernel_size = {4}, .stride = {3}, .padding = {2}, .ceil_mode = true, .count_include_pad = false},
      {{"kernel_size", dims{4}},
       {"stride", dims{3}},
       {"padding", dims{2}},
       {"ceil_mode", true},
       {"count_include_pad", false}});
  check_attributes(op::avg_pool2d{.kernel_size = {3},
                                  .stride = {2},
                                  .padding = {1},
                                  .ceil_mode = true,
                                  .count_include_pad = false,
                                  .divisor_override = 5},
                   {{"kernel_size", dims{3}},
                    {"stride", dims{2}},
                    {"padding", dims{1}},
                    {"ceil_mode", true},
                    {"count_include_pad", false},
                    {"divisor_override", i64{5}}});
  check_attributes(op::adaptive_avg_pool1d{.output_size = {4}}, {{"output_size", dims{4}}});
  check_attributes(op::adaptive_avg_pool2d{.output_size = {5, 7}}, {{"output_size", dims{5, 7}}});
}

// ---------------------------------------------------------------------------------------------
// 3-d ops (torch.nn.Conv3d, MaxPool3d, AvgPool3d, BatchNorm3d): the window rule of the 2-d ones
// along D, H and W.

TEST_CASE("conv3d shapes, errors, parameters and attributes") {
  constexpr op::conv3d c{.in_channels = 3, .out_channels = 8, .kernel_size = {3}, .stride = {2}, .padding = {1}};
  // floor((16 + 2 - 2 - 1) / 2) + 1 = 8 along each of D, H, W.
  CHECK_SHAPE(c, (shape{2, 3, 16, 16, 16}), (shape{2, 8, 8, 8, 8}));
  CHECK_SHAPE(c, (shape{3, 16, 16, 16}), (shape{8, 8, 8, 8}));  // unbatched
  // Per dimension: k (1, 3, 5), s (1, 2, 1), p (0, 1, 2), d (1, 1, 2):
  // D (4 - 1) / 1 + 1 = 4, H (9 + 2 - 3) / 2 + 1 = 5, W (10 + 4 - 9) / 1 + 1 = 6.
  CHECK_SHAPE((op::conv3d{.in_channels = 4,
                          .out_channels = 6,
                          .kernel_size = {1, 3, 5},
                          .stride = {1, 2, 1},
                          .padding = {0, 1, 2},
                          .dilation = {1, 1, 2},
                          .groups = 2}),
              (shape{1, 4, 4, 9, 10}), (shape{1, 6, 4, 5, 6}));

  CHECK_FAILS(c, (shape{2, 4, 16, 16, 16}), "conv3d: the input's channel dimension differs from in_channels");
  CHECK_FAILS(c, (shape{3, 16, 16}), "conv3d: the input must be [N, C, D, H, W] or unbatched [C, D, H, W]");
  CHECK_FAILS(c, (shape{1, 1, 3, 16, 16, 16}), "conv3d: the input must be");
  CHECK_FAILS((op::conv3d{.in_channels = 3, .out_channels = 8, .kernel_size = {3}}), (shape{1, 3, 2, 16, 16}),
              "conv3d: the dilated kernel is larger than the padded input");
  CHECK_FAILS((op::conv3d{.in_channels = 3, .out_channels = 8, .kernel_size = {3, 3}}), (shape{1, 3, 8, 8, 8}),
              "conv3d: kernel_size, stride, padding and dilation need 1 or 3 entries");
  CHECK_FAILS((op::conv3d{.in_channels = 3, .out_channels = 8, .kernel_size = {3}, .padding = {-1}}),
              (shape{1, 3, 8, 8, 8}),
              "conv3d: kernel_size, stride and dilation must be positive and padding non-negative");
  CHECK_FAILS((op::conv3d{.in_channels = 6, .out_channels = 8, .kernel_size = {3}, .groups = 4}),
              (shape{1, 6, 8, 8, 8}), "conv3d: in_channels and out_channels must be divisible by groups");
  CHECK_FAILS((op::conv3d{.in_channels = 3, .out_channels = 8, .kernel_size = {3}, .groups = 0}),
              (shape{1, 3, 8, 8, 8}), "conv3d: in_channels, out_channels and groups must be positive");

  check_parameters(op::conv3d{.in_channels = 6, .out_channels = 4, .kernel_size = {1, 3, 5}, .groups = 2},
                   {{"weight", {4, 3, 1, 3, 5}}, {"bias", {4}}});
  check_parameters(op::conv3d{.in_channels = 2, .out_channels = 4, .kernel_size = {3}, .bias = false},
                   {{"weight", {4, 2, 3, 3, 3}}});
  check_attributes(op::conv3d{.in_channels = 6,
                              .out_channels = 4,
                              .kernel_size = {1, 3, 5},
                              .stride = {2, 1, 1},
                              .padding = {0, 1, 2},
                              .dilation = {3, 1, 1},
                              .groups = 2,
                              .bias = false},
                   {{"in_channels", i64{6}},
                    {"out_channels", i64{4}},
                    {"kernel_size", dims{1, 3, 5}},
                    {"stride", dims{2, 1, 1}},
                    {"padding", dims{0, 1, 2}},
                    {"dilation", dims{3, 1, 1}},
                    {"groups", i64{2}},
                    {"bias", false}});
  static_assert(op_type<op::conv3d> && op_with_parameters<op::conv3d> &&
                has_kind<op::conv3d>(node_kind::module_related_func) && op::conv3d::name == "conv3d");
}

TEST_CASE("max_pool3d and avg_pool3d shapes and errors") {
  // stride = kernel 2 on (4, 6, 8): (2, 3, 4).
  CHECK_SHAPE((op::max_pool3d{.kernel_size = {2}}), (shape{1, 3, 4, 6, 8}), (shape{1, 3, 2, 3, 4}));
  CHECK_SHAPE((op::max_pool3d{.kernel_size = {2}}), (shape{3, 4, 6, 8}), (shape{3, 2, 3, 4}));  // unbatched
  // k 3, s 2 on 6: floor(3/2) + 1 = 2; ceil 3 (the last window starts at 4 < 6). Along D
  // k 1, s 1: unchanged.
  CHECK_SHAPE((op::max_pool3d{.kernel_size = {1, 3, 3}, .stride = {1, 2, 2}, .ceil_mode = true}), (shape{1, 1, 5, 6, 6}),
              (shape{1, 1, 5, 3, 3}));
  // Dilation 2 makes k 3 span 5: (7 - 5) + 1 = 3.
  CHECK_SHAPE((op::max_pool3d{.kernel_size = {3}, .stride = {1}, .dilation = {2}}), (shape{1, 1, 7, 7, 7}),
              (shape{1, 1, 3, 3, 3}));
  CHECK_FAILS((op::max_pool3d{.kernel_size = {3}, .padding = {0, 2, 0}}), (shape{1, 1, 8, 8, 8}),
              "max_pool3d: padding must be at most half the kernel size");
  CHECK_FAILS((op::max_pool3d{.kernel_size = {2, 2}}), (shape{1, 1, 8, 8, 8}),
              "max_pool3d: kernel_size, stride, padding and dilation need 1 or 3 entries");
  CHECK_FAILS((op::max_pool3d{.kernel_size = {2}, .dilation = {0}}), (shape{1, 1, 8, 8, 8}),
              "max_pool3d: kernel_size, stride and dilation must be positive and padding non-negative");
  CHECK_FAILS((op::max_pool3d{.kernel_size = {2}}), (shape{1, 8, 8}),
              "max_pool3d: the input must be [N, C, D, H, W] or unbatched [C, D, H, W]");
  CHECK_FAILS((op::max_pool3d{.kernel_size = {3}}), (shape{1, 1, 2, 8, 8}),
              "max_pool3d: the dilated window is larger than the padded input");

  // k 3, s 2, p 1 on 7: floor(6/2) + 1 = 4.
  CHECK_SHAPE((op::avg_pool3d{.kernel_size = {3}, .stride = {2}, .padding = {1}}), (shape{2, 3, 7, 7, 7}),
              (shape{2, 3, 4, 4, 4}));
  // k 2, s 2, p 1 on 5 with ceil_mode: ceil(5/2) + 1 = 4, but the 4th window would start at
  // 6 >= 5 + 1, in the right padding: 3.
  CHECK_SHAPE((op::avg_pool3d{.kernel_size = {2}, .stride = {2}, .padding = {1}, .ceil_mode = true}),
              (shape{1, 1, 5, 5, 5}), (shape{1, 1, 3, 3, 3}));
  CHECK_SHAPE((op::avg_pool3d{.kernel_size = {2}, .divisor_override = 3}), (shape{1, 4, 6, 8}), (shape{1, 2, 3, 4}));
  CHECK_FAILS((op::avg_pool3d{.kernel_size = {2}, .divisor_override = -2}), (shape{1, 1, 8, 8, 8}),
              "avg_pool3d: divisor_override must be positive, or 0 for none");
  CHECK_FAILS((op::avg_pool3d{.kernel_size = {3}, .padding = {2}}), (shape{1, 1, 8, 8, 8}),
              "avg_pool3d: padding must be at most half the kernel size");
  CHECK_FAILS((op::avg_pool3d{.kernel_size = {2}, .stride = {1, 1}}), (shape{1, 1, 8, 8, 8}),
              "avg_pool3d: kernel_size, stride and padding need 1 or 3 entries");
  CHECK_FAILS((op::avg_pool3d{.kernel_size = {2}, .stride = {0}}), (shape{1, 1, 8, 8, 8}),
              "avg_pool3d: kernel_size and stride must be positive and padding non-negative");
  CHECK_FAILS((op::avg_pool3d{.kernel_size = {2}}), (shape{1, 1, 1, 8, 8, 8}), "avg_pool3d: the input must be");
  CHECK_FAILS((op::avg_pool3d{.kernel_size = {9}}), (shape{1, 1, 8, 8, 8}),
              "avg_pool3d: the window is larger than the padded input");

  check_attributes(op::max_pool3d{.kernel_size = {1, 2, 3}, .stride = {1, 1, 2}, .padding = {0, 1, 1},
                                  .dilation = {1, 2, 1}, .ceil_mode = true},
                   {{"kernel_size", dims{1, 2, 3}},
                    {"stride", dims{1, 1, 2}},
                    {"padding", dims{0, 1, 1}},
                    {"dilation", dims{1, 2, 1}},
                    {"ceil_mode", true}});
  check_attributes(op::avg_pool3d{.kernel_size = {2}, .stride = {1}, .padding = {1}, .ceil_mode = true,
                                  .count_include_pad = false, .divisor_override = 4},
                   {{"kernel_size", dims{2}},
                    {"stride", dims{1}},
                    {"padding", dims{1}},
                    {"ceil_mode", true},
                    {"count_include_pad", false},
                    {"divisor_override", i64{4}}});
  static_assert(op_type<op::max_pool3d> && op_type<op::avg_pool3d> && !op_with_parameters<op::max_pool3d> &&
                !op_with_parameters<op::avg_pool3d> && has_kind<op::max_pool3d>(node_kind::module_related_func) &&
                has_kind<op::avg_pool3d>(node_kind::module_related_func));
}

TEST_CASE("batch_norm3d takes (N, C, D, H, W)") {
  constexpr op::batch_norm3d bn{.num_features = 4};
  CHECK_SHAPE(bn, (shape{2, 4, 3, 5, 5}), (shape{2, 4, 3, 5, 5}));
  CHECK_FAILS(bn, (shape{2, 4, 5, 5}), "batch_norm3d: the input must be [N, C, D, H, W]");
  CHECK_FAILS(bn, (shape{4, 3, 5, 5}), "batch_norm3d: the input must be [N, C, D, H, W]");
  CHECK_FAILS(bn, (shape{2, 3, 3, 5, 5}), "batch_norm3d: the input's channel dimension differs from num_features");
  CHECK_FAILS(op::batch_norm3d{}, (shape{2, 4, 3, 5, 5}), "batch_norm3d: num_features must be positive");
  check_parameters(bn, {{"weight", {4}}, {"bias", {4}}, {"running_mean", {4}}, {"running_var", {4}}});
  check_parameters(op::batch_norm3d{.num_features = 4, .affine = false, .track_running_stats = false}, {});
  check_attributes(
      op::batch_norm3d{.num_features = 3, .eps = 1e-4, .momentum = 0.5, .affine = false, .track_running_stats = false},
      {{"num_features", i64{3}}, {"eps", 1e-4}, {"momentum", 0.5}, {"affine", false}, {"track_running_stats", false}});
  static_assert(has_kind<op::batch_norm3d>(node_kind::module) && op::batch_norm3d::name == "batch_norm3d");
}

TEST_CASE("two bool attributes of one op are not mixed up") {
  CHECK(attribute_named(op::batch_norm1d{.affine = false}, "affine") == attribute_value(false));
  CHECK(attribute_named(op::batch_norm1d{.affine = false}, "track_running_stats") == attribute_value(true));
  CHECK(attribute_named(op::batch_norm2d{.track_running_stats = false}, "affine") == attribute_value(true));
  CHECK(attribute_named(op::batch_norm2d{.track_running_stats = false}, "track_running_stats") ==
        attribute_value(false));
  CHECK(attribute_named(op::layer_norm{.bias = false}, "bias") == attribute_value(false));
  CHECK(attribute_named(op::layer_norm{.bias = false}, "elementwise_affine") == attribute_value(true));
  CHECK(attribute_named(op::avg_pool1d{.ceil_mode = true}, "ceil_mode") == attribute_value(true));
  CHECK(attribute_named(op::avg_pool1d{.ceil_mode = true}, "count_include_pad") == attribute_value(true));
  CHECK(attribute_named(op::avg_pool2d{.count_include_pad = false}, "ceil_mode") == attribute_value(false));
  CHECK(attribute_named(op::avg_pool2d{.count_include_pad = false}, "count_include_pad") == attribute_value(false));
}
