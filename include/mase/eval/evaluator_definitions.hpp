#pragma once
// basic_evaluator's members that run kernels, and with them every float kernel and integer rule.
// eval/evaluator.hpp includes this in the header-only mode; in the compiled mode only
// mase::mase's unit does (src/evaluator.cpp), so a unit that uses an evaluator parses the
// class and not the kernels. A unit that calls a kernel or a lowering rule itself includes
// eval/kernels.hpp or eval/bit_exact.hpp.

#include <mase/core/thread_pool.hpp>
#include <mase/eval/bit_exact.hpp>
#include <mase/eval/evaluator.hpp>
#include <mase/eval/kernels.hpp>
#include <mase/ir/op_traits.hpp>
#include <mase/ir/shape_inference.hpp>
#include <mase/quant/quantize.hpp>

#include <optional>
#include <type_traits>
#include <vector>

namespace mase {

// Defined outside the class so that they are not inline: an explicit instantiation declaration
// (compiled mode) then keeps them out of the units that use an evaluator.
template <class Graph>
void basic_evaluator<Graph>::plan() {
  const Graph& g = *graph_;
  states_.assign(g.id_bound(), {});
  for (node_id id : g.order()) {
    const node& n = g[id];
    node_state& s = states_[id.index];
    s.input_views.assign(n.inputs.size(), nullptr);
    s.input_casts.assign(n.inputs.size(), std::nullopt);
    s.hardware_casts.assign(n.inputs.size(), 0);
    s.cast_inputs.resize(n.inputs.size());
    if (mode_ == eval_mode::float32) continue;

    const bool casts_inputs = !op_takes_all_results(n.op) && !n.is<op::output>();
    for (std::size_t i = 0; casts_inputs && i < n.inputs.size(); ++i) {
      const std::optional<format> want = entry_format(n, data_in_name(i));
      // A producer whose result already has this format needs no cast.
      const node& producer = g[n.inputs[i]];
      const auto produced = producer.meta.common.results.find(data_out_name(0));
      const bool already = produced != producer.meta.common.results.end() && want &&
                           produced->second.precision == *want && !producer.is<op::placeholder>();
      if (want && !already) s.input_casts[i] = want;
      // Between two fixed-point nodes the hardware casts with fixed_signed_cast (floor, saturate);
      // the graph's inputs and float results are quantized in software with the format's rules.
      const bool producer_fixed = produced != producer.meta.common.results.end() &&
                                  produced->second.precision.holds<fixed_fmt>() &&
                                  !producer.is<op::placeholder>();
      s.hardware_casts[i] = mode_ == eval_mode::bit_exact && producer_fixed && want && want->holds<fixed_fmt>();
    }
    // A view or a max pool moves values without arithmetic: when its input arrives in its result's
    // fixed-point format, the values are already on that grid and in its range, and the result's
    // cast would change none.
    const bool moves_values = n.op.category() == op_category::view || n.is<op::max_pool1d>() ||
                              n.is<op::max_pool2d>() || n.is<op::max_pool3d>();
    const std::optional<format> input_format = n.inputs.size() == 1 ? entry_format(n, data_in_name(0)) : std::nullopt;
    for (const auto& [name, meta] : n.meta.common.results) {
      std::optional<format> cast = quantizing(meta.precision);
      if (moves_values && cast && cast->holds<fixed_fmt>() && input_format == cast) cast.reset();
      s.result_formats.push_back(std::move(cast));
    }
    for (const auto& [role, value] : n.parameters) {
      tensor q = value;
      if (const std::optional<format> f = entry_format(n, role)) {
        quantize(*f, value.values(), value.shape(), q.values());
        s.quantizes_parameters = true;
      }
      s.quantized_parameters.insert_or_assign(role, std::move(q));
    }
    if (mode_ == eval_mode::bit_exact) {
      s.lowering = eval::lower_to_fixed(n, s.quantized_parameters);
      s.bit_exact = s.lowering ? eval::lowered_kernel(n, *s.lowering) : eval::user_bit_exact_kernel(n);
    }
  }
}

template <class Graph>
void basic_evaluator<Graph>::plan_shapes() {
  const graph& g = *graph_;
  const auto shapes_of = [&](node_id id) -> const shape_list& { return states_[id.index].shapes; };
  for (node_id id : g.order()) {
    const node& n = g[id];
    node_state& s = states_[id.index];
    if (n.is<op::placeholder>()) continue;
    s.shapes = infer_node_shapes(g, id, shapes_of);
    if (aliases_results(n)) continue;
    s.owned.resize(static_cast<std::size_t>(s.shapes.size()));
    for (int i = 0; i < s.shapes.size(); ++i) {
      tensor& buffer = s.owned[static_cast<std::size_t>(i)];
      if (!holds_shape(buffer, s.shapes[i])) buffer = tensor(s.shapes[i]);
    }
    s.result_views.clear();
    for (const tensor& t : s.owned) s.result_views.push_back(&t);
    for (std::size_t i = 0; i < s.input_casts.size(); ++i)
      if (s.input_casts[i]) {
        const shape& in_shape = states_[n.inputs[i].index].shapes[0];
        if (!holds_shape(s.cast_inputs[i], in_shape)) s.cast_inputs[i] = tensor(in_shape);
      }
  }
  planned_shapes_ = true;
}

template <class Graph>
void basic_evaluator<Graph>::execute(node_observer on_node) {
  const graph& g = *graph_;
  for (node_id id : g.order()) {
    const node& n = g[id];
    node_state& s = states_[id.index];
    gather_inputs(n, s);
    if (n.is<op::constant>()) {
      const ordered_map<tensor>& params = s.quantizes_parameters ? s.quantized_parameters : n.parameters;
      const auto value = params.find("value");
      require(value != params.end(),
              "node {}: the constant's \"value\" is not set; set it with graph::set_parameter", n.name);
      s.result_views.assign(1, &value->second);
    } else if (n.is<op::output>()) {
      s.result_views = s.input_views;
    } else if (!n.is<op::placeholder>()) {
      run_kernel(n, s);
    }
    if (on_node) on_node(node_run{id, n, s.input_views, s.result_views});
  }
  collect_final_results();
}

template <class Graph>
void basic_evaluator<Graph>::gather_inputs(const node& n, node_state& s) {
  if (op_takes_all_results(n.op)) {
    s.input_views = states_[n.inputs.at(0).index].result_views;
    return;
  }
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    const tensor* in = states_[n.inputs[i].index].result_views.at(0);
    if (s.input_casts[i]) {
      tensor& cast = s.cast_inputs[i];
      cast_values(*s.input_casts[i], s.hardware_casts[i] != 0, in->values(), in->shape(), cast.values());
      in = &cast;
    }
    s.input_views[i] = in;
  }
}

// Casts `in` into `out` (which may be `in`) with f, or with the hardware's floor-and-saturate cast
// to f's fixed-point format: element-wise casts split the values across the threads; a block format
// spans the shape, on this one.
template <class Graph>
void basic_evaluator<Graph>::cast_values(const format& f, bool hardware, std::span<const float> in,
                                         std::span<const std::int64_t> shape, std::span<float> out) const {
  if (!hardware && !f.is_elementwise()) {
    quantize(f, in, shape, out);
    return;
  }
  thread_pool::shared_chunks(in.size(), threads(), eval::parallel_grain,
                             [&](std::size_t first, std::size_t last, std::size_t) {
                               const std::span<const float> from = in.subspan(first, last - first);
                               const std::span<float> to = out.subspan(first, last - first);
                               if (hardware) eval::hardware_cast(f.template get<fixed_fmt>(), from, to);
                               else quantize(f, from, to);
                             });
}

template <class Graph>
std::size_t basic_evaluator<Graph>::threads() const noexcept {
  return threads_ == 0 ? thread_pool::shared().size() : threads_;
}

template <class Graph>
void basic_evaluator<Graph>::run_kernel(const node& n, node_state& s) {
  const eval::kernel_args args{.inputs = s.input_views,
                               .parameters = s.quantizes_parameters ? &s.quantized_parameters : &n.parameters,
                               .outputs = s.owned,
                               .scratch = &s.scratch,
                               .node_name = n.name,
                               .threads = threads()};
  if (s.bit_exact) {
    s.bit_exact->run(args);
    return;
  }
  visit_op<void>(
      n.op,
      [&](const auto& op) {
        using Op = std::decay_t<decltype(op)>;
        if constexpr (!std::is_same_v<Op, op::placeholder> && !std::is_same_v<Op, op::constant> &&
                      !std::is_same_v<Op, op::output>) {
          static_assert(eval::has_float_kernel<Op>, "every op needs a float_kernel overload (eval/kernels/*.hpp)");
          eval::float_kernel(op, args);
        }
      },
      [&](const any_op& op) { eval::run_user_kernel(op, args); });
  for (std::size_t i = 0; i < s.result_formats.size() && i < s.owned.size(); ++i) {
    if (!s.result_formats[i]) continue;
    const std::span<float> values = s.owned[i].values();
    cast_values(*s.result_formats[i], false, values, s.owned[i].shape(), values);
  }
}

template <class Graph>
void basic_evaluator<Graph>::collect_final_results() {
  const std::optional<node_id> out = graph_->output();
  require(out.has_value(), "evaluator: the graph has no output node; add one with graph::add(\"output\", op::output{}, …)");
  const std::vector<const tensor*>& views = states_[out->index].result_views;
  final_results_.resize(views.size());
  for (std::size_t i = 0; i < views.size(); ++i) final_results_[i] = *views[i];  // reuses the storage
}

}  // namespace mase
