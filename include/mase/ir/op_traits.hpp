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

inline std::string_view op_name(const op_variant& op) {
  return std::visit([](const auto& o) -> std::string_view { return std::decay_t<decltype(o)>::name; }, op);
}

inline node_kind op_kind(const op_variant& op) {
  return std::visit([](const auto& o) { return std::decay_t<decltype(o)>::kind::value; }, op);
}

inline arity op_arity(const op_variant& op) {
  return std::visit([](const auto& o) { return std::decay_t<decltype(o)>::inputs; }, op);
}

// Whether the op reads every result of its input (getitem) rather than the first.
inline bool op_takes_all_results(const op_variant& op) {
  return std::visit([](const auto& o) { return detail::takes_all_results<std::decay_t<decltype(o)>>(); }, op);
}

inline parameter_list op_parameters(const op_variant& op) {
  return std::visit([](const auto& o) { return parameters_of(o); }, op);
}

inline shape_result op_infer_shapes(const op_variant& op, std::span<const shape> inputs) {
  return std::visit([&](const auto& o) { return o.infer_shapes(inputs); }, op);
}

// The op's attributes by name, in declaration order.
inline ordered_map<attribute_value> op_attributes(const op_variant& op) {
  ordered_map<attribute_value> out;
  std::visit([&](const auto& o) { for_each_attribute(o, [&](std::string_view n, const auto& v) {
                 out[n] = attribute_value(std::in_place_type<std::decay_t<decltype(v)>>, v);
               });
             },
             op);
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
inline op_variant make_op(std::string_view name, const ordered_map<attribute_value>& attributes,
                          std::string_view where = "") {
  const std::string context = where.empty() ? std::string() : fmt::format("{}: ", where);
  std::optional<op_variant> made;
  [&]<class... Ops>(std::type_identity<std::variant<Ops...>>) {
    (void)((Ops::name == name ? (made = [&] {
                             Ops op{};
                             std::size_t used = 0;
                             for_each_attribute(op, [&](std::string_view attr, auto& field) {
                               using T = std::decay_t<decltype(field)>;
                               const auto it = attributes.find(attr);
                               if (it == attributes.end())
                                 throw error(fmt::format("{}op {} needs attribute \"{}\"", context, name, attr));
                               ++used;
                               const std::int64_t* integer = std::get_if<std::int64_t>(&it->second);
                               if (const T* value = std::get_if<T>(&it->second)) field = *value;
                               else if constexpr (std::is_same_v<T, double>) {
                                 if (integer == nullptr)
                                   throw error(fmt::format("{}attribute \"{}\" of op {} must be a number, not {}",
                                                           context, attr, name, to_string(it->second)));
                                 field = static_cast<double>(*integer);
                               } else
                                 throw error(fmt::format("{}attribute \"{}\" of op {} has the wrong type ({})",
                                                         context, attr, name, to_string(it->second)));
                             });
                             if (used != attributes.size()) {
                               ordered_map<attribute_value> expected = op_attributes(op_variant(op));
                               for (const auto& [attr, value] : attributes)
                                 if (!expected.contains(attr))
                                   throw error(fmt::format("{}op {} has no attribute \"{}\"; its attributes are: {}",
                                                           context, name, attr, expected.key_list()));
                             }
                             return op_variant(op);
                           }(),
                           true)
                        : false) ||
     ...);
  }(std::type_identity<op_variant>{});
  if (!made) {
    const std::string near = nearest_names(name, op_names());
    throw error(near.empty() ? fmt::format("{}unknown op \"{}\"; mase::op_names() lists the ops mase knows", context, name)
                             : fmt::format("{}unknown op \"{}\"; did you mean {}?", context, name, near));
  }
  return *made;
}

}  // namespace mase
