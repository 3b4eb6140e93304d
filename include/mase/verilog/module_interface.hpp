#pragma once
// A SystemVerilog module of mase's RTL library as data: its parameters and ports declared once,
// and its body as text. The header (`module NAME #(…) (…);`) is printed from the declaration, and
// the planner binds exactly the declared parameters and clock, so nothing reads them back out of
// the text.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>

namespace mase::verilog {

struct module_parameter {
  std::string_view name;
  std::string_view default_value;  // a Verilog expression: 8, "", 64'd0
  std::string_view type = "int";   // "int", "logic [63:0]", or empty for an untyped parameter (a file name)
  std::string_view comment = {};   // lines printed above it, without the "// "
};

enum class port_direction : bool { input, output };

struct module_port {
  port_direction direction = port_direction::input;
  std::string_view name;
  std::string_view width = {};  // its bits, a Verilog expression (the port is [width-1:0]); empty: one bit
  // A stream: beside the data, <name>_valid in the same direction and <name>_ready against it.
  bool handshake = false;
  bool is_signed = false;
  std::string_view comment = {};  // lines printed above it, without the "// "
};

struct module_text {
  std::string_view name;
  std::span<const module_parameter> shared_parameters = {};  // a family's, declared before its own
  std::span<const module_parameter> parameters = {};
  std::span<const module_port> ports = {};
  std::string_view description = {};  // the comment above the module, "// " and all
  std::string_view body = {};         // after the header, through endmodule
  constexpr bool declared() const noexcept { return !name.empty(); }
};

// The RTL library's spellings in its declarations: {in, "data_in_0", "W", stream}.
// Its texts are "…"sv literals, whose length the compiler knows, rather than counted character by
// character in constant evaluation.
namespace rtl {
using namespace std::string_view_literals;
inline constexpr port_direction in = port_direction::input, out = port_direction::output;
inline constexpr bool stream = true;
}  // namespace rtl

namespace detail {
inline void comment_lines(std::string& text, std::string_view comment) {
  while (!comment.empty()) {
    const std::size_t end = comment.find('\n');
    text += fmt::format("  // {}\n", comment.substr(0, end));
    comment = end == std::string_view::npos ? std::string_view{} : comment.substr(end + 1);
  }
}
inline std::string port_line(port_direction direction, std::string_view width, bool is_signed, std::string_view name) {
  return fmt::format("  {} logic {}{}{}", direction == port_direction::input ? "input " : "output", is_signed ? "signed " : "",
                     width.empty() ? std::string() : fmt::format("[{}-1:0] ", width), name);
}
}  // namespace detail

// The module's whole text: its description, the header printed from its declaration, its body.
inline std::string module_source(const module_text& m) {
  std::string text(m.description);
  text += fmt::format("module {} #(\n", m.name);
  const std::size_t count = m.shared_parameters.size() + m.parameters.size();
  for (std::size_t i = 0; i < count; ++i) {
    const module_parameter& p =
        i < m.shared_parameters.size() ? m.shared_parameters[i] : m.parameters[i - m.shared_parameters.size()];
    detail::comment_lines(text, p.comment);
    text += fmt::format("  parameter {}{}{} = {}{}\n", p.type, p.type.empty() ? "" : " ", p.name, p.default_value,
                        i + 1 < count ? "," : "");
  }
  text += ") (\n";
  std::vector<std::string> lines;
  std::vector<std::string_view> comments;
  for (const module_port& p : m.ports) {
    comments.push_back(p.comment);
    lines.push_back(detail::port_line(p.direction, p.width, p.is_signed, p.name));
    if (!p.handshake) continue;
    const port_direction against = p.direction == port_direction::input ? port_direction::output : port_direction::input;
    comments.insert(comments.end(), 2, std::string_view{});
    lines.push_back(detail::port_line(p.direction, {}, false, fmt::format("{}_valid", p.name)));
    lines.push_back(detail::port_line(against, {}, false, fmt::format("{}_ready", p.name)));
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    detail::comment_lines(text, comments[i]);
    text += lines[i] + (i + 1 < lines.size() ? ",\n" : "\n");
  }
  text += ");\n";
  text += m.body;
  return text;
}

// Its parameters' names, in declaration order.
inline std::vector<std::string> parameter_names(const module_text& m) {
  std::vector<std::string> names;
  for (const module_parameter& p : m.shared_parameters) names.emplace_back(p.name);
  for (const module_parameter& p : m.parameters) names.emplace_back(p.name);
  return names;
}

// Whether it has a port called `name` (clk, rst: a combinational module has neither).
constexpr bool has_port(const module_text& m, std::string_view name) noexcept {
  for (const module_port& p : m.ports)
    if (p.name == name) return true;
  return false;
}

}  // namespace mase::verilog
