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

MASE_COMPILED_INLINE std::string tensor_meta_inline(const tensor_meta& t) {
  std::string text = fmt::format("{{type: {}, precision: {}, shape: {}", t.type(), to_string(t.precision), to_string(t.shape));
  if (t.value) text += fmt::format(", value: {}", summarize(*t.value));
  return text + "}";
}

MASE_COMPILED_INLINE std::string arg_inline(const arg_meta& a) {
  if (const tensor_meta* t = std::get_if<tensor_meta>(&a)) return tensor_meta_inline(*t);
  const config_value& c = std::get<config_value>(a);
  return fmt::format("{{type: {}, value: {}}}", python_type_name(c), to_string(c));
}

template <class T, class Inline>
void write_map(tree_writer& w, int depth, std::string_view key, const ordered_map<T>& map, Inline&& to_text) {
  if (map.empty()) return w.entry(depth, key, "{}");
  w.open(depth, key);
  for (const auto& [name, value] : map) w.entry(depth + 1, name, to_text(value));
}

MASE_COMPILED_INLINE void write_common(tree_writer& w, int depth, const common_meta& c) {
  // An empty mase_op means add_common_metadata has not run, so mase_type is only its default.
  const bool filled = !c.mase_op.empty();
  w.entry(depth, "mase_op", filled ? std::string_view(c.mase_op) : "(not set)");
  w.entry(depth, "mase_type", filled ? to_string(c.mase_type) : "(not set)");
  write_map(w, depth, "args", c.args, arg_inline);
  write_map(w, depth, "results", c.results, tensor_meta_inline);
}

MASE_COMPILED_INLINE void write_software_entries(tree_writer& w, int depth, std::string_view key,
                                                 const ordered_map<software_entry>& entries) {
  if (entries.empty()) return w.entry(depth, key, "{}");
  w.open(depth, key);
  for (const auto& [name, entry] : entries) {
    w.open(depth + 1, name);
    if (entry.stat.empty()) {
      w.entry(depth + 2, "stat", "{}");
      continue;
    }
    w.open(depth + 2, "stat");
    for (const auto& [stat_name, fields] : entry.stat) {
      std::string text = "{";
      bool first = true;
      for (const auto& [field, value] : fields) {
        text += fmt::format("{}{}: {}", first ? "" : ", ", field, stat_to_string(value));
        first = false;
      }
      w.entry(depth + 3, stat_name, text + "}");
    }
  }
}

MASE_COMPILED_INLINE void write_software(tree_writer& w, int depth, const software_meta& s) {
  write_software_entries(w, depth, "args", s.args);
  write_software_entries(w, depth, "results", s.results);
}

// A metadata field's value on one line, by its type (the fields of a described_metadata struct,
// ir/metadata.hpp).
inline std::string inline_field_value(bool v) { return v ? "true" : "false"; }
inline std::string inline_field_value(int v) { return fmt::format("{}", v); }
inline std::string inline_field_value(toolchain t) { return std::string(to_string(t)); }
inline std::string inline_field_value(const std::string& s) { return s; }
inline std::string inline_field_value(const std::optional<std::string>& s) { return s ? *s : "None"; }
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
inline std::string inline_field_value(const verilog_value& v) { return verilog_value_to_string(v); }
template <described_metadata S>
std::string inline_field_value(const S& s) {
  std::string text;
  std::apply([&](const auto&... f) {
    ((text += fmt::format("{}{}: {}", text.empty() ? "" : ", ", f.name, inline_field_value(s.*f.member))), ...);
  }, S::fields());
  return "{" + text + "}";
}

template <class T>
void write_field(tree_writer& w, int depth, std::string_view name, const T& value) {
  w.entry(depth, name, inline_field_value(value));
}
template <class T>
void write_field(tree_writer& w, int depth, std::string_view name, const ordered_map<T>& map) {
  write_map(w, depth, name, map, [](const T& value) { return inline_field_value(value); });
}

MASE_COMPILED_INLINE void write_hardware(tree_writer& w, int depth, const hardware_meta& h) {
  std::apply([&](const auto&... f) { (write_field(w, depth, f.name, h.*f.member), ...); }, hardware_meta::fields());
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
  write_map(w, 1, "parameters", n.parameters, [](const tensor& t) { return summarize(t); });
  w.open(1, "common");
  write_common(w, 2, n.meta.common);
  w.open(1, "software");
  write_software(w, 2, n.meta.software);
  w.open(1, "hardware");
  write_hardware(w, 2, n.meta.hardware);
  return out;
}

}  // namespace detail

MASE_COMPILED_INLINE std::string to_string(const tensor_meta& t) { return detail::tensor_meta_inline(t); }

MASE_COMPILED_INLINE std::string to_string(const common_meta& c) {
  std::string out;
  detail::tree_writer w(out);
  detail::write_common(w, 0, c);
  return out;
}

MASE_COMPILED_INLINE std::string to_string(const software_meta& s) {
  std::string out;
  detail::tree_writer w(out);
  detail::write_software(w, 0, s);
  return out;
}

MASE_COMPILED_INLINE std::string to_string(const hardware_meta& h) {
  std::string out;
  detail::tree_writer w(out);
  detail::write_hardware(w, 0, h);
  return out;
}

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
