#pragma once
// Printing graphs, nodes and metadata (ir/print.hpp declares it): inline in the header-only mode,
// compiled once in mase::mase (src/vocabulary.cpp) otherwise.

#include <mase/ir/print.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/ir/print.hpp> instead"
#endif

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include <fmt/core.h>

namespace mase {

MASE_COMPILED_INLINE std::string summarize(const tensor& t, std::size_t shown) {
  std::string text = fmt::format("tensor{}(", to_string(t.shape()));
  const auto values = t.values();
  const std::size_t count = values.size() < shown ? values.size() : shown;
  for (std::size_t i = 0; i < count; ++i) text += fmt::format("{}{}", i == 0 ? "" : ", ", values[i]);
  if (values.size() > count) text += fmt::format("{}… {} more", count == 0 ? "" : ", ", values.size() - count);
  return text + ")";
}

namespace detail {

MASE_COMPILED_INLINE std::string_view python_type_name(const attribute_value& v) {
  return std::visit(
      [](const auto& x) -> std::string_view {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) return "bool";
        else if constexpr (std::is_same_v<T, std::int64_t>) return "int";
        else if constexpr (std::is_same_v<T, double>) return "float";
        else return "list";
      },
      v);
}

// Lists of statistics can be per channel (thousands of entries): the first few and a count.
MASE_COMPILED_INLINE std::string list_to_string(const std::vector<double>& values, std::size_t shown = 16) {
  std::string text = "[";
  const std::size_t count = values.size() < shown ? values.size() : shown;
  for (std::size_t i = 0; i < count; ++i) text += fmt::format("{}{}", i == 0 ? "" : ", ", values[i]);
  if (values.size() > count) text += fmt::format(", … {} more", values.size() - count);
  return text + "]";
}

MASE_COMPILED_INLINE std::string stat_to_string(const stat_value& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, double>) return fmt::format("{}", x);
        else if constexpr (std::is_same_v<T, std::vector<double>>) return list_to_string(x);
        else return "NA";
      },
      v);
}

MASE_COMPILED_INLINE std::string verilog_value_to_string(const verilog_value& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::int64_t>) return fmt::format("{}", x);
        else if constexpr (std::is_same_v<T, std::string>) return fmt::format("\"{}\"", x);
        else {
          std::string text = "[";
          for (std::size_t i = 0; i < x.size(); ++i) text += fmt::format("{}{}", i == 0 ? "" : ", ", x[i]);
          return text + "]";
        }
      },
      v);
}

// Writes "key: value" lines, two spaces of indentation per level.
class tree_writer {
public:
  explicit tree_writer(std::string& out) : out_(out) {}

  void entry(int depth, std::string_view key, std::string_view value) {
    indent(depth);
    out_ += fmt::format("{}: {}\n", key, value);
  }
  // A key whose value follows on deeper lines.
  void open(int depth, std::string_view key) {
    indent(depth);
    out_ += fmt::format("{}:\n", key);
  }

private:
  void indent(int depth) { out_.append(static_cast<std::size_t>(depth) * 2, ' '); }
  std::string& out_;
};

// A metadata field's value on one line, by its type; a described struct (ir/metadata.hpp) as
// "{name: value, …}" over its fields.
inline std::string inline_field_value(bool v) { return v ? "true" : "false"; }
inline std::string inline_field_value(int v) { return fmt::format("{}", v); }
inline std::string inline_field_value(toolchain t) { return std::string(to_string(t)); }
inline std::string inline_field_value(node_kind k) { return std::string(to_string(k)); }
inline std::string inline_field_value(const std::string& s) { return s; }
inline std::string inline_field_value(const std::optional<std::string>& s) { return s ? *s : "None"; }
inline std::string inline_field_value(const shape& s) { return to_string(s); }
inline std::string inline_field_value(const format& f) { return to_string(f); }
inline std::string inline_field_value(const std::optional<tensor>& t) { return t ? summarize(*t) : "None"; }
inline std::string inline_field_value(const stat_value& v) { return stat_to_string(v); }
inline std::string inline_field_value(const verilog_value& v) { return verilog_value_to_string(v); }
inline std::string inline_field_value(const std::vector<std::string>& list) {
  std::string text = "[";
  for (std::size_t i = 0; i < list.size(); ++i) text += fmt::format("{}{}", i == 0 ? "" : ", ", list[i]);
  return text + "]";
}
template <std::size_t N>
std::string inline_field_value(const std::array<int, N>& list) {
  std::string text = "[";
  for (std::size_t i = 0; i < N; ++i) text += fmt::format("{}{}", i == 0 ? "" : ", ", list[i]);
  return text + "]";
}
template <described_metadata S>
std::string inline_field_value(const S& s);
inline std::string inline_field_value(const arg_meta& a) {
  if (const tensor_meta* t = std::get_if<tensor_meta>(&a)) return inline_field_value(*t);
  const config_value& c = std::get<config_value>(a);
  return fmt::format("{{type: {}, value: {}}}", python_type_name(c), to_string(c));
}
template <class T>
std::string inline_field_value(const ordered_map<T>& map) {
  std::string text;
  for (const auto& [key, value] : map) text += fmt::format("{}{}: {}", text.empty() ? "" : ", ", key, inline_field_value(value));
  return "{" + text + "}";
}
// What a struct shows before its fields: a tensor's MASE type, derived from its precision.
template <class S>
std::string derived_fields_text(const S&) {
  return {};
}
inline std::string derived_fields_text(const tensor_meta& t) { return fmt::format("type: {}", t.type()); }
template <described_metadata S>
std::string inline_field_value(const S& s) {
  std::string text = derived_fields_text(s);
  std::apply(
      [&](const auto&... f) {
        const auto add = [&](std::string_view name, const auto& value) {
          if (field_recorded(value)) text += fmt::format("{}{}: {}", text.empty() ? "" : ", ", name, inline_field_value(value));
        };
        (add(f.name, s.*f.member), ...);
      },
      S::fields());
  return "{" + text + "}";
}

// A struct prints on one line unless it holds a map or a struct that does not (common, software,
// hardware and a software entry print as nested blocks; a tensor or an interface entry inline).
template <class T>
inline constexpr bool prints_as_block = false;
template <class T>
inline constexpr bool prints_as_block<ordered_map<T>> = true;
template <described_metadata S>
inline constexpr bool prints_as_block<S> =
    std::apply([](const auto&... f) { return (prints_as_block<typename std::decay_t<decltype(f)>::value_type> || ...); },
               S::fields());

// What a field shows instead of its value: add_common_metadata sets mase_op and mase_type
// together, so before it has run the type is only its default.
template <class S>
std::optional<std::string_view> placeholder_text(const S&, std::string_view) {
  return std::nullopt;
}
inline std::optional<std::string_view> placeholder_text(const common_meta& c, std::string_view field) {
  if (c.mase_op.empty() && (field == "mase_op" || field == "mase_type")) return "(not set)";
  return std::nullopt;
}

template <described_metadata S>
void write_fields(tree_writer& w, int depth, const S& s);
// A map's entry: a block struct's fields nested below its key, anything else on the key's line.
template <class T>
void write_entry(tree_writer& w, int depth, std::string_view key, const T& value) {
  if constexpr (described_metadata<T> && prints_as_block<T>) {
    w.open(depth, key);
    write_fields(w, depth + 1, value);
  } else {
    w.entry(depth, key, inline_field_value(value));
  }
}
// A struct's field: a map's entries one a line below its name ("{}" when empty), else as an entry.
template <class T>
void write_field(tree_writer& w, int depth, std::string_view name, const T& value) {
  write_entry(w, depth, name, value);
}
template <class T>
void write_field(tree_writer& w, int depth, std::string_view name, const ordered_map<T>& map) {
  if (map.empty()) return w.entry(depth, name, "{}");
  w.open(depth, name);
  for (const auto& [key, value] : map) write_entry(w, depth + 1, key, value);
}
template <described_metadata S>
void write_fields(tree_writer& w, int depth, const S& s) {
  std::apply(
      [&](const auto&... f) {
        const auto write = [&](std::string_view name, const auto& value) {
          if (const auto text = placeholder_text(s, name)) w.entry(depth, name, *text);
          else write_field(w, depth, name, value);
        };
        (write(f.name, s.*f.member), ...);
      },
      S::fields());
}

template <described_metadata S>
std::string fields_text(const S& s) {
  std::string out;
  tree_writer w(out);
  write_fields(w, 0, s);
  return out;
}

// `input_name` spells an input edge: its node's name with a graph, its id without one.
MASE_COMPILED_INLINE std::string node_to_string(const node& n, const std::function<std::string(node_id)>& input_name) {
  std::string out;
  tree_writer w(out);
  w.open(0, n.name);
  w.entry(1, "op", to_string(n.op));
  w.entry(1, "kind", to_string(n.kind()));
  std::string inputs = "[";
  for (std::size_t i = 0; i < n.inputs.size(); ++i) inputs += fmt::format("{}{}", i == 0 ? "" : ", ", input_name(n.inputs[i]));
  w.entry(1, "inputs", inputs + "]");
  if (n.parameters.empty()) w.entry(1, "parameters", "{}");
  else {
    w.open(1, "parameters");
    for (const auto& [role, t] : n.parameters) w.entry(2, role, summarize(t));
  }
  write_fields(w, 1, n.meta);
  return out;
}

}  // namespace detail

MASE_COMPILED_INLINE std::string to_string(const tensor_meta& t) { return detail::inline_field_value(t); }

MASE_COMPILED_INLINE std::string to_string(const common_meta& c) { return detail::fields_text(c); }

MASE_COMPILED_INLINE std::string to_string(const software_meta& s) { return detail::fields_text(s); }

MASE_COMPILED_INLINE std::string to_string(const hardware_meta& h) { return detail::fields_text(h); }

MASE_COMPILED_INLINE std::string to_string(const node& n) {
  return detail::node_to_string(n, [](node_id id) { return fmt::format("node#{}", id.index); });
}

MASE_COMPILED_INLINE std::string to_string(const graph& g, node_id id) {
  return detail::node_to_string(g[id], [&](node_id in) { return g.contains(in) ? g[in].name : fmt::format("node#{}", in.index); });
}

MASE_COMPILED_INLINE std::string graph_line(const graph& g, node_id id) {
  const node& n = g[id];
  std::string line = fmt::format("%{} : {}(", n.name, to_string(n.op));
  for (std::size_t i = 0; i < n.inputs.size(); ++i) line += fmt::format("{}%{}", i == 0 ? "" : ", ", g[n.inputs[i]].name);
  line += ")";
  bool first = true;
  for (const auto& [name, result] : n.meta.common.results) {
    line += fmt::format("{}{}: {} {}", first ? "  # " : ", ", name, to_string(result.precision), to_string(result.shape));
    first = false;
  }
  return line;
}

MASE_COMPILED_INLINE std::ostream& operator<<(std::ostream& os, const tensor_meta& t) { return os << to_string(t); }

MASE_COMPILED_INLINE std::ostream& operator<<(std::ostream& os, const common_meta& c) { return os << to_string(c); }

MASE_COMPILED_INLINE std::ostream& operator<<(std::ostream& os, const software_meta& s) { return os << to_string(s); }

MASE_COMPILED_INLINE std::ostream& operator<<(std::ostream& os, const hardware_meta& h) { return os << to_string(h); }

MASE_COMPILED_INLINE std::ostream& operator<<(std::ostream& os, const node& n) { return os << to_string(n); }

MASE_COMPILED_INLINE std::ostream& operator<<(std::ostream& os, const graph& g) {
  for (node_id id : g.order()) os << graph_line(g, id) << '\n';
  return os;
}
}  // namespace mase
