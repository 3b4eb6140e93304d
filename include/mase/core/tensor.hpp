#pragma once
// tensor: a float32 array with a shape, stored contiguously in row-major (C) order, as PyTorch
// and safetensors store them. Parameters live in the graph as tensors; kernels view them
// through Eigen maps without copying.

#include <mase/core/error.hpp>
#include <mase/core/shape.hpp>

#include <cstdint>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

#include <Eigen/Core>

namespace mase {

class tensor {
public:
  using value_type = float;
  // Row-major, so that map_matrix() of a [rows, cols] tensor has PyTorch's layout.
  using matrix_map = Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
  using const_matrix_map = Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;
  using array_map = Eigen::Map<Eigen::ArrayXf>;
  using const_array_map = Eigen::Map<const Eigen::ArrayXf>;

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

  // All elements as one column.
  array_map array() noexcept { return {data_.data(), static_cast<Eigen::Index>(data_.size())}; }
  const_array_map array() const noexcept { return {data_.data(), static_cast<Eigen::Index>(data_.size())}; }

  // The tensor as a matrix whose columns are the last dimension and whose rows are all the
  // others ([out, in] for a linear weight; [1, n] for a vector).
  matrix_map matrix() noexcept { return {data_.data(), rows(), cols()}; }
  const_matrix_map matrix() const noexcept { return {data_.data(), rows(), cols()}; }

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
  Eigen::Index cols() const noexcept { return shape_.empty() ? 1 : static_cast<Eigen::Index>(shape_.back()); }
  Eigen::Index rows() const noexcept {
    const Eigen::Index c = cols();
    return c == 0 ? 0 : static_cast<Eigen::Index>(data_.size()) / c;
  }

  mase::shape shape_;
  std::vector<float> data_;
};

inline bool tensor::identical(const tensor& other) const noexcept {
  if (!(shape_ == other.shape_) || data_.size() != other.data_.size()) return false;
  return data_.empty() || std::memcmp(data_.data(), other.data_.data(), size_in_bytes()) == 0;
}

}  // namespace mase
