// summarize_quantization (MASE's table and per-op histogram) and calculate_avg_bits (average bits
// per value of linear / conv inputs and weights), checked against counts worked out by hand.

#include <mase/ir/builder.hpp>
#include <mase/pass/add_common_metadata.hpp>
#include <mase/pass/init_metadata.hpp>
#include <mase/pass/quantization_report.hpp>
#include <mase/pass/quantize.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

using namespace mase;

namespace {

// x [4,16] → fc1 (16→8) → relu → fc2 (8→4, no bias) → output
auto mlp() {
  builder b;
  auto x = b.input("x", {4, 16});
  auto h = b.add("fc1", op::linear{.in_features = 16, .out_features = 8}, x);
  h = b.add("relu", op::relu{}, h);
  h = b.add("fc2", op::linear{.in_features = 8, .out_features = 4, .bias = false}, h);
  return b.output(h) | init_metadata | add_common_metadata;
}

quant_config integer_keys(std::int64_t width, std::int64_t frac) {
  return {{"name", std::string("integer")},  {"data_in_width", width}, {"data_in_frac_width", frac},
          {"weight_width", width},           {"weight_frac_width", frac}, {"bias_width", width},
          {"bias_frac_width", frac}};
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("summarize_quantization: one row per node, changed when a format changed") {
  const auto original = mlp();
  const auto quantized = original | quantize({.by = quantize_by::name,
                                              .default_config = {},
                                              .entries = {{"fc1", integer_keys(8, 3)}}});
  const quantization_summary s = summarize_quantization(original, quantized);
  REQUIRE(s.rows.size() == 5);
  CHECK(s.rows[0] == quantization_row{.name = "x",
                                      .mase_type = node_kind::placeholder,
                                      .mase_op = "placeholder",
                                      .original_type = "float32",
                                      .quantized_type = "float32",
                                      .changed = false});
  // fc1: K = 16 → 8 + 8 + 4 + 1 = 21 bits for the result.
  CHECK(s.at("fc1").original_type == "float32");
  CHECK(s.at("fc1").quantized_type ==
        "data_in_0=fixed<8,3> weight=fixed<8,3> bias=fixed<8,3> data_out_0=fixed<21,6>");
  CHECK(s.at("fc1").changed);
  CHECK(s.at("fc1").mase_type == node_kind::module_related_func);
  // relu is not configured, but now reads and (as data movement) passes on fc1's format.
  CHECK(s.at("relu").quantized_type == "fixed<21,6>");
  CHECK(s.at("relu").changed);
  CHECK(s.at("fc2").quantized_type == "data_in_0=fixed<21,6> weight=float32 data_out_0=float32");
  CHECK(s.at("fc2").changed);
  CHECK_FALSE(s.at("output").changed);
  CHECK(s.changed_count() == 3);

  REQUIRE(s.histogram.size() == 4);
  CHECK(s.histogram[0] ==
        quantization_histogram_row{.mase_op = "placeholder", .total = 1, .changed = 0, .unchanged = 1});
  CHECK(s.histogram[1] == quantization_histogram_row{.mase_op = "linear", .total = 2, .changed = 2, .unchanged = 0});
  CHECK(s.histogram[2] == quantization_histogram_row{.mase_op = "relu", .total = 1, .changed = 1, .unchanged = 0});
  CHECK(s.histogram[3] == quantization_histogram_row{.mase_op = "output", .total = 1, .changed = 0, .unchanged = 1});
}

TEST_CASE("summarize_quantization as text and as MASE's CSV files") {
  const auto original = mlp();
  const auto quantized =
      original | quantize({.by = quantize_by::type, .default_config = {}, .entries = {{"relu", bypass{}}}});
  const quantization_summary s = summarize_quantization(original, quantized);
  const std::string text = s.text();
  CHECK_THAT(
      text, Catch::StartsWith("Quantized graph: 5 nodes, 0 changed\n"
                              "Node name  MASE type            MASE op      Original type  Quantized type  Changed\n"));
  CHECK_THAT(text,
             Catch::Contains("fc1        module_related_func  linear       float32        float32         False\n"));
  CHECK_THAT(text, Catch::Contains("\nNodes per op\nMASE op      Total  Changed  Unchanged\n"));
  CHECK_THAT(text, Catch::Contains("linear       2      0        2\n"));

  const auto q8 =
      original | quantize({.by = quantize_by::name, .default_config = {}, .entries = {{"fc1", integer_keys(8, 3)}}});
  const quantization_summary s8 = summarize_quantization(original, q8);
  CHECK(
      s8.table_csv() ==
      ",Ori name,New name,MASE_TYPE,Mase_OP,Original type,Quantized type,Changed\n"
      "0,x,x,placeholder,placeholder,float32,float32,False\n"
      "1,fc1,fc1,module_related_func,linear,float32,\"data_in_0=fixed<8,3> weight=fixed<8,3> bias=fixed<8,3> "
      "data_out_0=fixed<21,6>\",True\n"
      "2,relu,relu,module_related_func,relu,float32,\"fixed<21,6>\",True\n"
      "3,fc2,fc2,module_related_func,linear,float32,\"data_in_0=fixed<21,6> weight=float32 data_out_0=float32\",True\n"
      "4,output,output,output,output,float32,float32,False\n");
  CHECK(s8.histogram_csv() ==
        "OP,Total,Changed,Unchanged\nplaceholder,1,0,1\nlinear,2,2,0\nrelu,1,1,0\noutput,1,0,1\n");

  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "mase_test_quantization_summary";
  std::filesystem::remove_all(dir);
  const auto r = run(q8, summarize_quantization(original).to_csv(dir / "nested"));
  CHECK(std::get<0>(r.info) == s8);
  CHECK(read_file(dir / "nested" / "quantize_table.csv") == s8.table_csv());
  CHECK(read_file(dir / "nested" / "quantize_histogram.csv") == s8.histogram_csv());
  std::filesystem::remove_all(dir);
}

TEST_CASE("summarize_quantization as a pass: to a stream, needs a quantized graph") {
  const auto original = mlp();
  std::ostringstream out;
  const auto r =
      run(original, quantize({.by = quantize_by::type, .default_config = integer_keys(4, 2), .entries = {}}) |
                        summarize_quantization(original).to(out));
  CHECK(out.str() == r.get<quantization_summary>().text());
  CHECK(r.get<quantization_summary>().changed_count() == 4);  // fc1, relu, fc2, output
  static_assert(std::is_same_v<summarize_quantization_pass::needs, facts<fact::quantized>>);
}

TEST_CASE("summarize_quantization: the graphs must have the same nodes") {
  builder b;
  auto x = b.input("y", {4, 16});
  const auto other = b.output(x) | init_metadata | add_common_metadata;
  CHECK_THROWS_WITH(summarize_quantization(other, mlp()),
                    Catch::Contains("node x of the quantized graph is not in the original"));
}

TEST_CASE("quantize with report = true prints the summary") {
  const auto g = mlp();
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  quantize_config c{.by = quantize_by::type, .default_config = integer_keys(8, 3), .entries = {}, .report = true};
  graph q;
  try {
    q = g | quantize(c);
  } catch (...) {
    std::cout.rdbuf(old);
    throw;
  }
  std::cout.rdbuf(old);
  CHECK(captured.str() == summarize_quantization(g, q).text());
  CHECK_THAT(captured.str(), Catch::Contains("Quantized graph: 5 nodes, 4 changed"));
}

TEST_CASE("calculate_avg_bits: element-weighted bits of linear inputs and weights") {
  const auto original = mlp();
  // Unquantized: everything float32.
  const avg_bits f = calculate_avg_bits(original);
  CHECK(f.data_avg_bit == 32.0);
  CHECK(f.w_avg_bit == 32.0);
  CHECK(f.data_values == 4 * 16 + 4 * 8);
  CHECK(f.weight_values == 8 * 16 + 4 * 8);

  // fc1 8-bit, fc2 4-bit: data (64·8 + 32·4) / 96 = 640 / 96; weights (128·8 + 32·4) / 160 = 7.2.
  const auto q = original | quantize({.by = quantize_by::name,
                                      .default_config = {},
                                      .entries = {{"fc1", integer_keys(8, 3)}, {"fc2", integer_keys(4, 1)}}});
  const avg_bits a = calculate_avg_bits(q);
  CHECK(a.data_avg_bit == Approx(640.0 / 96.0).epsilon(1e-15));
  CHECK(a.w_avg_bit == Approx(1152.0 / 160.0).epsilon(1e-15));
  // MASE would count width + frac ([8, 3] → 11); mase counts the 8 bits stored.
  CHECK(a.w_avg_bit < 8.0);

  // As a pass in a pipeline.
  const auto r =
      run(original, quantize({.by = quantize_by::type, .default_config = integer_keys(6, 2), .entries = {}}) |
                        calculate_avg_bits);
  CHECK(r.get<avg_bits>().data_avg_bit == 6.0);
  CHECK(r.get<avg_bits>().w_avg_bit == 6.0);
}

TEST_CASE("calculate_avg_bits: block formats count their shared exponent per element") {
  const auto original = mlp();
  quant_config c{{"name", std::string("block_fp")},
                 {"data_in_width", std::int64_t{7}},
                 {"data_in_exponent_width", std::int64_t{8}},
                 {"data_in_block_size", std::vector<std::int64_t>{1, 16}},
                 {"weight_width", std::int64_t{5}},
                 {"weight_exponent_width", std::int64_t{4}},
                 {"weight_block_size", std::vector<std::int64_t>{2, 4}},
                 {"bias_width", std::int64_t{8}},
                 {"bias_exponent_width", std::int64_t{8}}};
  const auto q = original | quantize({.by = quantize_by::type, .default_config = c, .entries = {}});
  const avg_bits a = calculate_avg_bits(q);
  CHECK(a.data_avg_bit == 7.0 + 8.0 / 16.0);   // 7 element bits + an 8-bit exponent shared by 1·16 values
  CHECK(a.w_avg_bit == 5.0 + 4.0 / 8.0);        // 5 element bits + a 4-bit exponent shared by 2·4 values
}

TEST_CASE("calculate_avg_bits: conv layers count, other ops do not, none at all gives NaN") {
  builder b;
  auto x = b.input("x", {1, 2, 5, 5});
  auto c = b.add("c", op::conv2d{.in_channels = 2, .out_channels = 3, .kernel_size = {3}}, x);
  auto m = b.add("m", op::mul{}, c, c);
  const auto g = b.output(m) | init_metadata | add_common_metadata |
                 quantize({.by = quantize_by::type, .default_config = integer_keys(5, 2), .entries = {}});
  const avg_bits a = calculate_avg_bits(g);
  CHECK(a.data_values == 2 * 5 * 5);
  CHECK(a.weight_values == 3 * 2 * 3 * 3);
  CHECK(a.data_avg_bit == 5.0);
  CHECK(a.w_avg_bit == 5.0);

  builder e;
  auto y = e.input("y", {3});
  const auto none = e.output(e.add("r", op::relu{}, y)) | init_metadata | add_common_metadata;
  const avg_bits n = calculate_avg_bits(none);
  CHECK(std::isnan(n.data_avg_bit));
  CHECK(std::isnan(n.w_avg_bit));
  CHECK(n.data_values == 0);
}
