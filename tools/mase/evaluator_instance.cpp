// The tool's one copy of the evaluator and its kernels (MASE_EXTERN_EVALUATOR in the others).
#include <mase/eval/evaluator_instance.hpp>
