#pragma once
// add_common_metadata: fills common.args and common.results of every node (MASE's
// add_common_metadata_analysis_pass, §1.4 of the reference): mase_op and mase_type, data_in_<i>
// for each input (shape and precision of the result it reads), the op's parameters (weight,
// bias, …) and, for function-style ops, the op's attributes as config args; data_out_<i> for
// each result. A result that already has an entry keeps its precision (a static graph's or an
// earlier quantization's formats survive).
//
// Two ways, as in MASE:
//   g | init_metadata | add_common_metadata                  // shapes from the ops' rules, no data
//                                                             // (MASE's force_device_meta)
//   g | init_metadata | add_common_metadata(dummy_in)         // runs the float evaluator on the
//                                                             // inputs: shapes of the real run, and
//                                                             // every arg's and result's value
//   g | init_metadata | add_common_metadata(dummy_in, {.add_value = false})

#include <mase/eval/evaluator.hpp>
#include <mase/ir/shape_inference.hpp>
#include <mase/pass/pipeline.hpp>

#include <concepts>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace mase {

namespace detail {

// What a run recorded for one node: its inputs' and results' values.
struct recorded_values {
  std::vector<tensor> inputs;
  std::vector<tensor> results;
};

// Writes the common metadata of every node from the result shapes of each node and, when
// given, the values a run recorded.
inline void write_common_metadata(graph& g, const std::vector<shape_list>& results,
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

struct add_common_metadata_options {
  bool add_value = true;  // record every arg's and result's value (MASE's add_value)
};

// The pass that runs the model on dummy inputs.
struct add_common_metadata_run_pass {
  using needs = facts<fact::metadata_initialised>;
  using provides = facts<fact::common_metadata>;

  ordered_map<tensor> dummy_in;
  add_common_metadata_options options;

  // A template so that the evaluator is compiled only where this pass is used.
  template <std::derived_from<graph> G>
  void run(G& g) const {
    std::vector<shape_list> shapes(g.id_bound());
    std::vector<detail::recorded_values> values(options.add_value ? g.id_bound() : 0);
    {
      basic_evaluator<graph> ev(g);
      ev.run_with(dummy_in, [&](const node_run& r) {
        for (const tensor* t : r.results) shapes[r.id.index].push_back(t->shape());
        if (!options.add_value) return;
        detail::recorded_values& v = values[r.id.index];
        // getitem reads every result of its input; MASE records the one tensor argument.
        for (const tensor* t : r.inputs) v.inputs.push_back(*t);
        for (const tensor* t : r.results) v.results.push_back(*t);
      });
    }
    detail::write_common_metadata(g, shapes, options.add_value ? &values : nullptr);
  }
};

struct add_common_metadata_pass {
  using needs = facts<fact::metadata_initialised>;
  using provides = facts<fact::common_metadata>;

  void run(graph& g) const {
    std::vector<shape_list> results(g.id_bound());
    const auto results_of = [&](node_id id) -> const shape_list& { return results[id.index]; };
    for (node_id id : g.order()) results[id.index] = infer_node_shapes(g, id, results_of);
    detail::write_common_metadata(g, results, nullptr);
  }

  // Runs the float evaluator on `dummy_in` (inputs by placeholder name) instead.
  add_common_metadata_run_pass operator()(ordered_map<tensor> dummy_in, add_common_metadata_options options = {}) const {
    return {std::move(dummy_in), options};
  }
};

inline constexpr add_common_metadata_pass add_common_metadata{};

}  // namespace mase
