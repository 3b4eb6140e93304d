#pragma once
// The graph: op types, the dynamic graph and its builder, static graphs, metadata, printing.

#include <mase/core.hpp>
#include <mase/ir/builder.hpp>
#include <mase/ir/graph.hpp>
#include <mase/ir/metadata.hpp>
#include <mase/ir/op_traits.hpp>
#include <mase/ir/print.hpp>
#include <mase/ir/static_graph.hpp>
