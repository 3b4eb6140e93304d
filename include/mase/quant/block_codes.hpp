#pragma once
// The codes hardware stores for block formats: one shared code per block (the exponent or bias
// the block's elements share) and one code per element. `encode_blocks` picks each block's
// shared value with the same function `quantize` uses, so decode(encode(x)) == quantize(x).
// Defined in quant/block_codes_definitions.hpp (in the compiled mode, once, in mase::mase).
//
//   format           shared code                         element code
//   block_fp         e + bias            (exp_bits)      sign | magnitude k, value ±k·2^(e-m)
//   block_minifloat  the block's bias    (bias_bits)     minifloat code with that bias
//   block_log        the block's bias    (bias_bits)     log code with that bias
//   mxint            s + 2^(exp_bits-1)-1 (exp_bits)     width-bit two's complement k, value k·2^(s-width+2)
//   mx               E8M0: s + 127       (8)             OCP element code (int: two's complement)
//
// Shared codes are in row-major order of the block grid; element codes in tensor order.
// NaN has no code in block_fp and integer elements: encoding it throws mase::error.

#include <mase/core/compiled.hpp>
#include <mase/format/format.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace mase {

struct block_codes {
  std::vector<std::uint32_t> shared;
  std::vector<std::uint32_t> elements;
};

// Shared and element codes of x in block format f (shape as for quantize).
MASE_COMPILED_INLINE block_codes encode_blocks(const format& f, std::span<const float> x, std::span<const std::int64_t> shape);

// The values the codes stand for, in tensor order: equal to quantize(f, x, shape) for the x
// they were encoded from.
MASE_COMPILED_INLINE void decode_blocks(const format& f, const block_codes& codes, std::span<const std::int64_t> shape,
                                        std::span<float> out);

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/quant/block_codes_definitions.hpp>
#endif
