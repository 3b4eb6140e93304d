#pragma once
// Node kinds (MASE's mase_type). Each kind is a type, so an op type states its kind as
// `using kind = kind::module;` and code can dispatch on it at compile time; node_kind is the
// same set as a runtime value for graphs loaded from files.

#include <mase/core/error.hpp>

#include <array>
#include <cstdint>
#include <string_view>

#include <fmt/core.h>

namespace mase {

enum class node_kind : std::uint8_t {
  placeholder,          // a graph input
  get_attr,             // a stored tensor (a constant or a parameter read by name)
  module,               // a stateful layer MASE keeps as a module (batch_norm1d/2d)
  module_related_func,  // a layer or its functional form (linear, conv2d, relu, …)
  builtin_func,         // arithmetic and tensor functions (add, matmul, softmax, …)
  implicit_func,        // data movement with no arithmetic (view, permute, cat, …)
  output,               // the graph's results
};

namespace kind {
struct placeholder { static constexpr node_kind value = node_kind::placeholder; };
struct get_attr { static constexpr node_kind value = node_kind::get_attr; };
struct module { static constexpr node_kind value = node_kind::module; };
struct module_related_func { static constexpr node_kind value = node_kind::module_related_func; };
struct builtin_func { static constexpr node_kind value = node_kind::builtin_func; };
struct implicit_func { static constexpr node_kind value = node_kind::implicit_func; };
struct output { static constexpr node_kind value = node_kind::output; };
}  // namespace kind

inline constexpr std::array<std::string_view, 7> node_kind_names{
    "placeholder", "get_attr", "module", "module_related_func", "builtin_func", "implicit_func", "output"};

// MASE's spelling ("module_related_func").
constexpr std::string_view to_string(node_kind k) noexcept { return node_kind_names[static_cast<std::size_t>(k)]; }

inline node_kind node_kind_from_string(std::string_view name) {
  for (std::size_t i = 0; i < node_kind_names.size(); ++i)
    if (node_kind_names[i] == name) return static_cast<node_kind>(i);
  throw error(fmt::format("unknown node kind \"{}\"; the kinds are placeholder, get_attr, module, "
                          "module_related_func, builtin_func, implicit_func and output",
                          name));
}

}  // namespace mase
