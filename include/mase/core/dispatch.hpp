#pragma once
// Run-time dispatch of hot loops, for a header-only library compiled with its users' flags.
//
// The element-wise quantizers' loops are written so that the compiler vectorises them, but
// CMake's default build (-O2 for the x86-64 baseline) gets none of that from GCC 12: its -O2 cost
// model vectorises no loop of unknown length, and without SSE4.1 every rounding is a library
// call. So with GCC on x86-64 each kernel passed to dispatch::run is compiled a second time, for
// x86-64-v3 (AVX2, FMA, SSE4.1, BMI2) with -O3's vectoriser and everything it calls inlined,
// and a call on a processor that runs x86-64-v3 takes that copy. Both copies compile the same
// function, so they compute the same rule in the same order; tests/quant/test_dispatch.cpp
// checks them against each other bit for bit. -DMASE_NO_DISPATCH turns the second copy off;
// other compilers build one copy.
//
// The block formats dispatch their runs of consecutive full blocks (quant/block.hpp's
// block_runs: one format's choice and quantization of a batch of blocks, small enough to
// flatten); tiles and partial blocks stay at the baseline.

#include <atomic>
#include <cstdint>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(MASE_NO_DISPATCH)
#define MASE_DISPATCH 1
// The second copy: x86-64-v3, -O3's vectoriser, everything the kernel calls inlined. Without
// trapping math, which no kernel observes (none reads the floating-point exception flags): with
// it GCC 12 vectorises no std::floor of doubles.
#define MASE_X86_64_V3_COPY __attribute__((target("arch=x86-64-v3"), optimize("O3", "no-trapping-math"), flatten))
// A third copy for the kernels that 64-bit integer arithmetic or long loops make worth one (run_widest):
// AVX-512 multiplies, shifts and compares 64-bit lanes in one instruction each.
#define MASE_X86_64_V4_COPY __attribute__((target("arch=x86-64-v4"), optimize("O3", "no-trapping-math"), flatten))
#else
#define MASE_DISPATCH 0
#define MASE_X86_64_V3_COPY
#define MASE_X86_64_V4_COPY
#endif

namespace mase::dispatch {

// The targets of dispatched code, from the baseline up. dispatch::run has a copy for x86-64-v3;
// x86-64-v4 (AVX-512) is taken by kernels written for it with intrinsics (the float
// convolution's register block).
enum class target : std::uint8_t { baseline, x86_64_v3, x86_64_v4 };

// Whether this build has code for the target and this processor (and its operating system, which
// must save the vector registers: libgcc's check includes that) runs it.
inline bool supports(target t) noexcept {
  if (t == target::baseline) return true;
#if MASE_DISPATCH
  static const bool runs_v3 = __builtin_cpu_supports("x86-64-v3");
  static const bool runs_v4 = __builtin_cpu_supports("x86-64-v4");
  return t == target::x86_64_v3 ? runs_v3 : runs_v4;
#else
  return false;
#endif
}

namespace detail {
inline std::atomic<target>& cap() noexcept {
  static std::atomic<target> most{target::x86_64_v4};
  return most;
}
}  // namespace detail

// Caps the copy that dispatched functions take from now on (to test or measure each copy on one
// machine); returns the previous cap.
inline target limit(target most) noexcept { return detail::cap().exchange(most); }

// The best target this processor runs, within the cap.
inline target chosen() noexcept {
  const target cap = detail::cap().load(std::memory_order_relaxed);
  for (target t : {target::x86_64_v4, target::x86_64_v3})
    if (t <= cap && supports(t)) return t;
  return target::baseline;
}

// The second copy of Kernel: Kernel and everything it calls inlined into one function compiled for
// x86-64-v3 (flatten), so keep Kernel to the loops themselves.
template <auto Kernel, class... Args>
MASE_X86_64_V3_COPY void run_x86_64_v3(Args... args) {
  Kernel(args...);
}

template <auto Kernel, class... Args>
MASE_X86_64_V4_COPY void run_x86_64_v4(Args... args) {
  Kernel(args...);
}

// Calls Kernel(args...) in the best copy chosen() allows.
template <auto Kernel, class... Args>
inline void run(Args... args) {
  if (chosen() >= target::x86_64_v3) return run_x86_64_v3<Kernel>(args...);
  Kernel(args...);
}

// run, with a third copy for x86-64-v4 (AVX-512), for kernels on 64-bit integers and for long
// element-wise loops of many operations (the float sums' cast of the bit-exact products).
template <auto Kernel, class... Args>
inline void run_widest(Args... args) {
  if (chosen() >= target::x86_64_v4) return run_x86_64_v4<Kernel>(args...);
  run<Kernel>(args...);
}

}  // namespace mase::dispatch

