#pragma once
// Two modes, one set of headers. By default (CMake's mase::mase) the code that walks the whole
// vocabulary (the evaluator and every kernel, the quantizer over every runtime format, the passes'
// bodies, the Verilog emitter and cost model, the built-in ops built by name, the checkpoint
// codec) comes compiled once, in mase's static library: linking it defines
// MASE_SEPARATE_COMPILATION, and the headers then declare those functions and instantiations
// instead of compiling them in every translation unit. mase::header_only leaves the macro
// undefined and compiles everything inline in the including unit (docs/architecture.md, "What
// including mase costs").
//
// Two forms. A template's instantiation is declared `extern template` when
// MASE_EXTERN_INSTANTIATIONS is 1. A non-template function is declared MASE_COMPILED_INLINE in
// its header, and defined, MASE_COMPILED_INLINE again, in a *_definitions.hpp header that the
// header includes only in the header-only mode (there the macro is `inline`); in the compiled
// mode the macro is empty and exactly one of the library's units (src/*.cpp) includes it, having
// defined MASE_DEFINE_COMPILED; any other unit that includes it there stops with an #error.
#if defined(MASE_SEPARATE_COMPILATION)
#define MASE_EXTERN_INSTANTIATIONS 1
#define MASE_COMPILED_INLINE
#else
#define MASE_EXTERN_INSTANTIATIONS 0
#define MASE_COMPILED_INLINE inline
#endif
