// mase::compiled: every built-in op built by name (core/compiled.hpp).
#include <mase/ir/op_traits.hpp>

template const mase::vocabulary& mase::builtin_vocabulary<mase::builtin_ops>();
