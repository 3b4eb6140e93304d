#pragma once
// Running another program (yosys, Verilator, Icarus Verilog, Graphviz's dot, the place-and-route
// tools) so that it ends with the program that started it.
//
// Each child runs in a process group of its own. While any child runs, SIGINT, SIGTERM and SIGHUP
// sent to this process are passed on to every child's group before they take their usual effect
// (ending the process), so `kill -TERM` of a mase program, or Ctrl-C in its terminal, never leaves
// a tool running and writing into a project. The handlers are installed only over the default
// disposition: a program that handles these signals itself keeps its own handlers (and its own
// duty to end the children). A process killed with SIGKILL cannot pass anything on.

#include <mase/core/error.hpp>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <fcntl.h>     // O_RDONLY, O_WRONLY
#include <signal.h>    // sigaction, pthread_sigmask
#include <spawn.h>     // posix_spawn
#include <sys/wait.h>  // waitpid
#include <unistd.h>    // STDIN_FILENO

#include <fmt/core.h>

extern char** environ;

namespace mase {

// Where a child's standard streams go; an empty path leaves the stream as this process has it.
struct child_streams {
  std::filesystem::path input{};   // opened for reading
  std::filesystem::path output{};  // truncated
  std::filesystem::path errors{};  // truncated
};

namespace child_detail {

// The running children's process groups (0: a free slot); read by the signal handler, so only
// lock-free atomics.
inline constexpr std::size_t max_children = 128;
inline std::array<std::atomic<pid_t>, max_children> groups{};
inline constexpr std::array<int, 3> passed_signals{SIGINT, SIGTERM, SIGHUP};

inline void pass_on(int sig) {
  for (std::atomic<pid_t>& g : groups)
    if (const pid_t pgid = g.load(std::memory_order_relaxed); pgid > 0) ::kill(-pgid, sig);
  // Then the signal's usual effect: it is blocked until this handler returns, then delivered.
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// Checked before every child (not once): a program may reset a disposition to the default later.
// Two threads installing at once install the same handler.
inline void install_handlers() {
  for (int sig : passed_signals) {
    struct sigaction current {};
    if (::sigaction(sig, nullptr, &current) != 0 || (current.sa_flags & SA_SIGINFO) != 0 ||
        current.sa_handler != SIG_DFL)
      continue;  // ours already, the program's own handler, or an ignored signal: it stays
    struct sigaction handler {};
    handler.sa_handler = pass_on;
    ::sigemptyset(&handler.sa_mask);
    handler.sa_flags = SA_RESTART;
    ::sigaction(sig, &handler, nullptr);
  }
}

inline std::size_t claim_slot(pid_t pgid) {
  for (std::size_t i = 0; i < max_children; ++i) {
    pid_t free = 0;
    if (groups[i].compare_exchange_strong(free, pgid)) return i;
  }
  return max_children;
}

inline std::string spawn_message(int code) { return std::system_category().message(code); }

}  // namespace child_detail

// Runs argv[0] (a path, or a name looked up on PATH) with the arguments argv[1…] in a process
// group of its own, waits for it, and returns its wait status (as waitpid gives it). `who` names
// the caller in errors.
inline int run_child(const std::vector<std::string>& argv, const child_streams& streams, std::string_view who) {
  if (argv.empty()) throw error(fmt::format("{}: no program to run", who));
  child_detail::install_handlers();
  std::vector<std::string> storage = argv;
  std::vector<char*> args;
  for (std::string& a : storage) args.push_back(a.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  if (const int rc = ::posix_spawn_file_actions_init(&actions); rc != 0)
    throw error(fmt::format("{}: cannot run {}: {}", who, argv[0], child_detail::spawn_message(rc)));
  if (const int rc = ::posix_spawnattr_init(&attributes); rc != 0) {
    ::posix_spawn_file_actions_destroy(&actions);
    throw error(fmt::format("{}: cannot run {}: {}", who, argv[0], child_detail::spawn_message(rc)));
  }
  struct guard {
    posix_spawn_file_actions_t* a;
    posix_spawnattr_t* s;
    ~guard() {
      ::posix_spawn_file_actions_destroy(a);
      ::posix_spawnattr_destroy(s);
    }
  } cleanup{&actions, &attributes};

  int rc = 0;
  // 0666: the umask then gives the files the mode everything else mase writes gets.
  const auto redirect = [&](int fd, const std::filesystem::path& file, int flags) {
    if (rc == 0 && !file.empty()) rc = ::posix_spawn_file_actions_addopen(&actions, fd, file.c_str(), flags, 0666);
  };
  redirect(STDIN_FILENO, streams.input, O_RDONLY);
  redirect(STDOUT_FILENO, streams.output, O_WRONLY | O_CREAT | O_TRUNC);
  redirect(STDERR_FILENO, streams.errors, O_WRONLY | O_CREAT | O_TRUNC);
  // A group of its own (pgid = the child's pid), every signal unblocked and the passed ones at
  // their default disposition in the child.
  sigset_t passed, none;
  ::sigemptyset(&passed);
  ::sigemptyset(&none);
  for (int sig : child_detail::passed_signals) ::sigaddset(&passed, sig);
  if (rc == 0) rc = ::posix_spawnattr_setpgroup(&attributes, 0);
  if (rc == 0) rc = ::posix_spawnattr_setsigmask(&attributes, &none);
  if (rc == 0) rc = ::posix_spawnattr_setsigdefault(&attributes, &passed);
  if (rc == 0)
    rc = ::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  if (rc != 0) throw error(fmt::format("{}: cannot run {}: {}", who, argv[0], child_detail::spawn_message(rc)));

  // The passed signals wait (in this thread) until the child's group is registered, so a signal
  // that this thread takes never finds the child missing from the list.
  sigset_t previous;
  ::pthread_sigmask(SIG_BLOCK, &passed, &previous);
  pid_t pid = 0;
  rc = argv[0].find('/') == std::string::npos
           ? ::posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ)
           : ::posix_spawn(&pid, args[0], &actions, &attributes, args.data(), environ);
  // (Past max_children children at once, a child runs unregistered: no caller comes near that.)
  const std::size_t slot = rc == 0 ? child_detail::claim_slot(pid) : child_detail::max_children;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (rc != 0) throw error(fmt::format("{}: cannot run {}: {}", who, argv[0], child_detail::spawn_message(rc)));

  int status = 0;
  int wait_error = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      wait_error = errno;
      break;
    }
  }
  if (slot < child_detail::max_children) child_detail::groups[slot].store(0);
  if (wait_error != 0)
    throw error(fmt::format("{}: waiting for {} failed: {}", who, argv[0], child_detail::spawn_message(wait_error)));
  return status;
}

// A wait status as an exit code: the program's own, or 128 + the signal that ended it (as a
// shell reports it).
inline int exit_code_of(int status) noexcept {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Runs `command` with /bin/sh in a process group of its own (run_child); returns its exit code.
inline int run_shell(const std::string& command, std::string_view who) {
  return exit_code_of(run_child({"/bin/sh", "-c", command}, {}, who));
}

}  // namespace mase
