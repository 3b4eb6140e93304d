// .npy files: arrays numpy wrote (tests/fixtures/npy, from make_npy_fixtures.py) load with their
// exact values converted to float32; what mase writes is byte for byte what numpy.save writes;
// a save/load round trip keeps every bit; refused dtypes, layouts and damaged files are
// mase::errors naming the file and the problem.
#include <mase/io/npy.hpp>

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include <unistd.h>  // getpid

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

const fs::path fixtures = fs::path(MASE_FIXTURE_DIR) / "npy";

std::string read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  REQUIRE(in);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& file, const std::string& bytes) {
  std::ofstream out(file, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out);
}

std::vector<float> values_of(const mase::tensor& t) { return {t.values().begin(), t.values().end()}; }

// A fresh folder for files a test writes, removed afterwards.
struct scratch_dir {
  fs::path path;
  explicit scratch_dir(const std::string& name)
      : path(fs::temp_directory_path() / fmt::format("mase_test_npy_{}_{}", name, ::getpid())) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~scratch_dir() { fs::remove_all(path); }
};

// Loading `bytes` fails with a message naming the file and containing `what`.
void check_refused(const scratch_dir& dir, const std::string& name, const std::string& bytes, const std::string& what) {
  const fs::path file = dir.path / name;
  write_bytes(file, bytes);
  INFO(name);
  REQUIRE_THROWS_AS(mase::npy::load(file), mase::error);
  REQUIRE_THROWS_WITH(mase::npy::load(file), Contains(file.string()) && Contains(what));
}

}  // namespace

TEST_CASE("npy: float arrays numpy wrote load with their shape and values") {
  const mase::tensor a = mase::npy::load(fixtures / "f4_2x3.npy");
  CHECK(a.shape() == mase::shape{2, 3});
  CHECK(values_of(a) == std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f, 1.5f});

  const mase::tensor v = mase::npy::load(fixtures / "f4_vector_5.npy");
  CHECK(v.shape() == mase::shape{5});
  CHECK(values_of(v) == std::vector<float>{0.0f, 0.25f, 0.5f, 0.75f, 1.0f});

  const mase::tensor e = mase::npy::load(fixtures / "f4_empty_0x3.npy");
  CHECK(e.shape() == mase::shape{0, 3});
  CHECK(e.size() == 0);

  const mase::tensor s = mase::npy::load(fixtures / "f4_scalar.npy");
  CHECK(s.rank() == 0);
  CHECK(values_of(s) == std::vector<float>{2.5f});

  // float64 pi rounds to the nearest float32.
  const mase::tensor pi = mase::npy::load(fixtures / "f8_scalar.npy");
  CHECK(pi.rank() == 0);
  CHECK(pi.data()[0] == static_cast<float>(3.141592653589793));
}

TEST_CASE("npy: float16 converts exactly, subnormals and infinities included") {
  const mase::tensor h = mase::npy::load(fixtures / "f2_specials.npy");
  REQUIRE(h.shape() == mase::shape{8});
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(values_of(h) ==
        std::vector<float>{1.0f, -0.0f, 65504.0f, std::ldexp(1.0f, -24), std::ldexp(1.0f, -14), inf, -inf, 0.333251953125f});
  CHECK(std::signbit(h.data()[1]));
}

TEST_CASE("npy: integer and boolean arrays convert to the nearest float") {
  using v = std::vector<float>;
  CHECK(values_of(mase::npy::load(fixtures / "i1.npy")) == v{-128, -1, 0, 127});
  CHECK(values_of(mase::npy::load(fixtures / "i2.npy")) == v{-32768, -1, 0, 32767});
  CHECK(values_of(mase::npy::load(fixtures / "i4.npy")) == v{-2147483648.0f, -1, 0, 2147483648.0f});
  // -(2^62) is exact; 2^53 + 1 rounds to 2^53.
  CHECK(values_of(mase::npy::load(fixtures / "i8.npy")) == v{-std::ldexp(1.0f, 62), -1, 0, std::ldexp(1.0f, 53)});
  CHECK(values_of(mase::npy::load(fixtures / "u1.npy")) == v{0, 1, 200, 255});
  CHECK(values_of(mase::npy::load(fixtures / "u2.npy")) == v{0, 1, 40000, 65535});
  CHECK(values_of(mase::npy::load(fixtures / "u4.npy")) == v{0, 1, 3000000000.0f, 4294967296.0f});
  CHECK(values_of(mase::npy::load(fixtures / "u8.npy")) == v{0, 1, std::ldexp(1.0f, 40), std::ldexp(1.0f, 64)});
  const mase::tensor b = mase::npy::load(fixtures / "b1_2x2.npy");
  CHECK(b.shape() == mase::shape{2, 2});
  CHECK(values_of(b) == v{1, 0, 0, 1});
}

TEST_CASE("npy: format versions 2.0 and 3.0 load") {
  const mase::tensor a = mase::npy::load(fixtures / "f4_v2.npy");
  CHECK(a.shape() == mase::shape{2, 2});
  CHECK(values_of(a) == std::vector<float>{1, 2, 3, 4});
  const mase::tensor b = mase::npy::load(fixtures / "f4_v3.npy");
  CHECK(b.shape() == mase::shape{2, 2});
  CHECK(values_of(b) == std::vector<float>{5, 6, 7, 8});
}

TEST_CASE("npy: save writes the bytes numpy.save writes") {
  for (const char* name : {"f4_2x3.npy", "f4_vector_5.npy", "f4_empty_0x3.npy", "f4_scalar.npy"}) {
    INFO(name);
    const std::string numpy_bytes = read_bytes(fixtures / name);
    CHECK(mase::npy::to_npy_bytes(mase::npy::load(fixtures / name)) == numpy_bytes);
  }
}

TEST_CASE("npy: a save/load round trip keeps every bit") {
  scratch_dir dir("round_trip");
  std::vector<float> values{0.0f, -0.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max(),
                            std::bit_cast<float>(0x7FC01234u), std::bit_cast<float>(0xFF800001u), 1.0f / 3.0f};
  for (int i = 0; i < 15; ++i) values.push_back(static_cast<float>(i) * -0.125f);
  const mase::tensor t(mase::shape{2, 3, 4}, values);
  const fs::path file = dir.path / "t.npy";
  mase::npy::save(file, t);
  CHECK(mase::npy::load(file).identical(t));
  // Saving again replaces the file; only the one file is left in the folder (no temporaries).
  const mase::tensor u(mase::shape{3}, {7.0f, 8.0f, 9.0f});
  mase::npy::save(file, u);
  CHECK(mase::npy::load(file).identical(u));
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);
  // The header is padded so the data start 64-byte aligned (a 10-byte preamble and a 57-byte dict
  // need 128 bytes).
  CHECK(read_bytes(file).size() == 128 + 3 * 4);
}

TEST_CASE("npy: a failed save names the file and leaves nothing behind") {
  scratch_dir dir("failed_save");
  const fs::path file = dir.path / "missing_folder" / "t.npy";
  REQUIRE_THROWS_WITH(mase::npy::save(file, mase::tensor(mase::shape{2})), Contains(file.string()));
  CHECK(!fs::exists(file));
  CHECK(fs::is_empty(dir.path));
}

TEST_CASE("npy: arrays mase cannot take are refused with the reason") {
  const auto refused = [](const char* name, const std::string& what) {
    INFO(name);
    const fs::path file = fixtures / name;
    REQUIRE_THROWS_AS(mase::npy::load(file), mase::error);
    REQUIRE_THROWS_WITH(mase::npy::load(file), Contains(file.string()) && Contains(what));
  };
  refused("fortran_2x3.npy", "Fortran");
  refused("big_endian_f4.npy", "big-endian");
  refused("complex_c8.npy", "'<c8'");
  refused("record.npy", "structured");
  refused("rank9.npy", "more than 8 dimensions");
  refused("object.npy", "Python objects");
}

TEST_CASE("npy: damaged files are errors naming the file and the damage") {
  scratch_dir dir("damaged");
  const std::string good = read_bytes(fixtures / "f4_2x3.npy");
  REQUIRE(good.size() == 128 + 6 * 4);

  check_refused(dir, "truncated_data.npy", good.substr(0, good.size() - 1), "truncated");
  check_refused(dir, "extra_data.npy", good + "x", "extra bytes after the data");
  check_refused(dir, "cut_in_header.npy", good.substr(0, 40), "truncated");
  check_refused(dir, "cut_in_preamble.npy", good.substr(0, 9), "preamble");
  check_refused(dir, "empty.npy", "", "not a .npy file");
  check_refused(dir, "not_npy.npy", "PK\x03\x04 this is a zip file", "not a .npy file");

  std::string version = good;
  version[6] = '\x04';
  check_refused(dir, "version4.npy", version, "version 4.0");

  std::string flag = good;
  flag.replace(flag.find("False"), 5, "Fals?");
  check_refused(dir, "bad_flag.npy", flag, "neither True nor False");

  std::string key = good;
  key.replace(key.find("shape"), 5, "shope");
  check_refused(dir, "unknown_key.npy", key, "unknown key 'shope'");

  std::string dims = good;
  dims.replace(dims.find("(2, 3)"), 6, "(2, -3)");
  dims.erase(dims.find("} ") + 1, 1);  // keep the header length: one padding space less
  check_refused(dir, "negative_dim.npy", dims, "not a non-negative integer");

  std::string huge = good;
  huge[8] = '\xFF';
  huge[9] = '\x7F';
  check_refused(dir, "huge_header.npy", huge, "truncated");

  // A shape far beyond the data present is refused before anything is allocated for it (the
  // product is formed with overflow checks: 2^32 · 2^32 · 4 wraps to 0 in 64 bits).
  const auto with_shape = [&](std::string_view dims) {
    std::string bytes = good;
    bytes.replace(bytes.find("(2, 3)"), 6, dims);
    bytes.erase(bytes.find("} ") + 1, dims.size() - 6);  // keep the header length
    return bytes;
  };
  check_refused(dir, "huge_shape.npy", with_shape("(1056914421, 3)"),
                "shape [1056914421, 3] with 4-byte elements needs 12682973052 data bytes but the file holds 24");
  check_refused(dir, "overflowing_shape.npy", with_shape("(4294967296, 4294967296, 4)"),
                "the shape [4294967296, 4294967296, 4] is too large");

  const fs::path missing = dir.path / "missing.npy";
  REQUIRE_THROWS_WITH(mase::npy::load(missing), Contains(missing.string()) && Contains("does not exist"));
}
