#pragma once
// One entry point over every format: quantize a span or an Eigen array, out of place or in
// place, with a runtime mase::format or a descriptor known at compile time; encode / decode
// element-wise formats to the codes hardware stores. The functions over every runtime format
// are defined in quant/quantize_definitions.hpp (in the compiled mode, once, in mase::mase).

#include <mase/core/compiled.hpp>
#include <mase/format/format.hpp>
#include <mase/quant/binary.hpp>
#include <mase/quant/block.hpp>
#include <mase/quant/fixed.hpp>
#include <mase/quant/log.hpp>
#include <mase/quant/minifloat.hpp>

#include <cstdint>
#include <span>
#include <vector>

// Eigen's own declaration, so that quantized() below accepts any Eigen expression without
// including Eigen (a caller that has one has included it).
namespace Eigen {
template <typename Derived>
class DenseBase;
}  // namespace Eigen

namespace mase {

// Any format, any shape (element-wise formats ignore the shape). `out` may alias `in`.
MASE_COMPILED_INLINE void quantize(const format& f, std::span<const float> in, std::span<const std::int64_t> shape,
                                   std::span<float> out);

// A descriptor known at compile time, of any family: validated by the compiler.
template <auto Fmt>
  requires format_descriptor<decltype(Fmt)>
void quantize(std::span<const float> in, std::span<const std::int64_t> shape, std::span<float> out) {
  static_assert((check(Fmt), true));
  if constexpr (elementwise_descriptor<decltype(Fmt)>) {
    quantize(Fmt, in, out);
  } else {
    quantize(Fmt, in, shape, out);
  }
}

// A flat tensor of one dim.
inline void quantize(const format& f, std::span<const float> in, std::span<float> out) {
  const std::int64_t shape[] = {static_cast<std::int64_t>(in.size())};
  quantize(f, in, shape, out);
}

inline void quantize_in_place(const format& f, std::span<float> values, std::span<const std::int64_t> shape) {
  quantize(f, values, shape, values);
}

inline std::vector<float> quantized(const format& f, std::span<const float> in, std::span<const std::int64_t> shape) {
  std::vector<float> out(in.size());
  quantize(f, in, shape, out);
  return out;
}

// Eigen: a vector is a 1-D tensor; a matrix or 2-D array is [rows, cols] in row-major order
// (as MASE's tensors), whatever Eigen's storage order. Written against Eigen's DenseBase
// declared, not defined, so that including mase compiles no Eigen: a caller has included it.
template <class Derived>
auto quantized(const format& f, const Eigen::DenseBase<Derived>& x) {
  using Plain = typename Derived::PlainObject;
  static_assert(std::is_same_v<typename Derived::Scalar, float>, "mase::quantized: the Eigen array must hold float");
  Plain out = x.derived();
  const auto values = std::span<float>(out.data(), static_cast<std::size_t>(out.size()));
  if constexpr (Derived::IsVectorAtCompileTime || Plain::IsRowMajor) {
    // The storage is already the row-major order (a vector has one).
    const std::int64_t vector_shape[] = {static_cast<std::int64_t>(out.size())};
    const std::int64_t matrix_shape[] = {static_cast<std::int64_t>(out.rows()), static_cast<std::int64_t>(out.cols())};
    quantize(f, values, Derived::IsVectorAtCompileTime ? std::span<const std::int64_t>(vector_shape) : matrix_shape,
             values);
  } else {
    std::vector<float> row_major(values.size());
    const auto rows = out.rows(), cols = out.cols();
    for (std::ptrdiff_t r = 0; r < rows; ++r)
      for (std::ptrdiff_t c = 0; c < cols; ++c) row_major[static_cast<std::size_t>(r * cols + c)] = out(r, c);
    const std::int64_t shape[] = {static_cast<std::int64_t>(rows), static_cast<std::int64_t>(cols)};
    quantize_in_place(f, row_major, shape);
    for (std::ptrdiff_t r = 0; r < rows; ++r)
      for (std::ptrdiff_t c = 0; c < cols; ++c) out(r, c) = row_major[static_cast<std::size_t>(r * cols + c)];
  }
  return out;
}

template <class Derived>
void quantize_in_place(const format& f, Eigen::DenseBase<Derived>& x) {
  x.derived() = quantized(f, x);
}

// Element-wise codes (MASE's *_for_hw): the bits hardware stores for one value.
MASE_COMPILED_INLINE std::uint64_t encode(const format& f, float x);

MASE_COMPILED_INLINE float decode(const format& f, std::uint64_t code);

template <std::unsigned_integral Code>
void encode(const format& f, std::span<const float> in, std::span<Code> codes) {
  require(in.size() == codes.size(), "encode: input and code spans differ in size");
  for (std::size_t i = 0; i < in.size(); ++i) codes[i] = static_cast<Code>(encode(f, in[i]));
}

template <std::unsigned_integral Code>
void decode(const format& f, std::span<const Code> codes, std::span<float> out) {
  require(out.size() == codes.size(), "decode: code and output spans differ in size");
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = decode(f, codes[i]);
}

// Storage cost: bits per element, shared exponents spread over their block (nominal block
// size; "whole dim" blocks count as one element's share of nothing).
MASE_COMPILED_INLINE double bits_per_value(const format& f);

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/quant/quantize_definitions.hpp>
#endif
