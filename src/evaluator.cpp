// mase::mase: the evaluator and every kernel it runs (core/compiled.hpp).
#include <mase/eval/evaluator.hpp>
#include <mase/eval/evaluator_definitions.hpp>

template class mase::basic_evaluator<mase::graph>;
