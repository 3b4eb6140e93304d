// Report passes: the same table to std::cout, a stream or a file, and as the pass's info.

#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/report.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace mase;

namespace {
graph tiny() {
  builder b;
  auto x = b.input("x", {2, 3});
  return b.output(b.add("fc", op::linear{.in_features = 3, .out_features = 2}, x));
}
std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("a report goes to a stream, a file or std::cout, and is returned as info") {
  std::ostringstream stream;
  const auto [g, info] = run(tiny(), init_metadata | add_common_metadata | report_node_shape(stream));
  std::ostringstream expected;
  write_node_shape_report(expected, g);
  CHECK(stream.str() == expected.str());
  CHECK(std::get<2>(info).text == expected.str());
  CHECK_THAT(expected.str(), Catch::Contains("data_in_0: [2, 3]"));

  const std::filesystem::path folder = std::filesystem::temp_directory_path() / "mase_test_report_passes";
  std::filesystem::remove_all(folder);
  std::filesystem::create_directories(folder);
  (void)(g | report_node_shape(folder / "shapes.txt") | report_metadata(metadata_sections::common, folder / "meta.txt"));
  CHECK(read(folder / "shapes.txt") == expected.str());
  std::ostringstream meta;
  write_metadata_report(meta, g, metadata_sections::common);
  CHECK(read(folder / "meta.txt") == meta.str());
  // Only the two reports: no temporary files left behind.
  CHECK(std::distance(std::filesystem::directory_iterator(folder), std::filesystem::directory_iterator()) == 2);
  std::filesystem::remove_all(folder);
}

TEST_CASE("a report into a folder that does not exist is a clear error") {
  const graph g = tiny();
  CHECK_THROWS_WITH(g | report_graph(std::filesystem::path("/nonexistent/folder/report.txt")),
                    Catch::Contains("cannot write /nonexistent/folder/report.txt"));
}
