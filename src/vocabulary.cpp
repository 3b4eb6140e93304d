// mase::mase: every built-in op built by name, the graph's editing members and printing
// (core/compiled.hpp).
// This unit defines what the headers declare (core/compiled.hpp).
#define MASE_DEFINE_COMPILED
#include <mase/ir/graph_definitions.hpp>
#include <mase/ir/metadata_definitions.hpp>
#include <mase/ir/op_traits.hpp>
#include <mase/ir/print_definitions.hpp>

static_assert(mase::detail::all_op_types(mase::builtin_ops{}));

template const mase::vocabulary& mase::builtin_vocabulary<mase::builtin_ops>();
