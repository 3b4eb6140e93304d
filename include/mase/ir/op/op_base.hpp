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
//     static constexpr auto attributes() { return std::tuple{attribute("in_features", &linear::in_features), …}; }
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

  constexpr bool ok() const noexcept { return error == nullptr; }
};

constexpr shape_result shape_ok(const shape& s) { return {.shapes = {s}}; }
constexpr shape_result shape_ok(const shape_list& s) { return {.shapes = s}; }
constexpr shape_result shape_error(const char* why) { return {.shapes = {}, .error = why}; }

// A stored tensor an op owns (weight, bias, running statistics), with the shape it must have.
struct parameter_spec {
  std::string_view role;  // "weight", "bias", "running_mean", …
  mase::shape shape;
};
using parameter_list = small_list<parameter_spec, 4>;

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

// The op's parameters, or none.
template <class Op>
constexpr parameter_list parameters_of(const Op& op) {
  if constexpr (op_with_parameters<Op>) return op.parameters();
  else return {};
}

// Calls f(name, value) for every attribute of `op`, in declaration order.
template <class Op, class F>
constexpr void for_each_attribute(const Op& op, F&& f) {
  std::apply([&](const auto&... a) { (f(a.name, op.*(a.member)), ...); }, Op::attributes());
}
template <class Op, class F>
constexpr void for_each_attribute(Op& op, F&& f) {
  std::apply([&](const auto&... a) { (f(a.name, op.*(a.member)), ...); }, Op::attributes());
}

}  // namespace mase
