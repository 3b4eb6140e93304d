#pragma once
// Everything in mase that needs no linked library, except two headers that only calibration
// and configuration tools need and that would make every including file slower to compile
// (issue 3 keeps this header under 10 s at -O2): <mase/pass/profile_statistics.hpp>
// (statistics and profiling) and <mase/io/quant_config.hpp> (TOML configs, needs toml++).

#include <mase/core/error.hpp>
#include <mase/core/shape.hpp>
#include <mase/core/tensor.hpp>
#include <mase/eval/evaluator.hpp>
#include <mase/format/format.hpp>
#include <mase/io/checkpoint.hpp>
#include <mase/io/draw.hpp>
#include <mase/ir/builder.hpp>
#include <mase/ir/graph.hpp>
#include <mase/ir/print.hpp>
#include <mase/ir/static_graph.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/flop_estimator.hpp>
#include <mase/pass/fuse_conv_bn.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/pipeline.hpp>
#include <mase/pass/prune.hpp>
#include <mase/pass/quantization_report.hpp>
#include <mase/pass/quantize.hpp>
#include <mase/pass/remove_nodes.hpp>
#include <mase/pass/report.hpp>
#include <mase/pass/verify.hpp>
#include <mase/quant/block_codes.hpp>
#include <mase/quant/mase_compat.hpp>
#include <mase/quant/quantize.hpp>
