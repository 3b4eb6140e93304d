#pragma once
// Where the hardware tests emit their projects: in the build tree (two builds' test runs never
// share a project), else the temporary folder.
#include <filesystem>
#include <string>

namespace mase_test_verilog {

inline std::filesystem::path project_dir(const std::string& name) {
#ifdef MASE_TEST_OUTPUT_DIR
  return std::filesystem::path(MASE_TEST_OUTPUT_DIR) / "verilog" / name;
#else
  return std::filesystem::temp_directory_path() / ("mase_test_verilog_" + name);
#endif
}

}  // namespace mase_test_verilog
