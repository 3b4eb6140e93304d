// The one compiled copy of the evaluator and its kernels, for the tool and the tests
// (mase_evaluator_instance in CMakeLists.txt; MASE_EXTERN_EVALUATOR in their other units).
#include <mase/eval/evaluator_instance.hpp>
