#include <mase/pass/report_tables.hpp>

#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <string_view>

#include <fmt/core.h>

// Expected tables are written out by hand: column width = widest cell, two spaces between
// columns, no trailing spaces. sp(n) spells n spaces so the padding can be checked by counting.

namespace {

std::string sp(std::size_t n) { return std::string(n, ' '); }
std::string dashes(std::size_t n) { return std::string(n, '-'); }

mase::tensor_meta tensor(mase::shape s, mase::format f) { return {.shape = s, .precision = f, .value = {}}; }

// x -> fc1 (linear 4->2) -> act (relu) -> output. act's metadata is left unfilled.
struct tiny_graph {
  mase::graph g;
  mase::node_id x, fc1, act, out;

  tiny_graph() {
    x = g.add("x", mase::op::placeholder{.shape = {1, 4}});
    fc1 = g.add("fc1", mase::op::linear{.in_features = 4, .out_features = 2, .bias = true}, {x});
    act = g.add("act", mase::op::relu{}, {fc1});
    out = g.add("output", mase::op::output{}, {act});

    auto& xm = g[x].meta;
    xm.common.mase_op = "placeholder";
    xm.common.mase_type = mase::node_kind::placeholder;
    xm.common.results["data_out_0"] = tensor({1, 4}, mase::formats::float32);
    xm.hardware.is_implicit = true;

    auto& fm = g[fc1].meta;
    fm.common.mase_op = "linear";
    fm.common.mase_type = mase::node_kind::module_related_func;
    fm.common.args["data_in_0"] = tensor({1, 4}, mase::fixed_fmt{.width = 8, .frac = 3});
    fm.common.args["weight"] = tensor({2, 4}, mase::fixed_fmt{.width = 8, .frac = 4});
    fm.common.args["bias"] = tensor({1, 2}, mase::fixed_fmt{.width = 8, .frac = 4});
    fm.common.results["data_out_0"] = tensor({1, 2}, mase::fixed_fmt{.width = 16, .frac = 7});
    fm.hardware.toolchain = mase::toolchain::internal_rtl;
    fm.hardware.device_id = 0;

    auto& om = g[out].meta;
    om.common.mase_op = "output";
    om.common.mase_type = mase::node_kind::output;
    om.common.args["data_in_0"] = tensor({1, 2}, mase::formats::float32);
    om.hardware.is_implicit = true;
  }
};

}  // namespace

TEST_CASE("write_graph_report: nodes with kind, op, inputs and attributes, then counts per kind and per op") {
  const tiny_graph t;
  std::ostringstream os;
  mase::write_graph_report(os, t.g);
  // Widths: name 6, kind 19, op 11, inputs 6, attributes 40.
  const std::string expected =
      std::string("Graph: 4 nodes\n")
      + "name" + sp(4) + "kind" + sp(17) + "op" + sp(11) + "inputs" + sp(2) + "attributes\n" +
      dashes(6) + sp(2) + dashes(19) + sp(2) + dashes(11) + sp(2) + dashes(6) + sp(2) + dashes(40) + "\n" +
      "x" + sp(7) + "placeholder" + sp(10) + "placeholder" + sp(10) + "shape=[1, 4]\n" +
      "fc1" + sp(5) + "module_related_func" + sp(2) + "linear" + sp(7) + "x" + sp(7) +
      "in_features=4, out_features=2, bias=true\n" +
      "act" + sp(5) + "module_related_func" + sp(2) + "relu" + sp(9) + "fc1" + sp(5) + "inplace=false\n" +
      "output" + sp(2) + "output" + sp(15) + "output" + sp(7) + "act\n" +
      "\n"
      "Nodes per kind\n"
      "kind" + sp(17) + "count\n" +
      dashes(19) + sp(2) + dashes(5) + "\n" +
      "placeholder" + sp(10) + "1\n" +
      "module_related_func" + sp(2) + "2\n" +
      "output" + sp(15) + "1\n" +
      "\n"
      "Nodes per op\n"
      "op" + sp(11) + "count\n" +
      dashes(11) + sp(2) + dashes(5) + "\n" +
      "placeholder" + sp(2) + "1\n" +
      "linear" + sp(7) + "1\n" +
      "relu" + sp(9) + "1\n" +
      "output" + sp(7) + "1\n";
  CHECK(os.str() == expected);
}

TEST_CASE("write_node_type_report: metadata where recorded, the op's own name and kind where not") {
  const tiny_graph t;
  std::ostringstream os;
  mase::write_node_type_report(os, t.g);
  // Widths: 9, 19, 11, 14. act has no common metadata: its type and op come from the relu op.
  const std::string expected =
      std::string("Node name") + sp(2) + "Mase type" + sp(12) + "Mase op" + sp(6) + "data_in_0 type\n" +
      dashes(9) + sp(2) + dashes(19) + sp(2) + dashes(11) + sp(2) + dashes(14) + "\n" +
      "x" + sp(10) + "placeholder" + sp(10) + "placeholder" + sp(2) + "-\n" +
      "fc1" + sp(8) + "module_related_func" + sp(2) + "linear" + sp(7) + "fixed\n" +
      "act" + sp(8) + "module_related_func" + sp(2) + "relu" + sp(9) + "-\n" +
      "output" + sp(5) + "output" + sp(15) + "output" + sp(7) + "float\n";
  CHECK(os.str() == expected);
}

TEST_CASE("write_node_shape_report: data_in shapes and result shapes, '-' where none are recorded") {
  const tiny_graph t;
  std::ostringstream os;
  mase::write_node_shape_report(os, t.g);
  // Widths: 9, 17, 18. Parameters (weight, bias) are not data inputs.
  const std::string expected =
      std::string("Node name") + sp(2) + "Input shapes" + sp(7) + "Result shapes\n" +
      dashes(9) + sp(2) + dashes(17) + sp(2) + dashes(18) + "\n" +
      "x" + sp(10) + "-" + sp(18) + "data_out_0: [1, 4]\n" +
      "fc1" + sp(8) + "data_in_0: [1, 4]" + sp(2) + "data_out_0: [1, 2]\n" +
      "act" + sp(8) + "-" + sp(18) + "-\n" +
      "output" + sp(5) + "data_in_0: [1, 2]" + sp(2) + "-\n";
  CHECK(os.str() == expected);
}

TEST_CASE("the graph and shape reports with a respelling: attributes and shapes go through it") {
  const tiny_graph t;
  const auto respell = [](const mase::node& n, std::string_view part, std::string text) {
    return n.name == "x" ? fmt::format("{}<{}>", part, text) : text;
  };
  std::ostringstream graph_report, shapes, plain;
  mase::write_graph_report(graph_report, t.g, respell);
  CHECK(graph_report.str().find("\nx" + sp(7) + "placeholder" + sp(10) + "placeholder" + sp(10) +
                                "attributes<shape=[1, 4]>\n") != std::string::npos);
  mase::write_node_shape_report(shapes, t.g, respell);
  CHECK(shapes.str().find("\nx" + sp(10) + "-" + sp(18) + "data_out_0: data_out_0<[1, 4]>\n") != std::string::npos);
  mase::write_node_shape_report(plain, t.g, {});
  std::ostringstream expected;
  mase::write_node_shape_report(expected, t.g);
  CHECK(plain.str() == expected.str());
}

TEST_CASE("write_node_hardware_report: only nodes that become hardware") {
  const tiny_graph t;
  std::ostringstream os;
  mase::write_node_hardware_report(os, t.g);
  // x and output are implicit. Widths: 9, 7, 15, 12, 9.
  const std::string expected =
      std::string("Node name") + sp(2) + "Mase op" + sp(2) + "data_out_0 type" + sp(2) + "Toolchain" + sp(5) + "Device id\n" +
      dashes(9) + sp(2) + dashes(7) + sp(2) + dashes(15) + sp(2) + dashes(12) + sp(2) + dashes(9) + "\n" +
      "fc1" + sp(8) + "linear" + sp(3) + "fixed" + sp(12) + "INTERNAL_RTL" + sp(2) + "0\n" +
      "act" + sp(8) + "relu" + sp(5) + "-" + sp(16) + "INTERNAL_RTL" + sp(2) + "-1\n";
  CHECK(os.str() == expected);
}

TEST_CASE("write_metadata_report: multi-line cells, rows kept apart by dashed lines") {
  mase::graph g;
  const auto x = g.add("x", mase::op::placeholder{.shape = {1, 4}});
  g.add("output", mase::op::output{}, {x});
  g[x].meta.common.mase_op = "placeholder";
  g[x].meta.common.results["data_out_0"] = tensor({1, 4}, mase::formats::float32);

  std::ostringstream os;
  mase::write_metadata_report(os, g, mase::metadata_sections::common);
  // The widest line of the Common column: "  data_out_0: {type: float, precision: float32, shape: [1, 4]}" (62).
  const std::string expected =
      std::string("Node name") + sp(2) + "Common\n" +
      dashes(9) + sp(2) + dashes(62) + "\n" +
      "x" + sp(10) + "mase_op: placeholder\n" +
      sp(11) + "mase_type: placeholder\n" +
      sp(11) + "args: {}\n" +
      sp(11) + "results:\n" +
      sp(11) + "  data_out_0: {type: float, precision: float32, shape: [1, 4]}\n" +
      dashes(9) + sp(2) + dashes(62) + "\n" +
      "output" + sp(5) + "mase_op: (not set)\n" +
      sp(11) + "mase_type: (not set)\n" +
      sp(11) + "args: {}\n" +
      sp(11) + "results: {}\n";
  CHECK(os.str() == expected);
}

TEST_CASE("write_metadata_report: chosen sections in MASE's order, choosing none is an error") {
  const tiny_graph t;
  std::ostringstream both;
  mase::write_metadata_report(both, t.g, mase::metadata_sections::hardware | mase::metadata_sections::software);
  const std::string text = both.str();
  CHECK(text.rfind("Node name  Software", 0) == 0);
  CHECK(text.find("Hardware") != std::string::npos);
  CHECK(text.find("Common") == std::string::npos);
  CHECK(text.find("toolchain: INTERNAL_RTL") != std::string::npos);

  std::ostringstream all;
  mase::write_metadata_report(all, t.g);
  const std::string everything = all.str();
  CHECK(everything.find("Common") < everything.find("Software"));
  CHECK(everything.find("Software") < everything.find("Hardware"));
  CHECK(everything.find("precision: fixed<16,7>") != std::string::npos);

  std::ostringstream none;
  CHECK_THROWS_WITH(mase::write_metadata_report(none, t.g, mase::metadata_sections{}),
                    Catch::Contains("no section chosen"));
}

TEST_CASE("table cells are measured in characters, not bytes") {
  mase::detail::text_table table({"a", "b"});
  table.add_row({"…x", "1"});  // '…' is three bytes but one column
  std::ostringstream os;
  table.write(os);
  CHECK(os.str() == std::string("a") + sp(3) + "b\n" + dashes(2) + sp(2) + dashes(1) + "\n" + "…x  1\n");
  CHECK_THROWS_AS(table.add_row({"only one"}), mase::error);
}

TEST_CASE("reports of an empty graph are just their headers") {
  const mase::graph g;
  std::ostringstream os;
  mase::write_node_type_report(os, g);
  CHECK(os.str() == std::string("Node name  Mase type  Mase op  data_in_0 type\n") + dashes(9) + sp(2) + dashes(9) + sp(2) +
                        dashes(7) + sp(2) + dashes(14) + "\n");
}
