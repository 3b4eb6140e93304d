// mase onnx-test: ONNX backend-test conformance (model.onnx + test_data_set_*/ folders), one
// line per test and a summary.
#include "cli.hpp"

#include <mase/core/error.hpp>
#include <mase/io/onnx_backend_test.hpp>

#include <algorithm>
#include <cstdio>
#include <system_error>
#include <vector>

#include <fmt/format.h>

namespace mase_cli {

namespace {

bool is_test_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "model.onnx", ec);
}

// A test folder itself, or a folder of test folders (sorted by name).
std::vector<fs::path> expand(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw mase::error(fmt::format("onnx-test: {} is not a folder; give a backend-test folder (holding model.onnx) or "
                                  "a folder of them",
                                  dir.string()));
  if (is_test_dir(dir)) return {dir};
  std::vector<fs::path> tests;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec))
    if (entry.is_directory() && is_test_dir(entry.path())) tests.push_back(entry.path());
  if (ec) throw mase::error(fmt::format("onnx-test: cannot list {}: {}", dir.string(), ec.message()));
  if (tests.empty())
    throw mase::error(fmt::format("onnx-test: {} holds no model.onnx, and no folder in it does", dir.string()));
  std::sort(tests.begin(), tests.end());
  return tests;
}

}  // namespace

int run_onnx_test(const onnx_test_options& o) {
  std::vector<fs::path> tests;
  for (const fs::path& dir : o.dirs) {
    std::vector<fs::path> found = expand(dir);
    tests.insert(tests.end(), found.begin(), found.end());
  }
  const mase::onnx::backend_test_options options{.rtol = o.rtol, .atol = o.atol,
                                                 .transform = o.raise ? &raise_in_place : nullptr};

  std::size_t passed = 0, failed = 0, skipped = 0;
  progress_bar bar("onnx-test", tests.size() > 1 ? tests.size() : 0);
  // The tests run on --jobs threads; their lines come out in the tests' order.
  mase::onnx::run_backend_tests(tests, options, o.jobs, [&](std::size_t i, const mase::onnx::backend_test_result& r) {
    bar.clear();
    switch (r.status) {
      case mase::onnx::test_status::passed:
        ++passed;
        if (!o.quiet) fmt::print("PASS {}\n", r.name);
        break;
      case mase::onnx::test_status::failed:
        ++failed;
        fmt::print("FAIL {}: {}\n", r.name, r.detail);
        break;
      case mase::onnx::test_status::skipped:
        ++skipped;
        if (!o.quiet) fmt::print("SKIP {}: {}\n", r.name, r.detail);
        break;
    }
    std::fflush(stdout);
    bar.update(i + 1);
  });
  bar.clear();
  fmt::print("{} passed, {} failed, {} skipped\n", passed, failed, skipped);
  return failed > 0 || (o.require_all && skipped > 0) ? 1 : 0;
}

}  // namespace mase_cli
