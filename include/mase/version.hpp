#pragma once
// The library's version: one definition, used by the CLI's --version and by the markers mase
// writes into the folders it owns (core/project_folder.hpp). CMakeLists.txt's project() states
// the same number, and a test checks that the two agree.

#include <string_view>

namespace mase {

inline constexpr std::string_view version = "0.1.0";

}  // namespace mase
