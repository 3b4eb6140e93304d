#pragma once
// add_common_metadata's bodies (pass/add_common_metadata.hpp declares them): inline in the
// header-only mode, compiled once in mase::mase (src/passes.cpp) otherwise.

#include <mase/pass/add_common_metadata.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/pass/add_common_metadata.hpp> instead"
#endif

#include <mase/eval/evaluator.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mase {

namespace detail {

MASE_COMPILED_INLINE void write_common_metadata(graph& g, const std::vector<shape_list>& results,
                                                const std::vector<recorded_values>* values) {
  for (node_id id : g.order()) {
    node& n = g[id];
    common_meta& c = n.meta.common;
    c.mase_op = std::string(n.op_name());
    c.mase_type = n.kind();
    const recorded_values* recorded = values ? &(*values)[id.index] : nullptr;

    ordered_map<arg_meta> args;
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      const node& producer = g[n.inputs[i]];
      const auto produced = producer.meta.common.results.find(data_out_name(0));
      tensor_meta arg{.shape = results[n.inputs[i].index][0],
                      .precision = produced != producer.meta.common.results.end() ? produced->second.precision
                                                                                    : format(formats::float32),
                      .value = std::nullopt};
      if (recorded && i < recorded->inputs.size()) arg.value = recorded->inputs[i];
      args.insert_or_assign(data_in_name(i), std::move(arg));
    }
    for (const parameter_spec& p : op_parameters(n.op)) {
      const auto old = c.args.find(p.role);
      tensor_meta param{.shape = p.shape, .precision = formats::float32, .value = std::nullopt};
      if (old != c.args.end())
        if (const auto* t = std::get_if<tensor_meta>(&old->second)) param.precision = t->precision;
      if (recorded)
        if (const auto value = n.parameters.find(p.role); value != n.parameters.end()) param.value = value->second;
      args.insert_or_assign(p.role, std::move(param));
    }
    // MASE records the non-tensor arguments of function calls, not the hyper-parameters of
    // modules.
    if (n.kind() == node_kind::builtin_func || n.kind() == node_kind::implicit_func)
      for (auto& [name, value] : op_attributes(n.op)) args.insert_or_assign(name, arg_meta(std::move(value)));
    c.args = std::move(args);

    ordered_map<tensor_meta> outs;
    const shape_list& shapes = results[id.index];
    for (int i = 0; i < shapes.size(); ++i) {
      const std::string name = data_out_name(static_cast<std::size_t>(i));
      const auto old = c.results.find(name);
      tensor_meta out{.shape = shapes[i],
                      .precision = old != c.results.end() ? old->second.precision : format(formats::float32),
                      .value = std::nullopt};
      if (recorded && static_cast<std::size_t>(i) < recorded->results.size())
        out.value = recorded->results[static_cast<std::size_t>(i)];
      outs.insert_or_assign(name, std::move(out));
    }
    c.results = std::move(outs);
  }
}

}  // namespace detail

MASE_COMPILED_INLINE void add_common_metadata_pass::run(graph& g) const {
  std::vector<shape_list> results(g.id_bound());
  const auto results_of = [&](node_id id) -> const shape_list& { return results[id.index]; };
  for (node_id id : g.order()) results[id.index] = infer_node_shapes(g, id, results_of);
  detail::write_common_metadata(g, results, nullptr);
}

template <class Graph>
void detail::record_float_run(const Graph& g, const ordered_map<tensor>& dummy_in, std::vector<shape_list>& shapes,
                              std::vector<recorded_values>* values) {
  basic_evaluator<Graph> ev(g);
  ev.run_with(dummy_in, [&](const node_run& r) {
    for (const tensor* t : r.results) shapes[r.id.index].push_back(t->shape());
    if (values == nullptr) return;
    recorded_values& v = (*values)[r.id.index];
    // getitem reads every result of its input; MASE records the one tensor argument.
    for (const tensor* t : r.inputs) v.inputs.push_back(*t);
    for (const tensor* t : r.results) v.results.push_back(*t);
  });
}

}  // namespace mase
