// mase profile: MASE's profile_statistics over input batches, printed as a table of each
// profiled entry's range (weights once; activations over every batch).
#include "cli.hpp"

#include <mase/core/error.hpp>
#include <mase/ir/print.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/pipeline.hpp>
#include <mase/pass/profile_statistics.hpp>
#include <mase/pass/report_tables.hpp>

#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace mase_cli {

namespace {

void add_once(std::vector<std::string>& list, std::string_view item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.emplace_back(item);
}

std::string field_text(const mase::statistic& s, std::string_view field) {
  const auto it = s.find(field);
  return it == s.end() ? "-" : mase::detail::stat_to_string(it->second);
}

}  // namespace

int run_profile(const profile_options& o) {
  mase::stats::statistic_options statistic;
  if (o.statistic == "range_min_max") statistic = mase::stats::range_min_max_options{.dims = {}, .abs = o.abs};
  else if (o.statistic == "range_quantile") statistic = mase::stats::range_quantile_options{.dims = {}, .abs = o.abs};
  else throw usage_error(fmt::format("--statistic must be range_min_max or range_quantile, not \"{}\"", o.statistic));

  const loaded_model model = load_model(o.model, o.input_shapes, o.raise, o.inputs);
  const input_batches batches(model, o.inputs);
  if (batches.empty()) throw usage_error("mase profile needs the model's inputs: --input NAME=FILE (one per batch)");
  const std::size_t runs = o.batches.value_or(batches.size());
  if (runs == 0 || runs > batches.size())
    throw usage_error(fmt::format("--batches {}: give a number from 1 to {}, the number of files given for each input",
                                  runs, batches.size()));

  // Every op with parameters is a weight target; every op that reads a tensor an activation one.
  std::vector<std::string> weight_ops, activation_ops;
  model.graph.for_each_node([&](const mase::node& n) {
    if (!n.parameters.empty()) add_once(weight_ops, n.op_name());
    if (!n.inputs.empty()) add_once(activation_ops, n.op_name());
  });

  // Samples: the batches' leading dimension (profile_statistics feeds each row as one sample).
  const mase::ordered_map<mase::tensor> first = batches.load(0);
  const std::string first_input = model.graph[model.graph.placeholders().at(0)].name;
  const auto rows_of = [](const mase::tensor& x) { return x.rank() == 0 ? 1 : static_cast<std::size_t>(x.shape()[0]); };
  const std::size_t rows = rows_of(first.at(first_input));

  std::size_t next = 0, samples = 0;  // batches given, and their rows (the batches may differ)
  progress_bar bar("profiling", runs);
  const mase::graph profiled =
      model.graph | mase::init_metadata | mase::add_common_metadata | mase::add_software_metadata |
      mase::profile_statistics({.by = mase::profile_by::type,
                                .target_weight_nodes = weight_ops,
                                .target_activation_nodes = activation_ops,
                                .weight_statistics = {statistic},
                                .activation_statistics = {statistic},
                                .inputs = [&]() -> std::optional<mase::ordered_map<mase::tensor>> {
                                  if (next == runs) return std::nullopt;
                                  mase::ordered_map<mase::tensor> batch = next++ == 0 ? first : batches.load(next - 1);
                                  samples += rows_of(batch.at(first_input));
                                  return batch;
                                },
                                .num_samples = runs * std::max<std::size_t>(rows, 1),
                                .progress = [&](std::size_t done, std::size_t) { bar.update(done); },
                                .threads = o.jobs});
  bar.clear();

  const std::string name(mase::stats::statistic_name(statistic));
  mase::detail::text_table table({"Node name", "Op", "Entry", "min", "max"});
  for (mase::node_id id : profiled.order()) {
    const mase::node& n = profiled[id];
    for (const auto& [entry, software] : n.meta.software.args) {
      const auto s = software.stat.find(name);
      if (s == software.stat.end()) continue;
      table.add_row({n.name, std::string(n.op_name()), entry, field_text(s->second, "min"), field_text(s->second, "max")});
    }
  }
  fmt::print("{} over {} batch{} ({} samples{})\n", name, runs, runs == 1 ? "" : "es", samples,
             o.abs ? ", absolute values" : "");
  table.write(std::cout);
  return 0;
}

}  // namespace mase_cli
