#pragma once
// Block formats' codes (quant/block_codes.hpp declares them): inline in the header-only mode,
// compiled once in mase::mase (src/quantize.cpp) otherwise.

#include <mase/quant/block_codes.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/quant/block_codes.hpp> instead"
#endif

#include <mase/quant/quantize.hpp>

#include <cmath>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/core.h>

namespace mase {

namespace detail {

// Largest finite |x| over a block's (scattered) elements.
inline float max_finite_abs_at(std::span<const float> x, std::span<const std::int64_t> elements) {
  float m = 0.0f;
  for (const std::int64_t i : elements) {
    const float a = std::abs(x[static_cast<std::size_t>(i)]);
    if (std::isfinite(a) && a > m) m = a;
  }
  return m;
}

// Integer k of a value q = k·2^-frac that is known to be on that grid.
inline std::int64_t grid_integer(float q, int frac, std::string_view format) {
  require(!std::isnan(q), "encode_blocks({}): NaN has no code in this format", format);
  return static_cast<std::int64_t>(std::ldexp(static_cast<double>(q), frac));
}

inline std::uint32_t twos_complement(std::int64_t k, int width) {
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(k) & ((std::uint64_t{1} << width) - 1));
}

inline std::int64_t from_twos_complement(std::uint32_t code, int width) {
  return apply_overflow(static_cast<std::int64_t>(code), width, true, overflow::wrap);
}

// What a format does per block, in one place: the shared value from the block's max, its code,
// and the element code of a quantized value (and back).
struct block_fp_coding {
  const block_fp_fmt& f;
  int shared(float amax) const {
    return with_rounding(f.round, [&](auto mode) { return block_fp_exponent<decltype(mode)::value>(f, amax); });
  }
  std::uint32_t shared_code(int e) const { return static_cast<std::uint32_t>(e + f.bias); }
  int shared_of(std::uint32_t code) const { return static_cast<int>(code) - f.bias; }
  std::uint32_t encode(float q, int e) const {
    const std::int64_t k = grid_integer(q, f.man_bits() - e, "block_fp");
    const std::uint32_t sign = std::signbit(q) ? 1u << f.man_bits() : 0u;
    return sign | static_cast<std::uint32_t>(k < 0 ? -k : k);
  }
  float decode(std::uint32_t code, int e) const {
    const auto magnitude = static_cast<double>(code & ((1u << f.man_bits()) - 1));
    const double v = std::ldexp(magnitude, e - f.man_bits());
    return static_cast<float>((code >> f.man_bits()) & 1u ? -v : v);
  }
};

struct block_minifloat_coding {
  const block_minifloat_fmt& f;
  minifloat_fmt element(int bias) const { return {.exp_bits = f.exp_bits, .man_bits = f.man_bits(), .bias = bias}; }
  int shared(float amax) const { return block_minifloat_bias(f, amax); }
  std::uint32_t shared_code(int bias) const { return static_cast<std::uint32_t>(bias); }
  int shared_of(std::uint32_t code) const { return static_cast<int>(code); }
  std::uint32_t encode(float q, int bias) const { return static_cast<std::uint32_t>(mase::encode(element(bias), q)); }
  float decode(std::uint32_t code, int bias) const { return mase::decode(element(bias), code); }
};

struct block_log_coding {
  const block_log_fmt& f;
  int shared(float amax) const { return block_log_bias(f, amax); }
  std::uint32_t shared_code(int bias) const { return static_cast<std::uint32_t>(bias); }
  int shared_of(std::uint32_t code) const { return static_cast<int>(code); }
  std::uint32_t encode(float q, int bias) const {
    return static_cast<std::uint32_t>(mase::encode(log_fmt{.width = f.width, .bias = bias}, q));
  }
  float decode(std::uint32_t code, int bias) const { return mase::decode(log_fmt{.width = f.width, .bias = bias}, code); }
};

// mxint and MX integer elements: k·2^(s - (width - 2)).
struct mx_integer_coding {
  int width, scale_emin, scale_emax, scale_bias;
  int shared(float amax) const { return mx_integer_scale(amax, scale_emin, scale_emax); }
  std::uint32_t shared_code(int s) const { return static_cast<std::uint32_t>(s + scale_bias); }
  int shared_of(std::uint32_t code) const { return static_cast<int>(code) - scale_bias; }
  std::uint32_t encode(float q, int s) const { return twos_complement(grid_integer(q, width - 2 - s, "mx integer"), width); }
  float decode(std::uint32_t code, int s) const {
    return static_cast<float>(std::ldexp(static_cast<double>(from_twos_complement(code, width)), s - (width - 2)));
  }
};

struct mx_float_coding {
  const mx_fmt& f;
  minifloat_fmt element() const { return element_minifloat(f.element); }
  int shared(float amax) const { return mx_float_scale(f.element, amax); }
  std::uint32_t shared_code(int s) const { return static_cast<std::uint32_t>(s + 127); }
  int shared_of(std::uint32_t code) const { return static_cast<int>(code) - 127; }
  // q·2^-s is an element value (a normal float32 or zero), so the element code is exact.
  std::uint32_t encode(float q, int s) const {
    return static_cast<std::uint32_t>(mase::encode(element(), static_cast<float>(std::ldexp(static_cast<double>(q), -s))));
  }
  float decode(std::uint32_t code, int s) const {
    return static_cast<float>(std::ldexp(static_cast<double>(mase::decode(element(), code)), s));
  }
};

template <class Coding>
block_codes encode_with(const Coding& coding, const block_layout& layout, std::span<const float> x,
                        std::span<const float> quantized) {
  block_codes codes;
  codes.shared.resize(static_cast<std::size_t>(layout.block_count()));
  codes.elements.resize(x.size());
  for_each_block(layout, [&](std::int64_t block, std::span<const std::int64_t> elements, std::int64_t) {
    const int shared = coding.shared(max_finite_abs_at(x, elements));
    codes.shared[static_cast<std::size_t>(block)] = coding.shared_code(shared);
    for (const std::int64_t i : elements) {
      codes.elements[static_cast<std::size_t>(i)] = coding.encode(quantized[static_cast<std::size_t>(i)], shared);
    }
  });
  return codes;
}

template <class Coding>
void decode_with(const Coding& coding, const block_layout& layout, const block_codes& codes, std::span<float> out) {
  require(codes.shared.size() == static_cast<std::size_t>(layout.block_count()) &&
              codes.elements.size() == out.size() && static_cast<std::int64_t>(out.size()) == layout.element_count(),
          "decode_blocks: {} shared and {} element codes do not fit shape {}", codes.shared.size(),
                      codes.elements.size(), shape_to_string(layout.shape));
  for_each_block(layout, [&](std::int64_t block, std::span<const std::int64_t> elements, std::int64_t) {
    const int shared = coding.shared_of(codes.shared[static_cast<std::size_t>(block)]);
    for (const std::int64_t i : elements) {
      out[static_cast<std::size_t>(i)] = coding.decode(codes.elements[static_cast<std::size_t>(i)], shared);
    }
  });
}

// Calls use(descriptor, coding) for a block format; element-wise formats have no block codes.
template <class F>
auto with_block_coding(const format& f, F&& use) {
  using result = std::invoke_result_t<F&, const block_fp_fmt&, const block_fp_coding&>;
  return f.visit([&](const auto& d) -> result {
    using D = std::remove_cvref_t<decltype(d)>;
    if constexpr (std::is_same_v<D, block_fp_fmt>) {
      return use(d, block_fp_coding{d});
    } else if constexpr (std::is_same_v<D, block_minifloat_fmt>) {
      return use(d, block_minifloat_coding{d});
    } else if constexpr (std::is_same_v<D, block_log_fmt>) {
      return use(d, block_log_coding{d});
    } else if constexpr (std::is_same_v<D, mxint_fmt>) {
      return use(d, mx_integer_coding{d.width, d.scale_emin(), d.scale_emax(), d.scale_bias()});
    } else if constexpr (std::is_same_v<D, mx_fmt>) {
      if (is_integer_element(d.element)) {
        return use(d, mx_integer_coding{integer_element_bits(d.element), mx_fmt::scale_emin, mx_fmt::scale_emax, 127});
      }
      return use(d, mx_float_coding{d});
    } else {
      throw error(fmt::format("block codes: {} is an element-wise format; use encode / decode", to_string(f)));
    }
  });
}

}  // namespace detail

MASE_COMPILED_INLINE block_codes encode_blocks(const format& f, std::span<const float> x, std::span<const std::int64_t> shape) {
  std::vector<float> quantized(x.size());
  quantize(f, x, shape, quantized);
  return detail::with_block_coding(f, [&](const auto& d, const auto& coding) {
    return detail::encode_with(coding, detail::layout_of(d, shape), x, quantized);
  });
}

MASE_COMPILED_INLINE void decode_blocks(const format& f, const block_codes& codes, std::span<const std::int64_t> shape,
                                        std::span<float> out) {
  detail::with_block_coding(f, [&](const auto& d, const auto& coding) {
    detail::decode_with(coding, detail::layout_of(d, shape), codes, out);
    return 0;
  });
}

}  // namespace mase
