// mase::compiled: the passes' bodies (core/compiled.hpp).
// This unit defines what the headers declare (core/compiled.hpp).
#define MASE_DEFINE_COMPILED
#include <mase/pass/fuse_conv_bn_definitions.hpp>
#include <mase/pass/prune_definitions.hpp>
#include <mase/pass/verify_definitions.hpp>
#include <mase/pass/quantize_definitions.hpp>
#include <mase/pass/report_tables_definitions.hpp>
#include <mase/pass/quantization_report_definitions.hpp>
#include <mase/pass/add_common_metadata_definitions.hpp>
