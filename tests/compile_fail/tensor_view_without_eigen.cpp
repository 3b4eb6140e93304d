// A tensor viewed through Eigen without <mase/core/tensor_eigen.hpp>: the views are declared but
// their Eigen types are not, so the diagnostic names the header to include.
#include <mase/core/tensor.hpp>

float first(const mase::tensor& t) { return t.array()(0); }
