// mase::mase: the quantizer over every runtime format, with every family's kernels, and
// the format strings (core/compiled.hpp).
// This unit defines what the headers declare (core/compiled.hpp).
#define MASE_DEFINE_COMPILED
#include <mase/format/format_string_definitions.hpp>
#include <mase/format/mase_config_definitions.hpp>
#include <mase/quant/block_codes_definitions.hpp>
#include <mase/quant/block_definitions.hpp>
#include <mase/quant/quantize_definitions.hpp>
