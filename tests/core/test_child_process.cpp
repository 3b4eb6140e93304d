// core/child_process.hpp: a child's exit status and streams, its own process group, and the
// signal that ends the parent ending the child first.

#include <mase/core/child_process.hpp>

#include "../support/folder_snapshot.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

TEST_CASE("a child's exit code, or 128 plus the signal that ended it") {
  CHECK(mase::run_shell("exit 0", "test") == 0);
  CHECK(mase::run_shell("exit 3", "test") == 3);
  CHECK(mase::run_shell("kill -TERM $$", "test") == 128 + SIGTERM);
  CHECK_THROWS_WITH(mase::run_child({"/nonexistent/program"}, {}, "test"), Catch::Contains("cannot run /nonexistent"));
}

TEST_CASE("a child runs in a process group of its own, its streams where they are sent") {
  const fs::path dir = mase_test::fresh_folder("child_process", "streams");
  const fs::path out = dir / "out.txt";
  // The child prints its process group (field 5 of /proc/PID/stat) and its own pid: they are the
  // same number.
  const int status = mase::run_child({"/bin/sh", "-c", "cut -d' ' -f5 /proc/$$/stat; echo $$"}, {.output = out}, "test");
  CHECK(mase::exit_code_of(status) == 0);
  std::ifstream in(out);
  long group = 0, pid = 0;
  in >> group >> pid;
  CHECK(pid > 0);
  CHECK(group == pid);
  CHECK(group != static_cast<long>(::getpgrp()));
}

TEST_CASE("SIGTERM to the parent ends the child's whole group before the parent") {
  const fs::path dir = mase_test::fresh_folder("child_process", "signal");
  const fs::path marker = dir / "grandchild.pid";
  // A parent process (forked here, so the test runner itself is not signalled) runs a shell that
  // starts a long-running grandchild and writes its pid; the parent is then sent SIGTERM.
  const std::string command = "sleep 60 & echo $! > '" + marker.string() + "'; wait";
  const pid_t parent = ::fork();
  REQUIRE(parent >= 0);
  if (parent == 0) {
    // The test framework handles SIGTERM itself; a program that does keeps its handler, so the
    // parent here takes the default, as the mase tool does.
    ::signal(SIGTERM, SIG_DFL);
    (void)mase::run_shell(command, "test");
    ::_exit(0);
  }
  for (int i = 0; i < 200 && !fs::exists(marker); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the pid is written whole
  long sleeper = 0;
  std::ifstream(marker) >> sleeper;
  REQUIRE(sleeper > 0);
  ::kill(parent, SIGTERM);
  int status = 0;
  ::waitpid(parent, &status, 0);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  // The sleeper ends too (it is a grandchild: reaped by init, so poll for it to disappear).
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = ::kill(static_cast<pid_t>(sleeper), 0) != 0;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  CHECK(gone);
  if (!gone) ::kill(static_cast<pid_t>(sleeper), SIGKILL);
}
