#pragma once
// mase::static_graph: a graph whose node names, ops, input edges, shapes and formats are template
// arguments. Every node's shape is computed by its op's constexpr shape rule while the program is
// compiled, so a name that does not exist, an input of the wrong shape, a wrong number of inputs,
// a duplicate name or an invalid format is a compile error naming the node. It converts to the
// dynamic mase::graph, and passes iterate over its nodes with for_each_node.
//
//   using mlp = mase::static_graph<
//       mase::input<"x", mase::shape{1, 784}>,
//       mase::layer<"fc1", mase::op::linear{.in_features = 784, .out_features = 256}, mase::from<"x">>,
//       mase::layer<"relu1", mase::op::relu{}, mase::from<"fc1">, mase::fixed_fmt{.width = 8, .frac = 3}>,
//       mase::layer<"fc2", mase::op::linear{.in_features = 256, .out_features = 10}, mase::from<"relu1">>,
//       mase::result<"fc2">>;
//
//   static_assert(mlp::shape_of<"fc2"> == mase::shape{1, 10});
//   mase::graph g = mlp::to_graph();
//
// Diagnostics: static_assert messages must be literals (GCC 12), so each kind of mistake has its
// own class template in mase::static_graph_error whose template arguments are the node's name
// and what is wrong with it (the missing name, the op's shape-rule message, the input shapes).
// The compiler prints them on the "In instantiation of" line just above the assertion.

#include <mase/core/fixed_string.hpp>
#include <mase/core/shape.hpp>
#include <mase/core/tensor.hpp>
#include <mase/format/format.hpp>
#include <mase/ir/graph.hpp>
#include <mase/ir/metadata.hpp>
#include <mase/ir/op_traits.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>

namespace mase {

// ---- the spelling of a static graph ------------------------------------------------------------

// The names of the nodes a layer reads, in argument order: from<"a", "b">.
template <fixed_string... Names>
struct from {};

namespace detail::sgraph {
template <class T>
struct is_from : std::false_type {};
template <fixed_string... Names>
struct is_from<from<Names...>> : std::true_type {};
}  // namespace detail::sgraph

template <class T>
concept input_list = detail::sgraph::is_from<T>::value;

// A graph input (placeholder) of a fixed shape; its values have format `Format`.
template <fixed_string Name, shape Shape, format_descriptor auto Format = formats::float32>
struct input {
  static constexpr auto name = Name;
  static constexpr auto op = mase::op::placeholder{.shape = Shape};
  using inputs = from<>;
  static constexpr auto format = Format;
  static constexpr bool passes_formats_through = false;
};

// A node computing `Op` of the nodes named in `Inputs`; its results have format `Format`.
template <fixed_string Name, op_type auto Op, input_list Inputs = from<>,
          format_descriptor auto Format = formats::float32>
struct layer {
  static constexpr auto name = Name;
  static constexpr auto op = Op;
  using inputs = Inputs;
  static constexpr auto format = Format;
  static constexpr bool passes_formats_through = false;
};

// The graph's output node (named "output", as in torch.fx): its results are the named nodes'
// results, in order, with their formats.
template <fixed_string... Names>
struct result {
  static constexpr fixed_string name = "output";
  static constexpr auto op = mase::op::output{};
  using inputs = from<Names...>;
  static constexpr auto format = formats::float32;  // not used: each result keeps its node's format
  static constexpr bool passes_formats_through = true;
};

namespace detail::sgraph {
template <class T>
struct is_node_spec : std::false_type {};
template <fixed_string Name, shape Shape, format_descriptor auto Format>
struct is_node_spec<input<Name, Shape, Format>> : std::true_type {};
template <fixed_string Name, op_type auto Op, input_list Inputs, format_descriptor auto Format>
struct is_node_spec<layer<Name, Op, Inputs, Format>> : std::true_type {};
template <fixed_string... Names>
struct is_node_spec<result<Names...>> : std::true_type {};

template <class T>
struct is_result : std::false_type {};
template <fixed_string... Names>
struct is_result<result<Names...>> : std::true_type {};
}  // namespace detail::sgraph

template <class T>
concept static_node_spec = detail::sgraph::is_node_spec<T>::value;

// ---- compile errors ----------------------------------------------------------------------------

// Each template is instantiated only for a mistake. Its arguments carry the names the literal
// message cannot; GCC prints them on the "In instantiation of" line right above the message.
namespace static_graph_error {
template <auto...>
inline constexpr bool always_false = false;

template <fixed_string Node, fixed_string Input>
struct undefined_input {
  static_assert(always_false<Node, Input>,
                "static_graph: a node reads an input that no node defines; undefined_input<node, input> above "
                "names both. Fix the name in the node's mase::from<...> or add the missing node before it");
};

template <fixed_string Node, fixed_string Input>
struct input_defined_later {
  static_assert(always_false<Node, Input>,
                "static_graph: a node reads an input that is defined after it; input_defined_later<node, input> "
                "above names both. List every node after the nodes it reads");
};

template <fixed_string Node, std::size_t Given, int Min, int Max>
struct wrong_number_of_inputs {
  static_assert(always_false<Node, Given, Min, Max>,
                "static_graph: a node has a number of inputs its op does not take; wrong_number_of_inputs<node, "
                "inputs given, least, most> above says which node and how many its op takes. Fix the node's "
                "mase::from<...>");
};

template <fixed_string Node, fixed_string Input, int Results>
struct reads_several_results {
  static_assert(always_false<Node, Input, Results>,
                "static_graph: a node reads a node that has several results, but its op takes one tensor; "
                "reads_several_results<node, input, results> above names them. Read one result through a getitem "
                "node");
};

template <fixed_string Node, fixed_string ShapeRule, fixed_string InputShapes>
struct shapes_do_not_fit {
  static_assert(always_false<Node, ShapeRule, InputShapes>,
                "static_graph: the input shapes of a node do not fit its op; shapes_do_not_fit<node, the op's "
                "shape rule, the input shapes> above says which node and why. Fix the op's attributes or the "
                "shapes of its inputs");
};

template <fixed_string Node>
struct duplicate_name {
  static_assert(always_false<Node>,
                "static_graph: two nodes have the same name (duplicate_name<name> above); node names must be unique, "
                "and the mase::result<...> node is called \"output\"");
};

template <fixed_string Node>
struct name_is_not_an_identifier {
  static_assert(always_false<Node>,
                "static_graph: a node name is not an identifier (name_is_not_an_identifier<name> above); use "
                "letters, digits and '_', not starting with a digit (names become Verilog and file names)");
};

// The format rule's own message appears in the "in 'constexpr' expansion" lines of the first
// assertion (see detail::format_rule).
template <fixed_string Node, auto Format>
struct invalid_format {
  static_assert((check(Format), true), "the format rule above rejects the node's format");
  static_assert(always_false<Node>,
                "static_graph: a node's format is not a valid format (invalid_format<node, format> above; the "
                "rule it breaks is quoted above)");
};

template <fixed_string Name>
struct no_node_named {
  static_assert(always_false<Name>, "static_graph: the graph has no node of this name (no_node_named<name> above)");
};
}  // namespace static_graph_error

// ---- the computation of each node --------------------------------------------------------------

namespace detail::sgraph {

inline constexpr std::size_t npos = static_cast<std::size_t>(-1);

// Instantiates the error template T, whose static_assert fails.
template <class T>
constexpr void report() {
  (void)sizeof(T);
}

template <class... Specs>
struct spec_pack {
  static constexpr std::size_t size = sizeof...(Specs);
  template <std::size_t I>
  using spec = std::tuple_element_t<I, std::tuple<Specs...>>;
  static constexpr std::array<std::string_view, sizeof...(Specs)> names{Specs::name.view()...};

  static constexpr std::size_t index_of(std::string_view name) {
    for (std::size_t i = 0; i < size; ++i)
      if (names[i] == name) return i;
    return npos;
  }
};

// Text written at compile time: once without a buffer to measure it, then into one.
struct text_writer {
  char* out = nullptr;
  std::size_t length = 0;

  constexpr void put(char c) {
    if (out != nullptr) out[length] = c;
    ++length;
  }
  constexpr void put(const char* text) {
    for (; *text != '\0'; ++text) put(*text);
  }
  constexpr void put(std::int64_t value) {
    if (value < 0) put('-');
    std::uint64_t magnitude = value < 0 ? 0 - static_cast<std::uint64_t>(value) : static_cast<std::uint64_t>(value);
    char digits[20]{};
    int count = 0;
    do {
      digits[count++] = static_cast<char>('0' + magnitude % 10);
      magnitude /= 10;
    } while (magnitude != 0);
    while (count > 0) put(digits[--count]);
  }
  constexpr void put(const shape& s) {
    put('[');
    for (int i = 0; i < s.size(); ++i) {
      if (i > 0) put(", ");
      put(s[i]);
    }
    put(']');
  }
  constexpr void put(const shape_list& shapes) {
    if (shapes.empty()) put("(no inputs)");
    for (int i = 0; i < shapes.size(); ++i) {
      if (i > 0) put(", ");
      put(shapes[i]);
    }
  }
};

template <class T>
constexpr std::size_t text_size(const T& value) {
  text_writer measure;
  measure.put(value);
  return measure.length + 1;
}

template <std::size_t N, class T>
constexpr fixed_string<N> to_text(const T& value) {
  char buffer[N]{};
  text_writer writer{buffer, 0};
  writer.put(value);
  return fixed_string<N>(buffer);
}

// Whether the descriptor passes its format's rules (a constant expression only when it does).
template <auto Format>
concept valid_format = requires { typename std::bool_constant<(check(Format), true)>; };

constexpr bool is_identifier(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

// The index of input `Input` of the node at `Position` called `Node`; npos after reporting it
// when no earlier node has that name.
template <class Pack, std::size_t Position, fixed_string Node, fixed_string Input>
constexpr std::size_t resolve_input() {
  constexpr std::size_t found = Pack::index_of(Input.view());
  if constexpr (found == npos) {
    report<static_graph_error::undefined_input<Node, Input>>();
    return npos;
  } else if constexpr (found >= Position) {
    report<static_graph_error::input_defined_later<Node, Input>>();
    return npos;
  } else {
    return found;
  }
}

template <class Pack, std::size_t Position, fixed_string Node, class Inputs>
struct resolved_inputs;
template <class Pack, std::size_t Position, fixed_string Node, fixed_string... Names>
struct resolved_inputs<Pack, Position, Node, from<Names...>> {
  static constexpr std::array<std::string_view, sizeof...(Names)> names{Names.view()...};
  static constexpr std::array<std::size_t, sizeof...(Names)> indices{resolve_input<Pack, Position, Node, Names>()...};
};

}  // namespace detail::sgraph

// The descriptor of node `I` of a static graph: everything about it as constants.
//   name, index, op, op_type, kind, input_names, inputs (indices of the nodes it reads),
//   input_shapes, shapes (every result), shape (the first), format, parameters (roles, shapes).
// `format` is the node's result format; the output node passes each input's format through
// (result_format(r)), and its `format` is its first input's.
template <class Pack, std::size_t I>
struct static_node {
private:
  using spec = typename Pack::template spec<I>;
  using resolved = detail::sgraph::resolved_inputs<Pack, I, spec::name, typename spec::inputs>;

public:
  static constexpr std::size_t index = I;
  static constexpr std::string_view name = spec::name.view();
  static constexpr auto op = spec::op;
  using op_type = std::remove_cvref_t<decltype(spec::op)>;
  static constexpr node_kind kind = op_type::kind::value;
  static constexpr auto input_names = resolved::names;
  static constexpr auto inputs = resolved::indices;
  static constexpr parameter_list parameters = parameters_of(op);

private:
  static constexpr std::size_t input_count = inputs.size();

  static constexpr bool inputs_exist() {
    for (std::size_t i : inputs)
      if (i == detail::sgraph::npos) return false;
    return true;
  }

  // Whether every input node is itself well formed (an error there is reported there).
  static constexpr bool inputs_well_formed() {
    if constexpr (!inputs_exist()) {
      return false;
    } else {
      return [&]<std::size_t... K>(std::index_sequence<K...>) {
        return (static_node<Pack, inputs[K]>::valid && ...);
      }(std::make_index_sequence<input_count>{});
    }
  }
  static constexpr bool inputs_ok = inputs_well_formed();

  static constexpr bool check_arity() {
    if constexpr (!op_type::inputs.accepts(input_count)) {
      detail::sgraph::report<
          static_graph_error::wrong_number_of_inputs<spec::name, input_count, op_type::inputs.min, op_type::inputs.max>>();
      return false;
    } else {
      return true;
    }
  }
  static constexpr bool arity_ok = check_arity();

  static constexpr bool check_format() {
    if constexpr (detail::sgraph::valid_format<spec::format>) {
      return true;
    } else {
      detail::sgraph::report<static_graph_error::invalid_format<spec::name, spec::format>>();
      return false;
    }
  }
  static constexpr bool format_ok = check_format();

  // The shapes the op's rule reads: every result of its input for getitem-like ops, otherwise
  // the one result of each input.
  template <class Producer>
  static constexpr bool append_results(shape_list& out) {
    if constexpr (detail::op_takes_all_results<op_type>()) {
      for (const mase::shape& s : Producer::shapes) out.push_back(s);
      return true;
    } else if constexpr (Producer::shapes.size() != 1) {
      detail::sgraph::report<static_graph_error::reads_several_results<spec::name, Producer::spec::name,
                                                                        Producer::shapes.size()>>();
      return false;
    } else {
      out.push_back(Producer::shapes[0]);
      return true;
    }
  }

  struct gathered {
    shape_list shapes;
    bool ok = false;
  };
  static constexpr gathered gather() {
    gathered g;
    if constexpr (inputs_ok) {
      g.ok = true;  // every input is appended (and every mistake reported), not just up to the first
      [&]<std::size_t... K>(std::index_sequence<K...>) {
        ((g.ok = append_results<static_node<Pack, inputs[K]>>(g.shapes) && g.ok), ...);
      }(std::make_index_sequence<input_count>{});
    }
    return g;
  }
  static constexpr gathered gathered_inputs = gather();
  // Whether the op's rule can run: its inputs exist, are well formed and are as many as it takes.
  static constexpr bool ready = gathered_inputs.ok && arity_ok;

public:
  // The shapes the op reads (data_in_0, data_in_1, …; every result of the input for getitem).
  static constexpr shape_list input_shapes = gathered_inputs.shapes;

private:
  static constexpr shape_result apply_rule() {
    if constexpr (ready) {
      return op.infer_shapes(std::span<const mase::shape>(input_shapes.begin(), input_shapes.end()));
    } else {
      return {};
    }
  }
  static constexpr shape_result rule = apply_rule();

  static constexpr bool check_rule() {
    if constexpr (!ready) {
      return false;
    } else if constexpr (!rule.ok()) {
      constexpr const char* why = rule.error;
      constexpr std::size_t why_size = detail::sgraph::text_size(why);
      constexpr fixed_string<why_size> why_text = detail::sgraph::to_text<why_size>(why);
      constexpr std::size_t shapes_size = detail::sgraph::text_size(input_shapes);
      constexpr fixed_string<shapes_size> shapes_text = detail::sgraph::to_text<shapes_size>(input_shapes);
      detail::sgraph::report<static_graph_error::shapes_do_not_fit<spec::name, why_text, shapes_text>>();
      return false;
    } else {
      return true;
    }
  }

  template <class, std::size_t>
  friend struct static_node;

public:
  // Whether the node is well formed; false only after a compile error has been reported.
  static constexpr bool valid = check_rule() && format_ok;
  static constexpr shape_list shapes = rule.shapes;
  static constexpr mase::shape shape = shapes.empty() ? mase::shape{} : shapes[0];

private:
  static constexpr auto node_format() {
    if constexpr (spec::passes_formats_through && inputs_exist() && input_count > 0)
      return static_node<Pack, inputs[0]>::format;
    else
      return spec::format;
  }

public:
  static constexpr auto format = node_format();

  // The format of result `r` (data_out_r), as a runtime format.
  static mase::format result_format(std::size_t r) {
    if constexpr (spec::passes_formats_through && inputs_exist()) {
      std::optional<mase::format> found;
      [&]<std::size_t... K>(std::index_sequence<K...>) {
        ((K == r ? (void)found.emplace(static_node<Pack, inputs[K]>::format) : void()), ...);
      }(std::make_index_sequence<input_count>{});
      require(found.has_value(), "node {} has no result {}", name, r);
      return *found;
    } else {
      return mase::format(format);
    }
  }
};

// ---- the graph ---------------------------------------------------------------------------------

namespace detail::sgraph {
template <class Pack>
constexpr bool check_names() {
  // The first node whose name an earlier node already has, if any.
  constexpr std::size_t duplicate = [] {
    for (std::size_t j = 0; j < Pack::size; ++j)
      for (std::size_t i = 0; i < j; ++i)
        if (Pack::names[i] == Pack::names[j]) return j;
    return npos;
  }();
  if constexpr (duplicate != npos) report<static_graph_error::duplicate_name<Pack::template spec<duplicate>::name>>();
  constexpr std::size_t bad_name = [] {
    for (std::size_t i = 0; i < Pack::size; ++i)
      if (!is_identifier(Pack::names[i])) return i;
    return npos;
  }();
  if constexpr (bad_name != npos)
    report<static_graph_error::name_is_not_an_identifier<Pack::template spec<bad_name>::name>>();
  return duplicate == npos && bad_name == npos;
}

template <class Pack, fixed_string Name>
constexpr std::size_t index_of() {
  constexpr std::size_t found = Pack::index_of(Name.view());
  if constexpr (found == npos) {
    report<static_graph_error::no_node_named<Name>>();
    return 0;  // after the error, keeps further diagnostics quiet
  } else {
    return found;
  }
}

// Whether a mase::result<...> node, if there is one, comes last.
template <class... Specs>
constexpr bool result_is_last() {
  constexpr bool is_result_node[] = {false, is_result<Specs>::value...};
  for (std::size_t i = 1; i + 1 < std::size(is_result_node); ++i)
    if (is_result_node[i]) return false;
  return true;
}

// Computes (and so checks) every node.
template <class Pack, std::size_t... I>
constexpr bool all_valid(std::index_sequence<I...>) {
  return (static_node<Pack, I>::valid && ... && true);
}

template <class Pack, std::size_t... I>
constexpr auto make_nodes(std::index_sequence<I...>) {
  return boost::hana::tuple<static_node<Pack, I>...>{};
}
}  // namespace detail::sgraph

template <static_node_spec... Specs>
class static_graph {
  using pack = detail::sgraph::spec_pack<Specs...>;

  static constexpr std::size_t result_count = (std::size_t{0} + ... + detail::sgraph::is_result<Specs>::value);
  static_assert(result_count <= 1,
                "static_graph: a graph has one mase::result<...> (its output node); name several nodes in it to "
                "return several results");
  static_assert(detail::sgraph::result_is_last<Specs...>(), "static_graph: mase::result<...> must be the last node");
  // Name errors and node errors are reported by the templates of static_graph_error; these
  // assertions only make them happen as soon as the graph is used.
  static_assert(detail::sgraph::check_names<pack>() || true);
  static_assert(detail::sgraph::all_valid<pack>(std::make_index_sequence<sizeof...(Specs)>{}) || true);

public:
  // The node descriptors, in order (each node after the nodes it reads).
  using nodes_type = decltype(detail::sgraph::make_nodes<pack>(std::make_index_sequence<sizeof...(Specs)>{}));
  static constexpr nodes_type nodes{};

  // Whether the graph is well formed. Every mistake is a compile error of its own, so this is
  // true in any program that compiles; `static_assert(g::valid)` checks a graph where it is declared.
  static constexpr bool valid = detail::sgraph::check_names<pack>() &&
                                detail::sgraph::all_valid<pack>(std::make_index_sequence<sizeof...(Specs)>{});

  static constexpr std::size_t size() noexcept { return sizeof...(Specs); }
  static constexpr std::array<std::string_view, sizeof...(Specs)> names = pack::names;

  // The descriptor of the node called `Name` (see static_node).
  template <fixed_string Name>
  using node = static_node<pack, detail::sgraph::index_of<pack, Name>()>;

  template <fixed_string Name>
  static constexpr std::size_t index_of = detail::sgraph::index_of<pack, Name>();
  template <fixed_string Name>
  static constexpr shape_list shapes_of = node<Name>::shapes;
  template <fixed_string Name>
  static constexpr mase::shape shape_of = node<Name>::shape;
  template <fixed_string Name>
  static constexpr auto format_of = node<Name>::format;

  // Calls f(descriptor) for every node in order, as hana::for_each does over a tuple; the
  // descriptor's members are constants, so f can use them in `if constexpr` and templates.
  template <class F>
  static constexpr void for_each_node(F&& f) {
    boost::hana::for_each(nodes, std::forward<F>(f));
  }

  // The same graph as a dynamic mase::graph: the same names, ops and edges; every parameter the
  // ops declare, zero-filled; common metadata with mase_op, mase_type and each result's shape and
  // format (data_out_0, …).
  static graph to_graph() {
    graph g;
    std::array<node_id, sizeof...(Specs)> ids{};
    for_each_node([&](auto descriptor) {
      using node_t = decltype(descriptor);
      std::vector<node_id> inputs;
      for (std::size_t i : node_t::inputs) inputs.push_back(ids[i]);
      const node_id id = g.add(std::string(node_t::name), any_op(node_t::op), std::move(inputs));
      for (const parameter_spec& p : node_t::parameters) g.set_parameter(id, p.role, tensor(p.shape));
      common_meta& common = g[id].meta.common;
      common.mase_op = std::string(node_t::op_type::name);
      common.mase_type = node_t::kind;
      for (int r = 0; r < node_t::shapes.size(); ++r)
        common.results.insert_or_assign(
            data_out_name(static_cast<std::size_t>(r)),
            tensor_meta{.shape = node_t::shapes[r], .precision = node_t::result_format(static_cast<std::size_t>(r)),
                        .value = std::nullopt});
      ids[node_t::index] = id;
    });
    return g;
  }
};

}  // namespace mase
