#pragma once
// Runs a fuzz target's entry over corpus files (files, or directories read recursively), so that
// each corpus is a regression test with any compiler and under the sanitizers. The replay program
// (tests/fuzz/CMakeLists.txt) holds every target: `fuzz_replay <target> <corpus>…`.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

namespace mase_fuzz {

using fuzz_entry = int (*)(const std::uint8_t* data, std::size_t size);

// Feeds every file under `paths` to `entry`; prints and returns how many inputs ran.
inline std::size_t replay(fuzz_entry entry, int count, char** paths) {
  std::size_t inputs = 0;
  auto run = [&](const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    entry(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    ++inputs;
  };
  for (int i = 0; i < count; ++i) {
    const std::filesystem::path path(paths[i]);
    if (std::filesystem::is_directory(path)) {
      for (const auto& file : std::filesystem::recursive_directory_iterator(path))
        if (file.is_regular_file()) run(file.path());
    } else {
      run(path);
    }
  }
  std::printf("replayed %zu inputs\n", inputs);
  return inputs;
}

}  // namespace mase_fuzz
