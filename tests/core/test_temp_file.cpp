// core/temp_file.hpp: what mase writes atomically comes out as a plain open would create it
// (mode 0666 & ~umask), whole or not at all, and leaves no temporary file behind; so do the files
// a child tool's output is sent to (core/child_process.hpp).

#include <mase/core/child_process.hpp>
#include <mase/core/temp_file.hpp>

#include "../support/folder_snapshot.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <string>

#include <sys/stat.h>
#include <sys/types.h>

namespace fs = std::filesystem;

namespace {

fs::path fresh_folder(const std::string& name) { return mase_test::fresh_folder("temp_file", name); }

// Sets the process's umask for one scope (the tests run one at a time, on one thread).
class umask_scope {
public:
  explicit umask_scope(::mode_t mask) : old_(::umask(mask)) {}
  umask_scope(const umask_scope&) = delete;
  umask_scope& operator=(const umask_scope&) = delete;
  ~umask_scope() { ::umask(old_); }

private:
  ::mode_t old_;
};

// The permission bits, as stat(2) reports them.
unsigned mode_of(const fs::path& file) {
  struct ::stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  return static_cast<unsigned>(st.st_mode & 07777);
}

}  // namespace

TEST_CASE("an atomic write gets the mode a plain open would: 0666 less the umask") {
  const fs::path dir = fresh_folder("modes");
  const auto [mask, expected] = GENERATE(table<::mode_t, unsigned>({{022, 0644}, {077, 0600}, {027, 0640}, {0, 0666}}));
  CAPTURE(mask);
  const umask_scope scope(mask);
  const fs::path file = dir / fmt::format("written_{:03o}.txt", mask);
  mase::write_file_atomically(file, "hello\n");
  CHECK(mode_of(file) == expected);
  CHECK(mase_test::read_file(file) == "hello\n");
  // Only the file: the temporary one was renamed into place.
  CHECK(mase_test::snapshot(dir).count(file.filename().string()) == 1);
}

TEST_CASE("an atomic write over an existing file gives it the umask's mode, as a new file") {
  const fs::path dir = fresh_folder("replace");
  const fs::path file = dir / "out.csv";
  {
    const umask_scope scope(077);
    mase::write_file_atomically(file, "old\n");
  }
  REQUIRE(mode_of(file) == 0600);
  const umask_scope scope(022);
  mase::write_file_atomically(file, "new\n");
  CHECK(mode_of(file) == 0644);
  CHECK(mase_test::read_file(file) == "new\n");
  CHECK(mase_test::snapshot(dir) == std::map<std::string, std::string>{{"out.csv", "new\n"}});
}

TEST_CASE("a temporary file has the umask's mode before it is renamed (what writes into it keeps it)") {
  const fs::path dir = fresh_folder("temporary");
  const umask_scope scope(022);
  mase::temp_file a(dir / "model.svg", "svg");
  mase::temp_file b(dir / "model.svg", "svg");
  CHECK(a.path() != b.path());
  CHECK(a.path().parent_path() == dir);  // beside the target, so the rename stays on one file system
  CHECK(a.path().filename().string().starts_with(".model.svg.svg."));
  CHECK(mode_of(a.path()) == 0644);
  a.write("<svg/>", dir / "model.svg");
  CHECK(mode_of(a.path()) == 0644);
  a.rename_to(dir / "model.svg");
  CHECK(mode_of(dir / "model.svg") == 0644);
  CHECK(mase_test::read_file(dir / "model.svg") == "<svg/>");
}

TEST_CASE("a temporary file that is not renamed is removed") {
  const fs::path dir = fresh_folder("removed");
  {
    mase::temp_file out(dir / "q.json", "tmp");
    out.write("{}", dir / "q.json");
    REQUIRE(fs::exists(out.path()));
  }
  CHECK(fs::is_empty(dir));
}

TEST_CASE("a failed atomic write names the file and leaves nothing behind") {
  const fs::path dir = fresh_folder("failed");
  SECTION("the folder does not exist") {
    const fs::path file = dir / "missing" / "q.json";
    CHECK_THROWS_WITH(mase::write_file_atomically(file, "{}"),
                      fmt::format("cannot write {}: creating a temporary file in {} failed: No such file or directory",
                                  file.string(), (dir / "missing").string()));
    CHECK(fs::is_empty(dir));
  }
  SECTION("a folder is in the way") {
    fs::create_directory(dir / "q.json");
    mase_test::write_file(dir / "q.json" / "kept", "x");
    CHECK_THROWS_WITH(mase::write_file_atomically(dir / "q.json", "{}"),
                      Catch::Matchers::StartsWith(fmt::format("cannot write {}: renaming ", (dir / "q.json").string())));
    CHECK(mase_test::snapshot(dir) == std::map<std::string, std::string>{{"q.json/", ""}, {"q.json/kept", "x"}});
  }
}

TEST_CASE("a child's output files get 0666 less the umask too") {
  const fs::path dir = fresh_folder("child_output");
  const auto [mask, expected] = GENERATE(table<::mode_t, unsigned>({{022, 0644}, {002, 0664}, {077, 0600}}));
  CAPTURE(mask);
  const umask_scope scope(mask);
  const fs::path out = dir / fmt::format("out_{:03o}.txt", mask), errors = dir / fmt::format("err_{:03o}.txt", mask);
  REQUIRE(mase::exit_code_of(mase::run_child({"/bin/sh", "-c", "echo out; echo err >&2"},
                                             {.output = out, .errors = errors}, "test")) == 0);
  CHECK(mode_of(out) == expected);
  CHECK(mode_of(errors) == expected);
  CHECK(mase_test::read_file(out) == "out\n");
}
