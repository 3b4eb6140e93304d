// mase::mase: the passes' bodies (core/compiled.hpp).
// This unit defines what the headers declare (core/compiled.hpp).
#define MASE_DEFINE_COMPILED
#include <mase/pass/flop_estimator_definitions.hpp>
#include <mase/pass/fuse_conv_bn_definitions.hpp>
#include <mase/pass/init_metadata_definitions.hpp>
#include <mase/pass/prune_definitions.hpp>
#include <mase/pass/verify_definitions.hpp>
#include <mase/pass/quantize_definitions.hpp>
#include <mase/pass/report_definitions.hpp>
#include <mase/pass/report_tables_definitions.hpp>
#include <mase/pass/quantization_report_definitions.hpp>
#include <mase/pass/add_common_metadata_definitions.hpp>
#include <mase/pass/add_hardware_metadata_definitions.hpp>

template void mase::detail::record_float_run<mase::graph>(const mase::graph&, const mase::ordered_map<mase::tensor>&,
                                                          std::vector<mase::shape_list>&,
                                                          std::vector<mase::detail::recorded_values>*);
template mase::quantize_info mase::detail::quantize_graph<mase::graph>(mase::graph&, const mase::quantize_config&);
