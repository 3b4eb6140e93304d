#pragma once
// tensor: a float32 array with a shape, stored contiguously in row-major (C) order, as PyTorch
// and safetensors store them. Parameters live in the graph as tensors; kernels view them
// through Eigen maps without copying (matrix(), array()), which <mase/core/tensor_eigen.hpp>
// defines: a unit that never views a tensor through Eigen does not compile Eigen.

#include <mase/core/error.hpp>
#include <mase/core/shape.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

namespace mase {

namespace detail {
// The Eigen types of tensor's views, defined for mase::tensor by <mase/core/tensor_eigen.hpp>.
template <class Tensor>
struct eigen_views {
  static_assert(sizeof(Tensor) == 0, "mase::tensor's matrix() and array() views need #include <mase/core/tensor_eigen.hpp>");
};
}  // namespace detail

class tensor {
public:
  using value_type = float;

  tensor() = default;
  // Zero-filled.
  explicit tensor(const mase::shape& s) : shape_(s), data_(checked_numel(s), 0.0f) {}
  tensor(const mase::shape& s, std::vector<float> values) : shape_(s), data_(std::move(values)) {
    require(data_.size() == checked_numel(s),
            "tensor: shape {} holds {} values, but {} were given", to_string(s), s.numel(), data_.size());
  }

  const mase::shape& shape() const noexcept { return shape_; }
  int rank() const noexcept { return shape_.size(); }
  std::size_t size() const noexcept { return data_.size(); }
  std::size_t size_in_bytes() const noexcept { return data_.size() * sizeof(float); }

  float* data() noexcept { return data_.data(); }
  const float* data() const noexcept { return data_.data(); }
  std::span<float> values() noexcept { return data_; }
  std::span<const float> values() const noexcept { return data_; }

  // All elements as one column (an Eigen::Map of an ArrayXf).
  template <class Self = tensor>
  typename detail::eigen_views<Self>::array_map array() noexcept {
    return {data_.data(), static_cast<std::ptrdiff_t>(data_.size())};
  }
  template <class Self = tensor>
  typename detail::eigen_views<Self>::const_array_map array() const noexcept {
    return {data_.data(), static_cast<std::ptrdiff_t>(data_.size())};
  }

  // The tensor as a row-major Eigen matrix whose columns are the last dimension and whose rows
  // are all the others ([out, in] for a linear weight, as PyTorch lays it out; [1, n] for a vector).
  template <class Self = tensor>
  typename detail::eigen_views<Self>::matrix_map matrix() noexcept {
    return {data_.data(), rows(), cols()};
  }
  template <class Self = tensor>
  typename detail::eigen_views<Self>::const_matrix_map matrix() const noexcept {
    return {data_.data(), rows(), cols()};
  }

  // The same values under another shape with the same number of elements.
  tensor reshaped(const mase::shape& s) const& { return tensor(s, data_); }
  tensor reshaped(const mase::shape& s) && { return tensor(s, std::move(data_)); }

  // Equal shapes and the same bits in every element (so NaNs compare by payload and -0 != +0).
  bool identical(const tensor& other) const noexcept;
  // Tensors compare bit for bit (what a checkpoint round trip must preserve).
  friend bool operator==(const tensor& a, const tensor& b) noexcept { return a.identical(b); }

private:
  static std::size_t checked_numel(const mase::shape& s) {
    std::int64_t count = 1;
    for (std::int64_t d : s) {
      require(d >= 0, "tensor: shape {} has a negative dimension", to_string(s));
      // A shape computed from a damaged model can overflow the element count.
      require(!__builtin_mul_overflow(count, d, &count),
              "tensor: shape {} has more elements than a tensor can hold", to_string(s));
    }
    return static_cast<std::size_t>(count);
  }
  std::ptrdiff_t cols() const noexcept { return shape_.empty() ? 1 : static_cast<std::ptrdiff_t>(shape_.back()); }
  std::ptrdiff_t rows() const noexcept {
    const std::ptrdiff_t c = cols();
    return c == 0 ? 0 : static_cast<std::ptrdiff_t>(data_.size()) / c;
  }

  mase::shape shape_;
  std::vector<float> data_;
};

inline bool tensor::identical(const tensor& other) const noexcept {
  if (!(shape_ == other.shape_) || data_.size() != other.data_.size()) return false;
  return data_.empty() || std::memcmp(data_.data(), other.data_.data(), size_in_bytes()) == 0;
}

}  // namespace mase
