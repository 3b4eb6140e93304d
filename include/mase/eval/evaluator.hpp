#pragma once
// The evaluator: runs a graph on named input tensors, one kernel call per node.
//
//   mase::evaluator ev(g);                         // float: the model as trained
//   std::span<const tensor> y = ev.run({{"x", x}});
//   mase::evaluator q(g, mase::eval_mode::bit_exact);
//
// Modes (docs/evaluator.md has the details):
// - float32: every node's float kernel.
// - fake_quant: MASE's software semantics. Each node quantizes the operands whose format in its
//   common metadata is not float32 (data_in_i, its parameters, data_out_i), computing in float
//   in between. The metadata is the one source of the formats: the quantize pass writes them.
// - bit_exact: what the hardware computes. Nodes whose op and operands are fixed point run the
//   integer kernels of eval/bit_exact.hpp (exact accumulation, one floor-and-saturate cast);
//   every other node runs as in fake_quant.
//
// The evaluator keeps a reference to the graph, which must outlive it and not change while it
// is in use. Construction reads the metadata and quantizes the parameters once; a run with the
// same input shapes as the last one allocates nothing.

#include <mase/core/compiled.hpp>
#include <mase/eval/lowering.hpp>
#include <mase/format/format.hpp>
#include <mase/ir/graph.hpp>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace mase {

enum class eval_mode : std::uint8_t { float32, fake_quant, bit_exact };

constexpr std::string_view to_string(eval_mode m) noexcept {
  switch (m) {
    case eval_mode::float32: return "float32";
    case eval_mode::fake_quant: return "fake_quant";
    case eval_mode::bit_exact: return "bit_exact";
  }
  return "?";
}

// Inputs by placeholder name: ev.run({{"x", x}, {"mask", m}}). The tensors are read, not copied.
using named_inputs = std::initializer_list<std::pair<std::string_view, std::reference_wrapper<const tensor>>>;

// What an observer sees after a node ran: the tensors its kernel read (after the input casts of
// fake-quant and bit-exact modes) and the results it produced.
struct node_run {
  node_id id;
  const node& n;
  std::span<const tensor* const> inputs;
  std::span<const tensor* const> results;
};

// A reference to an observer's call operator (none: no observer), so that running a graph is
// one function whatever the observer's type. It must not outlive the observer.
class node_observer {
public:
  node_observer() = default;
  template <class Observer>
    requires(!std::is_same_v<std::remove_cvref_t<Observer>, node_observer>)
  explicit node_observer(Observer& observer)
      : object_(const_cast<void*>(static_cast<const void*>(&observer))),
        call_([](void* o, const node_run& r) { (*static_cast<Observer*>(o))(r); }) {}
  explicit operator bool() const noexcept { return call_ != nullptr; }
  void operator()(const node_run& r) const { call_(object_, r); }

private:
  void* object_ = nullptr;
  void (*call_)(void*, const node_run&) = nullptr;
};

// A class template only so that including this header instantiates no kernel: the kernels are
// compiled where an evaluator is used. `evaluator` is the one instantiation.
template <class Graph = graph>
class basic_evaluator {
public:
  explicit basic_evaluator(const Graph& g, eval_mode mode = eval_mode::float32) : graph_(&g), mode_(mode) { plan(); }

  eval_mode mode() const noexcept { return mode_; }

  // How many threads a run's kernels may use: 0 (the default) is one per core. The products
  // (linear, matmul, convolutions) split their rows, columns or images between the threads, each
  // result computed by the same code in the same order as on one thread, so every mode gives the
  // same results, bit for bit, on any number of threads.
  basic_evaluator& set_threads(std::size_t threads) noexcept {
    threads_ = threads;
    return *this;
  }
  std::size_t threads() const noexcept;
  const Graph& model() const noexcept { return *graph_; }

  // Runs the graph. Returns the graph's results (the output node's inputs, in order), valid
  // until the next run. Every placeholder must be given; an input's shape may differ from the
  // placeholder's declared one (another batch size) if every op accepts the new shapes.
  std::span<const tensor> run(named_inputs inputs) { return bind_and_execute(inputs, {}); }
  std::span<const tensor> run(const ordered_map<tensor>& inputs) { return bind_and_execute(inputs, {}); }
  // A graph with a single placeholder.
  std::span<const tensor> run(const tensor& x) { return bind_and_execute(x, {}); }

  // The same, calling on_node(const node_run&) after each node (statistics, recorded values).
  template <class Inputs, class Observer>
  std::span<const tensor> run_with(const Inputs& inputs, Observer&& on_node) {
    return bind_and_execute(inputs, node_observer(on_node));
  }

  // A node's results from the last run (for inspection and tests).
  std::span<const tensor* const> results(node_id id) const { return states_[id.index].result_views; }
  std::span<const tensor* const> results(std::string_view node_name) const { return results(graph_->id(node_name)); }

  // Whether the node runs an integer kernel in bit-exact mode (otherwise it runs as in fake-quant).
  bool runs_bit_exact(node_id id) const { return states_[id.index].bit_exact.has_value(); }
  // How that kernel computes ("linear: 8-bit x 8-bit, exact int32 products (avx_vnni, 8-bit
  // quads), accumulator 27 bits"); empty for a node that runs as in fake-quant.
  std::string_view bit_exact_description(node_id id) const {
    const auto& kernel = states_[id.index].bit_exact;
    return kernel ? std::string_view(kernel->description) : std::string_view();
  }
  // The node's fixed-point lowering in bit-exact mode (what its kernel runs and the emitter
  // renders); nullptr for a node of a user's op without a scalar_function, or one that runs as
  // in fake-quant.
  const eval::fixed_lowering* lowering(node_id id) const {
    const auto& l = states_[id.index].lowering;
    return l ? &*l : nullptr;
  }

  // The node's parameters as its kernel reads them: quantized to their formats in fake-quant and
  // bit-exact modes (the tables the emitter writes), the graph's own otherwise.
  const ordered_map<tensor>& quantized_parameters(node_id id) const {
    const node_state& s = states_[id.index];
    return s.quantizes_parameters ? s.quantized_parameters : (*graph_)[id].parameters;
  }

private:
  struct node_state {
    std::vector<tensor> owned;                 // result buffers (none for aliasing nodes)
    std::vector<const tensor*> result_views;   // what readers see
    std::vector<const tensor*> input_views;    // what the kernel reads
    std::vector<std::optional<format>> input_casts;  // per input: the format to cast it to
    std::vector<char> hardware_casts;                // per input: cast as the RTL does (bit-exact, fixed to fixed)
    std::vector<tensor> cast_inputs;           // the cast copies
    std::vector<std::optional<format>> result_formats;
    ordered_map<tensor> quantized_parameters;  // fake-quant / bit-exact parameters
    bool quantizes_parameters = false;
    std::optional<eval::fixed_lowering> lowering;  // bit-exact mode, built-in ops
    std::optional<eval::bit_exact_kernel> bit_exact;
    std::vector<float> scratch;
    shape_list shapes;
  };

  static std::optional<format> quantizing(const format& f) {
    return f == format(formats::float32) ? std::nullopt : std::optional<format>(f);
  }

  // The format the metadata gives a node's entry, if it is a quantized tensor.
  static std::optional<format> entry_format(const node& n, std::string_view entry) {
    const auto& args = n.meta.common.args;
    const auto it = args.find(entry);
    if (it == args.end()) return std::nullopt;
    const tensor_meta* t = std::get_if<tensor_meta>(&it->second);
    return t ? quantizing(t->precision) : std::nullopt;
  }

  void plan();

  const tensor& input_named(const ordered_map<tensor>& inputs, const std::string& name) const {
    const auto it = inputs.find(name);
    if (it == inputs.end()) throw missing_input(name);
    return it->second;
  }
  const tensor& input_named(named_inputs inputs, const std::string& name) const {
    for (const auto& [key, value] : inputs)
      if (key == name) return value.get();
    throw missing_input(name);
  }
  const tensor& input_named(const tensor& x, const std::string& name) const {
    require(graph_->placeholders().size() == 1,
            "evaluator: the graph has {} inputs; name them: ev.run({{{{\"{}\", x}}, …}})",
                        graph_->placeholders().size(), name);
    return x;
  }
  error missing_input(const std::string& name) const {
    return error(fmt::format("evaluator: no tensor given for the graph input \"{}\"; pass it as {{\"{}\", tensor}}",
                             name, name));
  }
  template <class Inputs>
  void check_input_names(const Inputs& inputs) const {
    if constexpr (!std::is_same_v<Inputs, tensor>) {
      for (const auto& entry : inputs) {
        const std::string_view key = entry.first;
        const std::optional<node_id> id = graph_->find(key);
        require(id && (*graph_)[*id].template is<op::placeholder>(),
                "evaluator: \"{}\" is not an input of the graph", key);
      }
    }
  }

  template <class Inputs>
  void bind_inputs(const Inputs& inputs) {
    check_input_names(inputs);
    bool shapes_changed = !planned_shapes_;
    for (node_id id : graph_->placeholders()) {
      node_state& s = states_[id.index];
      const tensor& x = input_named(inputs, (*graph_)[id].name);
      s.result_views.assign(1, &x);
      if (s.shapes.size() != 1 || !(s.shapes[0] == x.shape())) {
        s.shapes = shape_list{x.shape()};
        shapes_changed = true;
      }
    }
    if (shapes_changed) plan_shapes();
  }

  // A default tensor has shape [] and no element, so a rank-0 buffer needs its size checked too.
  static bool holds_shape(const tensor& t, const shape& s) {
    return t.shape() == s && t.size() == static_cast<std::size_t>(s.numel());
  }

  // Output shapes of every node from the inputs' shapes, and buffers of those shapes.
  void plan_shapes();

  // Nodes whose results are other tensors: inputs, stored constants, the graph's output.
  static bool aliases_results(const node& n) {
    return n.is<op::placeholder>() || n.is<op::constant>() || n.is<op::output>();
  }

  void execute(node_observer on_node);
  template <class Inputs>
  std::span<const tensor> bind_and_execute(const Inputs& inputs, node_observer on_node) {
    bind_inputs(inputs);
    execute(on_node);
    return final_results_;
  }

  void gather_inputs(const node& n, node_state& s);

  void run_kernel(const node& n, node_state& s);
  void cast_values(const format& f, bool hardware, std::span<const float> in, std::span<const std::int64_t> shape,
                   std::span<float> out) const;

  void collect_final_results();

  const Graph* graph_;
  eval_mode mode_;
  std::size_t threads_ = 0;
  std::vector<node_state> states_;
  bool planned_shapes_ = false;
  std::vector<tensor> final_results_;

};

using evaluator = basic_evaluator<graph>;

// Compiled once, in mase::mase, when the project uses it (core/compiled.hpp).
#if MASE_EXTERN_INSTANTIATIONS
extern template class basic_evaluator<graph>;
#endif

}  // namespace mase

// The members that run kernels (and with them every kernel and lowering rule): compiled here in
// the header-only mode, once in mase::mase otherwise.
#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/eval/evaluator_definitions.hpp>
#endif
