#pragma once
// The flop estimator's rules over a graph (pass/flop_estimator.hpp declares them): inline in the
// header-only mode, compiled once in mase::mase (src/passes.cpp) otherwise.

#include <mase/pass/flop_estimator.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/pass/flop_estimator.hpp> instead"
#endif

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

namespace mase {

namespace detail {

// A node's data-input and result shapes, from its common metadata.
struct flop_shapes {
  std::vector<shape> in;
  std::vector<shape> out;
};

MASE_COMPILED_INLINE flop_shapes flop_shapes_of(const node& n) {
  const common_meta& c = n.meta.common;
  require(!c.results.empty(),
          "estimate_flops: node {} has no result shapes in its common metadata; run init_metadata | "
                      "add_common_metadata before estimating",
                      n.name);
  flop_shapes s;
  for (std::size_t i = 0;; ++i) {
    const auto it = c.args.find(data_in_name(i));
    if (it == c.args.end()) break;
    const tensor_meta* t = std::get_if<tensor_meta>(&it->second);
    require(t != nullptr, "estimate_flops: node {}: {} is not a tensor in its common metadata", n.name,
                                      data_in_name(i));
    s.in.push_back(t->shape);
  }
  require(s.in.size() == n.inputs.size(),
          "estimate_flops: node {} has {} inputs but {} data_in entries in its common metadata; run "
                      "add_common_metadata again after changing the graph",
                      n.name, n.inputs.size(), s.in.size());
  for (const auto& [name, meta] : c.results) s.out.push_back(meta.shape);
  return s;
}

MASE_COMPILED_INLINE std::int64_t total_numel(const std::vector<shape>& shapes) {
  std::int64_t n = 0;
  for (const shape& s : shapes) n += s.numel();
  return n;
}

// Trainable numbers: running statistics are buffers, not parameters.
MASE_COMPILED_INLINE std::int64_t trainable_parameters(const parameter_list& parameters) {
  std::int64_t n = 0;
  for (const parameter_spec& p : parameters)
    if (p.role != "running_mean" && p.role != "running_var") n += p.shape.numel();
  return n;
}

}  // namespace detail

MASE_COMPILED_INLINE op_cost estimate_node_flops(const node& n) {
  op_cost cost;
  cost.parameters = detail::trainable_parameters(n.op.parameters());
  if (n.op.category() == op_category::interface) return cost;  // graph inputs, constants, outputs
  const detail::flop_shapes shapes = detail::flop_shapes_of(n);
  cost.output_buffer_size = detail::total_numel(shapes.out);
  // An op that reads every result of its input (getitem) reads the one it selects, which its
  // data_in_0 entry (the input's first result) need not describe.
  cost.input_buffer_size = n.op.takes_all_results() ? cost.output_buffer_size : detail::total_numel(shapes.in);
  const std::optional<op_work> work = n.op.work(shapes.in, shapes.out);
  if (!work)
    throw error(fmt::format("estimate_flops: node {}: op {} ({}) has no work rule; give its type a member "
                            "mase::op_work work(std::span<const mase::shape> inputs, "
                            "std::span<const mase::shape> results) const (docs/extending.md)",
                            n.name, n.op.name(), to_string(n.op.category())));
  cost.computations = work->forward;
  cost.backward_computations = work->backward;
  return cost;
}

MASE_COMPILED_INLINE flop_estimate estimate_flops(const graph& g) {
  flop_estimate estimate;
  g.for_each_node([&](const node& n) {
    const op_cost cost = estimate_node_flops(n);
    estimate.total += cost;
    estimate.nodes.insert_or_assign(n.name, cost);
  });
  return estimate;
}
}  // namespace mase
