#pragma once
// mase::tensor's Eigen views, matrix() and array(): maps of the tensor's own storage, no copy.
// Kept apart from core/tensor.hpp so that a unit that never views a tensor through Eigen does not
// compile Eigen (a quarter of a second and 50 MB of every unit); eval/kernels.hpp includes it.

#include <mase/core/tensor.hpp>

#include <Eigen/Core>

namespace mase::detail {

template <>
struct eigen_views<tensor> {
  // Row-major, so that a [rows, cols] tensor has PyTorch's layout.
  using matrix_map = Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
  using const_matrix_map = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
  using array_map = Eigen::Map<Eigen::ArrayXf>;
  using const_array_map = Eigen::Map<const Eigen::ArrayXf>;
};

}  // namespace mase::detail

namespace mase {

// The views' types, for code that names them (tensor::matrix() and tensor::array() return them).
using tensor_matrix_map = detail::eigen_views<tensor>::matrix_map;
using tensor_const_matrix_map = detail::eigen_views<tensor>::const_matrix_map;
using tensor_array_map = detail::eigen_views<tensor>::array_map;
using tensor_const_array_map = detail::eigen_views<tensor>::const_array_map;

}  // namespace mase
