#pragma once
// Generic access to any op held in an op_variant: its name, kind, attributes and shape rule,
// and building an op back from its name and attributes (checkpoints).

#include <mase/core/error.hpp>
#include <mase/core/ordered_map.hpp>
#include <mase/core/suggest.hpp>
#include <mase/ir/ops.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace mase {

namespace detail {
template <class Variant>
struct all_op_types;
template <class... Ops>
struct all_op_types<std::variant<Ops...>> {
  static_assert((op_type<Ops> && ...), "every alternative of op_variant must satisfy mase::op_type");
  static constexpr bool value = true;
};
static_assert(all_op_types<op_variant>::value);

template <class Op>
constexpr bool takes_all_results() {
  if constexpr (requires { Op::takes_all_results; }) return Op::takes_all_results;
  else return false;
}
}  // namespace detail

// Per-type facts come from tables indexed by the variant's index: unlike std::visit, they
// instantiate nothing per op (the vocabulary has ~90 ops, and every file that includes mase.hpp
// compiles these).
namespace detail {
template <class Variant>
struct op_tables;
template <class... Ops>
struct op_tables<std::variant<Ops...>> {
  static constexpr std::string_view names[] = {Ops::name...};
  static constexpr node_kind kinds[] = {Ops::kind::value...};
  static constexpr arity arities[] = {Ops::inputs...};
  static constexpr bool takes_all[] = {takes_all_results<Ops>()...};
};
using vocabulary_tables = op_tables<op_variant>;
}  // namespace detail

namespace detail {
template <class Variant>
struct op_dispatch;
template <class... Ops>
struct op_dispatch<std::variant<Ops...>> {
  template <class R, class F>
  static R visit(const op_variant& v, F& f) {
    using thunk = R (*)(const op_variant&, F&);
    static constexpr thunk table[] = {[](const op_variant& x, F& g) -> R { return g(*std::get_if<Ops>(&x)); }...};
    return table[v.index()](v, f);
  }
};
}  // namespace detail

// std::visit for op_variant, returning R: a table of one function per op. It compiles several
// times faster than std::visit over ~90 alternatives, which matters in headers every file reads.
template <class R, class F>
R visit_op(const op_variant& op, F&& f) {
  return detail::op_dispatch<op_variant>::template visit<R>(op, f);
}

// op_variant equality without the variant's own operator== (the same cost reason).
inline bool op_equal(const op_variant& a, const op_variant& b) {
  if (a.index() != b.index()) return false;
  return visit_op<bool>(a, [&](const auto& x) { return x == *std::get_if<std::decay_t<decltype(x)>>(&b); });
}

inline std::string_view op_name(const op_variant& op) { return detail::vocabulary_tables::names[op.index()]; }

inline node_kind op_kind(const op_variant& op) { return detail::vocabulary_tables::kinds[op.index()]; }

inline arity op_arity(const op_variant& op) { return detail::vocabulary_tables::arities[op.index()]; }

// Whether the op reads every result of its input (getitem) rather than the first.
inline bool op_takes_all_results(const op_variant& op) { return detail::vocabulary_tables::takes_all[op.index()]; }

inline parameter_list op_parameters(const op_variant& op) {
  return visit_op<parameter_list>(op, [](const auto& o) { return parameters_of(o); });
}

inline shape_result op_infer_shapes(const op_variant& op, std::span<const shape> inputs) {
  return visit_op<shape_result>(op, [&](const auto& o) { return o.infer_shapes(inputs); });
}

// The op's attributes by name, in declaration order.
inline ordered_map<attribute_value> op_attributes(const op_variant& op) {
  ordered_map<attribute_value> out;
  visit_op<void>(op, [&](const auto& o) {
    for_each_attribute(o, [&](std::string_view n, const auto& v) {
      out[n] = attribute_value(std::in_place_type<std::decay_t<decltype(v)>>, v);
    });
  });
  return out;
}

// Every op name of the vocabulary, in op_variant's order.
inline const std::vector<std::string_view>& op_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v;
    [&]<class... Ops>(std::type_identity<std::variant<Ops...>>) {
      (v.push_back(Ops::name), ...);
    }(std::type_identity<op_variant>{});
    return v;
  }();
  return names;
}

inline std::string to_string(const attribute_value& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
        else if constexpr (std::is_same_v<T, dims>) return to_string(x);
        else return fmt::format("{}", x);
      },
      v);
}

// "in_features=784, out_features=10, bias=true"
inline std::string attributes_to_string(const op_variant& op) {
  std::string text;
  for (const auto& [name, value] : op_attributes(op))
    text += fmt::format("{}{}={}", text.empty() ? "" : ", ", name, to_string(value));
  return text;
}

// "linear(in_features=784, out_features=10, bias=true)"
inline std::string to_string(const op_variant& op) {
  return fmt::format("{}({})", op_name(op), attributes_to_string(op));
}

// The op called `name` with the given attributes. Every attribute of the op must be given with
// its type (an integer is accepted for a double); unknown names are errors. `where` names the
// source for messages ("checkpoint model.json, node fc1").
namespace detail {
// One attribute of make_op: instantiated once per attribute type, not once per op.
template <class T>
void assign_attribute(T& field, std::string_view attr, const ordered_map<attribute_value>& attributes,
                      std::string_view context, std::string_view op, std::size_t& used) {
  const auto it = attributes.find(attr);
  if (it == attributes.end()) throw error(fmt::format("{}op {} needs attribute \"{}\"", context, op, attr));
  ++used;
  const std::int64_t* integer = std::get_if<std::int64_t>(&it->second);
  if (const T* value = std::get_if<T>(&it->second)) field = *value;
  else if constexpr (std::is_same_v<T, double>) {
    if (integer == nullptr)
      throw error(fmt::format("{}attribute \"{}\" of op {} must be a number, not {}", context, attr, op,
                              to_string(it->second)));
    field = static_cast<double>(*integer);
  } else
    throw error(fmt::format("{}attribute \"{}\" of op {} has the wrong type ({})", context, attr, op,
                            to_string(it->second)));
}

inline void check_no_extra_attributes(const op_variant& op, const ordered_map<attribute_value>& attributes,
                                      std::string_view context, std::string_view name) {
  const ordered_map<attribute_value> expected = op_attributes(op);
  for (const auto& [attr, value] : attributes)
    if (!expected.contains(attr))
      throw error(fmt::format("{}op {} has no attribute \"{}\"; its attributes are: {}", context, name, attr,
                              expected.key_list()));
}

template <class Op>
op_variant make_op_of(const ordered_map<attribute_value>& attributes, std::string_view context) {
  Op op{};
  std::size_t used = 0;
  for_each_attribute(op, [&](std::string_view attr, auto& field) {
    assign_attribute(field, attr, attributes, context, Op::name, used);
  });
  // in_place_type: the converting constructor would resolve an overload set of every op, per op.
  op_variant made(std::in_place_type<Op>, op);
  if (used != attributes.size()) check_no_extra_attributes(made, attributes, context, Op::name);
  return made;
}

template <class Variant>
struct op_makers;
template <class... Ops>
struct op_makers<std::variant<Ops...>> {
  using maker = op_variant (*)(const ordered_map<attribute_value>&, std::string_view);
  static constexpr maker makers[] = {&make_op_of<Ops>...};
};
}  // namespace detail

inline op_variant make_op(std::string_view name, const ordered_map<attribute_value>& attributes,
                          std::string_view where = "") {
  const std::string context = where.empty() ? std::string() : fmt::format("{}: ", where);
  const auto& names = detail::vocabulary_tables::names;
  for (std::size_t i = 0; i < std::size(names); ++i)
    if (names[i] == name) return detail::op_makers<op_variant>::makers[i](attributes, context);
  const std::string near = nearest_names(name, op_names());
  throw error(near.empty() ? fmt::format("{}unknown op \"{}\"; mase::op_names() lists the ops mase knows", context, name)
                           : fmt::format("{}unknown op \"{}\"; did you mean {}?", context, name, near));
}

}  // namespace mase
