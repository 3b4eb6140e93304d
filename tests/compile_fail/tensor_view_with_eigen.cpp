// The same view with <mase/core/tensor_eigen.hpp>: compiles.
#include <mase/core/tensor_eigen.hpp>

float first(const mase::tensor& t) { return t.array()(0); }
float corner(mase::tensor& t) { return t.matrix()(0, 0); }
