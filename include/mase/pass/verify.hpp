#pragma once
// verify: checks that a graph is well formed (MASE's verify_*_metadata passes, with the useful
// invariants of §2.1 and none of their stale keys). It collects every problem and throws one
// mase::error listing them, so a broken checkpoint or transform is reported in full.

#include <mase/core/compiled.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/pipeline.hpp>

#include <cstddef>

namespace mase {

struct verify_info {
  std::size_t nodes = 0;
  std::size_t edges = 0;
  std::size_t tensor_entries = 0;  // metadata tensor entries checked
  friend bool operator==(const verify_info&, const verify_info&) = default;
};

struct verify_pass {
  using needs = facts<>;
  using provides = facts<>;

  verify_info run(const graph& g) const;
};

inline constexpr verify_pass verify{};

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/pass/verify_definitions.hpp>
#endif
