#pragma once
// Generic access to a node's op (any_op): its name, kind, attributes and shape rule; dispatch to
// code written per built-in op (visit_op); and building an op from its name and attributes
// (checkpoints, configs): mase::vocabulary, the built-in one or a user's with their own ops.

#include <mase/core/compiled.hpp>
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

#include <fmt/core.h>

namespace mase {

namespace detail {
// Checks every op of a list against mase::op_type. Checking the ~90 built-in ops costs about a
// tenth of a second in every unit, so mase::mase's src/vocabulary.cpp checks builtin_ops once
// (and the op tests check each op); a user's op is checked where it becomes an any_op.
template <class... Ops>
constexpr bool all_op_types(op_list<Ops...>) {
  static_assert((op_type<Ops> && ...), "every op of builtin_ops must satisfy mase::op_type");
  return true;
}

template <class List>
struct builtin_dispatch;
template <class... Ops>
struct builtin_dispatch<op_list<Ops...>> {
  static constexpr std::string_view names[] = {Ops::name...};
  template <class R, class F>
  static R visit(const any_op& op, F& f) {
    using thunk = R (*)(const any_op&, F&);
    static constexpr thunk table[] = {[](const any_op& x, F& g) -> R { return g(*x.get_if<Ops>()); }...};
    return table[static_cast<std::size_t>(op.builtin_index())](op, f);
  }
};
using builtin_tables = builtin_dispatch<builtin_ops>;
}  // namespace detail

// Calls builtin(concrete op) for one of mase's built-in ops (a table of one function per op,
// several times faster to compile than std::visit over ~90 types), other(op) for a user's op.
template <class R, class F, class G>
R visit_op(const any_op& op, F&& builtin, G&& other) {
  if (op.builtin_index() < 0) return other(op);
  return detail::builtin_tables::template visit<R>(op, builtin);
}

// visit_op for code that knows only mase's built-in ops: a user's op is an error naming it.
template <class R, class F>
R visit_op(const any_op& op, F&& builtin) {
  return visit_op<R>(op, builtin, [](const any_op& user) -> R {
    throw error(fmt::format("op {} is not one of mase's built-in ops, and this step knows only those", user.name()));
  });
}

inline bool op_equal(const any_op& a, const any_op& b) { return a == b; }
inline std::string_view op_name(const any_op& op) { return op.name(); }
inline node_kind op_kind(const any_op& op) { return op.kind(); }
inline arity op_arity(const any_op& op) { return op.inputs(); }
// Whether the op reads every result of its input (getitem) rather than the first.
inline bool op_takes_all_results(const any_op& op) { return op.takes_all_results(); }
inline parameter_list op_parameters(const any_op& op) { return op.parameters(); }
inline shape_result op_infer_shapes(const any_op& op, std::span<const shape> inputs) { return op.infer_shapes(inputs); }
// The op's attributes by name, in declaration order.
inline ordered_map<attribute_value> op_attributes(const any_op& op) { return op.attributes(); }

// The name of every built-in op, in builtin_ops' order.
inline std::span<const std::string_view> builtin_op_names() noexcept { return detail::builtin_tables::names; }

// Every op name of mase's built-in vocabulary, in builtin_ops' order.
inline const std::vector<std::string_view>& op_names() {
  static const std::vector<std::string_view> names(builtin_op_names().begin(), builtin_op_names().end());
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
inline std::string attributes_to_string(const any_op& op) {
  std::string text;
  for (const auto& [name, value] : op_attributes(op))
    text += fmt::format("{}{}={}", text.empty() ? "" : ", ", name, to_string(value));
  return text;
}

// "linear(in_features=784, out_features=10, bias=true)"
inline std::string to_string(const any_op& op) {
  return fmt::format("{}({})", op_name(op), attributes_to_string(op));
}

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

inline void check_no_extra_attributes(const any_op& op, const ordered_map<attribute_value>& attributes,
                                      std::string_view context, std::string_view name) {
  const ordered_map<attribute_value> expected = op_attributes(op);
  for (const auto& [attr, value] : attributes)
    if (!expected.contains(attr))
      throw error(fmt::format("{}op {} has no attribute \"{}\"; its attributes are: {}", context, name, attr,
                              expected.key_list()));
}

template <class Op>
any_op make_op_of(const ordered_map<attribute_value>& attributes, std::string_view context) {
  Op op{};
  std::size_t used = 0;
  for_each_attribute(op, [&](std::string_view attr, auto& field) {
    assign_attribute(field, attr, attributes, context, Op::name, used);
  });
  any_op made(op);
  if (used != attributes.size()) check_no_extra_attributes(made, attributes, context, Op::name);
  return made;
}

}  // namespace detail

// The ops that can be built by name: mase's built-in ones (builtin_vocabulary()) and any a user
// adds. Checkpoints and quantize configs name ops; a user whose graphs hold their own ops
// passes a vocabulary that has them.
//
//   mase::vocabulary ops = mase::builtin_vocabulary();
//   ops.add<my_act>();
class vocabulary {
public:
  using maker = any_op (*)(const ordered_map<attribute_value>& attributes, std::string_view context);

  template <op_type Op>
  vocabulary& add() {
    if (contains(Op::name))
      throw error(fmt::format("vocabulary: an op called \"{}\" is already in it; give the new op another name", Op::name));
    entries_.push_back({Op::name, &detail::make_op_of<Op>});
    return *this;
  }

  bool contains(std::string_view name) const noexcept { return find(name) != nullptr; }
  std::vector<std::string_view> names() const {
    std::vector<std::string_view> out;
    for (const entry& e : entries_) out.push_back(e.name);
    return out;
  }

  // The op called `name` with the given attributes. Every attribute of the op must be given with
  // its type (an integer is accepted for a double); unknown names are errors. `where` names the
  // source for messages ("checkpoint model.json, node fc1").
  any_op make(std::string_view name, const ordered_map<attribute_value>& attributes, std::string_view where = "") const {
    const std::string context = where.empty() ? std::string() : fmt::format("{}: ", where);
    if (const entry* e = find(name)) return e->make(attributes, context);
    const std::string near = nearest_names(name, names());
    throw error(near.empty() ? fmt::format("{}unknown op \"{}\"; the vocabulary's names() lists the ops it knows", context, name)
                             : fmt::format("{}unknown op \"{}\"; did you mean {}?", context, name, near));
  }

private:
  struct entry {
    std::string_view name;  // the op type's static name
    maker make;
  };
  const entry* find(std::string_view name) const noexcept {
    for (const entry& e : entries_)
      if (e.name == name) return &e;
    return nullptr;
  }
  std::vector<entry> entries_;
};

namespace detail {
template <class... Ops>
vocabulary vocabulary_of(op_list<Ops...>) {
  vocabulary v;
  (v.add<Ops>(), ...);
  return v;
}
}  // namespace detail

// mase's built-in ops. (A template, as make_op below, so that only the translation units that
// build ops by name compile every op's code.)
template <class List = builtin_ops>
const vocabulary& builtin_vocabulary() {
  static const vocabulary ops = detail::vocabulary_of(List{});
  return ops;
}

// Compiled once, in mase::mase, when the project uses it (core/compiled.hpp): building every
// op by name is most of what a unit that loads a checkpoint or an ONNX model compiles.
#if MASE_EXTERN_INSTANTIATIONS
extern template const vocabulary& builtin_vocabulary<builtin_ops>();
#endif

// The built-in op called `name`: builtin_vocabulary().make(…).
template <class Vocabulary = vocabulary>
any_op make_op(std::string_view name, const ordered_map<attribute_value>& attributes, std::string_view where = "") {
  const Vocabulary& ops = builtin_vocabulary();
  return ops.make(name, attributes, where);
}

}  // namespace mase
