#pragma once
// The one explicit instantiation of mase::evaluator (see the end of evaluator.hpp): include this
// header in exactly one translation unit of a project that defines MASE_EXTERN_EVALUATOR.

#define MASE_INSTANTIATING_EVALUATOR
#include <mase/eval/evaluator.hpp>

template class mase::basic_evaluator<mase::graph>;
