#pragma once
// add_common_metadata: fills common.args and common.results of every node (MASE's
// add_common_metadata_analysis_pass, §1.4 of the reference) from the ops' shape rules, without
// running the model: data_in_<i> for each input (shape and precision of the result it reads),
// the op's parameters (weight, bias, …) and, for function-style ops, the op's attributes as
// config args; data_out_<i> for each result. A result that already has an entry keeps its
// precision (a static graph's or an earlier quantization's formats survive).

#include <mase/pass/pipeline.hpp>

#include <string>
#include <vector>

#include <fmt/format.h>

namespace mase {

// The shapes of a node's results, from its inputs' results; mase::error naming the node if the
// inputs do not fit its op. `results_of(id)` gives an input node's result shapes.
template <class ResultsOf>
shape_list infer_node_shapes(const graph& g, node_id id, ResultsOf&& results_of) {
  const node& n = g[id];
  std::vector<shape> in;
  if (op_takes_all_results(n.op)) {
    for (const shape& s : results_of(n.inputs.at(0))) in.push_back(s);
  } else {
    for (node_id input : n.inputs) {
      const shape_list& r = results_of(input);
      require(!r.empty(), fmt::format("node {}: its input {} has no result", n.name, g[input].name));
      in.push_back(r[0]);
    }
  }
  const shape_result r = op_infer_shapes(n.op, in);
  if (!r.ok()) {
    std::string shapes;
    for (const shape& s : in) shapes += fmt::format("{}{}", shapes.empty() ? "" : ", ", to_string(s));
    throw error(fmt::format("node {} ({}): {}; input shape(s) {}", n.name, to_string(n.op), r.error,
                            shapes.empty() ? "(none)" : shapes));
  }
  return r.shapes;
}

struct add_common_metadata_pass {
  using needs = facts<fact::metadata_initialised>;
  using provides = facts<fact::common_metadata>;

  void run(graph& g) const {
    std::vector<shape_list> results(g.id_bound());
    const auto results_of = [&](node_id id) -> const shape_list& { return results[id.index]; };
    for (node_id id : g.order()) {
      results[id.index] = infer_node_shapes(g, id, results_of);
      node& n = g[id];
      common_meta& c = n.meta.common;
      c.mase_op = std::string(n.op_name());
      c.mase_type = n.kind();

      ordered_map<arg_meta> args;
      for (std::size_t i = 0; i < n.inputs.size(); ++i) {
        const node& producer = g[n.inputs[i]];
        const auto produced = producer.meta.common.results.find(data_out_name(0));
        tensor_meta arg{.shape = results[n.inputs[i].index][0],
                        .precision = produced != producer.meta.common.results.end() ? produced->second.precision
                                                                                      : format(formats::float32),
                        .value = std::nullopt};
        args.insert_or_assign(data_in_name(i), std::move(arg));
      }
      for (const parameter_spec& p : op_parameters(n.op)) {
        const auto old = c.args.find(p.role);
        tensor_meta param{.shape = p.shape, .precision = formats::float32, .value = std::nullopt};
        if (old != c.args.end())
          if (const auto* t = std::get_if<tensor_meta>(&old->second)) param.precision = t->precision;
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
        outs.insert_or_assign(name, tensor_meta{.shape = shapes[i],
                                                .precision = old != c.results.end() ? old->second.precision
                                                                                   : format(formats::float32),
                                                .value = std::nullopt});
      }
      c.results = std::move(outs);
    }
  }
};

inline constexpr add_common_metadata_pass add_common_metadata{};

}  // namespace mase
