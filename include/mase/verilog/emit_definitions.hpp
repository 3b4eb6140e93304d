#pragma once
// The planner (plan_design: a graph with hardware metadata becomes a verilog::design) and
// emit_verilog_project (verilog/emit.hpp declares them and says what is written): inline in the
// header-only mode, compiled once in mase::mase (src/verilog.cpp) otherwise. The printers are in
// render_definitions.hpp.

#include <mase/core/error.hpp>
#include <mase/core/project_folder.hpp>
#include <mase/eval/bit_exact.hpp>
#include <mase/eval/evaluator.hpp>
#include <mase/ir/op_traits.hpp>
#include <mase/verilog/stream_metadata.hpp>
#include <mase/verilog/components.hpp>
#include <mase/verilog/cost.hpp>
#include <mase/verilog/emit.hpp>
#include <mase/verilog/layout.hpp>

#include <algorithm>
#include <bit>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fmt/core.h>

namespace mase::verilog {

namespace detail {

using mase::detail::entry_meta;
using mase::detail::sample_dim;
using mase::detail::sample_shape;

struct sink {
  node_id consumer{};
  std::size_t input = 0;
  int top_output = -1;  // >= 0: the graph's output number instead of a component input
};

struct stream_source {
  node_id id{};
  bool top_input = false;
  int top_input_index = -1;
  fixed_fmt format{};
  std::int64_t lanes = 1;
  std::int64_t elements_per_sample = 0;
  std::vector<sink> sinks{};
  std::string signal() const { return top_input ? fmt::format("data_in_{}", top_input_index) : ""; }
};

inline fixed_fmt fixed_of(const node& n, std::string_view entry) { return mase::detail::hardware_format(n, entry); }

inline std::string stream_name(const node& n, std::string_view entry) { return fmt::format("{}_{}", n.name, entry); }

// Whether the module's text uses an identifier (clk, rst: combinational modules have neither).
inline bool uses_identifier(std::string_view text, std::string_view id) {
  for (std::size_t at = text.find(id); at != std::string_view::npos; at = text.find(id, at + 1)) {
    const bool left = at == 0 || !is_name_char(text[at - 1]);
    const bool right = at + id.size() >= text.size() || !is_name_char(text[at + id.size()]);
    if (left && right) return true;
  }
  return false;
}

// A component's timing for FIFO sizing; a user's module may need a whole sample and banks none. A
// line-buffered window sweep waits for rows, not a sample, and banks none (line_rows_held).
inline component timing_of(const node& n) {
  const std::string_view module = *n.meta.hardware.module;
  if (line_buffered(n)) return component{.module = module, .source = {}, .timing = first_output::after_one_beat};
  const component* c = component_of(n);
  return c != nullptr ? *c : component{.module = module, .source = {}, .timing = first_output::after_a_sample};
}

// The input elements a line-buffered window sweep takes in before its first output and holds in
// its ring (its rows of one channel, or of every channel where channels-last), or 0.
inline std::int64_t line_rows_held(const node& n) {
  if (!line_buffered(n)) return 0;
  const std::int64_t row = param_int(n, "DATA_IN_0_TENSOR_SIZE_DIM_0") *
                           (n.meta.hardware.channels_last ? param_int(n, "DATA_IN_0_TENSOR_SIZE_DIM_2") : 1);
  return line_buffer_rows(n) * row;
}

// The lanes of a component's widest stream port.
inline std::int64_t widest_lanes(const node& n) {
  std::int64_t widest = 1;
  for (const auto& [key, value] : n.meta.hardware.verilog_param)
    if (key.starts_with("DATA_") && key.ends_with("_PARALLELISM_DIM_0"))
      if (const std::int64_t* lanes = std::get_if<std::int64_t>(&value)) widest = std::max(widest, *lanes);
  return widest;
}

class planner {
public:
  planner(const graph& g, const emit_options& options) : g_(g), options_(options) {}

  design run() {
    analyse();
    check_bit_exact_and_record();
    for (node_id id : components_) design_.instances.push_back(instance_of(g_[id]));
    for (const stream_source& s : sources_) design_.streams.push_back(edges_of(s));
    modules_.insert(std::string(module_names::cast));  // edges and components cast with it
    for (const std::string& m : modules_) design_.modules.push_back({m, view_of(m).text});
    // A generous bound on the testbench's run: every stage's cycles per sample (the cost model's,
    // whose figure equals the simulation's without stalls) taken one after another, for each
    // sample and one more, four times over for the stalls.
    std::int64_t stages = 0;
    for (const component_cost& c : estimate_hardware_cost(g_).components) stages += c.cycles_per_sample;
    design_.testbench.seed = options_.seed;
    design_.testbench.timeout_cycles = 4 * (std::max<std::int64_t>(samples_, 1) + 1) * stages + 100000;
    return std::move(design_);
  }

private:
  // --- the design ------------------------------------------------------------------------

  std::int64_t per_sample(const shape& s) const { return mase::detail::per_sample(s, batch_); }

  bool is_component(const node& n) const { return n.meta.hardware.module.has_value(); }

  // A component's text: the user's (emit_options::components, else a user's descriptor that a
  // node's op brings), else mase's own. Its parameters and ports are the declared ones, or read
  // from the header of a module a user gave as text.
  struct module_view {
    std::string text;
    std::vector<std::string> parameters;
    bool clocked = false, reset = false;
  };
  module_view view_of(std::string_view module) const {
    const auto whole = [](std::string_view text) {
      return module_view{.text = std::string(text), .parameters = component_parameters(text),
                         .clocked = uses_identifier(text, "clk"), .reset = uses_identifier(text, "rst")};
    };
    if (const auto user = options_.components.find(module); user != options_.components.end()) return whole(user->second);
    const auto own = user_components_.find(module);
    const component* c = own != user_components_.end() ? own->second : find_component(module);
    require(c != nullptr, "emit_verilog: no component module named {}", module);
    if (!c->text.declared()) return whole(c->source);
    return {.text = module_source(c->text), .parameters = parameter_names(c->text),
            .clocked = has_port(c->text, "clk"), .reset = has_port(c->text, "rst")};
  }

  // The component or graph input whose stream a node's result is.
  node_id resolve(node_id id) const {
    while (true) {
      const node& n = g_[id];
      if (n.is<op::placeholder>() || is_component(n)) return id;
      require(!n.is<op::constant>(),
              "emit_verilog: the constant {} feeds a stream; hardware streams come from graph inputs and "
                          "components",
                          n.name);
      require(n.meta.hardware.is_implicit && is_implicit_in_hardware(n),
              "emit_verilog: node {} ({}) has no hardware metadata; run add_hardware_metadata first", n.name,
                          n.op_name());
      const tensor_meta* in = entry_meta(n, "data_in_0");
      const tensor_meta* out = entry_meta(n, "data_out_0");
      require(in != nullptr && out != nullptr && in->precision == out->precision,
              "emit_verilog: node {} ({}) is wired through, so its result must keep its input's format",
                          n.name, n.op_name());
      id = n.inputs.at(0);
    }
  }

  stream_source& source_for(node_id id) {
    const auto it = sources_index_.find(id.index);
    if (it != sources_index_.end()) return sources_[it->second];
    sources_index_.emplace(id.index, sources_.size());
    stream_source s;
    s.id = id;
    const node& n = g_[id];
    s.top_input = n.is<op::placeholder>();
    if (!s.top_input) {
      s.format = fixed_of(n, "data_out_0");
      s.lanes = param_int(n, "DATA_OUT_0_PARALLELISM_DIM_0");
      s.elements_per_sample = per_sample(entry_meta(n, "data_out_0")->shape);
    } else {
      s.elements_per_sample = per_sample(entry_meta(n, "data_out_0")->shape);
    }
    sources_.push_back(std::move(s));
    return sources_.back();
  }

  void analyse() {
    for (node_id id : g_.order()) {
      const node& n = g_[id];
      if (n.is<op::placeholder>()) continue;
      if (n.is<op::output>()) {
        for (std::size_t k = 0; k < n.inputs.size(); ++k) {
          const node_id from = resolve(n.inputs[k]);
          require(!g_[from].is<op::placeholder>(),
                  "emit_verilog: graph output {} is the graph input {} itself; there is no hardware to emit",
                              k, g_[from].name);
          source_for(from).sinks.push_back({.consumer = id, .input = k, .top_output = static_cast<int>(k)});
        }
        continue;
      }
      if (!is_component(n)) {
        if (n.meta.hardware.is_implicit || n.is<op::constant>()) continue;
        throw error(fmt::format("emit_verilog: node {} ({}) has no hardware metadata; run add_hardware_metadata first",
                                n.name, n.op_name()));
      }
      components_.push_back(id);
      if (const hardware_mapping* facet = n.op.hardware(); facet != nullptr && facet->component != nullptr)
        user_components_.emplace(std::string(facet->component->module), facet->component);
      for (std::size_t i = 0; i < n.inputs.size(); ++i)
        if (is_stream_input(g_, n, i)) source_for(resolve(n.inputs[i])).sinks.push_back({.consumer = id, .input = i});
    }
    require(!components_.empty(), "emit_verilog: the graph has no node with a hardware component");
    // Graph inputs carry their readers' input format (the evaluator quantizes the float input for each).
    int next_input = 0;
    for (node_id p : g_.placeholders()) {
      const auto it = sources_index_.find(p.index);
      if (it == sources_index_.end()) continue;
      stream_source& s = sources_[it->second];
      s.top_input_index = next_input++;
      const sink& first = s.sinks.front();
      const node& reader = g_[first.consumer];
      s.format = fixed_of(reader, data_in_name(first.input));
      s.lanes = param_int(reader, fmt::format("DATA_IN_{}_PARALLELISM_DIM_0", first.input));
      for (const sink& k : s.sinks) {
        const node& other = g_[k.consumer];
        require(fixed_of(other, data_in_name(k.input)) == s.format,
                "emit_verilog: graph input {} is read by {} and {} in different formats; the hardware input "
                            "has one format, so quantize both readers' data_in alike",
                            g_[p].name, reader.name, other.name);
      }
    }
  }

  // --- reference data ----------------------------------------------------------------------

  ordered_map<tensor> stimulus() const {
    if (!options_.inputs.empty()) return options_.inputs;
    require(options_.samples >= 1, "emit_verilog: samples must be at least 1");
    ordered_map<tensor> inputs;
    std::mt19937 random(options_.seed);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    for (node_id p : g_.placeholders()) {
      const node& n = g_[p];
      shape s = entry_meta(n, "data_out_0")->shape;
      require(!s.empty(), "emit_verilog: graph input {} is a scalar; give testbench inputs", n.name);
      s[0] = options_.samples;
      tensor t(s);
      for (float& v : t.values()) v = uniform(random);
      inputs.insert_or_assign(n.name, std::move(t));
    }
    return inputs;
  }

  void check_bit_exact_and_record() {
    evaluator& ev = reference_.emplace(g_, eval_mode::bit_exact);
    for (node_id id : components_) {
      const node& n = g_[id];
      // Pools, permutes, slices, cats, embeddings and rescales (component::exact_by_formats).
      if (const component* c = component_of(n); c != nullptr && c->exact_by_formats) continue;
      require(n.op.builtin_index() >= 0 || ev.runs_bit_exact(id),
              "emit_verilog: node {} ({}) has no bit-exact rule for its formats, so no testbench can check "
                          "its component; give its type a member std::optional<mase::eval::bit_exact_kernel> "
                          "bit_exact(const mase::node&) const (docs/extending.md)",
                          n.name, n.op_name());
      require(ev.runs_bit_exact(id),
              "emit_verilog: node {} ({}) does not run in integers in the bit-exact evaluator (an "
                          "activation input wider than {} bits, an element-wise result wider than 53 bits, or a "
                          "broadcast), so no hardware reproduces it; narrow its formats",
                          n.name, n.op_name(), eval::lut_max_input_width);
    }
    const ordered_map<tensor> inputs = stimulus();
    // A graph at batch 1 (an export may have fixed the batch in its reshapes) runs once per sample
    // of the stimulus; the design streams the samples one after another either way.
    const std::int64_t runs = batch_ == 1 ? stimulus_samples(inputs) : 1;
    std::map<std::size_t, std::vector<float>> captured;  // per graph-input source: the codes its first reader got
    std::vector<std::vector<float>> results;
    std::int64_t first_reader_batch = 1;
    for (std::int64_t run = 0; run < runs; ++run) {
      const std::span<const tensor> outputs = ev.run_with(runs == 1 ? inputs : sample_of(inputs, run, runs), [&](const node_run& r) {
        for (const stream_source& s : sources_)
          if (s.top_input && s.sinks.front().consumer == r.id) {
            const tensor& in = *r.inputs[s.sinks.front().input];
            captured[s.id.index].insert(captured[s.id.index].end(), in.values().begin(), in.values().end());
            first_reader_batch = in.shape().empty() ? 1 : in.shape()[0];
          }
        // A component's constant operands, as its kernel reads them (cast to the operand's format).
        const node& n = g_[r.id];
        if (is_component(n))
          for (std::size_t i = 0; i < n.inputs.size(); ++i)
            if (!is_stream_input(g_, n, i) && i < stream_input_count(n)) constant_operands_[{r.id.index, i}] = *r.inputs[i];
      });
      results.resize(outputs.size());
      for (std::size_t k = 0; k < outputs.size(); ++k)
        results[k].insert(results[k].end(), outputs[k].values().begin(), outputs[k].values().end());
    }
    samples_ = runs > 1 ? runs : first_reader_batch;
    // The evaluator's tensors in a stream's order: channels-last maps pixel by pixel.
    const auto in_stream_order = [&](const stream_source& s, std::vector<float> values) {
      const node& producer = g_[s.id];
      if (!mase::detail::channels_last_entry(producer, "data_out_0")) return values;
      const shape& t = entry_meta(producer, "data_out_0")->shape;
      return to_channels_last<float>(values, t[1], t[2], t[3]);
    };
    for (const stream_source& s : sources_) {
      if (!s.top_input) continue;
      const std::vector<float> values = in_stream_order(s, captured.at(s.id.index));
      design_.inputs.push_back({.port = {.name = s.signal(), .node = g_[s.id].name, .format = s.format, .lanes = s.lanes,
                                         .beats = static_cast<std::int64_t>(values.size()) / s.lanes},
                                .codes = codes_of(values, s.format)});
    }
    for (const stream_source& s : sources_)
      for (const sink& k : s.sinks)
        if (k.top_output >= 0) {
          const std::vector<float> values = in_stream_order(s, results[static_cast<std::size_t>(k.top_output)]);
          design_.outputs.push_back({.port = {.name = fmt::format("data_out_{}", k.top_output), .node = g_[s.id].name,
                                              .format = s.format, .lanes = s.lanes,
                                              .beats = static_cast<std::int64_t>(values.size()) / s.lanes},
                                     .codes = codes_of(values, s.format)});
        }
    std::sort(design_.outputs.begin(), design_.outputs.end(),
              [](const port_data& a, const port_data& b) { return a.port.name < b.port.name; });
    design_.testbench.samples = samples_;
  }

  // The samples each testbench input holds (its leading dimension; the same for every input).
  static std::int64_t stimulus_samples(const ordered_map<tensor>& inputs) {
    std::int64_t samples = 0;
    std::string first;
    for (const auto& [name, t] : inputs) {
      require(!t.shape().empty(), "emit_verilog: testbench input {} is a scalar; give it a leading sample dimension",
              name);
      if (samples == 0) samples = t.shape()[0], first = name;
      require(t.shape()[0] == samples, "emit_verilog: testbench inputs {} and {} hold {} and {} samples; give each "
              "input the same number", first, name, samples, t.shape()[0]);
    }
    return std::max<std::int64_t>(samples, 1);
  }

  // Sample `index` of `count` of each input, with a leading dimension of 1.
  static ordered_map<tensor> sample_of(const ordered_map<tensor>& inputs, std::int64_t index, std::int64_t count) {
    ordered_map<tensor> one;
    for (const auto& [name, t] : inputs) {
      shape s = t.shape();
      s[0] = 1;
      tensor part(s);
      const std::size_t size = t.size() / static_cast<std::size_t>(count);
      std::copy_n(t.values().begin() + static_cast<std::ptrdiff_t>(size * static_cast<std::size_t>(index)), size,
                  part.values().begin());
      one.insert_or_assign(name, std::move(part));
    }
    return one;
  }

  static std::vector<std::int64_t> codes_of(std::span<const float> values, const fixed_fmt& f) {
    std::vector<std::int64_t> codes(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) codes[i] = eval::raw_of(values[i], f.frac);
    return codes;
  }

  // --- the design's parts ---------------------------------------------------------------

  instance instance_of(const node& n) {
    const std::string& module = *n.meta.hardware.module;
    modules_.insert(module);
    for (const std::string& f : n.meta.hardware.dependence_files) modules_.insert(f.substr(0, f.size() - 3));
    // What the component's descriptor plans for this instance: derived parameters and ROMs.
    instance_plan plan;
    if (const component* c = component_of(n); c != nullptr && c->plan != nullptr) {
      const node_id id = g_.id(n.name);
      std::vector<const tensor*> constants(n.inputs.size(), nullptr);
      for (std::size_t i = 0; i < n.inputs.size(); ++i)
        if (const auto k = constant_operands_.find({id.index, i}); k != constant_operands_.end()) constants[i] = &k->second;
      c->plan({.n = n, .g = g_, .batch = batch_, .lowering = reference_->lowering(id),
               .quantized_parameters = &reference_->quantized_parameters(id), .constant_operands = constants},
              plan);
    }
    instance result{.name = n.name, .op = std::string(n.op_name()), .module = module};
    std::map<std::string, parameter_value> derived = std::move(plan.parameters);  // parameters the descriptor computes
    for (rom_image& rom : plan.roms) {
      const std::string file = fmt::format("{}_{}.hex", n.name, rom.role);
      std::string parameter = rom.role + "_MEMFILE";
      for (char& ch : parameter) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      derived[parameter] = project_path{fmt::format("rtl/{}", file)};
      result.roms.push_back({.file = file, .image = std::move(rom)});
    }
    if (plan.dot_product) {
      result.dot_product = linear_cost{.node = n.name, .macs_per_sample = plan.macs_per_sample, .multipliers = plan.multipliers};
      result.linear_layer = linear_form_of(n.op).has_value();
    }
    result.multipliers = plan.multipliers;

    const module_view declared = view_of(module);
    for (const std::string& p : declared.parameters) {
      if (const auto e = derived.find(p); e != derived.end()) {
        result.parameters.push_back({.name = p, .value = e->second});
      } else if (const auto v = n.meta.hardware.verilog_param.find(p); v != n.meta.hardware.verilog_param.end()) {
        result.parameters.push_back(
            {.name = p, .value = std::visit([](const auto& value) -> parameter_value { return value; }, v->second)});
      }  // else the module's default
    }
    const auto port = [&](std::string name, std::string signal) {
      result.ports.push_back({.port = std::move(name), .signal = std::move(signal)});
    };
    if (declared.clocked) port("clk", "clk");
    if (declared.reset) port("rst", "rst");
    for (std::size_t i = 0; i < stream_input_count(n); ++i) {
      const std::string s = stream_name(n, data_in_name(i));
      if (!is_stream_input(g_, n, i)) {  // a constant operand: the component's table holds it
        // Sized: Icarus reads an unsized '0 on a port as one bit (and warns).
        port(data_in_name(i), fmt::format("{}'d0", param_int(n, "DATA_OUT_0_PARALLELISM_DIM_0") *
                                                        fixed_of(n, data_in_name(i)).width));
        port(data_in_name(i) + "_valid", "1'b0");
        port(data_in_name(i) + "_ready", s + "_ready");
        result.constant_operand_ready.push_back(s);
        continue;
      }
      port(data_in_name(i), s);
      port(data_in_name(i) + "_valid", s + "_valid");
      port(data_in_name(i) + "_ready", s + "_ready");
    }
    const std::string out = stream_name(n, "data_out_0");
    port("data_out_0", out);
    port("data_out_0_valid", out + "_valid");
    port("data_out_0_ready", out + "_ready");

    for (std::size_t i = 0; i < stream_input_count(n); ++i)
      if (is_stream_input(g_, n, i))
        result.nets.push_back({.name = stream_name(n, data_in_name(i)), .type = input_type(n, i)});
    result.nets.push_back(
        {.name = out, .type = {.format = fixed_of(n, "data_out_0"), .lanes = param_int(n, "DATA_OUT_0_PARALLELISM_DIM_0")}});
    return result;
  }

  // A component's stream input i: its format and lanes.
  static stream_type input_type(const node& n, std::size_t i) {
    return {.format = fixed_of(n, data_in_name(i)), .lanes = param_int(n, fmt::format("DATA_IN_{}_PARALLELISM_DIM_0", i))};
  }

  // The components downstream of a sink's reader, the reader included (none for a graph output).
  std::set<std::size_t> downstream(const sink& k) const {
    std::set<std::size_t> reached;
    if (k.top_output >= 0) return reached;
    std::vector<node_id> pending{k.consumer};
    while (!pending.empty()) {
      const node_id id = pending.back();
      pending.pop_back();
      if (!reached.insert(id.index).second) continue;
      if (const auto it = sources_index_.find(id.index); it != sources_index_.end())
        for (const sink& next : sources_[it->second].sinks)
          if (next.top_output < 0) pending.push_back(next.consumer);
    }
    return reached;
  }

  // Fork FIFO depths, from the branches' latencies in samples (docs/hardware.md, "forks").
  // - Deadlock: reader t's branch (the components only it reaches before the join) delivers its
  //   first word after the fork has pushed lag(t) elements: a whole sample when a component on it
  //   may wait for one (a conv's window, a linear's row, a slice's dropped words:
  //   first_output::after_a_sample, an upper bound), else a few beats of its widest stream per
  //   component. Until then the join reads nothing from reader j's branch, which must hold that
  //   lag: the banks of its first sample-buffering component hold some, j's FIFO the rest.
  // - Full rate: in steady state each sample-buffering stage delays its stream by one sample
  //   period, so a branch of n such stages (on its longest path) holds n samples in flight, and
  //   reader j's FIFO holds the difference to the longest other branch, and one beat more.
  // A skip connection beside two convolutions gets exactly two samples and a beat; one beat less
  // slows the steady state, a sample and a beat less deadlocks (tests/verilog/test_emit_verilog.cpp).
  //
  // Each reader's branch: the components only it reaches before the join (downstream() once per reader).
  std::vector<std::set<std::size_t>> branches_of(const stream_source& s) const {
    std::vector<std::set<std::size_t>> reach;
    for (const sink& k : s.sinks) reach.push_back(downstream(k));
    std::vector<std::set<std::size_t>> only = reach;
    for (std::size_t j = 0; j < reach.size(); ++j)
      for (std::size_t t = 0; t < reach.size(); ++t)
        if (t != j)
          for (std::size_t index : reach[t]) only[j].erase(index);
    return only;
  }

  // What reader t's branch delays the join by, from one pass over it.
  struct branch_delay {
    std::int64_t lag = 0;     // elements the fork pushes before the branch's first word reaches the join
    std::int64_t stages = 0;  // sample-buffering components on its longest path
    std::int64_t rows = 0;    // elements its line-buffered sweeps hold (all of them: an upper bound)
  };

  branch_delay delay_of(const stream_source& s, std::size_t t, const std::set<std::size_t>& branch) const {
    branch_delay d;
    std::int64_t widest = s.lanes;
    bool waits_for_sample = false;
    for (std::size_t index : branch) {
      const node& n = g_[node_id{static_cast<std::uint32_t>(index)}];
      waits_for_sample = waits_for_sample || timing_of(n).timing == first_output::after_a_sample;
      widest = std::max(widest, widest_lanes(n));
      d.rows += line_rows_held(n);
    }
    // Every component (and the lane converters between them) may need a beat of its widest stream
    // before it passes one on, and a line-buffered sweep its rows.
    d.lag = waits_for_sample ? s.elements_per_sample
                             : std::min(s.elements_per_sample, static_cast<std::int64_t>(2 * branch.size() + 2) * widest + d.rows);
    std::map<std::size_t, std::int64_t> longest;  // from a component to the join, itself included
    const auto stages_from = [&](const auto& self, node_id id) -> std::int64_t {
      if (const auto it = longest.find(id.index); it != longest.end()) return it->second;
      std::int64_t after = 0;
      if (const auto it = sources_index_.find(id.index); it != sources_index_.end())
        for (const sink& next : sources_[it->second].sinks)
          if (next.top_output < 0 && branch.contains(next.consumer.index)) after = std::max(after, self(self, next.consumer));
      const bool buffers = timing_of(g_[id]).timing == first_output::after_a_sample;
      return longest[id.index] = after + (buffers ? 1 : 0);
    };
    if (s.sinks[t].top_output < 0 && branch.contains(s.sinks[t].consumer.index))
      d.stages = stages_from(stages_from, s.sinks[t].consumer);
    return d;
  }

  // The elements reader j's branch takes in before its join reads: the banks of its first component
  // that waits for a sample, reached through components that pass each beat on (and keep the
  // sample's size).
  std::int64_t branch_banks(const stream_source& s, std::size_t j, const std::set<std::size_t>& branch) const {
    if (s.sinks[j].top_output >= 0) return 0;
    for (node_id id = s.sinks[j].consumer; branch.contains(id.index);) {
      const component c = timing_of(g_[id]);
      if (c.timing == first_output::after_a_sample) return c.sample_banks * s.elements_per_sample;
      const auto it = sources_index_.find(id.index);
      if (it == sources_index_.end() || sources_[it->second].sinks.size() != 1 ||
          sources_[it->second].elements_per_sample != s.elements_per_sample || sources_[it->second].sinks[0].top_output >= 0)
        return 0;
      id = sources_[it->second].sinks[0].consumer;
    }
    return 0;
  }

  // Every reader's FIFO depth in beats of the fork's stream (two at least, for a word every cycle).
  std::vector<std::int64_t> fork_fifo_depths(const stream_source& s) const {
    const std::int64_t beats = s.elements_per_sample / s.lanes;
    const std::vector<std::set<std::size_t>> branches = branches_of(s);
    std::vector<branch_delay> delays;
    for (std::size_t t = 0; t < s.sinks.size(); ++t) delays.push_back(delay_of(s, t, branches[t]));
    std::vector<std::int64_t> depths;
    for (std::size_t j = 0; j < s.sinks.size(); ++j) {
      branch_delay others;  // the longest of the other branches, each bound on its own
      for (std::size_t t = 0; t < s.sinks.size(); ++t)
        if (t != j) {
          others.lag = std::max(others.lag, delays[t].lag);
          others.stages = std::max(others.stages, delays[t].stages);
          others.rows = std::max(others.rows, delays[t].rows);
        }
      const std::int64_t waiting = std::max<std::int64_t>(0, others.lag - branch_banks(s, j, branches[j]));
      const std::int64_t deadlock_free = (waiting + s.lanes - 1) / s.lanes;
      const std::int64_t stages_ahead = others.stages - delays[j].stages;
      const std::int64_t full_rate = (stages_ahead > 0 ? stages_ahead * beats + 1 : 0) + (others.rows + s.lanes - 1) / s.lanes;
      depths.push_back(std::max<std::int64_t>({2, deadlock_free, full_rate}));
    }
    return depths;
  }

  // The edges from one stream to its readers: a FIFO each where it forks, a lane converter where
  // a reader takes another number of lanes, the cast where its format differs.
  stream_edges edges_of(const stream_source& s) {
    stream_edges result{.source = s.top_input ? s.signal() : stream_name(g_[s.id], "data_out_0"),
                        .type = {.format = s.format, .lanes = s.lanes}};
    const std::vector<std::int64_t> depths = s.sinks.size() > 1 ? fork_fifo_depths(s) : std::vector<std::int64_t>{};
    for (std::size_t j = 0; j < s.sinks.size(); ++j) {
      const sink& k = s.sinks[j];
      const stream_type to = k.top_output >= 0 ? result.type : input_type(g_[k.consumer], k.input);
      edge e{.reader = k.top_output >= 0 ? fmt::format("data_out_{}", k.top_output)
                                         : stream_name(g_[k.consumer], data_in_name(k.input))};
      if (!depths.empty()) {
        modules_.insert(std::string(module_names::fifo));
        e.fifo = fork_fifo{.name = fmt::format("{}_fork_{}", result.source, j), .depth = depths[j],
                           .beats_per_sample = s.elements_per_sample / s.lanes};
      }
      if (to.lanes != s.lanes) {
        modules_.insert(std::string(module_names::lanes));
        e.converter = lane_converter{.name = e.reader + "_lanes", .width = s.format.width, .in_lanes = s.lanes,
                                     .out_lanes = to.lanes};
      }
      // Same width, fraction and overflow: the cast is the identity (rounding modes do not act on it).
      if (s.format.width != to.format.width || s.format.frac != to.format.frac || s.format.ovf != to.format.ovf)
        e.cast = format_cast{.from = s.format, .to = to.format, .lanes = to.lanes};
      result.readers.push_back(std::move(e));
    }
    return result;
  }

  const graph& g_;
  const emit_options& options_;
  std::optional<evaluator> reference_;  // bit-exact: the testbench's golden model, and each component's lowering
  std::vector<node_id> components_;
  std::map<std::string, const component*, std::less<>> user_components_;  // users' descriptors, by module
  std::vector<stream_source> sources_;
  std::map<std::size_t, std::size_t> sources_index_;
  std::map<std::pair<std::size_t, std::size_t>, tensor> constant_operands_;  // (node, input): its codes' values
  std::int64_t samples_ = 0;
  std::int64_t batch_ = mase::detail::hardware_batch(g_);  // the samples the graph's tensors hold
  std::set<std::string> modules_;  // the modules the design instantiates
  design design_;
};

}  // namespace detail

MASE_COMPILED_INLINE design plan_design(const graph& g, const emit_options& options) {
  return detail::planner(g, options).run();
}

// Emits the project; see the top of this file.
MASE_COMPILED_INLINE emit_info emit_verilog_project(const graph& g, const emit_options& options) {
  require(!options.project_dir.empty(), "emit_verilog: give the project directory (emit_options::project_dir)");
  const design d = plan_design(g, options);
  const std::vector<project_file> files = render_project(d);
  // The folder must be new, empty or a project mase emitted before (core/project_folder.hpp);
  // sim/ and reports/ are the tools' work folders (verilog/tools.hpp), replaced with the project.
  project_writer out(options.project_dir, "verilog", "emit_verilog");
  fs::create_directories(out.staging() / "rtl");
  fs::create_directories(out.staging() / "tb");
  for (const project_file& f : files) detail::write_text(out.staging() / f.path, f.text);
  out.publish({std::string(work_folder_simulation), std::string(work_folder_reports)});
  emit_info info = report_of(d);
  info.project_dir = fs::absolute(options.project_dir);  // as the user named it (a link stays a link)
  for (fs::path& f : info.rtl_files) f = info.project_dir / f;
  return info;
}

}  // namespace mase::verilog

// The printers of the design: top_core.sv, top.sv, the testbench and its data.
#include <mase/verilog/render_definitions.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/verilog/emit.hpp> instead"
#endif
