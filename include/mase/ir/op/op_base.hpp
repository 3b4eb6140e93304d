#pragma once
// What every op type has. An op is a plain aggregate holding its attributes, usable as a
// template argument (static graphs) and as a variant alternative (dynamic graphs):
//
//   struct linear {
//     std::int64_t in_features = 0;            // attributes: bool, int64, double or dims
//     std::int64_t out_features = 0;
//     bool bias = true;
//     static constexpr std::string_view name = "linear";   // MASE's mase_op
//     using kind = mase::kind::module_related_func;          // MASE's mase_type
//     static constexpr arity inputs{1, 1};                   // how many data inputs
//     static constexpr auto attributes() { return attribute_list{attribute("in_features", &linear::in_features), …}; }
//     constexpr parameter_list parameters() const;           // optional: weight, bias, buffers
//     constexpr shape_result infer_shapes(std::span<const shape> in) const;
//     constexpr bool operator==(const linear&) const = default;
//   };
//
// Shape rules are constexpr so the same rule checks a static graph at compile time and a
// dynamic graph at run time. A rule reports a broken precondition with a fixed message;
// the caller adds the node's name and the shapes involved.

#include <mase/core/shape.hpp>
#include <mase/ir/kind.hpp>

#include <array>
#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <variant>

namespace mase {

// The types an attribute may have.
using attribute_value = std::variant<bool, std::int64_t, double, dims>;

template <class T>
concept attribute_type = std::same_as<T, bool> || std::same_as<T, std::int64_t> || std::same_as<T, double> ||
                         std::same_as<T, dims>;

// One named attribute of an op type: its name and where it lives.
template <class Op, attribute_type T>
struct attribute {
  std::string_view name;
  T Op::*member;
  // A constructor rather than aggregate initialisation: clang before 16 cannot make aggregates
  // from parentheses, which the deduction guide below needs.
  constexpr attribute(std::string_view attribute_name, T Op::*attribute_member) noexcept
      : name(attribute_name), member(attribute_member) {}
};
template <class Op, class T>
attribute(const char*, T Op::*) -> attribute<Op, T>;

// An op's attributes() in declaration order: attribute_list{attribute(…), …}. A list built for
// this one use, because ~90 ops each forming a std::tuple type (whose constructors carry
// constraints) cost every unit a tenth of a second; an op that returns a std::tuple works too.
template <class... Attributes>
struct attribute_list {
  template <class F>
  constexpr void for_each(F&&) const {}
};
template <class First, class... Rest>
struct attribute_list<First, Rest...> {
  First first;
  attribute_list<Rest...> rest;
  constexpr attribute_list(First head, Rest... tail) : first(head), rest(tail...) {}
  template <class F>
  constexpr void for_each(F&& f) const {
    f(first);
    rest.for_each(f);
  }
};
template <class... Attributes>
attribute_list(Attributes...) -> attribute_list<Attributes...>;

// How many data inputs an op takes (parameters are not inputs).
struct arity {
  int min = 1;
  int max = 1;
  static constexpr int unbounded = std::numeric_limits<int>::max();
  constexpr bool accepts(std::size_t n) const noexcept {
    return n >= static_cast<std::size_t>(min) && n <= static_cast<std::size_t>(max);
  }
};

// A small constexpr vector (capacity N), for shape rules and parameter lists.
template <class T, int N>
struct small_list {
  std::array<T, N> items{};
  int count = 0;

  constexpr small_list() = default;
  constexpr small_list(std::initializer_list<T> list) {
    for (const T& x : list) push_back(x);
  }
  constexpr void push_back(const T& x) {
    if (count == N) capacity_exceeded();
    items[static_cast<std::size_t>(count++)] = x;
  }
  constexpr int size() const noexcept { return count; }
  constexpr bool empty() const noexcept { return count == 0; }
  constexpr const T& operator[](int i) const noexcept { return items[static_cast<std::size_t>(i)]; }
  constexpr T& operator[](int i) noexcept { return items[static_cast<std::size_t>(i)]; }
  constexpr const T* begin() const noexcept { return items.data(); }
  constexpr const T* end() const noexcept { return items.data() + count; }

private:
  [[noreturn]] static void capacity_exceeded() { throw error("small_list: capacity exceeded"); }
};

// A node produces up to 16 results (split); most produce one.
using shape_list = small_list<shape, 16>;

// What a shape rule returns: the result shapes, or why the inputs do not fit the op.
struct shape_result {
  shape_list shapes;
  const char* error = nullptr;  // a fixed message; nullptr when the shapes fit
  // Whether error is set, kept apart: comparing the address of a message joined at compile time
  // (joined<…>) with nullptr is not a constant expression under -fsanitize=undefined, and shape
  // rules run at compile time.
  bool failed = false;

  constexpr bool ok() const noexcept { return !failed; }
};

constexpr shape_result shape_ok(const shape& s) { return {.shapes = {s}}; }
constexpr shape_result shape_ok(const shape_list& s) { return {.shapes = s}; }
constexpr shape_result shape_error(const char* why) { return {.shapes = {}, .error = why, .failed = true}; }

// A stored tensor an op owns (weight, bias, running statistics), with the shape it must have.
struct parameter_spec {
  std::string_view role;  // "weight", "bias", "running_mean", …
  mase::shape shape;
};
using parameter_list = small_list<parameter_spec, 4>;

// ---------------------------------------------------------------------------------------------
// Facets: what passes ask of an op beyond its shape rule, declared in the op's own header. Every
// op names its category; the category supplies the defaults of the facets an op does not give.
//
//   static constexpr op_category category = op_category::dot_product;   // required
//   constexpr op_work work(inputs, results) const;       // estimate_flops; default by category
//   static constexpr quantizable quantization{…};        // quantize; absent: not quantizable
//   static constexpr result_format_rule result_format = …;  // quantize's derived formats; absent: none
//   static constexpr lowering_kind integer_rule = …;     // the bit-exact rule; absent: none (a function
//                                                        // of one operand with scalar_function: a table)
//   static constexpr hardware_mapping hardware{"mase_linear"};  // add_hardware_metadata; absent: none

// What an op computes.
enum class op_category : std::uint8_t {
  interface,      // the graph's edges: placeholder, constant, output
  view,           // the same elements in the same row-major order (reshape, flatten, dropout at inference)
  data_movement,  // selects, reorders or repeats elements, no arithmetic (permute, cat, slice, pad)
  elementwise,    // one operation per result element (activations, arithmetic, comparisons, logic)
  reduction,      // folds whole dimensions (mean, sum, amax, softmax, adaptive pooling)
  window,         // folds a sliding window (max and average pooling)
  dot_product,    // multiply-accumulates over weights or a second operand (linear, conv, matmul)
  normalization,  // standardises over some dimensions (batch, layer, group, RMS norm)
};

inline constexpr std::array<std::string_view, 8> op_category_names{
    "interface", "view", "data_movement", "elementwise", "reduction", "window", "dot_product", "normalization"};
constexpr std::string_view to_string(op_category c) noexcept { return op_category_names[static_cast<std::size_t>(c)]; }

// The arithmetic operations of one forward pass and of its gradient, as estimate_flops counts them.
struct op_work {
  std::int64_t forward = 0;
  std::int64_t backward = 0;
  friend constexpr bool operator==(const op_work&, const op_work&) = default;
};

// How MASE's quantize pass gives an operand a format (its MASE_OP_TO_ENTRIES).
enum class operand_use : std::uint8_t { none, optional, required, required_with_parameter };

// An op the quantize pass quantizes (MASE's QUANTIZEABLE_OP): data_in and data_out always,
// weight and bias as given.
struct quantizable {
  operand_use weight = operand_use::none;
  operand_use bias = operand_use::none;
  bool weight_is_data_in_1 = false;  // matmul / bmm: the second operand takes the weight format
  // embedding: data_in_0 holds row numbers of the weight, so it takes the integer format that
  // holds every row (signed, no fraction bits) whatever the config's data_in says.
  bool data_in_0_is_row_index = false;
};

// How an op's fixed-point result format follows from its operands' when no config gives one
// (pass/quantize.hpp): the format that holds every result exactly.
enum class result_format_rule : std::uint8_t {
  none,            // no exact fixed-point result: float32 unless a config gives a format
  same_as_input,   // the result holds exactly input 0's values (relu, max pooling, data movement)
  same_as_weight,  // the result holds exactly the weight's values (an embedding's rows)
  sum,             // data_in_0 + data_in_1
  difference,      // data_in_0 − data_in_1
  product,         // data_in_0 · data_in_1
  weighted_sum,    // Σ data_in_0 · weight over in/groups · kernel terms, plus the bias (linear, conv)
  matrix_product,  // Σ data_in_0 · data_in_1 over data_in_0's last dimension (matmul, bmm)
};

// The integer rule a quantized op computes by, bit for bit as its hardware does. The bit-exact
// evaluator defines each rule once for every op that names it (eval/bit_exact.hpp: lower_to_fixed
// builds the rule's record from the node, lowered_kernel runs it) and the Verilog emitter renders
// the same record, so an op that reuses a rule needs nothing beyond naming it.
enum class lowering_kind : std::uint8_t {
  dot_product,   // linear, conv1d, conv2d: a weight, an optional bias, an exact accumulator
  matmul,        // matmul, bmm: two streams into an exact accumulator
  elementwise,   // add, sub, mul of two operands: exact, then the cast
  scale_shift,   // batch_norm1d / 2d folded into a per-channel scale and shift
  relu,          // exact on codes
  lookup_table,  // any other function of one operand: a table indexed by the input code
  softmax,       // softmax over the last dimension (softmax_rule)
  normalization, // layer_norm, rms_norm over their rows (normalization_rule)
  mean,          // a global mean: runs of consecutive values, each summed exactly and divided (mean_rule)
  window_mean,   // avg_pool1d/2d/3d: each window summed exactly and divided by its divisor (window_mean_rule)
};

namespace verilog {
struct component;  // verilog/component.hpp
}  // namespace verilog

// The hardware component an op maps to (pass/add_hardware_metadata.hpp); an empty module means
// the op is wired through: its result is its input's stream, reindexed.
struct hardware_mapping {
  std::string_view module;
  // How many of the node's inputs are streams, from the first (-1: all); the rest are constants
  // the component takes as parameters.
  int stream_inputs = -1;
  // Whether an input may be a constant instead of a stream (the component then holds its
  // values in a table): element-wise arithmetic with a bias, a scale or a position embedding.
  bool constant_operands = false;
  // A user's own component: its descriptor (verilog/component.hpp: its text, timing, metadata,
  // plan and cost), whose module is `module`. mase's own components are found by module name.
  const verilog::component* component = nullptr;
  constexpr bool wired_through() const noexcept { return module.empty(); }
};
inline constexpr hardware_mapping wired_through{};

// A facet that only some members of an op family have, for example
//   static constexpr auto hardware = facet_when<Rank == 2>(hardware_mapping{"mase_conv2d"});
// in op::conv<Rank>: the other ranks get an absent_facet, which passes read as no facet.
struct absent_facet {};
template <bool Present, class Facet>
constexpr auto facet_when(Facet facet) noexcept {
  if constexpr (Present) return facet;
  else return absent_facet{};
}

// The op contract (see the top of this file). parameters() is optional.
template <class T>
concept op_type = std::is_aggregate_v<T> && std::equality_comparable<T> && requires(const T& op, std::span<const shape> in) {
  { T::name } -> std::convertible_to<std::string_view>;
  typename T::kind;
  { T::kind::value } -> std::convertible_to<node_kind>;
  { T::inputs } -> std::convertible_to<arity>;
  T::attributes();
  { op.infer_shapes(in) } -> std::same_as<shape_result>;
};

template <class T>
concept op_with_parameters = requires(const T& op) {
  { op.parameters() } -> std::same_as<parameter_list>;
};

template <class Op>
concept op_with_category = requires {
  { Op::category } -> std::convertible_to<op_category>;
};
template <class Op>
concept op_with_work = requires(const Op& op, std::span<const shape> shapes) {
  { op.work(shapes, shapes) } -> std::same_as<op_work>;
};
// An element-wise built-in op's rule for one element: static constexpr float apply(float), or
// apply(float, float) for two operands broadcast together. The element-wise kernels make the
// op's float kernel from it (eval/kernels/elementwise.hpp), so such an op needs no kernel code.
template <class Op>
concept op_with_unary_rule = requires(float a) {
  { Op::apply(a) } -> std::same_as<float>;
};
template <class Op>
concept op_with_binary_rule = requires(float a, float b) {
  { Op::apply(a, b) } -> std::same_as<float>;
};
template <class Op>
concept op_with_quantization = requires {
  { Op::quantization } -> std::convertible_to<quantizable>;
};
template <class Op>
concept op_with_hardware = requires {
  { Op::hardware } -> std::convertible_to<hardware_mapping>;
};

// The op's category; an op type without one does not compile here.
template <class Op>
constexpr op_category category_of() noexcept {
  static_assert(op_with_category<Op>,
                "mase: this op type has no category; give it `static constexpr mase::op_category category = …;` "
                "(ir/op/op_base.hpp, docs/extending.md)");
  return Op::category;
}

// The work a category implies for an op that does not count its own, or nothing for the
// categories whose work depends on the op (dot products, windows, normalisations).
constexpr std::optional<op_work> default_work(op_category c, std::span<const shape> in, std::span<const shape> out) {
  const std::int64_t x = in.empty() ? 0 : in[0].numel();
  const std::int64_t y = out.empty() ? 0 : out[0].numel();
  switch (c) {
    case op_category::interface:
    case op_category::view:
    case op_category::data_movement: return op_work{};
    case op_category::elementwise: return op_work{y, y};  // one operation per result element, each way
    case op_category::reduction: return op_work{x, x};    // one per input element
    case op_category::window:
    case op_category::dot_product:
    case op_category::normalization: return std::nullopt;
  }
  return std::nullopt;
}

// The op's work: its own rule, or its category's default (nothing when there is neither).
template <class Op>
constexpr std::optional<op_work> work_of(const Op& op, std::span<const shape> in, std::span<const shape> out) {
  if constexpr (op_with_work<Op>) return op.work(in, out);
  else return default_work(category_of<Op>(), in, out);
}

// The op's quantization facet, or nullptr when the quantize pass leaves it alone.
template <class Op>
constexpr const quantizable* quantization_of() noexcept {
  if constexpr (op_with_quantization<Op>) return &Op::quantization;
  else return nullptr;
}

template <class Op>
concept op_with_result_format = requires {
  { Op::result_format } -> std::convertible_to<result_format_rule>;
};

// The op's result-format rule, or none.
template <class Op>
constexpr result_format_rule result_format_of() noexcept {
  if constexpr (op_with_result_format<Op>) return Op::result_format;
  else return result_format_rule::none;
}

template <class Op>
concept op_with_integer_rule = requires {
  { Op::integer_rule } -> std::convertible_to<lowering_kind>;
};

// The op's hardware mapping, or nullptr when it has no component.
template <class Op>
constexpr const hardware_mapping* hardware_of() noexcept {
  if constexpr (op_with_hardware<Op>) return &Op::hardware;
  else return nullptr;
}

// The op's parameters, or none.
template <class Op>
constexpr parameter_list parameters_of(const Op& op) {
  if constexpr (op_with_parameters<Op>) return op.parameters();
  else return {};
}

// Calls f(name, value) for every attribute of `op`, in declaration order.
namespace detail {
template <class List, class F>
constexpr void for_each_in_attribute_list(const List& list, F&& f) {
  if constexpr (requires { list.for_each(f); }) list.for_each(f);
  else std::apply([&](const auto&... a) { (f(a), ...); }, list);  // a std::tuple
}
}  // namespace detail

template <class Op, class F>
constexpr void for_each_attribute(const Op& op, F&& f) {
  detail::for_each_in_attribute_list(Op::attributes(), [&](const auto& a) { f(a.name, op.*(a.member)); });
}
template <class Op, class F>
constexpr void for_each_attribute(Op& op, F&& f) {
  detail::for_each_in_attribute_list(Op::attributes(), [&](const auto& a) { f(a.name, op.*(a.member)); });
}

}  // namespace mase
