#pragma once
// Exact integer matrix products for the bit-exact evaluator: C[m][n] = Σ_k A[m][k] · B[n][k] on
// signed codes of at most 16 bits, accumulated in int32, with the instructions chosen at run time
// from what the processor supports, whatever flags the including program was compiled with.
//
// Why the results are exact. Every instruction used is exact modulo 2^32:
// - vpmaddwd (AVX2) forms exact 32-bit products of 16-bit pairs and adds each pair modulo 2^32
//   (the one pair sum outside int32, (-32768)·(-32768)·2, wraps; it does not saturate);
// - vpdpwssd and vpdpbusd (AVX-VNNI) add exact products of signed 16-bit pairs, or of unsigned ×
//   signed 8-bit quads, to the 32-bit accumulator modulo 2^32 (these are the non-saturating forms;
//   vpmaddubsw and the "s" forms, which saturate 16- or 32-bit sums, are never used);
// - vpaddd and the portable loop (in uint32_t) add modulo 2^32.
// So each result is the exact dot product modulo 2^32, which is the exact dot product whenever it
// lies in [-2^31, 2^31). Callers use these products only where K · max|A| · max|B| < 2^31
// (integer_product_applies in eval/integer_products.hpp), which bounds every |Σ_k A·B| below 2^31.
// The 8-bit path makes A unsigned by adding 128 to each code, and subtracts 128·Σ_k B[n][k]
// from each result (modulo 2^32 again, so the same argument holds).

#include <mase/core/dispatch.hpp>
#include <mase/core/error.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MASE_INTEGER_GEMM_X86 1
#include <cpuid.h>
#include <immintrin.h>
#else
#define MASE_INTEGER_GEMM_X86 0
#endif

namespace mase::eval::integer_gemm {

using Index = std::ptrdiff_t;

// The instruction sets a product can run on, from the slowest.
enum class isa : std::uint8_t {
  portable,     // C++ loops, compiled for the including program's target
  avx2,         // vpmaddwd on 16-bit pairs, 256-bit vectors
  avx_vnni,     // vpdpbusd on 8-bit quads, vpdpwssd on 16-bit pairs, 256-bit vectors
  avx512_vnni,  // the same on 512-bit vectors
};

constexpr std::string_view to_string(isa target) noexcept {
  switch (target) {
    case isa::avx2: return "avx2";
    case isa::avx_vnni: return "avx_vnni";
    case isa::avx512_vnni: return "avx512_vnni";
    default: return "portable";
  }
}

namespace detail {

inline bool query_support(isa target) noexcept {
  if (target == isa::portable) return true;
#if MASE_INTEGER_GEMM_X86
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  const bool osxsave = (ecx & (1u << 27)) != 0, avx = (ecx & (1u << 28)) != 0;
  if (!osxsave || !avx) return false;
  unsigned xcr0_low = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  if ((xcr0_low & 0x6u) != 0x6u) return false;  // XMM and YMM state enabled
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  const bool avx2 = (ebx & (1u << 5)) != 0;
  if (target == isa::avx2) return avx2;
  if (target == isa::avx512_vnni)  // AVX512F, AVX512BW, AVX512_VNNI, and the ZMM state enabled
    return avx2 && (ebx & (1u << 16)) != 0 && (ebx & (1u << 30)) != 0 && (ecx & (1u << 11)) != 0 &&
           (xcr0_low & 0xE0u) == 0xE0u;
  if (!__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) return false;
  return avx2 && (eax & (1u << 4)) != 0;  // CPUID.(7,1):EAX[4] is AVX-VNNI
#else
  return false;
#endif
}

}  // namespace detail

// Whether this processor (and its operating system, which must save the AVX registers) runs
// `target`. Asked of the processor once: cpuid traps to the hypervisor in a virtual machine.
inline bool supports(isa target) noexcept {
  static const bool answers[4] = {true, detail::query_support(isa::avx2), detail::query_support(isa::avx_vnni),
                                  detail::query_support(isa::avx512_vnni)};
  return answers[static_cast<int>(target)];
}

// Every target this processor runs, from the slowest.
inline std::vector<isa> supported_isas() {
  std::vector<isa> all;
  for (isa target : {isa::portable, isa::avx2, isa::avx_vnni, isa::avx512_vnni})
    if (supports(target)) all.push_back(target);
  return all;
}

namespace detail {
inline std::atomic<isa>& isa_cap() noexcept {
  static std::atomic<isa> cap{isa::avx512_vnni};
  return cap;
}
}  // namespace detail

// Caps the target that products laid out from now on choose (to test or measure each target on
// one machine); returns the previous cap. Products already laid out keep theirs.
inline isa limit_isa(isa most) noexcept { return detail::isa_cap().exchange(most); }

// The fastest target this processor runs, within the cap.
inline isa best_isa() noexcept {
  const isa cap = detail::isa_cap().load();
  for (isa target : {isa::avx512_vnni, isa::avx_vnni, isa::avx2})
    if (target <= cap && supports(target)) return target;
  return isa::portable;
}

// How the codes are stored: 16-bit, in pairs along k; or, for 8-bit codes on the VNNI targets,
// bytes in quads along k (A as code + 128, B as the code).
enum class element : std::uint8_t { int16_pairs, uint8_quads };

constexpr element element_for(isa target, int a_bits, int b_bits) noexcept {
  return (target == isa::avx_vnni || target == isa::avx512_vnni) && a_bits <= 8 && b_bits <= 8 ? element::uint8_quads
                                                                                                 : element::int16_pairs;
}
constexpr Index k_group(element kind) noexcept { return kind == element::uint8_quads ? 4 : 2; }
constexpr Index round_up(Index v, Index to) noexcept { return (v + to - 1) / to * to; }

// Columns of B per panel: two 256-bit vectors of eight int32 results, or one 512-bit vector.
inline constexpr Index panel_width = 16;
// Rows of A per register block: 6 × 2 accumulators, two B vectors and one broadcast fit the 16
// vector registers of AVX2; with AVX-512, 12 accumulators of one vector each.
inline constexpr Index block_rows = 6;
inline constexpr Index block_rows_512 = 12;
inline constexpr std::uint8_t uint8_offset = 128;

// B[n][k] (n < N, k < K) arranged for one target: panels of 16 columns, in each panel the k
// groups one after another, each group holding its codes for the 16 columns ([group][column][i]).
// Columns past N are zero.
struct packed_rhs {
  isa target = isa::portable;
  element kind = element::int16_pairs;
  Index n = 0, k = 0, k_padded = 0;
  std::vector<std::int16_t> pairs;       // int16_pairs
  std::vector<std::int8_t> quads;        // uint8_quads
  std::vector<std::int32_t> correction;  // uint8_quads: 128 · Σ_k B[n][k], one per padded column

  Index panels() const noexcept { return (n + panel_width - 1) / panel_width; }
};

// Packs B for `target`; code(n, k) returns the code (it must fit `b_bits` signed bits, and 8 for
// the uint8 path: element_for decides from a_bits and b_bits). Reuses `out`'s storage.
template <class Code>
void pack_rhs(isa target, int a_bits, int b_bits, Index n, Index k, Code&& code, packed_rhs& out) {
  out.target = target;
  out.kind = element_for(target, a_bits, b_bits);
  out.n = n;
  out.k = k;
  const Index group = k_group(out.kind);
  out.k_padded = round_up(k, group);
  const Index panels = out.panels();
  const std::size_t size = static_cast<std::size_t>(panels * panel_width * out.k_padded);
  const auto fill = [&](auto& storage) {
    storage.assign(size, 0);
    for (Index p = 0; p < panels; ++p) {
      auto* panel = storage.data() + p * panel_width * out.k_padded;
      const Index columns = std::min(panel_width, n - p * panel_width);
      for (Index c = 0; c < columns; ++c)
        for (Index i = 0; i < k; ++i)
          panel[(i / group) * panel_width * group + c * group + i % group] =
              static_cast<std::decay_t<decltype(storage[0])>>(code(p * panel_width + c, i));
    }
  };
  if (out.kind == element::uint8_quads) {
    out.pairs.clear();
    fill(out.quads);
    out.correction.assign(static_cast<std::size_t>(panels * panel_width), 0);
    for (Index c = 0; c < n; ++c) {
      std::int64_t sum = 0;
      for (Index i = 0; i < k; ++i) sum += code(c, i);
      // Used modulo 2^32, like the accumulators it is subtracted from.
      out.correction[static_cast<std::size_t>(c)] =
          static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(sum * uint8_offset)));
    }
  } else {
    out.quads.clear();
    out.correction.clear();
    fill(out.pairs);
  }
}

// Rows of A for a product with a packed_rhs of kind `kind`: [m][k_padded] codes, the padding zero
// (code 0, stored as 128 in the uint8 form). Written through set() or row pointers.
struct lhs_rows {
  element kind = element::int16_pairs;
  Index m = 0, k = 0, k_padded = 0;
  std::vector<std::int16_t> pairs;
  std::vector<std::uint8_t> quads;

  // Bytes past the last row that writers may overwrite (copy_in_blocks).
  static constexpr std::size_t slack_bytes = 64;

  // Sizes the rows (keeping the storage) and fills the padding columns.
  void reshape(element new_kind, Index rows, Index columns) {
    kind = new_kind;
    m = rows;
    k = columns;
    k_padded = round_up(columns, k_group(kind));
    const std::size_t size = static_cast<std::size_t>(m * k_padded) + slack_bytes;
    if (kind == element::uint8_quads) {
      if (quads.size() < size) quads.resize(size);
    } else {
      if (pairs.size() < size) pairs.resize(size);
    }
    for (Index r = 0; r < m; ++r) clear_padding(r);
  }
  // Writes the padding columns of one row (code 0), also after a copy_in_blocks ran over them.
  void clear_padding(Index row) noexcept {
    if (kind == element::uint8_quads)
      std::fill(quads.data() + row * k_padded + k, quads.data() + (row + 1) * k_padded, uint8_offset);
    else
      std::fill(pairs.data() + row * k_padded + k, pairs.data() + (row + 1) * k_padded, 0);
  }
  // Row `row`'s codes as E: std::uint8_t for uint8_quads, std::int16_t for int16_pairs.
  template <class E>
  E* row_data(Index row) noexcept {
    if constexpr (std::is_same_v<E, std::uint8_t>) return quads.data() + row * k_padded;
    else return pairs.data() + row * k_padded;
  }
  void set(Index row, Index column, std::int32_t code) noexcept {
    if (kind == element::uint8_quads)
      quads[static_cast<std::size_t>(row * k_padded + column)] = static_cast<std::uint8_t>(code + uint8_offset);
    else
      pairs[static_cast<std::size_t>(row * k_padded + column)] = static_cast<std::int16_t>(code);
  }
};

// Copies `bytes` bytes as whole 32-byte blocks, so that a short copy is two vector moves rather
// than a call: it may read and write up to 31 bytes past the end, which the caller's buffers
// allow (and whatever it overwrites is written again afterwards).
inline void copy_in_blocks(void* to, const void* from, std::size_t bytes) noexcept {
  auto* t = static_cast<unsigned char*>(to);
  const auto* f = static_cast<const unsigned char*>(from);
  for (std::size_t i = 0; i < bytes; i += 32) std::memcpy(t + i, f + i, 32);
}

namespace detail {
// set_row_from_values' loops, for the dispatcher: codes = value · scale (+ offset), exact.
inline void quads_from_values(const float* values, std::uint8_t* to, Index count, float scale) noexcept {
  for (Index i = 0; i < count; ++i)
    to[i] = static_cast<std::uint8_t>(static_cast<std::int32_t>(values[i] * scale) + uint8_offset);
}
inline void pairs_from_values(const float* values, std::int16_t* to, Index count, float scale) noexcept {
  for (Index i = 0; i < count; ++i) to[i] = static_cast<std::int16_t>(static_cast<std::int32_t>(values[i] * scale));
}
}  // namespace detail

// Row r of A from `count` exact values with `frac` fraction bits (code = value · 2^frac, an
// integer): what a layer's float input holds.
inline void set_row_from_values(lhs_rows& a, Index row, const float* values, Index count, int frac) noexcept {
  const float scale = std::ldexp(1.0f, frac);  // exact; frac may be negative (codes of a coarser step)
  if (a.kind == element::uint8_quads)
    dispatch::run<&detail::quads_from_values>(values, a.quads.data() + row * a.k_padded, count, scale);
  else
    dispatch::run<&detail::pairs_from_values>(values, a.pairs.data() + row * a.k_padded, count, scale);
}

namespace detail {

// One register block: rows × 16 results, C[r][j] for j < columns (fewer in the last panel).
// The portable form, in uint32 so that the wrap-around is defined. Not inlined: inside the
// driver's lambda GCC 12 at -O2 compiled it 2.4 times slower (measured), and one call per block
// costs nothing next to its K steps.
template <int rows>
[[gnu::noinline]] inline void block_portable(const std::int16_t* a, Index lda, const std::int16_t* panel, Index groups, std::int32_t* c,
                           Index ldc, Index columns) {
  std::uint32_t acc[rows][panel_width] = {};
  for (Index g = 0; g < groups; ++g) {
    const std::int16_t* b = panel + g * panel_width * 2;
    for (int r = 0; r < rows; ++r) {
      const std::int32_t a0 = a[r * lda + 2 * g], a1 = a[r * lda + 2 * g + 1];
      for (Index j = 0; j < panel_width; ++j)
        acc[r][j] += static_cast<std::uint32_t>(a0 * b[2 * j]) + static_cast<std::uint32_t>(a1 * b[2 * j + 1]);
    }
  }
  for (int r = 0; r < rows; ++r)
    for (Index j = 0; j < columns; ++j) c[r * ldc + j] = static_cast<std::int32_t>(acc[r][j]);
}

#if MASE_INTEGER_GEMM_X86

inline std::int32_t load_group(const void* from) noexcept {
  std::int32_t v;
  std::memcpy(&v, from, sizeof v);
  return v;
}

// Stores a rows × 16 block of accumulators, less `correction` per column (uint8 path), keeping
// `columns` of them. The loop is unrolled so that every acc[r] is indexed by a constant: otherwise
// GCC 12 keeps the accumulator array in memory through the whole K loop (measured 1.7 times slower).
#define MASE_STORE_BLOCK(acc, rows, c, ldc, columns, correction)                                         \
  do {                                                                                                    \
    alignas(32) std::int32_t tile[rows][panel_width];                                                     \
    _Pragma("GCC unroll 12") for (int r = 0; r < (rows); ++r) {                                           \
      __m256i lo = acc[r][0], hi = acc[r][1];                                                             \
      if ((correction) != nullptr) {                                                                      \
        lo = _mm256_sub_epi32(lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(correction)));     \
        hi = _mm256_sub_epi32(hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>((correction) + 8))); \
      }                                                                                                   \
      if ((columns) == panel_width) {                                                                     \
        _mm256_storeu_si256(reinterpret_cast<__m256i*>((c) + r * (ldc)), lo);                             \
        _mm256_storeu_si256(reinterpret_cast<__m256i*>((c) + r * (ldc) + 8), hi);                         \
      } else {                                                                                            \
        _mm256_store_si256(reinterpret_cast<__m256i*>(tile[r]), lo);                                      \
        _mm256_store_si256(reinterpret_cast<__m256i*>(tile[r] + 8), hi);                                  \
        std::memcpy((c) + r * (ldc), tile[r], static_cast<std::size_t>(columns) * sizeof(std::int32_t));  \
      }                                                                                                   \
    }                                                                                                     \
  } while (false)

// AVX2: vpmaddwd multiplies a broadcast pair of A by 16 pairs of B; vpaddd accumulates.
template <int rows>
__attribute__((target("avx2"))) inline void block_avx2(const std::int16_t* a, Index lda, const std::int16_t* panel,
                                                       Index groups, std::int32_t* c, Index ldc, Index columns) {
  __m256i acc[rows][2];
#pragma GCC unroll 6
  for (int r = 0; r < rows; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  for (Index g = 0; g < groups; ++g) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + g * 32));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + g * 32 + 16));
#pragma GCC unroll 6
    for (int r = 0; r < rows; ++r) {
      const __m256i pair = _mm256_set1_epi32(load_group(a + r * lda + 2 * g));
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(pair, b0));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(pair, b1));
    }
  }
  const std::int32_t* no_correction = nullptr;
  MASE_STORE_BLOCK(acc, rows, c, ldc, columns, no_correction);
}

// AVX-VNNI on 16-bit pairs: vpdpwssd fuses the multiply and the accumulation.
template <int rows>
__attribute__((target("avx2,avxvnni"))) inline void block_vnni_pairs(const std::int16_t* a, Index lda,
                                                                     const std::int16_t* panel, Index groups,
                                                                     std::int32_t* c, Index ldc, Index columns) {
  __m256i acc[rows][2];
#pragma GCC unroll 6
  for (int r = 0; r < rows; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  for (Index g = 0; g < groups; ++g) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + g * 32));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + g * 32 + 16));
#pragma GCC unroll 6
    for (int r = 0; r < rows; ++r) {
      const __m256i pair = _mm256_set1_epi32(load_group(a + r * lda + 2 * g));
      acc[r][0] = _mm256_dpwssd_avx_epi32(acc[r][0], pair, b0);
      acc[r][1] = _mm256_dpwssd_avx_epi32(acc[r][1], pair, b1);
    }
  }
  const std::int32_t* no_correction = nullptr;
  MASE_STORE_BLOCK(acc, rows, c, ldc, columns, no_correction);
}

// AVX-VNNI on 8-bit quads: vpdpbusd multiplies a broadcast quad of A (unsigned, code + 128) by 16
// quads of B (signed) and accumulates; the offset's contribution is subtracted at the end.
template <int rows>
__attribute__((target("avx2,avxvnni"))) inline void block_vnni_quads(const std::uint8_t* a, Index lda,
                                                                     const std::int8_t* panel, Index groups,
                                                                     std::int32_t* c, Index ldc, Index columns,
                                                                     const std::int32_t* correction) {
  __m256i acc[rows][2];
#pragma GCC unroll 6
  for (int r = 0; r < rows; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  for (Index g = 0; g < groups; ++g) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + g * 64));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(panel + g * 64 + 32));
#pragma GCC unroll 6
    for (int r = 0; r < rows; ++r) {
      const __m256i quad = _mm256_set1_epi32(load_group(a + r * lda + 4 * g));
      acc[r][0] = _mm256_dpbusd_avx_epi32(acc[r][0], quad, b0);
      acc[r][1] = _mm256_dpbusd_avx_epi32(acc[r][1], quad, b1);
    }
  }
  MASE_STORE_BLOCK(acc, rows, c, ldc, columns, correction);
}

#undef MASE_STORE_BLOCK

// AVX-512 VNNI: one 512-bit accumulator holds a row's 16 results; the panel layout is the same
// (a group of 16 columns is 64 bytes), so each step loads one vector of B. At -O2 whatever the
// build's level: at -O3 GCC 12 copies every accumulator to another register and back in each
// step. (optimize is GCC's attribute; clang has none and warns.)
#if defined(__clang__)
#define MASE_GEMM_AT_O2
#else
#define MASE_GEMM_AT_O2 , optimize("O2")
#endif
template <int rows, bool quads>
__attribute__((target("avx512f,avx512bw,avx512vnni") MASE_GEMM_AT_O2)) inline void block_512(const void* a, Index lda_bytes,
                                                                            const void* panel, Index groups,
                                                                            std::int32_t* c, Index ldc, Index columns,
                                                                            const std::int32_t* correction) {
  const auto* a_bytes = static_cast<const unsigned char*>(a);
  const auto* b_bytes = static_cast<const unsigned char*>(panel);
  constexpr Index group_bytes = 4;  // a quad of bytes or a pair of 16-bit codes per 32-bit lane
  __m512i acc[rows];
#pragma GCC unroll 12
  for (int r = 0; r < rows; ++r) acc[r] = _mm512_setzero_si512();
  for (Index g = 0; g < groups; ++g) {
    const __m512i b = _mm512_loadu_si512(b_bytes + g * 64);
#pragma GCC unroll 12
    for (int r = 0; r < rows; ++r) {
      const __m512i group = _mm512_set1_epi32(load_group(a_bytes + r * lda_bytes + g * group_bytes));
      if constexpr (quads) acc[r] = _mm512_dpbusd_epi32(acc[r], group, b);
      else acc[r] = _mm512_dpwssd_epi32(acc[r], group, b);
    }
  }
  const __mmask16 keep = static_cast<__mmask16>((1u << columns) - 1u);
#pragma GCC unroll 12
  for (int r = 0; r < rows; ++r) {
    __m512i v = acc[r];
    if (correction != nullptr) v = _mm512_sub_epi32(v, _mm512_loadu_si512(correction));
    _mm512_mask_storeu_epi32(c + r * ldc, keep, v);
  }
}

#undef MASE_GEMM_AT_O2

#endif  // MASE_INTEGER_GEMM_X86

// Calls block(rows, row, panel) over the register blocks of rows [first, last) against every
// panel of b: panels outermost, so that a panel of B stays in L1 while the rows of A stream past
// it; whole blocks of Rows rows, then one of the rest. `rows` is a std::integral_constant.
template <int Rows, class Block>
void for_each_register_block(const packed_rhs& b, Index first, Index last, Block&& block) {
  for (Index p = 0; p < b.panels(); ++p) {
    Index row = first;
    for (; row + Rows <= last; row += Rows) block(std::integral_constant<int, Rows>{}, row, p);
    const Index rest = last - row;
    [&]<int... R>(std::integer_sequence<int, R...>) {
      ((rest == R + 1 ? block(std::integral_constant<int, R + 1>{}, row, p) : void()), ...);
    }(std::make_integer_sequence<int, Rows - 1>{});
  }
}

// What one block reads and writes: A's rows from `row`, panel p of B, and C's part of both.
template <class A, class B>
struct block_operands {
  const A* rows;
  const B* panel;
  std::int32_t* c;
  Index columns;  // fewer than panel_width in the last panel
};
template <class A, class B>
block_operands<A, B> operands_of(const std::vector<A>& a_codes, const lhs_rows& a, const std::vector<B>& b_codes,
                                 const packed_rhs& b, std::int32_t* c, Index ldc, Index row, Index p) noexcept {
  return {a_codes.data() + row * a.k_padded, b_codes.data() + p * panel_width * b.k_padded,
          c + row * ldc + p * panel_width, std::min(panel_width, b.n - p * panel_width)};
}

// The block functions carry their targets; the drivers below only choose the block, so they need none.
inline void multiply_portable(const lhs_rows& a, const packed_rhs& b, std::int32_t* c, Index ldc, Index first,
                              Index last) {
  for_each_register_block<block_rows>(b, first, last, [&](auto rows, Index row, Index p) {
    const auto o = operands_of(a.pairs, a, b.pairs, b, c, ldc, row, p);
    block_portable<decltype(rows)::value>(o.rows, a.k_padded, o.panel, b.k_padded / 2, o.c, ldc, o.columns);
  });
}

#if MASE_INTEGER_GEMM_X86

inline void multiply_avx2(const lhs_rows& a, const packed_rhs& b, std::int32_t* c, Index ldc, Index first, Index last) {
  for_each_register_block<block_rows>(b, first, last, [&](auto rows, Index row, Index p) {
    const auto o = operands_of(a.pairs, a, b.pairs, b, c, ldc, row, p);
    block_avx2<decltype(rows)::value>(o.rows, a.k_padded, o.panel, b.k_padded / 2, o.c, ldc, o.columns);
  });
}

inline void multiply_avx_vnni(const lhs_rows& a, const packed_rhs& b, std::int32_t* c, Index ldc, Index first,
                              Index last) {
  for_each_register_block<block_rows>(b, first, last, [&](auto rows, Index row, Index p) {
    constexpr int R = decltype(rows)::value;
    if (b.kind == element::uint8_quads) {
      const auto o = operands_of(a.quads, a, b.quads, b, c, ldc, row, p);
      block_vnni_quads<R>(o.rows, a.k_padded, o.panel, b.k_padded / 4, o.c, ldc, o.columns,
                          b.correction.data() + p * panel_width);
    } else {
      const auto o = operands_of(a.pairs, a, b.pairs, b, c, ldc, row, p);
      block_vnni_pairs<R>(o.rows, a.k_padded, o.panel, b.k_padded / 2, o.c, ldc, o.columns);
    }
  });
}

inline void multiply_avx512_vnni(const lhs_rows& a, const packed_rhs& b, std::int32_t* c, Index ldc, Index first,
                                 Index last) {
  for_each_register_block<block_rows_512>(b, first, last, [&](auto rows, Index row, Index p) {
    constexpr int R = decltype(rows)::value;
    if (b.kind == element::uint8_quads) {
      const auto o = operands_of(a.quads, a, b.quads, b, c, ldc, row, p);
      block_512<R, true>(o.rows, a.k_padded, o.panel, b.k_padded / 4, o.c, ldc, o.columns,
                         b.correction.data() + p * panel_width);
    } else {
      const auto o = operands_of(a.pairs, a, b.pairs, b, c, ldc, row, p);
      block_512<R, false>(o.rows, a.k_padded * 2, o.panel, b.k_padded / 2, o.c, ldc, o.columns, nullptr);
    }
  });
}

#endif  // MASE_INTEGER_GEMM_X86

}  // namespace detail

// C[m][n] = Σ_k A[m][k] · B[n][k] for rows m in [first, last) of A and n < b.n, C's rows `ldc`
// apart (row m at c + m·ldc); exact when every result lies in int32 (see the top of this file).
// A and B must have been laid out for the same target and element kind, and b.target must be
// supported here. Disjoint row ranges may run on different threads.
inline void multiply(const lhs_rows& a, const packed_rhs& b, std::int32_t* c, Index ldc, Index first, Index last) {
  if (a.kind != b.kind || a.k_padded != b.k_padded || !supports(b.target) || first < 0 || last > a.m)
    throw error("integer_gemm::multiply: the operands were laid out for different products or for a target this "
                "processor lacks; lay both out with the same target and widths");
#if MASE_INTEGER_GEMM_X86
  if (b.target == isa::avx512_vnni) return detail::multiply_avx512_vnni(a, b, c, ldc, first, last);
  if (b.target == isa::avx_vnni) return detail::multiply_avx_vnni(a, b, c, ldc, first, last);
  if (b.target == isa::avx2) return detail::multiply_avx2(a, b, c, ldc, first, last);
#endif
  detail::multiply_portable(a, b, c, ldc, first, last);
}

// Every row of A.
inline void multiply(const lhs_rows& a, const packed_rhs& b, std::int32_t* c, Index ldc) {
  multiply(a, b, c, ldc, 0, a.m);
}

}  // namespace mase::eval::integer_gemm
