#pragma once
// mase is header-only by default. A project may instead take the code that walks the whole
// vocabulary (the evaluator and every kernel, the built-in ops built by name, the checkpoint
// codec) compiled once, from the mase::compiled library: linking that CMake target defines
// MASE_SEPARATE_COMPILATION, and the headers then declare those instantiations extern instead of
// compiling them in every translation unit (docs/architecture.md, "What including mase costs").
// The library's own units (src/*.cpp) see the same declarations; each follows one with its
// explicit instantiation definition, as the language allows.
#if defined(MASE_SEPARATE_COMPILATION)
#define MASE_EXTERN_INSTANTIATIONS 1
#else
#define MASE_EXTERN_INSTANTIATIONS 0
#endif
