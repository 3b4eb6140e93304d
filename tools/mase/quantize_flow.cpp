// The quantization flow shared by `mase run --config` and `mase quantize`: one translation unit
// compiles toml++, the quantize pass and the summary.
#include "cli.hpp"

#include <mase/io/quant_config.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/pipeline.hpp>
#include <mase/pass/quantization_report.hpp>
#include <mase/pass/quantize.hpp>
#include <mase/pass/report_tables.hpp>

#include <sstream>

namespace mase_cli {

quantized_model quantize_graph(const mase::graph& g, const fs::path& config_file,
                               const mase::ordered_map<mase::tensor>* dummy_inputs, bool for_hardware) {
  mase::quantize_config config = mase::load_quantize_config(config_file);
  // The tool prints the summary itself (mase quantize) or not at all (mase run).
  config.report = false;
  config.hardware_formats = for_hardware;

  mase::graph before = dummy_inputs != nullptr
                           ? mase::graph(g | mase::init_metadata |
                                         mase::add_common_metadata(*dummy_inputs, {.add_value = false}))
                           : mase::graph(g | mase::init_metadata | mase::add_common_metadata);
  auto [quantized, info] = mase::run(mase::graph_with<mase::fact::common_metadata>(before), mase::quantize(config));
  const mase::quantize_info& record = std::get<0>(info);

  std::ostringstream summary;
  mase::summarize_quantization(before, quantized).write(summary);
  mase::detail::text_table derived({"Node name", "Mase op", "Entry", "Format", "Derived"});
  bool any_derived = false;
  for (const mase::node_quantization& n : record.nodes)
    for (const mase::derived_format& d : n.derived) {
      derived.add_row({n.name, n.mase_op, d.entry, mase::to_string(d.chosen), d.reason});
      any_derived = true;
    }
  std::ostringstream derived_text;
  if (any_derived) derived.write(derived_text);  // empty: the caller prints nothing
  return {.before = std::move(before),
          .quantized = std::move(quantized),
          .summary = std::move(summary).str(),
          .derived_formats = std::move(derived_text).str(),
          .quantized_nodes = record.count(mase::quantize_outcome::quantized),
          .bypassed_nodes = record.count(mase::quantize_outcome::bypassed)};
}

}  // namespace mase_cli
