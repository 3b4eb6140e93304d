#pragma once
// Drawing a graph: Graphviz DOT text, and SVG through Graphviz's `dot` program (MASE's
// MaseGraph.draw).
//
// Each node is a record box: its name, its op with attributes, and one line per result with its
// precision and shape once add_common_metadata has recorded them. Edges run from an input to
// the node that reads it.
//
// Files are written to a temporary file in the same folder and renamed into place, so a failed
// or interrupted draw leaves no half-written file. `dot` runs without a shell (posix_spawn with
// an argument vector), its exit status is checked and its error output goes into the message.

#include <mase/core/compiled.hpp>
#include <mase/core/error.hpp>
#include <mase/core/temp_file.hpp>
#include <mase/ir/graph.hpp>
#include <mase/ir/print.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mase {

namespace detail {

// Text for one field of a record label: DOT's quoted strings need \" and \\, and a record
// label reads { } | < > as structure unless they are escaped.
MASE_COMPILED_INLINE std::string escape_dot_record(std::string_view text);

// A quoted DOT identifier.
MASE_COMPILED_INLINE std::string quote_dot_id(std::string_view id);

// The first executable `program` in the folders of $PATH (an empty entry is the current folder).
MASE_COMPILED_INLINE std::optional<std::filesystem::path> find_program(std::string_view program);

// Runs `program` with `args` (no shell), stdin and stdout from/to /dev/null and stderr into
// `stderr_file`. Returns the wait status.
MASE_COMPILED_INLINE int run_program(const std::filesystem::path& program, const std::vector<std::string>& args,
                                     const std::filesystem::path& stderr_file, const std::filesystem::path& target);

}  // namespace detail

// The graph as Graphviz DOT text; `respell` may change each node's op and result shape texts.
MASE_COMPILED_INLINE std::string to_dot(const graph& g);
MASE_COMPILED_INLINE std::string to_dot(const graph& g, const node_text& respell);

// Draws the graph to `file`: ".dot" writes DOT text, ".svg" renders it with Graphviz's dot.
MASE_COMPILED_INLINE void draw(const graph& g, const std::filesystem::path& file);
MASE_COMPILED_INLINE void draw(const graph& g, const std::filesystem::path& file, const node_text& respell);

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/io/draw_definitions.hpp>
#endif
