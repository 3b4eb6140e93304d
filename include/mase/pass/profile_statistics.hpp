#pragma once
// add_software_metadata and profile_statistics (MASE's add_software_metadata_analysis_pass and
// profile_statistics_analysis_pass, reference §2.1 and §2.4).
//
//   graph g2 = g | init_metadata | add_common_metadata | add_software_metadata
//                | profile_statistics({.by = profile_by::type,
//                                      .target_weight_nodes = {"linear"},
//                                      .target_activation_nodes = {"linear", "relu"},
//                                      .weight_statistics = {stats::range_min_max_options{.abs = true}},
//                                      .activation_statistics = {stats::range_quantile_options{}},
//                                      .inputs = next_batch,   // () -> optional<ordered_map<tensor>>
//                                      .num_samples = 256});
//   g2.at("fc1").meta.software.args.at("weight").stat.at("range_min_max").at("max")

#include <mase/core/suggest.hpp>
#include <mase/eval/evaluator.hpp>
#include <mase/eval/statistics.hpp>
#include <mase/pass/pipeline.hpp>

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace mase {

// --- add_software_metadata ----------------------------------------------------------------------

// Gives every node empty software entries: software.args[e] for each tensor argument e of
// common.args (data_in_<i> and the parameters, weight, bias, …) and software.results.data_out_0
// for each node with a result (not the output node, as in MASE). MASE's per-op layer table picks
// the same entries for the layers it lists (a module's data_in_0 plus its parameters and buffers,
// a function's data_in_<i>); taking every tensor argument covers every op alike. Existing
// statistics are dropped, as MASE resets `stat` to {}.
struct add_software_metadata_pass {
  using needs = facts<fact::common_metadata>;
  using provides = facts<fact::software_metadata>;

  void run(graph& g) const {
    g.for_each_node([](node& n) {
      software_meta software;
      for (const auto& [name, arg] : n.meta.common.args)
        if (std::holds_alternative<tensor_meta>(arg)) software.args.insert_or_assign(name, software_entry{});
      if (!n.is<op::output>() && !n.meta.common.results.empty())
        software.results.insert_or_assign(data_out_name(0), software_entry{});
      n.meta.software = std::move(software);
    });
  }
};

inline constexpr add_software_metadata_pass add_software_metadata{};

// --- profile_statistics -------------------------------------------------------------------------

// How targets are named: by node name, or by op type (mase_op: "linear", "relu", …).
enum class profile_by : std::uint8_t { name, type };

inline profile_by profile_by_from_string(std::string_view text) {
  if (text == "name") return profile_by::name;
  if (text == "type") return profile_by::type;
  throw error(fmt::format("profile_statistics: \"by\" must be \"name\" or \"type\", not \"{}\"", text));
}

// The next batch of graph inputs by placeholder name, or std::nullopt when there are no more.
using batch_generator = std::function<std::optional<ordered_map<tensor>>()>;
// Called after each batch with (batches done, batches in all).
using progress_callback = std::function<void(std::size_t done, std::size_t total)>;

// What profile_statistics profiled.
struct profile_statistics_info {
  std::size_t weight_nodes = 0;        // nodes whose parameters were profiled
  std::size_t weight_entries = 0;      // parameters profiled (each fed once)
  std::size_t activation_nodes = 0;    // nodes whose inputs were profiled
  std::size_t activation_entries = 0;  // data_in_<i> entries profiled
  std::size_t batches = 0;             // batches run through the evaluator
  std::size_t samples = 0;             // batch rows seen: samples fed to each activation statistic
  friend bool operator==(const profile_statistics_info&, const profile_statistics_info&) = default;
};

// Profiles statistics into software.args[entry].stat[<statistic name>]:
// - weights: for each node in target_weight_nodes, every software arg entry that is not a
//   data_in_<i> (its parameters: weight, bias, running_mean, …) is fed once, whole, as one
//   sample of each weight statistic (MASE profiles only call_module nodes; here those are the
//   nodes with parameters, and nodes without any are passed over).
// - activations: the float32 evaluator runs ceil(num_samples / batch) batches from `inputs`
//   (batch = the leading dim of the first placeholder's first batch; fewer if the generator runs
//   out). For each node in target_activation_nodes, each data_in_<i> tensor the node reads is
//   split into its batch rows, each fed as a sample with a leading dim of 1 (MASE's
//   batch[[i], ...]). An activation target's parameters are not profiled as activations (MASE
//   would fail its count assertion there); name the node as a weight target too.
// The statistics of each profiled entry replace what it held, as in MASE. Results
// (software.results) are not profiled, as in MASE.
struct profile_statistics_pass {
  using needs = facts<fact::software_metadata>;
  using provides = facts<fact::statistics>;

  // Every member has an initializer, so designated initializers may name any subset.
  profile_by by = profile_by::type;
  std::vector<std::string> target_weight_nodes{};
  std::vector<std::string> target_activation_nodes{};
  std::vector<stats::statistic_options> weight_statistics{};
  std::vector<stats::statistic_options> activation_statistics{};
  batch_generator inputs{};
  std::size_t num_samples = 0;
  progress_callback progress{};
  // The evaluator's threads (0: one per core); the statistics are the same on any number.
  std::size_t threads = 0;

  // A template so that the evaluator is compiled only where this pass is used.
  template <std::derived_from<graph> G>
  profile_statistics_info run(G& g) const {
    check_config(g);
    profile_statistics_info info;

    // Weights: each parameter once.
    for (node_id id : g.order()) {
      node& n = g[id];
      if (!targeted(n, target_weight_nodes)) continue;
      std::size_t profiled = 0;
      for (auto& [entry, software] : n.meta.software.args) {
        if (is_data_in(entry)) continue;
        const auto value = n.parameters.find(entry);
        require(value != n.parameters.end(),
                "profile_statistics: node {} has no value for its parameter \"{}\"; set it with "
                            "graph::set_parameter",
                            n.name, entry);
        std::vector<stats::any_statistic> collection = make_collection(weight_statistics);
        for (stats::any_statistic& s : collection) s.update(value->second);
        software.stat = results_of(collection);
        ++profiled;
      }
      info.weight_entries += profiled;
      info.weight_nodes += profiled > 0 ? 1 : 0;
    }

    // Activations: a collection per data_in_<i> entry of each target, fed by an observer.
    struct activation_entry {
      node_id id;
      std::string entry;
      std::size_t input;
      std::vector<stats::any_statistic> statistics;
    };
    std::vector<activation_entry> entries;
    std::vector<std::vector<std::size_t>> entries_of_node(g.id_bound());
    for (node_id id : g.order()) {
      const node& n = g[id];
      if (!targeted(n, target_activation_nodes)) continue;
      bool any = false;
      for (const auto& [entry, software] : n.meta.software.args) {
        if (!is_data_in(entry)) continue;
        const std::size_t input = data_in_index(n, entry);
        entries_of_node[id.index].push_back(entries.size());
        entries.push_back({id, entry, input, make_collection(activation_statistics)});
        any = true;
      }
      info.activation_nodes += any ? 1 : 0;
    }
    info.activation_entries = entries.size();
    if (entries.empty()) return info;

    basic_evaluator<graph> ev(g, eval_mode::float32);
    ev.set_threads(threads);
    const auto observe = [&](const node_run& r) {
      for (std::size_t index : entries_of_node[r.id.index]) {
        activation_entry& a = entries[index];
        // (size > input, not input < size: clang 14 reads `a.input <` as mase::input<…>)
        require(r.inputs.size() > a.input && r.inputs[a.input] != nullptr,
                "profile_statistics: node {} read {} tensors, so {} has none", r.n.name, r.inputs.size(),
                            a.entry);
        feed_rows(*r.inputs[a.input], a.statistics);
      }
    };
    const std::string first_input = g[g.placeholders().at(0)].name;
    std::size_t total = 0;
    while (info.batches == 0 || info.batches < total) {
      std::optional<ordered_map<tensor>> batch = inputs();
      if (!batch) break;
      const auto x = batch->find(first_input);
      require(x != batch->end(), "profile_statistics: a batch from the input generator has no tensor for "
                                             "the graph input \"{}\"; it has: {}",
                                             first_input, batch->key_list());
      const std::size_t rows = x->second.rank() == 0 ? 1 : static_cast<std::size_t>(x->second.shape()[0]);
      if (info.batches == 0) {
        require(rows > 0, "profile_statistics: the first batch's \"{}\" has no rows", first_input);
        total = (num_samples + rows - 1) / rows;
      }
      ev.run_with(*batch, observe);
      ++info.batches;
      info.samples += rows;
      if (progress) progress(info.batches, total);
    }
    require(info.batches > 0, "profile_statistics: the input generator gave no batch; activation statistics need at "
                              "least one");

    for (activation_entry& a : entries) g[a.id].meta.software.args.at(a.entry).stat = results_of(a.statistics);
    return info;
  }

private:
  static bool is_data_in(std::string_view entry) { return entry.starts_with("data_in_"); }

  // data_in_<i> → i, checked against the node's inputs.
  static std::size_t data_in_index(const node& n, std::string_view entry) {
    std::size_t i = 0;
    const std::string_view digits = entry.substr(std::string_view("data_in_").size());
    bool ok = !digits.empty();
    for (char c : digits) {
      ok = ok && c >= '0' && c <= '9';
      if (ok) i = i * 10 + static_cast<std::size_t>(c - '0');
    }
    require(ok && (i < n.inputs.size() || op_takes_all_results(n.op)),
            "profile_statistics: node {} has a software entry \"{}\" but {} input(s); run "
                        "add_software_metadata again after changing the graph",
                        n.name, entry, n.inputs.size());
    return i;
  }

  bool targeted(const node& n, const std::vector<std::string>& targets) const {
    const std::string_view key = by == profile_by::name ? std::string_view(n.name) : n.op_name();
    return std::find(targets.begin(), targets.end(), key) != targets.end();
  }

  static std::vector<stats::any_statistic> make_collection(const std::vector<stats::statistic_options>& options) {
    std::vector<stats::any_statistic> out;
    out.reserve(options.size());
    for (const stats::statistic_options& o : options) out.emplace_back(o);
    return out;
  }

  static ordered_map<statistic> results_of(const std::vector<stats::any_statistic>& collection) {
    ordered_map<statistic> out;
    for (const stats::any_statistic& s : collection) out.insert_or_assign(s.name(), s.compute());
    return out;
  }

  // Each batch row as a sample [1, …] (a 0-d tensor as itself), viewed in place.
  static void feed_rows(const tensor& t, std::vector<stats::any_statistic>& statistics) {
    if (t.rank() == 0) {
      for (stats::any_statistic& s : statistics) s.update(t);
      return;
    }
    shape row = t.shape();
    row[0] = 1;
    const auto rows = static_cast<std::size_t>(t.shape()[0]);
    const auto width = static_cast<std::size_t>(row.numel());
    const std::span<const float> values = t.values();
    for (std::size_t r = 0; r < rows; ++r)
      for (stats::any_statistic& s : statistics) s.update(values.subspan(r * width, width), row);
  }

  void check_config(const graph& g) const {
    check_targets(g, target_weight_nodes, "target_weight_nodes");
    check_targets(g, target_activation_nodes, "target_activation_nodes");
    check_unique(weight_statistics, "weight_statistics");
    check_unique(activation_statistics, "activation_statistics");
    if (target_activation_nodes.empty()) return;
    require(static_cast<bool>(inputs), "profile_statistics: target_activation_nodes are given but no input "
                                       "generator; set .inputs to a function returning the next batch");
    require(num_samples > 0, "profile_statistics: target_activation_nodes are given but num_samples is 0; set "
                             ".num_samples to how many samples to profile");
    require(!g.placeholders().empty(), "profile_statistics: the graph has no input to feed batches to");
  }

  void check_targets(const graph& g, const std::vector<std::string>& targets, std::string_view field) const {
    for (const std::string& target : targets) {
      if (by == profile_by::name) {
        if (g.contains(target)) continue;
        std::vector<std::string_view> names;
        g.for_each_node([&](const node& n) { names.push_back(n.name); });
        const std::string near = nearest_names(target, names);
        throw error(fmt::format("profile_statistics: {} names \"{}\", which is not a node of the graph{}", field,
                                target, near.empty() ? "" : fmt::format("; did you mean {}?", near)));
      }
      const auto& ops = op_names();
      if (std::find(ops.begin(), ops.end(), target) != ops.end()) continue;
      const std::string near = nearest_names(target, ops);
      throw error(fmt::format("profile_statistics: {} names \"{}\", which is not an op type (by = type){}", field,
                              target,
                              near.empty() ? "; mase::op_names() lists them" : fmt::format("; did you mean {}?", near)));
    }
  }

  static void check_unique(const std::vector<stats::statistic_options>& options, std::string_view field) {
    for (std::size_t i = 0; i < options.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        require(stats::statistic_name(options[i]) != stats::statistic_name(options[j]),
                "profile_statistics: {} lists {} twice; its results are stored by statistic name", field,
                            stats::statistic_name(options[i]));
  }
};

// profile_statistics({.by = …, .target_weight_nodes = …, …}): the pass with its options.
inline profile_statistics_pass profile_statistics(profile_statistics_pass options) { return options; }

}  // namespace mase
