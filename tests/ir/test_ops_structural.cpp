// The structural ops ONNX import needs: conv_transpose1d/2d, pad, tile, expand and index_select.
// Their contract, attributes and shape rules, with expected shapes worked out by hand from
// PyTorch's documented formulas (ConvTranspose's output size, F.pad's last-dimension-first pairs,
// torch.tile's implicit ones, Tensor.expand's -1, ONNX Gather's index-shaped middle). Every shape
// check runs twice: in a static_assert and at run time.

#include <mase/ir/op/conv_transpose.hpp>
#include <mase/ir/op/expand.hpp>
#include <mase/ir/op/index_select.hpp>
#include <mase/ir/op/pad.hpp>
#include <mase/ir/op/tile.hpp>
#include <mase/ir/op_traits.hpp>
#include <mase/ir/ops.hpp>

#include <catch2/catch.hpp>

#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace {

using mase::attribute_value;
using mase::dims;
using mase::node_kind;
using mase::shape;
using mase::shape_result;
namespace op = mase::op;

constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t int64_min = std::numeric_limits<std::int64_t>::min();

template <class Op>
constexpr shape_result infer(const Op& o, std::initializer_list<shape> in) {
  return o.infer_shapes(std::span<const shape>(in.begin(), in.size()));
}

template <class Op>
constexpr bool gives(const Op& o, std::initializer_list<shape> in, const shape& expected) {
  const shape_result r = infer(o, in);
  return r.ok() && r.shapes.size() == 1 && r.shapes[0] == expected;
}

// The rule rejects `in` with a message that starts with "<op name>: ".
template <class Op>
constexpr bool fails(const Op& o, std::initializer_list<shape> in) {
  const shape_result r = infer(o, in);
  if (r.ok()) return false;
  const std::string_view why = r.error;
  return why.starts_with(Op::name) && why.substr(Op::name.size()).starts_with(": ") &&
         why.size() > Op::name.size() + 2;
}

#define CHECK_BOTH(...)         \
  do {                          \
    static_assert(__VA_ARGS__); \
    CHECK(__VA_ARGS__);         \
  } while (false)

template <auto Op>
struct holder {
  static constexpr auto value = Op;
};

template <class... Ops>
constexpr bool all_op_types = (mase::op_type<Ops> && ...);
static_assert(all_op_types<op::conv_transpose1d, op::conv_transpose2d, op::pad, op::tile, op::expand, op::index_select>);
static_assert(mase::op_with_parameters<op::conv_transpose1d> && mase::op_with_parameters<op::conv_transpose2d>);
static_assert(holder<op::conv_transpose2d{.in_channels = 2, .out_channels = 3, .kernel_size = {3}}>::value.out_channels ==
              3);
static_assert(holder<op::pad{.pads = {1, 2}, .mode = op::pad::reflect_mode, .value = 0.5}>::value.value == 0.5);
static_assert(holder<op::tile{.dims = {2, 3}}>::value.dims == dims{2, 3});
static_assert(holder<op::expand{.size = {4, -1}}>::value.size == dims{4, -1});
static_assert(holder<op::index_select{.dim = -1}>::value.dim == -1);

template <class Op>
constexpr bool named(std::string_view name, node_kind kind) {
  return Op::name == name && Op::kind::value == kind;
}
static_assert(named<op::conv_transpose1d>("conv_transpose1d", node_kind::module_related_func));
static_assert(named<op::conv_transpose2d>("conv_transpose2d", node_kind::module_related_func));
// MASE lists tile, expand and index_select as implicit functions; pad is data movement like them.
static_assert(named<op::pad>("pad", node_kind::implicit_func));
static_assert(named<op::tile>("tile", node_kind::implicit_func));
static_assert(named<op::expand>("expand", node_kind::implicit_func));
static_assert(named<op::index_select>("index_select", node_kind::implicit_func));
static_assert(op::index_select::inputs.accepts(2) && !op::index_select::inputs.accepts(1));
static_assert(op::pad::inputs.accepts(1) && !op::pad::inputs.accepts(2));

using attribute_list = std::vector<std::pair<std::string, attribute_value>>;

template <class Op>
attribute_list attributes_of(const Op& o) {
  attribute_list out;
  mase::for_each_attribute(o, [&](std::string_view name, const auto& value) {
    out.emplace_back(std::string(name), attribute_value(value));
  });
  return out;
}

bool in_vocabulary(std::string_view name) {
  for (std::string_view n : mase::op_names())
    if (n == name) return true;
  return false;
}

}  // namespace

TEST_CASE("structural ops: attributes in PyTorch's order and names", "[ir][ops]") {
  using v = attribute_value;
  using i64 = std::int64_t;
  const op::conv_transpose2d ct{.in_channels = 4, .out_channels = 6, .kernel_size = {3, 2}, .stride = {2},
                                .padding = {1, 0}, .output_padding = {1}, .groups = 2, .bias = false,
                                .dilation = {1, 2}};
  CHECK(attributes_of(ct) == attribute_list{{"in_channels", v(i64{4})},    {"out_channels", v(i64{6})},
                                            {"kernel_size", v(dims{3, 2})}, {"stride", v(dims{2})},
                                            {"padding", v(dims{1, 0})},     {"output_padding", v(dims{1})},
                                            {"groups", v(i64{2})},          {"bias", v(false)},
                                            {"dilation", v(dims{1, 2})}});
  CHECK(attributes_of(op::pad{.pads = {1, -2}, .mode = op::pad::circular_mode, .value = 2.5}) ==
        attribute_list{{"pad", v(dims{1, -2})}, {"mode", v(i64{3})}, {"value", v(2.5)}});
  CHECK(attributes_of(op::tile{.dims = {2}}) == attribute_list{{"dims", v(dims{2})}});
  CHECK(attributes_of(op::expand{.size = {2, -1}}) == attribute_list{{"size", v(dims{2, -1})}});
  CHECK(attributes_of(op::index_select{.dim = 1}) == attribute_list{{"dim", v(i64{1})}});
  // PyTorch's defaults.
  CHECK(op::conv_transpose1d{} == op::conv_transpose1d{.in_channels = 0, .out_channels = 0, .kernel_size = {},
                                                       .stride = {1}, .padding = {0}, .output_padding = {0},
                                                       .groups = 1, .bias = true, .dilation = {1}});
  CHECK(op::pad{} == op::pad{.pads = {}, .mode = op::pad::constant_mode, .value = 0.0});
  for (std::string_view name : {"conv_transpose1d", "conv_transpose2d", "pad", "tile", "expand", "index_select"}) {
    INFO(name);
    CHECK(in_vocabulary(name));
  }
}

TEST_CASE("pad: mode names map to the numbers and back", "[ir][ops]") {
  static_assert(op::pad::mode_of("constant") == op::pad::constant_mode);
  static_assert(op::pad::mode_of("reflect") == op::pad::reflect_mode);
  static_assert(op::pad::mode_of("replicate") == op::pad::replicate_mode);
  static_assert(op::pad::mode_of("edge") == op::pad::replicate_mode);  // ONNX's name
  static_assert(op::pad::mode_of("circular") == op::pad::circular_mode);
  static_assert(op::pad::mode_of("wrap") == op::pad::circular_mode);  // ONNX's name
  static_assert(op::pad::mode_of("zeros") == -1);
  for (std::int64_t m = 0; m <= 3; ++m) CHECK(op::pad::mode_of(op::pad::mode_name(m)) == m);
  CHECK(op::pad::mode_name(7) == "unknown");
}

TEST_CASE("conv_transpose1d/2d: PyTorch's output size and parameter shapes", "[ir][ops]") {
  // (L − 1)·s − 2p + d·(k − 1) + op + 1: (5 − 1)·1 − 0 + 2 + 0 + 1 = 7.
  CHECK_BOTH(gives(op::conv_transpose1d{.in_channels = 3, .out_channels = 2, .kernel_size = {3}}, {{4, 3, 5}},
                   {4, 2, 7}));
  // (5 − 1)·2 − 2 + 2 + 1 + 1 = 10.
  CHECK_BOTH(gives(op::conv_transpose1d{.in_channels = 3, .out_channels = 2, .kernel_size = {3}, .stride = {2},
                                        .padding = {1}, .output_padding = {1}},
                   {{3, 5}}, {2, 10}));
  // output_padding below dilation with stride 1: (5 − 1) − 0 + 2·2 + 1 + 1 = 10.
  CHECK_BOTH(gives(op::conv_transpose1d{.in_channels = 2, .out_channels = 2, .kernel_size = {3},
                                        .output_padding = {1}, .dilation = {2}},
                   {{1, 2, 5}}, {1, 2, 10}));
  // Groups: weight [in, out/groups, k].
  constexpr op::conv_transpose1d grouped{.in_channels = 4, .out_channels = 6, .kernel_size = {3}, .groups = 2};
  static_assert(grouped.parameters()[0].role == "weight" && grouped.parameters()[0].shape == shape{4, 3, 3});
  static_assert(grouped.parameters()[1].role == "bias" && grouped.parameters()[1].shape == shape{6});
  static_assert(op::conv_transpose1d{.in_channels = 4, .out_channels = 6, .kernel_size = {3}, .bias = false}
                    .parameters()
                    .size() == 1);

  // H: (3 − 1)·2 − 2 + 2 + 1 + 1 = 6; W: (4 − 1)·1 − 0 + 2·(2 − 1) + 0 + 1 = 6.
  CHECK_BOTH(gives(op::conv_transpose2d{.in_channels = 2, .out_channels = 3, .kernel_size = {3, 2}, .stride = {2, 1},
                                        .padding = {1, 0}, .output_padding = {1, 0}, .dilation = {1, 2}},
                   {{1, 2, 3, 4}}, {1, 3, 6, 6}));
  CHECK_BOTH(gives(op::conv_transpose2d{.in_channels = 2, .out_channels = 4, .kernel_size = {4}, .stride = {2},
                                        .padding = {1}},
                   {{2, 3, 3}}, {4, 6, 6}));  // unbatched; the classic ×2 upsampling
  constexpr op::conv_transpose2d two{.in_channels = 4, .out_channels = 2, .kernel_size = {3, 5}, .groups = 2};
  static_assert(two.parameters()[0].shape == shape{4, 1, 3, 5});

  // Errors.
  const op::conv_transpose1d base{.in_channels = 2, .out_channels = 2, .kernel_size = {3}};
  CHECK(!fails(base, {{1, 2, 4}}));
  op::conv_transpose1d bad = base;
  bad.output_padding = {1};  // not below stride 1 or dilation 1
  CHECK(fails(bad, {{1, 2, 4}}));
  bad = base;
  bad.padding = {3};  // (4 − 1) − 6 + 2 + 1 = 0
  CHECK(fails(bad, {{1, 2, 4}}));
  bad = base;
  bad.groups = 3;
  CHECK(fails(bad, {{1, 2, 4}}));
  bad = base;
  bad.kernel_size = {3, 3};
  CHECK(fails(bad, {{1, 2, 4}}));
  bad = base;
  bad.stride = {int64_max};  // overflow in (L − 1)·stride
  CHECK(fails(bad, {{1, 2, 4}}));
  CHECK(fails(base, {{1, 3, 4}}));     // channels differ
  CHECK(!fails(base, {{2, 4}}));       // unbatched
  CHECK(fails(base, {{4}}));           // rank
  CHECK(fails(base, {{1, 2, 0}}));     // empty input
  CHECK_BOTH(fails(op::conv_transpose2d{.in_channels = 2, .out_channels = 2, .kernel_size = {3}, .stride = {2},
                                        .output_padding = {2}},
                   {{1, 2, 3, 3}}));  // output_padding 2 not below stride 2 or dilation 1
}

TEST_CASE("pad: pairs from the last dimension, negative entries crop", "[ir][ops]") {
  constexpr shape x{2, 3, 4};
  CHECK_BOTH(gives(op::pad{.pads = {1, 2}}, {x}, {2, 3, 7}));
  CHECK_BOTH(gives(op::pad{.pads = {1, 2, 3, 0}}, {x}, {2, 6, 7}));
  CHECK_BOTH(gives(op::pad{.pads = {0, 0, 0, 0, 1, 1}}, {x}, {4, 3, 4}));
  CHECK_BOTH(gives(op::pad{.pads = {-1, 2, 0, -3}}, {x}, {2, 0, 5}));
  CHECK_BOTH(gives(op::pad{.pads = {-2, -2}}, {x}, {2, 3, 0}));  // cropped to nothing
  CHECK_BOTH(gives(op::pad{}, {x}, x));
  CHECK_BOTH(gives(op::pad{}, {{}}, {}));
  CHECK_BOTH(fails(op::pad{.pads = {1}}, {x}));                          // odd length
  CHECK_BOTH(fails(op::pad{.pads = {1, 1, 1, 1, 1, 1, 1, 1}}, {x}));     // 4 pairs for 3 dimensions
  CHECK_BOTH(fails(op::pad{.pads = {-3, -2}}, {x}));                     // crops 5 of 4
  CHECK_BOTH(fails(op::pad{.pads = {-5, 3}}, {x}));                      // crops more than there is
  CHECK_BOTH(fails(op::pad{.pads = {int64_min, 0}}, {x}));
  CHECK_BOTH(fails(op::pad{.pads = {int64_max, 1}}, {x}));               // overflows
  CHECK_BOTH(fails(op::pad{.pads = {1, 1}, .mode = 4}, {x}));
  // reflect: entries below the size.
  CHECK_BOTH(gives(op::pad{.pads = {3, 3}, .mode = op::pad::reflect_mode}, {x}, {2, 3, 10}));
  CHECK_BOTH(fails(op::pad{.pads = {4, 0}, .mode = op::pad::reflect_mode}, {x}));
  CHECK_BOTH(fails(op::pad{.pads = {0, 0, 0, 3}, .mode = op::pad::reflect_mode}, {x}));
  CHECK_BOTH(gives(op::pad{.pads = {-1, 3}, .mode = op::pad::reflect_mode}, {x}, {2, 3, 6}));
  // replicate: anything but an empty dimension.
  CHECK_BOTH(gives(op::pad{.pads = {9, 9}, .mode = op::pad::replicate_mode}, {x}, {2, 3, 22}));
  CHECK_BOTH(fails(op::pad{.pads = {1, 0}, .mode = op::pad::replicate_mode}, {{2, 0}}));
  CHECK_BOTH(gives(op::pad{.pads = {1, 0}, .mode = op::pad::constant_mode}, {{2, 0}}, {2, 1}));
  // circular: needs something left after cropping.
  CHECK_BOTH(gives(op::pad{.pads = {6, -1}, .mode = op::pad::circular_mode}, {x}, {2, 3, 9}));
  CHECK_BOTH(fails(op::pad{.pads = {2, -4}, .mode = op::pad::circular_mode}, {x}));
}

TEST_CASE("tile: ones prepended to the shorter of dims and the shape", "[ir][ops]") {
  CHECK_BOTH(gives(op::tile{.dims = {2, 3}}, {{2, 3}}, {4, 9}));
  CHECK_BOTH(gives(op::tile{.dims = {2}}, {{2, 3, 4}}, {2, 3, 8}));       // dims read as (1, 1, 2)
  CHECK_BOTH(gives(op::tile{.dims = {2, 3}}, {{4}}, {2, 12}));            // input read as [1, 4]
  CHECK_BOTH(gives(op::tile{.dims = {2, 1, 3}}, {{}}, {2, 1, 3}));        // a scalar
  CHECK_BOTH(gives(op::tile{}, {{2, 3}}, {2, 3}));
  CHECK_BOTH(gives(op::tile{.dims = {0, 2}}, {{2, 3}}, {0, 6}));
  CHECK_BOTH(fails(op::tile{.dims = {-1, 2}}, {{2, 3}}));
  CHECK_BOTH(fails(op::tile{.dims = {int64_max, 1}}, {{2, 3}}));
}

TEST_CASE("expand: size-1 dimensions grow, -1 keeps, new dimensions lead", "[ir][ops]") {
  CHECK_BOTH(gives(op::expand{.size = {3, 4}}, {{3, 1}}, {3, 4}));
  CHECK_BOTH(gives(op::expand{.size = {2, -1, 3}}, {{1, 3}}, {2, 1, 3}));
  CHECK_BOTH(gives(op::expand{.size = {2, 5, 3}}, {{1, 3}}, {2, 5, 3}));
  CHECK_BOTH(gives(op::expand{.size = {2, 3}}, {{}}, {2, 3}));
  CHECK_BOTH(gives(op::expand{.size = {0, 3}}, {{1, 3}}, {0, 3}));
  CHECK_BOTH(gives(op::expand{.size = {0, 3}}, {{3}}, {0, 3}));  // a new leading dimension may be 0
  CHECK_BOTH(gives(op::expand{}, {{}}, {}));
  CHECK_BOTH(fails(op::expand{.size = {3}}, {{2, 3}}));         // fewer entries than dimensions
  CHECK_BOTH(fails(op::expand{.size = {4, 3}}, {{2, 3}}));      // 2 cannot become 4
  CHECK_BOTH(fails(op::expand{.size = {1, 3}}, {{2, 3}}));      // nor shrink to 1
  CHECK_BOTH(fails(op::expand{.size = {-1, 2, 3}}, {{2, 3}}));  // -1 in a new dimension
  CHECK_BOTH(fails(op::expand{.size = {-2, 3}}, {{1, 3}}));
}

TEST_CASE("index_select: x.shape(:dim) + index.shape + x.shape(dim+1:)", "[ir][ops]") {
  CHECK_BOTH(gives(op::index_select{.dim = 0}, {{5, 3}, {4}}, {4, 3}));
  CHECK_BOTH(gives(op::index_select{.dim = 1}, {{2, 5, 3}, {2, 4}}, {2, 2, 4, 3}));
  CHECK_BOTH(gives(op::index_select{.dim = -1}, {{2, 5}, {}}, {2}));   // a scalar index drops the dimension
  CHECK_BOTH(gives(op::index_select{.dim = 0}, {{5, 3}, {0}}, {0, 3}));
  CHECK_BOTH(gives(op::index_select{.dim = 0}, {{0, 3}, {0}}, {0, 3}));  // nothing selected from nothing
  CHECK_BOTH(fails(op::index_select{.dim = 2}, {{2, 5}, {3}}));
  CHECK_BOTH(fails(op::index_select{.dim = -3}, {{2, 5}, {3}}));
  CHECK_BOTH(fails(op::index_select{}, {{}, {1}}));
  CHECK_BOTH(fails(op::index_select{}, {{0, 3}, {2}}));                // indices into an empty dimension
  CHECK_BOTH(fails(op::index_select{}, {{2, 2, 2, 2, 2}, {1, 1, 1, 1, 1}}));  // 9 dimensions
}
