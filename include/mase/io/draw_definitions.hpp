#pragma once
// Graphviz output (io/draw.hpp declares it): inline in the header-only mode, compiled once in
// mase::mase (src/checkpoint.cpp) otherwise.

#include <mase/core/child_process.hpp>
#include <mase/io/draw.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/io/draw.hpp> instead"
#endif

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>  // access

#include <fmt/core.h>

namespace mase {

namespace detail {

MASE_COMPILED_INLINE std::string escape_dot_record(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '"': case '\\': case '{': case '}': case '|': case '<': case '>':
        out += '\\';
        out += c;
        break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

MASE_COMPILED_INLINE std::string quote_dot_id(std::string_view id) {
  std::string out = "\"";
  for (char c : id) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

MASE_COMPILED_INLINE std::string_view dot_fill_colour(node_kind k) {
  switch (k) {
    case node_kind::placeholder:
    case node_kind::output: return "#dbe9f6";
    case node_kind::get_attr: return "#eeeeee";
    case node_kind::module:
    case node_kind::module_related_func: return "#fff2cc";
    case node_kind::builtin_func: return "#e2f0d9";
    case node_kind::implicit_func: return "#f4f4f4";
  }
  return "#ffffff";
}

MASE_COMPILED_INLINE std::optional<std::filesystem::path> find_program(std::string_view program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  std::string_view rest(path);
  while (true) {
    const std::size_t colon = rest.find(':');
    const std::string_view folder = rest.substr(0, colon);
    std::filesystem::path candidate = std::filesystem::path(folder.empty() ? "." : std::string(folder)) / program;
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) return std::nullopt;
    rest.remove_prefix(colon + 1);
  }
}

MASE_COMPILED_INLINE std::string trim(std::string text) {
  const std::size_t end = text.find_last_not_of(" \t\r\n");
  text.erase(end == std::string::npos ? 0 : end + 1);
  return text;
}

MASE_COMPILED_INLINE int run_program(const std::filesystem::path& program, const std::vector<std::string>& args,
                                     const std::filesystem::path& stderr_file, const std::filesystem::path& target) {
  std::vector<std::string> argv{program.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_child(argv, {.input = "/dev/null", .output = "/dev/null", .errors = stderr_file},
                   fmt::format("cannot draw {}", target.string()));
}

}  // namespace detail

MASE_COMPILED_INLINE std::string to_dot(const graph& g) { return to_dot(g, node_text{}); }

MASE_COMPILED_INLINE std::string to_dot(const graph& g, const node_text& respell) {
  std::string text = "digraph mase_graph {\n";
  text += "  node [shape=Mrecord, style=filled, fontname=\"Helvetica\"];\n";
  for (node_id id : g.order()) {
    const node& n = g[id];
    // "{name|op|data_out_0: …}": fields stacked top to bottom.
    const auto shown = [&](std::string_view part, std::string as_is) {
      return respell ? respell(n, part, std::move(as_is)) : as_is;
    };
    std::string label =
        fmt::format("{{{}|{}", detail::escape_dot_record(n.name), detail::escape_dot_record(shown("op", to_string(n.op))));
    for (const auto& [name, result] : n.meta.common.results)
      label += fmt::format("|{}", detail::escape_dot_record(fmt::format("{}: {} {}", name, to_string(result.precision),
                                                                        shown(name, to_string(result.shape)))));
    label += "}";
    text += fmt::format("  {} [label=\"{}\", fillcolor=\"{}\"];\n", detail::quote_dot_id(n.name), label,
                        detail::dot_fill_colour(n.kind()));
  }
  for (node_id id : g.order())
    for (node_id in : g[id].inputs)
      text += fmt::format("  {} -> {};\n", detail::quote_dot_id(g[in].name), detail::quote_dot_id(g[id].name));
  return text + "}\n";
}

MASE_COMPILED_INLINE void draw(const graph& g, const std::filesystem::path& file) { draw(g, file, node_text{}); }

MASE_COMPILED_INLINE void draw(const graph& g, const std::filesystem::path& file, const node_text& respell) {
  const std::string extension = file.extension().string();
  if (extension != ".dot" && extension != ".svg")
    throw error(fmt::format("cannot draw {}: unsupported extension \"{}\"; draw to a .dot (Graphviz text) or .svg file",
                            file.string(), extension));
  const std::string dot_text = to_dot(g, respell);

  if (extension == ".dot") return write_file_atomically(file, dot_text);

  const std::optional<std::filesystem::path> dot = detail::find_program("dot");
  if (!dot)
    throw error(fmt::format("cannot draw {}: Graphviz's dot program is not on PATH; install graphviz "
                            "(apt-get install graphviz) or draw to a .dot file",
                            file.string()));
  temp_file input(file, "dot");
  input.write(dot_text, file);
  temp_file messages(file, "stderr");
  temp_file out(file, "svg");
  const int status =
      detail::run_program(*dot, {"-Tsvg", "-o", out.path().string(), input.path().string()}, messages.path(), file);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string how = WIFEXITED(status) ? fmt::format("exit status {}", WEXITSTATUS(status))
                            : WIFSIGNALED(status) ? fmt::format("killed by signal {}", WTERMSIG(status))
                                                  : std::string("stopped");
    const std::string stderr_text = detail::trim(messages.read());
    throw error(fmt::format("cannot draw {}: {} failed ({}){}{}", file.string(), dot->string(), how,
                            stderr_text.empty() ? "" : ": ", stderr_text));
  }
  out.rename_to(file);
}
}  // namespace mase
