#pragma once
// Everything in mase that needs no linked library.

#include <mase/core/error.hpp>
#include <mase/core/shape.hpp>
#include <mase/core/tensor.hpp>
#include <mase/format/format.hpp>
#include <mase/io/checkpoint.hpp>
#include <mase/io/draw.hpp>
#include <mase/ir/builder.hpp>
#include <mase/ir/graph.hpp>
#include <mase/ir/print.hpp>
#include <mase/ir/static_graph.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/pipeline.hpp>
#include <mase/pass/remove_nodes.hpp>
#include <mase/pass/report.hpp>
#include <mase/pass/verify.hpp>
#include <mase/quant/block_codes.hpp>
#include <mase/quant/mase_compat.hpp>
#include <mase/quant/quantize.hpp>
