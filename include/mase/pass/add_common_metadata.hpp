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

#include <mase/core/compiled.hpp>
#include <mase/core/deferred.hpp>
#include <mase/core/ordered_map.hpp>
#include <mase/core/tensor.hpp>
#include <mase/ir/shape_inference.hpp>
#include <mase/pass/pipeline.hpp>

#include <concepts>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace mase {

namespace detail {

// What a run recorded for one node: its inputs' and results' values.
struct recorded_values {
  std::vector<tensor> inputs;
  std::vector<tensor> results;
};

// Writes the common metadata of every node from the result shapes of each node and, when
// given, the values a run recorded.
MASE_COMPILED_INLINE void write_common_metadata(graph& g, const std::vector<shape_list>& results,
                                                const std::vector<recorded_values>* values);

// Runs the float evaluator on `dummy_in`, recording each node's result shapes and, when `values`
// is given, its inputs' and results' values. A template over the graph type, defined with the
// evaluator in add_common_metadata_definitions.hpp, so that the evaluator is compiled only where
// add_common_metadata(dummy_in) runs, or once in mase::mase.
template <class Graph>
void record_float_run(const Graph& g, const ordered_map<tensor>& dummy_in, std::vector<shape_list>& shapes,
                      std::vector<recorded_values>* values);
#if MASE_EXTERN_INSTANTIATIONS
extern template void record_float_run<graph>(const graph&, const ordered_map<tensor>&, std::vector<shape_list>&,
                                             std::vector<recorded_values>*);
#endif

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
    detail::record_float_run<deferred_t<graph, G>>(g, dummy_in, shapes, options.add_value ? &values : nullptr);
    detail::write_common_metadata(g, shapes, options.add_value ? &values : nullptr);
  }
};

struct add_common_metadata_pass {
  using needs = facts<fact::metadata_initialised>;
  using provides = facts<fact::common_metadata>;

  void run(graph& g) const;

  // Runs the float evaluator on `dummy_in` (inputs by placeholder name) instead.
  add_common_metadata_run_pass operator()(ordered_map<tensor> dummy_in, add_common_metadata_options options = {}) const {
    return {std::move(dummy_in), options};
  }
};

inline constexpr add_common_metadata_pass add_common_metadata{};

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/pass/add_common_metadata_definitions.hpp>
#endif
