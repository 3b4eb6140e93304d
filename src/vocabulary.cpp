// mase::compiled: every built-in op built by name (core/compiled.hpp).
#include <mase/ir/op_traits.hpp>

static_assert(mase::detail::all_op_types(mase::builtin_ops{}));

template const mase::vocabulary& mase::builtin_vocabulary<mase::builtin_ops>();
