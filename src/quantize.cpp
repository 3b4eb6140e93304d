// mase::compiled: the quantizer over every runtime format, with every family's kernels
// (core/compiled.hpp).
#include <mase/quant/block_definitions.hpp>
#include <mase/quant/quantize_definitions.hpp>
