#pragma once
// Text forms of the IR for people: metadata sections, nodes and graphs.
//
// A node prints as a nested "key: value" structure with MASE's key names, so what a pass
// recorded can be read back the way MASE users know it:
//
//   fc1:
//     op: linear(in_features=4, out_features=2, bias=true)
//     kind: module_related_func
//     inputs: [x]
//     parameters:
//       weight: tensor[2, 4](0.5, -1, 0.25, 2, 0, 1, … 2 more)
//     common:
//       mase_op: linear
//       mase_type: module_related_func
//       args:
//         data_in_0: {type: fixed, precision: fixed<8,3>, shape: [1, 4]}
//       results:
//         data_out_0: {type: fixed, precision: fixed<8,3>, shape: [1, 2]}
//     software: …
//     hardware: …
//
// A graph prints fx-style, one line per node:  %fc1 : linear(in_features=4, …)(%x)

#include <mase/core/compiled.hpp>
#include <mase/format/format_string.hpp>
#include <mase/ir/graph.hpp>
#include <mase/ir/metadata.hpp>
#include <mase/ir/op_traits.hpp>

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

// "tensor[2, 4](0.5, -1, 0.25, 2, 0, 1, … 2 more)": the shape and the first `shown` values
// (a weight may hold millions; the start is enough to recognise it).
MASE_COMPILED_INLINE std::string summarize(const tensor& t, std::size_t shown = 6);

namespace detail {

// Python's type names, as MASE records them for config arguments.
MASE_COMPILED_INLINE std::string_view python_type_name(const attribute_value& v);

MASE_COMPILED_INLINE std::string stat_to_string(const stat_value& v);

}  // namespace detail

// A tool's respelling of what a drawing or a report shows of node `n`: `part` says which text it
// is, "op" (to_string of the op), "attributes" (attributes_to_string of the op) or a metadata slot
// ("data_in_0", "data_out_0": to_string of its shape), and the result is shown instead of `text`.
// Empty: each text as it is. A tool that imported a model with placeholder sizes
// (onnx::import_options::symbolic_placeholder) names its symbolic dimensions this way.
using node_text = std::function<std::string(const node& n, std::string_view part, std::string text)>;

// "{type: fixed, precision: fixed<8,3>, shape: [1, 784]}" (and the value's start when recorded).
MASE_COMPILED_INLINE std::string to_string(const tensor_meta& t);

// The section's entries, one per line, nested by indentation (no trailing "common:" header).
MASE_COMPILED_INLINE std::string to_string(const common_meta& c);
MASE_COMPILED_INLINE std::string to_string(const software_meta& s);
MASE_COMPILED_INLINE std::string to_string(const hardware_meta& h);

// A node on its own knows its inputs only by id ("node#3"); to_string(graph, id) names them.
MASE_COMPILED_INLINE std::string to_string(const node& n);
MASE_COMPILED_INLINE std::string to_string(const graph& g, node_id id);

// "%fc1 : linear(in_features=784, out_features=10, bias=true)(%x)  # data_out_0: fixed<8,3> [1, 10]"
MASE_COMPILED_INLINE std::string graph_line(const graph& g, node_id id);

MASE_COMPILED_INLINE std::ostream& operator<<(std::ostream& os, const tensor_meta& t);
MASE_COMPILED_INLINE std::ostream& operator<<(std::ostream& os, const common_meta& c);
MASE_COMPILED_INLINE std::ostream& operator<<(std::ostream& os, const software_meta& s);
MASE_COMPILED_INLINE std::ostream& operator<<(std::ostream& os, const hardware_meta& h);
MASE_COMPILED_INLINE std::ostream& operator<<(std::ostream& os, const node& n);

// The graph fx-style: one line per node, in topological order.
MASE_COMPILED_INLINE std::ostream& operator<<(std::ostream& os, const graph& g);

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/ir/print_definitions.hpp>
#endif
