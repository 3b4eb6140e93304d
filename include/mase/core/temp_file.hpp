#pragma once
// Writing files so that an interrupted or failed write never leaves a damaged file behind:
// the content goes to a temporary file in the target's folder (so the rename stays on one file
// system and is atomic), which is renamed into place only once it is complete.

#include <mase/core/error.hpp>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>

#include <fcntl.h>   // open
#include <stdlib.h>  // mkstemp
#include <unistd.h>  // close, fsync, write

#include <fmt/core.h>

namespace mase {

// A temporary file next to `target`, removed on destruction unless renamed into place.
class temp_file {
public:
  temp_file(const std::filesystem::path& target, std::string_view suffix) {
    const std::filesystem::path folder = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
    std::string pattern = (folder / fmt::format(".{}.{}.XXXXXX", target.filename().string(), suffix)).string();
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0)
      throw error(fmt::format("cannot write {}: creating a temporary file in {} failed: {}", target.string(),
                              folder.string(), std::system_category().message(errno)));
    ::close(fd);
    path_ = pattern;
  }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  ~temp_file() {
    if (!path_.empty()) {
      std::error_code ignored;
      std::filesystem::remove(path_, ignored);
    }
  }

  const std::filesystem::path& path() const noexcept { return path_; }

  // Replaces the temporary file's content and syncs it to disk (so that the rename that follows
  // never publishes a file whose data is not yet written); `target` names the file in errors.
  void write(std::string_view text, const std::filesystem::path& target) const {
    int error_number = 0;  // the first failure's errno
    const auto check = [&](bool ok) {
      if (!ok && error_number == 0) error_number = errno != 0 ? errno : EIO;
      return ok;
    };
    const int fd = ::open(path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (check(fd >= 0)) {
      for (std::size_t done = 0; done < text.size();) {
        const ::ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (!check(n > 0)) break;
        done += static_cast<std::size_t>(n);
      }
      if (error_number == 0) check(::fsync(fd) == 0);
      check(::close(fd) == 0);
    }
    if (error_number != 0)
      throw error(fmt::format("cannot write {}: writing {} failed: {}", target.string(), path_.string(),
                              std::system_category().message(error_number)));
  }

  std::string read() const {
    std::ifstream file(path_, std::ios::binary);
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
  }

  // Moves the file to `target`; it is no longer removed.
  void rename_to(const std::filesystem::path& target) {
    std::error_code ec;
    std::filesystem::rename(path_, target, ec);
    if (ec)
      throw error(fmt::format("cannot write {}: renaming {} into place failed: {}", target.string(), path_.string(),
                              ec.message()));
    path_.clear();
  }

private:
  std::filesystem::path path_;
};

// Writes `text` to `target` atomically: readers see the old file or the complete new one.
inline void write_file_atomically(const std::filesystem::path& target, std::string_view text) {
  temp_file out(target, "tmp");
  out.write(text, target);
  out.rename_to(target);
}

}  // namespace mase
