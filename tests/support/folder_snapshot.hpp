#pragma once
// Helpers for the tests that check mase leaves a user's files alone: a fresh scratch folder,
// whole-file reads and writes, and a snapshot of a folder (every entry with its bytes) to
// compare before and after.

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace mase_test {

// MASE_TEST_OUTPUT_DIR/<area>/<name>, emptied.
inline std::filesystem::path fresh_folder(const std::string& area, const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(MASE_TEST_OUTPUT_DIR) / area / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline void write_file(const std::filesystem::path& file, const std::string& text) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << text;
}

inline std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every entry under `dir` by relative path: a file's bytes, "-> target" for a link, "" for a
// folder (whose name ends in '/').
inline std::map<std::string, std::string> snapshot(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> entries;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = fs::relative(it->path(), dir).generic_string();
    if (it->is_symlink()) entries[name] = "-> " + fs::read_symlink(it->path()).string();
    else if (it->is_directory()) entries[name + "/"] = "";
    else entries[name] = read_file(it->path());
  }
  return entries;
}

}  // namespace mase_test
