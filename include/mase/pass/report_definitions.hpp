#pragma once
// Delivering a report (pass/report.hpp declares it): inline in the header-only mode, compiled
// once in mase::mase (src/passes.cpp) otherwise.

#include <mase/core/temp_file.hpp>
#include <mase/pass/report.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/pass/report.hpp> instead"
#endif

#include <iostream>
#include <string>
#include <utility>

namespace mase::detail {

MASE_COMPILED_INLINE report_text report_destination::deliver(std::string text) const {
  if (!file.empty()) write_file_atomically(file, text);
  else (stream != nullptr ? *stream : std::cout) << text << std::flush;
  return {std::move(text)};
}

}  // namespace mase::detail
