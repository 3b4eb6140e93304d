#pragma once
// The passes and the pipeline that checks their order: metadata, quantization, pruning, fusion,
// verification, reports. Calibration (pass/profile_statistics.hpp) and raising ONNX-level graphs
// (pass/raise_granularity.hpp) are apart; hardware metadata comes with <mase/verilog.hpp>.

#include <mase/ir.hpp>
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
