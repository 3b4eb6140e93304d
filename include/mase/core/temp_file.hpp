#pragma once
// Writing files so that an interrupted or failed write never leaves a damaged file behind:
// the content goes to a temporary file in the target's folder (so the rename stays on one file
// system and is atomic), which is renamed into place only once it is complete.
//
// The temporary file is created with open(O_CREAT | O_EXCL, 0666), as a plain open would create
// the target, so the kernel applies the process's umask: the file that is renamed into place has
// mode 0666 & ~umask (0644 under umask 022), not mkstemp's 0600. Reading the umask instead would
// need umask(2)'s swap, which is process-wide and races with other threads. O_EXCL keeps
// mkstemp's guarantee that the name is ours alone (it fails on any existing entry, links
// included), and a clash only makes the next name be tried.

#include <mase/core/error.hpp>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>

#include <fcntl.h>   // open
#include <unistd.h>  // close, fsync, getpid, write

#include <fmt/core.h>

namespace mase {

// A temporary file next to `target`, removed on destruction unless renamed into place.
class temp_file {
public:
  temp_file(const std::filesystem::path& target, std::string_view suffix) {
    const std::filesystem::path folder = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
    // Unique within this process (the counter) and unlikely to be taken by another (its pid and a
    // random part); O_EXCL settles any clash that is left.
    static std::atomic<std::uint64_t> counter{0};
    constexpr int attempts = 100;
    constexpr std::size_t name_kept = 200;  // of the target's name: the temporary one stays within NAME_MAX
    int error_number = EEXIST;
    for (int attempt = 0; attempt < attempts && error_number == EEXIST; ++attempt) {
      const std::filesystem::path candidate =
          folder / fmt::format(".{}.{}.{}-{}-{:08x}", target.filename().string().substr(0, name_kept), suffix,
                               ::getpid(), counter.fetch_add(1, std::memory_order_relaxed), random_word());
      const int fd = ::open(candidate.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);
      if (fd >= 0) {
        ::close(fd);
        path_ = candidate;
        return;
      }
      error_number = errno;
    }
    throw error(fmt::format("cannot write {}: creating a temporary file in {} failed: {}", target.string(),
                            folder.string(), std::system_category().message(error_number)));
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
  static std::uint32_t random_word() {
    thread_local std::minstd_rand generator{seed()};
    return static_cast<std::uint32_t>(generator());
  }
  static std::uint32_t seed() {
    try {
      return std::random_device{}();
    } catch (...) {  // no entropy source: the pid and counter still keep names apart
      return static_cast<std::uint32_t>(::getpid());
    }
  }

  std::filesystem::path path_;
};

// Writes `text` to `target` atomically: readers see the old file or the complete new one.
inline void write_file_atomically(const std::filesystem::path& target, std::string_view text) {
  temp_file out(target, "tmp");
  out.write(text, target);
  out.rename_to(target);
}

}  // namespace mase
