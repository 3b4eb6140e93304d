// The arithmetic and data-movement ops: their contract, attributes and shape rules. Expected
// shapes are worked out by hand from PyTorch's documented semantics (torch.matmul's 1-D and
// batch rules, Python slicing, reshape's -1, …). Every shape check runs twice: in a
// static_assert (the rules are constexpr, so static graphs check shapes at compile time) and at
// run time.

#include <mase/ir/op/bmm.hpp>
#include <mase/ir/op/cat.hpp>
#include <mase/ir/op/div.hpp>
#include <mase/ir/op/erf.hpp>
#include <mase/ir/op/exp.hpp>
#include <mase/ir/op/flatten.hpp>
#include <mase/ir/op/gather.hpp>
#include <mase/ir/op/identity.hpp>
#include <mase/ir/op/matmul.hpp>
#include <mase/ir/op/mean.hpp>
#include <mase/ir/op/mul.hpp>
#include <mase/ir/op/neg.hpp>
#include <mase/ir/op/permute.hpp>
#include <mase/ir/op/pow.hpp>
#include <mase/ir/op/reshape.hpp>
#include <mase/ir/op/scaled_dot_product_attention.hpp>
#include <mase/ir/op/slice.hpp>
#include <mase/ir/op/sqrt.hpp>
#include <mase/ir/op/squeeze.hpp>
#include <mase/ir/op/sub.hpp>
#include <mase/ir/op/transpose.hpp>
#include <mase/ir/op/unsqueeze.hpp>
#include <mase/ir/op/view.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>
#include <tuple>
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

template <class Op>
constexpr shape_result infer(const Op& o, std::initializer_list<shape> in) {
  return o.infer_shapes(std::span<const shape>(in.begin(), in.size()));
}

// The rule accepts `in` and gives exactly one result, `expected`.
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

// Checked at compile time and again at run time.
#define CHECK_BOTH(...)         \
  do {                          \
    static_assert(__VA_ARGS__); \
    CHECK(__VA_ARGS__);         \
  } while (false)

// Every op of this file satisfies the contract and is a structural type (usable as a template
// argument, which static graphs need).
template <auto Op>
struct holder {
  static constexpr auto value = Op;
};

template <class... Ops>
constexpr bool all_op_types = (mase::op_type<Ops> && ...);
static_assert(all_op_types<op::sub, op::mul, op::div, op::matmul, op::bmm, op::mean, op::pow, op::sqrt, op::erf,
                           op::neg, op::exp, op::scaled_dot_product_attention, op::identity, op::flatten, op::reshape,
                           op::view, op::permute, op::transpose, op::squeeze, op::unsqueeze, op::cat, op::slice,
                           op::gather>);

static_assert(holder<op::sub{}>::value == op::sub{});
static_assert(holder<op::mul{}>::value == op::mul{});
static_assert(holder<op::div{}>::value == op::div{});
static_assert(holder<op::matmul{}>::value == op::matmul{});
static_assert(holder<op::bmm{}>::value == op::bmm{});
static_assert(holder<op::mean{.dim = {1, -1}, .keepdim = true}>::value.dim == dims{1, -1});
static_assert(holder<op::pow{.exponent = 0.5}>::value.exponent == 0.5);
static_assert(holder<op::sqrt{}>::value == op::sqrt{});
static_assert(holder<op::erf{}>::value == op::erf{});
static_assert(holder<op::neg{}>::value == op::neg{});
static_assert(holder<op::exp{}>::value == op::exp{});
static_assert(holder<op::scaled_dot_product_attention{.dropout_p = 0.1, .is_causal = true, .scale = 0.125}>::value
                  .is_causal);
static_assert(holder<op::identity{}>::value == op::identity{});
static_assert(holder<op::flatten{.start_dim = 0, .end_dim = 2}>::value.end_dim == 2);
static_assert(holder<op::reshape{.shape = {4, -1}}>::value.shape == dims{4, -1});
static_assert(holder<op::view{.shape = {-1}}>::value.shape == dims{-1});
static_assert(holder<op::permute{.dims = {2, 0, 1}}>::value.dims == dims{2, 0, 1});
static_assert(holder<op::transpose{.dim0 = -1, .dim1 = -2}>::value.dim0 == -1);
static_assert(holder<op::squeeze{.dim = {0}}>::value.dim == dims{0});
static_assert(holder<op::unsqueeze{.dim = -1}>::value.dim == -1);
static_assert(holder<op::cat{.dim = 1}>::value.dim == 1);
static_assert(holder<op::slice{.dim = 1, .start = -3, .end = 8, .step = 2}>::value.step == 2);
static_assert(holder<op::gather{.dim = 1}>::value.dim == 1);

// MASE's mase_op names and mase_type kinds (spec §1.3; exp is not in MASE's lists).
template <class Op>
constexpr bool named(std::string_view name, node_kind kind) {
  return Op::name == name && Op::kind::value == kind;
}
static_assert(named<op::sub>("sub", node_kind::builtin_func));
static_assert(named<op::mul>("mul", node_kind::builtin_func));
static_assert(named<op::div>("div", node_kind::builtin_func));
static_assert(named<op::matmul>("matmul", node_kind::builtin_func));
static_assert(named<op::bmm>("bmm", node_kind::builtin_func));
static_assert(named<op::mean>("mean", node_kind::builtin_func));
static_assert(named<op::pow>("pow", node_kind::builtin_func));
static_assert(named<op::sqrt>("sqrt", node_kind::builtin_func));
static_assert(named<op::erf>("erf", node_kind::builtin_func));
static_assert(named<op::neg>("neg", node_kind::builtin_func));
static_assert(named<op::exp>("exp", node_kind::builtin_func));
static_assert(named<op::scaled_dot_product_attention>("scaled_dot_product_attention", node_kind::builtin_func));
static_assert(named<op::identity>("identity", node_kind::module_related_func));
static_assert(named<op::flatten>("flatten", node_kind::implicit_func));
static_assert(named<op::reshape>("reshape", node_kind::implicit_func));
static_assert(named<op::view>("view", node_kind::implicit_func));
static_assert(named<op::permute>("permute", node_kind::implicit_func));
static_assert(named<op::transpose>("transpose", node_kind::implicit_func));
static_assert(named<op::squeeze>("squeeze", node_kind::implicit_func));
static_assert(named<op::unsqueeze>("unsqueeze", node_kind::implicit_func));
static_assert(named<op::cat>("cat", node_kind::implicit_func));
static_assert(named<op::slice>("slice", node_kind::implicit_func));
static_assert(named<op::gather>("gather", node_kind::implicit_func));

// Input counts: binary ops take two, sdpa three, cat any positive number.
static_assert(op::sub::inputs.accepts(2) && !op::sub::inputs.accepts(1) && !op::sub::inputs.accepts(3));
static_assert(op::matmul::inputs.accepts(2) && op::gather::inputs.accepts(2) && !op::gather::inputs.accepts(1));
static_assert(op::scaled_dot_product_attention::inputs.accepts(3) &&
              !op::scaled_dot_product_attention::inputs.accepts(2));
static_assert(op::cat::inputs.accepts(1) && op::cat::inputs.accepts(40) && !op::cat::inputs.accepts(0));
static_assert(op::reshape::inputs.accepts(1) && !op::reshape::inputs.accepts(2));

using attribute_list = std::vector<std::pair<std::string, attribute_value>>;

template <class Op>
attribute_list attributes_of(const Op& o) {
  attribute_list out;
  mase::for_each_attribute(o, [&](std::string_view name, const auto& value) {
    out.emplace_back(std::string(name), attribute_value(value));
  });
  return out;
}

// Reads the attributes of `o`, checks they are `expected` (names, order, types, values), writes
// them into a default-constructed op and checks that gives `o` back.
template <class Op>
void check_round_trip(const Op& o, const attribute_list& expected) {
  const attribute_list read = attributes_of(o);
  CHECK(read == expected);
  Op rebuilt{};
  std::size_t i = 0;
  mase::for_each_attribute(rebuilt, [&](std::string_view name, auto& field) {
    REQUIRE(i < read.size());
    CHECK(name == read[i].first);
    field = std::get<std::decay_t<decltype(field)>>(read[i].second);
    ++i;
  });
  CHECK(i == read.size());
  CHECK(rebuilt == o);
}

// A user's op written before attribute_list: its attributes() returns a std::tuple.
struct tuple_attributes_op {
  std::int64_t axis = 0;
  double alpha = 1.0;
  bool inclusive = false;
  static constexpr auto attributes() {
    return std::tuple{mase::attribute("axis", &tuple_attributes_op::axis),
                      mase::attribute("alpha", &tuple_attributes_op::alpha),
                      mase::attribute("inclusive", &tuple_attributes_op::inclusive)};
  }
  constexpr bool operator==(const tuple_attributes_op&) const = default;
};

}  // namespace

TEST_CASE("an op whose attributes() is a std::tuple reads and writes them as with attribute_list", "[ir][ops]") {
  using v = attribute_value;
  check_round_trip(tuple_attributes_op{.axis = -2, .alpha = 0.5, .inclusive = true},
                   {{"axis", v(std::int64_t{-2})}, {"alpha", v(0.5)}, {"inclusive", v(true)}});
}

TEST_CASE("attributes round trip through for_each_attribute", "[ir][ops]") {
  using v = attribute_value;
  for (const auto& empty : {attributes_of(op::sub{}), attributes_of(op::mul{}), attributes_of(op::div{}),
                            attributes_of(op::matmul{}), attributes_of(op::bmm{}), attributes_of(op::sqrt{}),
                            attributes_of(op::erf{}), attributes_of(op::neg{}), attributes_of(op::exp{}),
                            attributes_of(op::identity{})})
    CHECK(empty.empty());

  check_round_trip(op::mean{.dim = {0, -1}, .keepdim = true}, {{"dim", v(dims{0, -1})}, {"keepdim", v(true)}});
  check_round_trip(op::pow{.exponent = -1.5}, {{"exponent", v(-1.5)}});
  check_round_trip(op::scaled_dot_product_attention{.dropout_p = 0.25, .is_causal = true, .scale = 0.125},
                   {{"dropout_p", v(0.25)}, {"is_causal", v(true)}, {"scale", v(0.125)}});
  check_round_trip(op::flatten{.start_dim = 0, .end_dim = 2},
                   {{"start_dim", v(std::int64_t{0})}, {"end_dim", v(std::int64_t{2})}});
  check_round_trip(op::reshape{.shape = {4, -1, 2}}, {{"shape", v(dims{4, -1, 2})}});
  check_round_trip(op::view{.shape = {-1}}, {{"shape", v(dims{-1})}});
  check_round_trip(op::permute{.dims = {2, 0, 1}}, {{"dims", v(dims{2, 0, 1})}});
  check_round_trip(op::transpose{.dim0 = 2, .dim1 = -3},
                   {{"dim0", v(std::int64_t{2})}, {"dim1", v(std::int64_t{-3})}});
  check_round_trip(op::squeeze{.dim = {1, 3}}, {{"dim", v(dims{1, 3})}});
  check_round_trip(op::unsqueeze{.dim = -2}, {{"dim", v(std::int64_t{-2})}});
  check_round_trip(op::cat{.dim = 3}, {{"dim", v(std::int64_t{3})}});
  check_round_trip(op::slice{.dim = 1, .start = -3, .end = 9, .step = 2},
                   {{"dim", v(std::int64_t{1})},
                    {"start", v(std::int64_t{-3})},
                    {"end", v(std::int64_t{9})},
                    {"step", v(std::int64_t{2})}});
  check_round_trip(op::gather{.dim = -1}, {{"dim", v(std::int64_t{-1})}});

  // Defaults follow PyTorch: nn.Flatten(1, -1), a slice to the end with step 1.
  CHECK(op::flatten{} == op::flatten{.start_dim = 1, .end_dim = -1});
  CHECK(op::slice{} == op::slice{.dim = 0, .start = 0, .end = int64_max, .step = 1});
  CHECK(op::scaled_dot_product_attention{} ==
        op::scaled_dot_product_attention{.dropout_p = 0.0, .is_causal = false, .scale = 0.0});
  CHECK_FALSE(op::mean{.dim = {1}} == op::mean{.dim = {1}, .keepdim = true});
}

TEST_CASE("sub, mul and div broadcast their inputs", "[ir][ops]") {
  CHECK_BOTH(gives(op::sub{}, {{2, 3}, {3}}, {2, 3}));
  CHECK_BOTH(gives(op::sub{}, {{4, 1, 5}, {3, 1}}, {4, 3, 5}));
  CHECK_BOTH(gives(op::mul{}, {{}, {2, 2}}, {2, 2}));
  CHECK_BOTH(gives(op::mul{}, {{8, 1, 6, 1}, {7, 1, 5}}, {8, 7, 6, 5}));
  CHECK_BOTH(gives(op::div{}, {{5, 4}, {1}}, {5, 4}));
  CHECK_BOTH(gives(op::div{}, {{0, 3}, {1, 3}}, {0, 3}));
  CHECK_BOTH(fails(op::sub{}, {{2, 3}, {4}}));
  CHECK_BOTH(fails(op::mul{}, {{2, 3}, {3, 2}}));
  CHECK_BOTH(fails(op::div{}, {{2, 1}, {8, 4, 3}}));
}

TEST_CASE("matmul follows torch.matmul's 1-D and batch rules", "[ir][ops]") {
  constexpr op::matmul mm{};
  CHECK_BOTH(gives(mm, {{3}, {3}}, {}));                           // dot product
  CHECK_BOTH(gives(mm, {{2, 3}, {3}}, {2}));                       // matrix × vector
  CHECK_BOTH(gives(mm, {{3}, {3, 4}}, {4}));                       // vector × matrix
  CHECK_BOTH(gives(mm, {{2, 3}, {3, 4}}, {2, 4}));
  CHECK_BOTH(gives(mm, {{2, 1, 3, 4}, {5, 4, 6}}, {2, 5, 3, 6}));  // batch dims broadcast
  CHECK_BOTH(gives(mm, {{4}, {5, 4, 6}}, {5, 6}));                 // prepended 1 removed
  CHECK_BOTH(gives(mm, {{5, 3, 4}, {4}}, {5, 3}));                 // appended 1 removed
  CHECK_BOTH(gives(mm, {{7, 1, 3, 4}, {1, 6, 4, 2}}, {7, 6, 3, 2}));
  CHECK_BOTH(gives(mm, {{10, 3, 4}, {4, 5}}, {10, 3, 5}));
  CHECK_BOTH(fails(mm, {{}, {3}}));
  CHECK_BOTH(fails(mm, {{3}, {}}));
  CHECK_BOTH(fails(mm, {{3}, {4}}));
  CHECK_BOTH(fails(mm, {{2, 3}, {4, 5}}));
  CHECK_BOTH(fails(mm, {{2, 3}, {2}}));
  CHECK_BOTH(fails(mm, {{2, 2, 3}, {3, 3, 4}}));  // batch 2 against 3
}

TEST_CASE("bmm multiplies batches of matrices without broadcasting", "[ir][ops]") {
  CHECK_BOTH(gives(op::bmm{}, {{4, 2, 3}, {4, 3, 5}}, {4, 2, 5}));
  CHECK_BOTH(gives(op::bmm{}, {{1, 1, 1}, {1, 1, 7}}, {1, 1, 7}));
  CHECK_BOTH(fails(op::bmm{}, {{2, 3}, {3, 4}}));
  CHECK_BOTH(fails(op::bmm{}, {{4, 2, 3}, {4, 3, 5, 1}}));
  CHECK_BOTH(fails(op::bmm{}, {{1, 2, 3}, {4, 3, 5}}));  // no broadcasting of the batch
  CHECK_BOTH(fails(op::bmm{}, {{4, 2, 3}, {4, 4, 5}}));
}

TEST_CASE("mean reduces the listed dims, or all of them", "[ir][ops]") {
  CHECK_BOTH(gives(op::mean{}, {{2, 3, 4}}, {}));
  CHECK_BOTH(gives(op::mean{.keepdim = true}, {{2, 3, 4}}, {1, 1, 1}));
  CHECK_BOTH(gives(op::mean{.dim = {1}}, {{2, 3, 4}}, {2, 4}));
  CHECK_BOTH(gives(op::mean{.dim = {-1, 0}, .keepdim = true}, {{2, 3, 4}}, {1, 3, 1}));
  CHECK_BOTH(gives(op::mean{.dim = {-1, 0}}, {{2, 3, 4}}, {3}));
  CHECK_BOTH(gives(op::mean{}, {{}}, {}));
  CHECK_BOTH(gives(op::mean{.dim = {-1}}, {{}}, {}));  // a scalar takes dim 0 or -1
  CHECK_BOTH(fails(op::mean{.dim = {3}}, {{2, 3, 4}}));
  CHECK_BOTH(fails(op::mean{.dim = {-4}}, {{2, 3, 4}}));
  CHECK_BOTH(fails(op::mean{.dim = {1, -2}}, {{2, 3, 4}}));  // dim 1 twice
  CHECK_BOTH(fails(op::mean{.dim = {1}}, {{}}));
}

TEST_CASE("element-wise ops with one input keep its shape", "[ir][ops]") {
  CHECK_BOTH(gives(op::pow{.exponent = 2.0}, {{2, 3}}, {2, 3}));
  CHECK_BOTH(gives(op::sqrt{}, {{7}}, {7}));
  CHECK_BOTH(gives(op::erf{}, {{1, 2, 3, 4}}, {1, 2, 3, 4}));
  CHECK_BOTH(gives(op::neg{}, {{}}, {}));
  CHECK_BOTH(gives(op::exp{}, {{0, 5}}, {0, 5}));
  CHECK_BOTH(gives(op::identity{}, {{8, 16}}, {8, 16}));
}

TEST_CASE("pow with a tensor exponent broadcasts it with the base, as torch.pow(Tensor, Tensor)", "[ir][ops]") {
  static_assert(op::pow::inputs.min == 1 && op::pow::inputs.max == 2);
  CHECK_BOTH(gives(op::pow{}, {{2, 3}, {2, 3}}, {2, 3}));
  CHECK_BOTH(gives(op::pow{.exponent = 5.0}, {{2, 1, 4}, {3, 1}}, {2, 3, 4}));  // the attribute plays no part
  CHECK_BOTH(gives(op::pow{}, {{}, {2, 2}}, {2, 2}));
  CHECK_BOTH(gives(op::pow{}, {{4, 5}, {}}, {4, 5}));
  CHECK_BOTH(fails(op::pow{}, {{2, 3}, {4}}));
}

TEST_CASE("scaled_dot_product_attention gives (..., L, Ev)", "[ir][ops]") {
  constexpr op::scaled_dot_product_attention sdpa{};
  CHECK_BOTH(gives(sdpa, {{2, 8, 10, 64}, {2, 8, 20, 64}, {2, 8, 20, 32}}, {2, 8, 10, 32}));
  CHECK_BOTH(gives(sdpa, {{10, 64}, {20, 64}, {20, 16}}, {10, 16}));
  CHECK_BOTH(gives(sdpa, {{2, 8, 10, 64}, {1, 8, 20, 64}, {8, 20, 32}}, {2, 8, 10, 32}));  // batch broadcasts
  CHECK_BOTH(gives(op::scaled_dot_product_attention{.dropout_p = 1.0, .is_causal = true, .scale = 0.5},
                   {{3, 5, 4}, {3, 7, 4}, {3, 7, 4}}, {3, 5, 4}));
  CHECK_BOTH(fails(sdpa, {{10, 64}, {20, 32}, {20, 16}}));         // E differs
  CHECK_BOTH(fails(sdpa, {{10, 64}, {20, 64}, {21, 16}}));         // S differs
  CHECK_BOTH(fails(sdpa, {{64}, {20, 64}, {20, 16}}));             // no L dimension
  CHECK_BOTH(fails(sdpa, {{2, 10, 64}, {3, 20, 64}, {3, 20, 8}}));  // batch 2 against 3
  CHECK_BOTH(fails(sdpa, {{2, 10, 64}, {2, 20, 64}, {3, 20, 8}}));
  CHECK_BOTH(fails(op::scaled_dot_product_attention{.dropout_p = 1.5}, {{10, 64}, {20, 64}, {20, 16}}));
  CHECK_BOTH(fails(op::scaled_dot_product_attention{.dropout_p = -0.1}, {{10, 64}, {20, 64}, {20, 16}}));
  CHECK(fails(op::scaled_dot_product_attention{.dropout_p = std::nan("")}, {{10, 64}, {20, 64}, {20, 16}}));
}

TEST_CASE("flatten merges start_dim..end_dim", "[ir][ops]") {
  CHECK_BOTH(gives(op::flatten{}, {{2, 3, 4, 5}}, {2, 60}));
  CHECK_BOTH(gives(op::flatten{.start_dim = 0}, {{2, 3, 4, 5}}, {120}));
  CHECK_BOTH(gives(op::flatten{.start_dim = 1, .end_dim = 2}, {{2, 3, 4, 5}}, {2, 12, 5}));
  CHECK_BOTH(gives(op::flatten{.start_dim = -2, .end_dim = -1}, {{2, 3, 4, 5}}, {2, 3, 20}));
  CHECK_BOTH(gives(op::flatten{.start_dim = 2, .end_dim = 2}, {{2, 3, 4, 5}}, {2, 3, 4, 5}));
  CHECK_BOTH(gives(op::flatten{}, {{7, 0, 3}}, {7, 0}));
  CHECK_BOTH(gives(op::flatten{.start_dim = 0}, {{}}, {1}));  // torch.flatten of a scalar
  CHECK_BOTH(fails(op::flatten{}, {{}}));                      // nn.Flatten's start_dim 1 on a scalar
  CHECK_BOTH(fails(op::flatten{}, {{5}}));                     // ... and on a vector
  CHECK_BOTH(fails(op::flatten{.start_dim = 2, .end_dim = 1}, {{2, 3, 4}}));
  CHECK_BOTH(fails(op::flatten{.start_dim = 0, .end_dim = 3}, {{2, 3, 4}}));
  CHECK_BOTH(fails(op::flatten{.start_dim = -4}, {{2, 3, 4}}));
  CHECK(fails(op::flatten{.start_dim = 0}, {{int64_max, 2}}));
}

TEST_CASE("reshape and view infer one -1 and keep the element count", "[ir][ops]") {
  CHECK_BOTH(gives(op::reshape{.shape = {4, -1}}, {{2, 3, 4}}, {4, 6}));
  CHECK_BOTH(gives(op::reshape{.shape = {-1}}, {{2, 3, 4}}, {24}));
  CHECK_BOTH(gives(op::reshape{.shape = {2, -1, 3}}, {{2, 3, 4}}, {2, 4, 3}));
  CHECK_BOTH(gives(op::reshape{.shape = {3, 8}}, {{2, 3, 4}}, {3, 8}));
  CHECK_BOTH(gives(op::reshape{.shape = {}}, {{1, 1}}, {}));
  CHECK_BOTH(gives(op::reshape{.shape = {-1}}, {{}}, {1}));
  CHECK_BOTH(gives(op::reshape{.shape = {3, 0}}, {{0, 3}}, {3, 0}));
  CHECK_BOTH(gives(op::view{.shape = {4, -1}}, {{2, 3, 4}}, {4, 6}));
  CHECK_BOTH(gives(op::view{.shape = {1, -1, 1}}, {{5}}, {1, 5, 1}));

  CHECK_BOTH(fails(op::reshape{.shape = {-1, -1}}, {{2, 3, 4}}));
  CHECK_BOTH(fails(op::reshape{.shape = {5, 5}}, {{2, 3, 4}}));
  CHECK_BOTH(fails(op::reshape{.shape = {5, -1}}, {{2, 3, 4}}));  // 24 is not a multiple of 5
  CHECK_BOTH(fails(op::reshape{.shape = {-2, 12}}, {{2, 3, 4}}));
  CHECK_BOTH(fails(op::reshape{.shape = {-1, 0}}, {{0, 3}}));  // -1 could be anything
  CHECK_BOTH(fails(op::reshape{.shape = {int64_max, 2}}, {{2, 3, 4}}));
  CHECK_BOTH(fails(op::view{.shape = {-1, 2, -1}}, {{2, 3, 4}}));
  CHECK_BOTH(fails(op::view{.shape = {25}}, {{2, 3, 4}}));
  CHECK_BOTH(fails(op::view{.shape = {-3}}, {{2, 3, 4}}));
  CHECK_BOTH(fails(op::view{.shape = {0, -1}}, {{2, 0}}));
}

TEST_CASE("permute reorders by a permutation of the dims", "[ir][ops]") {
  CHECK_BOTH(gives(op::permute{.dims = {2, 0, 1}}, {{2, 3, 4}}, {4, 2, 3}));
  CHECK_BOTH(gives(op::permute{.dims = {-1, -3, -2}}, {{2, 3, 4}}, {4, 2, 3}));
  CHECK_BOTH(gives(op::permute{.dims = {0, 1, 2}}, {{2, 3, 4}}, {2, 3, 4}));
  CHECK_BOTH(gives(op::permute{.dims = {}}, {{}}, {}));
  CHECK_BOTH(fails(op::permute{.dims = {0, 1}}, {{2, 3, 4}}));        // too few
  CHECK_BOTH(fails(op::permute{.dims = {0, 1, 2, 3}}, {{2, 3, 4}}));  // too many
  CHECK_BOTH(fails(op::permute{.dims = {0, 1, 1}}, {{2, 3, 4}}));     // repeated
  CHECK_BOTH(fails(op::permute{.dims = {0, 1, -2}}, {{2, 3, 4}}));    // -2 is 1 again
  CHECK_BOTH(fails(op::permute{.dims = {0, 1, 3}}, {{2, 3, 4}}));     // out of range
}

TEST_CASE("transpose swaps two dims", "[ir][ops]") {
  CHECK_BOTH(gives(op::transpose{.dim0 = 0, .dim1 = 2}, {{2, 3, 4}}, {4, 3, 2}));
  CHECK_BOTH(gives(op::transpose{.dim0 = -1, .dim1 = -2}, {{2, 3, 4}}, {2, 4, 3}));
  CHECK_BOTH(gives(op::transpose{.dim0 = 1, .dim1 = 1}, {{2, 3, 4}}, {2, 3, 4}));
  CHECK_BOTH(gives(op::transpose{}, {{5, 6}}, {6, 5}));
  CHECK_BOTH(gives(op::transpose{.dim0 = 0, .dim1 = -1}, {{}}, {}));
  CHECK_BOTH(fails(op::transpose{.dim0 = 0, .dim1 = 3}, {{2, 3, 4}}));
  CHECK_BOTH(fails(op::transpose{.dim0 = -4, .dim1 = 0}, {{2, 3, 4}}));
  CHECK_BOTH(fails(op::transpose{}, {{5}}));
}

TEST_CASE("squeeze drops listed size-1 dims and keeps others", "[ir][ops]") {
  CHECK_BOTH(gives(op::squeeze{}, {{1, 3, 1, 4}}, {3, 4}));
  CHECK_BOTH(gives(op::squeeze{.dim = {0}}, {{1, 3, 1, 4}}, {3, 1, 4}));
  CHECK_BOTH(gives(op::squeeze{.dim = {-2}}, {{1, 3, 1, 4}}, {1, 3, 4}));
  CHECK_BOTH(gives(op::squeeze{.dim = {0, 2}}, {{1, 3, 1, 4}}, {3, 4}));
  // A listed dim of size other than 1 stays, as in PyTorch.
  CHECK_BOTH(gives(op::squeeze{.dim = {1}}, {{1, 3, 1, 4}}, {1, 3, 1, 4}));
  CHECK_BOTH(gives(op::squeeze{.dim = {1, 2}}, {{1, 3, 1, 4}}, {1, 3, 4}));
  CHECK_BOTH(gives(op::squeeze{}, {{2, 3}}, {2, 3}));
  CHECK_BOTH(gives(op::squeeze{}, {{1, 1}}, {}));
  CHECK_BOTH(gives(op::squeeze{}, {{}}, {}));
  CHECK_BOTH(gives(op::squeeze{.dim = {0}}, {{}}, {}));
  CHECK_BOTH(fails(op::squeeze{.dim = {4}}, {{1, 3, 1, 4}}));
  CHECK_BOTH(fails(op::squeeze{.dim = {-5}}, {{1, 3, 1, 4}}));
  CHECK_BOTH(fails(op::squeeze{.dim = {0, -4}}, {{1, 3, 1, 4}}));  // dim 0 twice
  CHECK_BOTH(fails(op::squeeze{.dim = {1}}, {{}}));
}

TEST_CASE("unsqueeze inserts a size-1 dim at (-rank-1, rank)", "[ir][ops]") {
  CHECK_BOTH(gives(op::unsqueeze{.dim = 0}, {{2, 3}}, {1, 2, 3}));
  CHECK_BOTH(gives(op::unsqueeze{.dim = 1}, {{2, 3}}, {2, 1, 3}));
  CHECK_BOTH(gives(op::unsqueeze{.dim = 2}, {{2, 3}}, {2, 3, 1}));
  CHECK_BOTH(gives(op::unsqueeze{.dim = -1}, {{2, 3}}, {2, 3, 1}));
  CHECK_BOTH(gives(op::unsqueeze{.dim = -3}, {{2, 3}}, {1, 2, 3}));
  CHECK_BOTH(gives(op::unsqueeze{.dim = 0}, {{}}, {1}));
  CHECK_BOTH(gives(op::unsqueeze{.dim = -1}, {{}}, {1}));
  CHECK_BOTH(gives(op::unsqueeze{.dim = 7}, {{1, 2, 3, 4, 5, 6, 7}}, {1, 2, 3, 4, 5, 6, 7, 1}));
  CHECK_BOTH(fails(op::unsqueeze{.dim = 3}, {{2, 3}}));
  CHECK_BOTH(fails(op::unsqueeze{.dim = -4}, {{2, 3}}));
  CHECK_BOTH(fails(op::unsqueeze{.dim = 0}, {{1, 2, 3, 4, 5, 6, 7, 8}}));  // rank 9 is beyond shape's 8
}

TEST_CASE("cat joins along dim, other dims must agree", "[ir][ops]") {
  CHECK_BOTH(gives(op::cat{}, {{2, 3}, {4, 3}}, {6, 3}));
  CHECK_BOTH(gives(op::cat{.dim = 1}, {{2, 3}, {2, 5}, {2, 1}}, {2, 9}));
  CHECK_BOTH(gives(op::cat{.dim = -1}, {{2, 3}, {2, 5}, {2, 1}}, {2, 9}));
  CHECK_BOTH(gives(op::cat{.dim = 2}, {{2, 3, 4}}, {2, 3, 4}));
  CHECK_BOTH(gives(op::cat{}, {{3}, {0}}, {3}));
  CHECK_BOTH(gives(op::cat{.dim = 1}, {{0}, {2, 3}, {0}, {2, 4}}, {2, 7}));  // legacy [0] inputs skipped
  CHECK_BOTH(gives(op::cat{}, {{0}, {0}}, {0}));
  CHECK_BOTH(gives(op::cat{}, {{0, 3}, {2, 3}}, {2, 3}));  // [0, 3] is not the legacy case
  CHECK_BOTH(fails(op::cat{}, {{2, 3}, {2, 3, 1}}));
  CHECK_BOTH(fails(op::cat{.dim = 1}, {{2, 3}, {3, 3}}));
  CHECK_BOTH(fails(op::cat{.dim = 2}, {{2, 3}, {2, 3}}));
  CHECK_BOTH(fails(op::cat{.dim = -3}, {{2, 3}, {2, 3}}));
  CHECK_BOTH(fails(op::cat{}, {{}, {}}));
  CHECK_BOTH(fails(op::cat{}, {{0, 3}, {2, 4}}));
  CHECK(fails(op::cat{}, {{int64_max}, {1}}));
}

TEST_CASE("slice follows Python's slicing with clamping", "[ir][ops]") {
  constexpr shape x{10, 4};
  CHECK_BOTH(gives(op::slice{}, {x}, {10, 4}));
  CHECK_BOTH(gives(op::slice{.dim = 0, .start = 2, .end = 8}, {x}, {6, 4}));
  CHECK_BOTH(gives(op::slice{.dim = 0, .start = 2, .end = 8, .step = 3}, {x}, {2, 4}));  // rows 2, 5
  CHECK_BOTH(gives(op::slice{.dim = 0, .start = 2, .end = 9, .step = 3}, {x}, {3, 4}));  // rows 2, 5, 8
  CHECK_BOTH(gives(op::slice{.dim = 0, .step = 4}, {x}, {3, 4}));                        // rows 0, 4, 8
  CHECK_BOTH(gives(op::slice{.dim = 0, .start = -3}, {x}, {3, 4}));                      // x[-3:]
  CHECK_BOTH(gives(op::slice{.dim = 0, .start = 0, .end = -1}, {x}, {9, 4}));            // x[:-1]
  CHECK_BOTH(gives(op::slice{.dim = 0, .start = -100, .end = 100}, {x}, {10, 4}));       // clamped both ends
  CHECK_BOTH(gives(op::slice{.dim = 0, .start = -4, .end = -6}, {x}, {0, 4}));
  CHECK_BOTH(gives(op::slice{.dim = 0, .start = 5, .end = 2}, {x}, {0, 4}));
  CHECK_BOTH(gives(op::slice{.dim = 0, .start = 12, .end = 20}, {x}, {0, 4}));
  CHECK_BOTH(gives(op::slice{.dim = -1, .start = 1, .end = 3}, {x}, {10, 2}));
  CHECK_BOTH(gives(op::slice{.dim = 0, .step = int64_max}, {x}, {1, 4}));
  CHECK_BOTH(gives(op::slice{.dim = 0, .start = std::numeric_limits<std::int64_t>::min()}, {x}, {10, 4}));
  CHECK_BOTH(fails(op::slice{.step = 0}, {x}));
  CHECK_BOTH(fails(op::slice{.step = -1}, {x}));
  CHECK_BOTH(fails(op::slice{.dim = 2}, {x}));
  CHECK_BOTH(fails(op::slice{.dim = -3}, {x}));
  CHECK_BOTH(fails(op::slice{}, {{}}));
}

TEST_CASE("gather gives the index's shape", "[ir][ops]") {
  CHECK_BOTH(gives(op::gather{.dim = 0}, {{4, 5}, {2, 5}}, {2, 5}));
  CHECK_BOTH(gives(op::gather{.dim = 1}, {{4, 5}, {4, 3}}, {4, 3}));
  CHECK_BOTH(gives(op::gather{.dim = 1}, {{4, 5}, {3, 7}}, {3, 7}));  // larger along dim is allowed
  CHECK_BOTH(gives(op::gather{.dim = -1}, {{4, 5}, {1, 1}}, {1, 1}));
  CHECK_BOTH(gives(op::gather{}, {{}, {}}, {}));
  CHECK_BOTH(gives(op::gather{}, {{}, {2}}, {2}));           // a scalar counts as [1]
  CHECK_BOTH(gives(op::gather{}, {{4, 5}, {0, 9}}, {0, 9}));  // an empty index is not checked
  CHECK_BOTH(fails(op::gather{.dim = 1}, {{4, 5}, {5, 2}}));  // 5 > 4 in dim 0
  CHECK_BOTH(fails(op::gather{.dim = 0}, {{4, 5}, {2, 6}}));  // 6 > 5 in dim 1
  CHECK_BOTH(fails(op::gather{}, {{4, 5}, {4}}));
  CHECK_BOTH(fails(op::gather{}, {{4, 5}, {1, 1, 1}}));
  CHECK_BOTH(fails(op::gather{.dim = 2}, {{4, 5}, {4, 5}}));
  CHECK_BOTH(fails(op::gather{.dim = 1}, {{}, {}}));
}

TEST_CASE("the checking helpers reject wrong expectations", "[ir][ops]") {
  // gives() compares the whole result; fails() needs an error that names the op.
  CHECK_BOTH(!gives(op::matmul{}, {{2, 3}, {3, 4}}, {2, 3}));
  CHECK_BOTH(!gives(op::matmul{}, {{2, 3}, {3, 4}}, {2, 4, 1}));
  CHECK_BOTH(!gives(op::matmul{}, {{2, 3}, {4, 5}}, {}));
  CHECK_BOTH(!fails(op::matmul{}, {{2, 3}, {3, 4}}));
}
