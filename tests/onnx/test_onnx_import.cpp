// The ONNX importer: models built here with the protobuf API, the PyTorch-exported fixtures of
// tests/fixtures/onnx (PyTorch's own outputs), TensorProto reading against values written out by
// hand, and every error path the importer promises.
#include <mase/eval/evaluator.hpp>
#include <mase/io/onnx.hpp>
#include <mase/io/onnx/importer.hpp>      // the converter API
#include <mase/io/onnx/tensor_proto.hpp>  // ModelProto, read_tensor_proto
#include <mase/io/onnx_backend_test.hpp>
#include <mase/pass/raise_granularity.hpp>

#include "../support/hard_shrink.hpp"

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using mase::onnx::import_options;
using TP = ::onnx::TensorProto;

const fs::path fixtures = fs::path(MASE_FIXTURE_DIR) / "onnx";

// A model with one float input "x" of `shape` and the given opset; nodes are added by the test.
struct model_builder {
  ::onnx::ModelProto model;
  explicit model_builder(std::vector<std::int64_t> shape, std::int64_t opset = 13) {
    model.set_ir_version(8);
    auto* o = model.add_opset_import();
    o->set_version(opset);
    auto* in = model.mutable_graph()->add_input();
    in->set_name("x");
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(TP::FLOAT);
    for (std::int64_t d : shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  ::onnx::NodeProto& node(std::string op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                          std::string name = "") {
    auto* n = model.mutable_graph()->add_node();
    n->set_op_type(std::move(op));
    n->set_name(std::move(name));
    for (auto& i : inputs) n->add_input(i);
    for (auto& o : outputs) n->add_output(o);
    return *n;
  }
  void initializer(std::string name, std::vector<std::int64_t> dims, std::vector<float> values) {
    auto* t = model.mutable_graph()->add_initializer();
    t->set_name(std::move(name));
    t->set_data_type(TP::FLOAT);
    for (auto d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
  }
  void int64_initializer(std::string name, std::vector<std::int64_t> values) {
    auto* t = model.mutable_graph()->add_initializer();
    t->set_name(std::move(name));
    t->set_data_type(TP::INT64);
    t->add_dims(static_cast<std::int64_t>(values.size()));
    for (auto v : values) t->add_int64_data(v);
  }
  void output(std::string name) { model.mutable_graph()->add_output()->set_name(std::move(name)); }
  mase::onnx::imported_model import(const import_options& options = {}) const {
    const std::string bytes = model.SerializeAsString();
    return mase::onnx::parse_model(std::as_bytes(std::span(bytes.data(), bytes.size())), "test.onnx", options);
  }
};

void set_ints(::onnx::NodeProto& n, std::string name, std::vector<std::int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(std::move(name));
  a->set_type(::onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}
void set_int(::onnx::NodeProto& n, std::string name, std::int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(std::move(name));
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(v);
}

std::string message_of(const auto& f) {
  try {
    f();
  } catch (const mase::error& e) {
    return e.what();
  }
  return "(no error)";
}

using user::hard_shrink;  // tests/support/hard_shrink.hpp

void convert_hard_shrink(mase::onnx::importer& c) {
  c.set_output(0, c.emit(hard_shrink{.lambda = c.float_attribute("lambd", 0.5)}, {c.input(0)}));
}

}  // namespace

TEST_CASE("a user's converter imports a node of a custom domain into the user's op") {
  model_builder m({2, 3});
  auto& n = m.node("HardShrink", {"x"}, {"y"}, "shrink");
  n.set_domain("com.example");
  auto* lambd = n.add_attribute();
  lambd->set_name("lambd");
  lambd->set_type(::onnx::AttributeProto::FLOAT);
  lambd->set_f(0.75f);
  m.node("Relu", {"y"}, {"z"}, "relu");
  m.output("z");

  CHECK(message_of([&] { (void)m.import(); }) ==
        "test.onnx: 1 op type is not supported: com.example.HardShrink (node shrink). docs/onnx.md lists the "
        "supported ops");

  import_options options;
  options.converters["com.example.HardShrink"] = convert_hard_shrink;
  const auto imported = m.import(options);
  const mase::node& shrink = imported.graph.at("shrink");
  REQUIRE(shrink.is<hard_shrink>());
  CHECK(shrink.as<hard_shrink>().lambda == 0.75);

  mase::tensor x({2, 3});
  const float values[] = {-2.0f, -0.75f, -0.5f, 0.5f, 0.875f, 3.0f};
  std::copy(std::begin(values), std::end(values), x.data());
  mase::evaluator ev(imported.graph);
  const mase::tensor& z = ev.run({{imported.inputs[0].node, x}})[0];
  const float expected[] = {0.0f, 0.0f, 0.0f, 0.0f, 0.875f, 3.0f};  // relu(hard_shrink(x, 0.75))
  for (std::size_t i = 0; i < 6; ++i) CHECK(z.data()[i] == expected[i]);

  // A converter for an op type mase converts replaces mase's; its errors name the node.
  options.converters["Relu"] = [](mase::onnx::importer& c) { c.fail("this converter refuses every node"); };
  CHECK(message_of([&] { (void)m.import(options); }) ==
        "test.onnx: node \"relu\" (Relu): this converter refuses every node");
}

TEST_CASE("the PyTorch fixtures match PyTorch's outputs, as imported and after raising granularity") {
  for (const char* name : {"mlp", "jsc_toy", "cnn", "transformer_encoder_opset13", "transformer_encoder_opset17"}) {
    INFO(name);
    const auto imported = mase::onnx::run_backend_test(fixtures / name);
    CHECK(imported.detail == "");
    CHECK(imported.status == mase::onnx::test_status::passed);
    const auto raised = mase::onnx::run_backend_test(
        fixtures / name, {.transform = [](mase::graph& g) { (void)mase::raise_granularity_of(g); }});
    CHECK(raised.detail == "");
    CHECK(raised.status == mase::onnx::test_status::passed);
  }
}

TEST_CASE("run_backend_tests reports each test in order on any number of threads") {
  std::vector<std::filesystem::path> dirs;
  for (const char* name : {"mlp", "cnn", "transformer_encoder_opset13", "no_such_test", "transformer_encoder_opset17"})
    dirs.push_back(fixtures / name);
  std::vector<mase::onnx::backend_test_result> one_thread;
  mase::onnx::run_backend_tests(dirs, {}, 1, [&](std::size_t i, const mase::onnx::backend_test_result& r) {
    CHECK(i == one_thread.size());
    one_thread.push_back(r);
  });
  REQUIRE(one_thread.size() == dirs.size());
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    INFO(dirs[i]);
    CHECK(one_thread[i].name == dirs[i].filename().string());
    // The missing folder is that test's failure, not the end of the run.
    CHECK((one_thread[i].status == mase::onnx::test_status::passed) == (i != 3));
  }
  for (std::size_t jobs : {std::size_t{2}, std::size_t{3}}) {
    INFO(jobs << " threads");
    std::size_t seen = 0;
    mase::onnx::run_backend_tests(dirs, {}, jobs, [&](std::size_t i, const mase::onnx::backend_test_result& r) {
      CHECK(i == seen++);
      CHECK(r.status == one_thread[i].status);
      CHECK(r.name == one_thread[i].name);
      CHECK(r.detail == one_thread[i].detail);
    });
    CHECK(seen == dirs.size());
  }
  // An exception from the callback stops the run and reaches the caller.
  std::size_t calls = 0;
  CHECK_THROWS_AS(mase::onnx::run_backend_tests(dirs, {}, 2,
                                                [&](std::size_t, const mase::onnx::backend_test_result&) {
                                                  ++calls;
                                                  throw std::runtime_error("stop");
                                                }),
                  std::runtime_error);
  CHECK(calls == 1);
}

TEST_CASE("raising the exported encoder leaves MASE's coarse ops") {
  for (const char* name : {"transformer_encoder_opset13", "transformer_encoder_opset17"}) {
    INFO(name);
    auto model = mase::onnx::load_model(fixtures / name / "model.onnx");
    (void)mase::raise_granularity_of(model.graph);
    std::map<std::string, int> ops;
    model.graph.for_each_node([&](const mase::node& n) { ++ops[std::string(n.op_name())]; });
    // Two layers: Q, K, V, out-projection and two feed-forward linears each.
    CHECK(ops["linear"] == 12);
    CHECK(ops["scaled_dot_product_attention"] == 2);
    CHECK(ops["layer_norm"] == 4);
    CHECK(ops["gelu"] == 2);
    CHECK(ops["matmul"] == 0);
    CHECK(ops["erf"] == 0);
  }
}

TEST_CASE("the MLP fixture imports as PyTorch's layers, with the file's names") {
  const auto model = mase::onnx::load_model(fixtures / "mlp" / "model.onnx");
  REQUIRE(model.inputs.size() == 1);
  CHECK(model.inputs[0].onnx_name == "x");
  CHECK(model.inputs[0].node == "x");
  CHECK(model.opset == 13);
  CHECK(model.producer == "pytorch");
  int linears = 0;
  model.graph.for_each_node([&](const mase::node& n) {
    if (n.is<mase::op::linear>()) ++linears;
    CHECK_FALSE(n.is<mase::op::constant>());  // every initializer became a parameter
  });
  CHECK(linears == 3);
}

TEST_CASE("Gemm with constant B becomes linear with alpha and beta and transB folded into its parameters") {
  model_builder m({2, 3});
  m.initializer("B", {3, 2}, {1, 2, 3, 4, 5, 6});  // [K, N], not transposed
  m.initializer("C", {2}, {10, 20});
  auto& g = m.node("Gemm", {"x", "B", "C"}, {"y"}, "fc");
  auto* alpha = g.add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(::onnx::AttributeProto::FLOAT);
  alpha->set_f(2.0f);
  auto* beta = g.add_attribute();
  beta->set_name("beta");
  beta->set_type(::onnx::AttributeProto::FLOAT);
  beta->set_f(0.5f);
  m.output("y");
  const auto model = m.import();
  const mase::node& fc = model.graph.at("fc");
  REQUIRE(fc.is<mase::op::linear>());
  // W = alpha · B^T = 2 · [[1,3,5],[2,4,6]]; bias = beta · C = [5, 10].
  CHECK(fc.parameters.at("weight").identical(mase::tensor({2, 3}, {2, 6, 10, 4, 8, 12})));
  CHECK(fc.parameters.at("bias").identical(mase::tensor({2}, {5, 10})));
  mase::evaluator ev(model.graph);
  const auto y = ev.run({{"x", mase::tensor({2, 3}, {1, 0, 0, 0, 1, 1})}});
  // row 0: 2·[1,2] + [5,10]; row 1: 2·([3,4] + [5,6]) + [5,10]
  CHECK(y[0].identical(mase::tensor({2, 2}, {7, 14, 21, 30})));
}

TEST_CASE("shape arithmetic around Reshape is folded to a constant shape") {
  // y = Reshape(x, Concat(Gather(Shape(x), 0), [-1])): PyTorch's x.view(x.size(0), -1).
  model_builder m({2, 3, 4});
  m.node("Shape", {"x"}, {"s"});
  m.int64_initializer("zero", {0});
  m.node("Gather", {"s", "zero"}, {"batch"});
  m.int64_initializer("minus_one", {-1});
  set_int(m.node("Concat", {"batch", "minus_one"}, {"target"}), "axis", 0);
  m.node("Reshape", {"x", "target"}, {"y"}, "view");
  m.output("y");
  const auto model = m.import();
  const mase::node& view = model.graph.at("view");
  REQUIRE(view.is<mase::op::reshape>());
  CHECK(view.as<mase::op::reshape>().shape == mase::shape{2, 12});
  // Only the placeholder, the reshape and the output remain: the folded chain is gone.
  CHECK(model.graph.size() == 3);
}

TEST_CASE("Slice keeps INT64_MAX ends exact") {
  model_builder m({5, 4}, 13);
  m.int64_initializer("starts", {1});
  m.int64_initializer("ends", {std::numeric_limits<std::int64_t>::max()});
  m.int64_initializer("axes", {0});
  m.node("Slice", {"x", "starts", "ends", "axes"}, {"y"}, "rows");
  m.output("y");
  const auto model = m.import();
  const auto& s = model.graph.at("rows").as<mase::op::slice>();
  CHECK(s.start == 1);
  CHECK(s.end == std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("unsupported ops are all listed at once, with their nodes") {
  model_builder m({4});
  m.node("Relu", {"x"}, {"a"});
  m.node("Cosh", {"a"}, {"b"}, "c1");
  m.node("TopK", {"b"}, {"c"}, "t1");
  m.node("Cosh", {"c"}, {"y"}, "c2");
  m.output("y");
  const std::string msg = message_of([&] { (void)m.import(); });
  CHECK(msg == "test.onnx: 2 op types are not supported: Cosh (nodes c1, c2), TopK (node t1). docs/onnx.md lists "
               "the supported ops");
  CHECK_THROWS_AS(m.import(), mase::onnx::unsupported);
}

TEST_CASE("import errors name the file, node, op and the fix") {
  SECTION("a damaged file") {
    const std::string bytes = "\x0a\xff\xff\xff\xff\x0f garbage";
    CHECK(message_of([&] {
            (void)mase::onnx::parse_model(std::as_bytes(std::span(bytes.data(), bytes.size())), "bad.onnx");
          }) == "bad.onnx: not an ONNX model (the protobuf ModelProto does not parse; is the file damaged or "
                "truncated?)");
  }
  SECTION("a missing file") {
    CHECK(message_of([] { (void)mase::onnx::load_model("/nonexistent/model.onnx"); }) ==
          "/nonexistent/model.onnx: no such ONNX model (not a regular file)");
  }
  SECTION("an input no node or initializer produces (a missing initializer)") {
    model_builder m({2, 3});
    m.node("MatMul", {"x", "W"}, {"y"}, "mm");
    m.output("y");
    CHECK(message_of([&] { (void)m.import(); }) ==
          "test.onnx: node \"mm\" (MatMul): input \"W\" is not a graph input, an initializer or the output of an "
          "earlier node");
  }
  SECTION("an attribute of the wrong type") {
    model_builder m({2, 3});
    auto& n = m.node("Softmax", {"x"}, {"y"}, "sm");
    set_ints(n, "axis", {1});
    m.output("y");
    CHECK(message_of([&] { (void)m.import(); }) ==
          "test.onnx: node \"sm\" (Softmax): attribute axis has type INTS, but Softmax takes INT");
  }
  SECTION("a symbolic input dimension without a given shape") {
    model_builder m({2, 3});
    m.model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(
        0)->set_dim_param("batch");
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    CHECK(message_of([&] { (void)m.import(); }) ==
          "test.onnx: graph input \"x\" has a symbolic dimension \"batch\"; give its shape "
          "(import_options::input_shapes or data_shapes)");
    try {
      (void)m.import();
      FAIL("no error");
    } catch (const mase::onnx::unsized_input& e) {
      CHECK(e.input == "x");
      CHECK(e.dimension == "batch");
    }
    import_options options;
    options.input_shapes.insert_or_assign("x", mase::shape{5, 3});
    const auto model = m.import(options);
    CHECK(model.graph.at("x").as<mase::op::placeholder>().shape == mase::shape{5, 3});
  }
  SECTION("a weight given as a graph input") {
    model_builder m({1, 1, 4, 4});
    auto* w = m.model.mutable_graph()->add_input();
    w->set_name("W");
    w->mutable_type()->mutable_tensor_type()->set_elem_type(TP::FLOAT);
    for (int d : {1, 1, 2, 2}) w->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
    m.node("Conv", {"x", "W"}, {"y"}, "conv");
    m.output("y");
    try {
      (void)m.import();
      FAIL("no error");
    } catch (const mase::onnx::needs_constant_inputs& e) {
      CHECK(e.inputs == std::vector<std::string>{"W"});
    }
    import_options options;
    options.constant_inputs.insert_or_assign("W", mase::tensor({1, 1, 2, 2}, {1, 1, 1, 1}));
    const auto model = m.import(options);
    CHECK(model.graph.at("conv").is<mase::op::conv2d>());
  }
  SECTION("an opset newer than 17") {
    model_builder m({2}, 18);
    m.node("Add", {"x", "x"}, {"y"});
    m.output("y");
    CHECK(message_of([&] { (void)m.import(); }) ==
          "test.onnx: the model uses ONNX opset 18; mase imports opsets 7 to 17 (and reads older ones)");
  }
  SECTION("Gemm operands that do not multiply (found by fuzzing: it read past the weight)") {
    model_builder m({2, 3});
    m.initializer("B", {4, 2}, std::vector<float>(8, 1.0f));
    m.node("Gemm", {"x", "B"}, {"y"}, "fc");
    m.output("y");
    CHECK(message_of([&] { (void)m.import(); }) ==
          "test.onnx: node \"fc\" (Gemm): A [2, 3] and B [4, 2] do not multiply (transA = 0, transB = 0)");
  }
  SECTION("a wrong value in a well-typed attribute") {
    model_builder m({2, 3});
    set_int(m.node("Flatten", {"x"}, {"y"}, "fl"), "axis", 7);
    m.output("y");
    CHECK(message_of([&] { (void)m.import(); }) ==
          "test.onnx: node \"fl\" (Flatten): axis 7 is out of range for rank 2");
  }
}

TEST_CASE("opset 6 element-wise ops broadcast B from `axis`, as opset 6 defined") {
  // A [2, 3, 2] + B [3] with broadcast = 1, axis = 1: B lines up with A's dimension 1, which
  // numpy broadcasting (from opset 7) would refuse (3 against the last dimension, 2).
  model_builder m({2, 3, 2}, 6);
  m.initializer("B", {3}, {10, 20, 30});
  auto& add = m.node("Add", {"x", "B"}, {"y"}, "add");
  set_int(add, "broadcast", 1);
  set_int(add, "axis", 1);
  m.output("y");
  const auto model = m.import();
  mase::evaluator ev(model.graph);
  const auto y = ev.run({{"x", mase::tensor({2, 3, 2}, std::vector<float>(12, 1.0f))}});
  CHECK(y[0].identical(mase::tensor({2, 3, 2}, {11, 11, 21, 21, 31, 31, 11, 11, 21, 21, 31, 31})));
}

TEST_CASE("TensorProto reading: raw and typed fields, every numeric type into float32") {
  SECTION("float16 bits, including a subnormal, infinity and NaN") {
    TP t;
    t.set_data_type(TP::FLOAT16);
    t.add_dims(5);
    for (int bits : {0x3c00, 0xc000, 0x0001, 0x7c00, 0x7e00}) t.add_int32_data(bits);
    const auto d = mase::onnx::read_tensor_proto(t, "t");
    CHECK(d.values[0] == 1.0f);
    CHECK(d.values[1] == -2.0f);
    CHECK(d.values[2] == std::ldexp(1.0f, -24));
    CHECK(d.values[3] == std::numeric_limits<float>::infinity());
    CHECK(std::isnan(d.values[4]));
  }
  SECTION("int64 raw data keeps its exact integers") {
    TP t;
    t.set_data_type(TP::INT64);
    t.add_dims(2);
    const std::int64_t v[2] = {std::numeric_limits<std::int64_t>::max(), -3};
    t.set_raw_data(std::string(reinterpret_cast<const char*>(v), sizeof v));
    const auto d = mase::onnx::read_tensor_proto(t, "t");
    REQUIRE(d.integers);
    CHECK((*d.integers)[0] == std::numeric_limits<std::int64_t>::max());
    CHECK(d.values[1] == -3.0f);
  }
  SECTION("a size mismatch names the tensor") {
    TP t;
    t.set_data_type(TP::FLOAT);
    t.add_dims(3);
    t.set_raw_data(std::string(8, '\0'));
    CHECK(message_of([&] { (void)mase::onnx::read_tensor_proto(t, "model.onnx: initializer w"); }) ==
          "model.onnx: initializer w: raw_data has 8 bytes; shape [3] of float needs 12");
  }
  SECTION("a declared shape is checked against the data before anything is allocated for it") {
    // Found by fuzzing: the shape's 3.2 billion floats were allocated (12.7 GB) before the check.
    TP raw;
    raw.set_data_type(TP::FLOAT);
    raw.add_dims(1056914421);
    raw.add_dims(3);
    raw.set_raw_data(std::string(864, '\0'));
    CHECK(message_of([&] { (void)mase::onnx::read_tensor_proto(raw, "model.onnx: initializer w"); }) ==
          "model.onnx: initializer w: raw_data has 864 bytes; shape [1056914421, 3] of float needs 12682973052");
    TP typed;
    typed.set_data_type(TP::FLOAT);
    typed.add_dims(65536);
    typed.add_dims(65535);
    for (float v : {1.0f, 2.0f, 3.0f, 4.0f}) typed.add_float_data(v);
    CHECK(message_of([&] { (void)mase::onnx::read_tensor_proto(typed, "w"); }) ==
          "w: shape [65536, 65535] holds 4294901760 values but float_data has 4");
    TP integers;
    integers.set_data_type(TP::INT64);
    integers.add_dims(std::int64_t{1} << 31);
    integers.add_dims(2);
    integers.add_int64_data(1);
    CHECK(message_of([&] { (void)mase::onnx::read_tensor_proto(integers, "s"); }) ==
          "s: shape [2147483648, 2] holds 4294967296 values but int64_data has 1");
    // The fuzzer's model, whole: the import stops at that initializer with the message.
    const fs::path finding =
        fixtures.parent_path().parent_path() / "fuzz" / "corpus" / "onnx_model" / "onnx_initializer_12gb_allocation.onnx";
    const std::string finding_message = message_of([&] { (void)mase::onnx::load_model(finding); });
    CHECK_THAT(finding_message, Catch::Contains(finding.string()) &&
                                    Catch::Contains("raw_data has 864 bytes; shape [1056914421, 3] of float needs "
                                                    "12682973052"));
  }
  SECTION("strings are unsupported") {
    TP t;
    t.set_data_type(TP::STRING);
    CHECK_THROWS_AS(mase::onnx::read_tensor_proto(t, "t"), mase::onnx::unsupported);
  }
}

TEST_CASE("save_tensor and load_tensor round-trip bit for bit") {
  const fs::path file = fs::temp_directory_path() / "mase_test_tensor.pb";
  const mase::tensor t({2, 3}, {1.5f, -0.0f, std::numeric_limits<float>::infinity(), 3e-38f, -7, 0.1f});
  mase::onnx::save_tensor(file, t, "y");
  CHECK(mase::onnx::load_tensor(file).identical(t));
  fs::remove(file);
}

namespace {

// x and z, both [batch, 3] ("batch" symbolic), added.
model_builder two_inputs_with_a_batch() {
  model_builder m({2, 3});
  auto* x = m.model.mutable_graph()->mutable_input(0);
  x->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("batch");
  auto* z = m.model.mutable_graph()->add_input();
  *z = *x;
  z->set_name("z");
  m.node("Add", {"x", "z"}, {"y"}, "add");
  m.output("y");
  return m;
}

}  // namespace

TEST_CASE("symbolic dimensions take their sizes from the data given for the inputs") {
  const model_builder m = two_inputs_with_a_batch();
  import_options options;
  SECTION("one input's data sizes \"batch\" for both") {
    options.data_shapes.insert_or_assign("x", mase::shape{5, 3});
    const auto model = m.import(options);
    CHECK(model.graph.at("x").as<mase::op::placeholder>().shape == mase::shape{5, 3});
    CHECK(model.graph.at("z").as<mase::op::placeholder>().shape == mase::shape{5, 3});
  }
  SECTION("two inputs that give \"batch\" different sizes") {
    options.data_shapes.insert_or_assign("x", mase::shape{5, 3});
    options.data_shapes.insert_or_assign("z", mase::shape{4, 3});
    try {
      (void)m.import(options);
      FAIL("no error");
    } catch (const mase::onnx::input_data_mismatch& e) {
      CHECK(std::string(e.what()) == "test.onnx: the symbolic dimension \"batch\" is 5 in the data given for graph "
                                     "input \"x\" and 4 in the data given for graph input \"z\"; give inputs whose "
                                     "\"batch\" agrees");
      CHECK(e.inputs == std::vector<std::string>{"x", "z"});
    }
  }
  SECTION("data that contradicts a fixed dimension, or the rank") {
    options.data_shapes.insert_or_assign("x", mase::shape{5, 4});
    CHECK(message_of([&] { (void)m.import(options); }) ==
          "test.onnx: graph input \"x\" has shape [batch, 3] in the model, and the data given for it has shape "
          "[5, 4]: dimension 1 is fixed at 3");
    options.data_shapes.insert_or_assign("x", mase::shape{5});
    CHECK(message_of([&] { (void)m.import(options); }) ==
          "test.onnx: graph input \"x\" has rank 2 in the model ([batch, 3]), but the data given for it has shape "
          "[5]");
  }
  SECTION("input_shapes wins over the data") {
    options.input_shapes.insert_or_assign("x", mase::shape{7, 3});
    options.input_shapes.insert_or_assign("z", mase::shape{7, 3});
    options.data_shapes.insert_or_assign("x", mase::shape{5, 4});
    CHECK(m.import(options).graph.at("x").as<mase::op::placeholder>().shape == mase::shape{7, 3});
  }
  SECTION("a name that is no graph input is refused as such, before the symbolic dimension it leaves unsized") {
    options.data_shapes.insert_or_assign("w", mase::shape{5, 3});
    try {
      (void)m.import(options);
      FAIL("no error");
    } catch (const mase::onnx::unknown_input& e) {
      CHECK(std::string(e.what()) ==
            "test.onnx: data_shapes names \"w\", which is not a graph input; the graph inputs are x, z");
      CHECK(e.name == "w");
      CHECK(e.graph_inputs == std::vector<std::string>{"x", "z"});
      CHECK(e.in_data_shapes);
    }
    import_options shapes;
    shapes.input_shapes.insert_or_assign("y", mase::shape{5, 3});
    CHECK(message_of([&] { (void)m.import(shapes); }) ==
          "test.onnx: input_shapes names \"y\", which is not a graph input; the graph inputs are x, z");
  }
  SECTION("a given shape replaces the file's sizes, not its rank") {
    options.input_shapes.insert_or_assign("x", mase::shape{7});
    options.input_shapes.insert_or_assign("z", mase::shape{7, 3});
    CHECK(message_of([&] { (void)m.import(options); }) ==
          "test.onnx: graph input \"x\": the shape given for it, [7], has 1 dimension, and the model declares 2 "
          "([batch, 3]); give all 2");
  }
}

TEST_CASE("symbolic_placeholder sizes the symbolic dimensions left unsized, for describing a model, and lists them") {
  model_builder m = two_inputs_with_a_batch();
  // u: [?, 3], its first dimension neither sized nor named.
  auto* u = m.model.mutable_graph()->add_input();
  *u = m.model.graph().input(0);
  u->set_name("u");
  u->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->clear_dim_param();
  import_options options;
  options.symbolic_placeholder = 53;
  SECTION("\"batch\" gets one size across the inputs, an unnamed dimension its own") {
    const auto model = m.import(options);
    CHECK(model.graph.at("x").as<mase::op::placeholder>().shape == mase::shape{53, 3});
    CHECK(model.graph.at("z").as<mase::op::placeholder>().shape == mase::shape{53, 3});
    CHECK(model.graph.at("u").as<mase::op::placeholder>().shape == mase::shape{54, 3});
    REQUIRE(model.symbolic_dimensions.size() == 2);
    const auto& batch = model.symbolic_dimensions[0];
    CHECK(batch.name == "batch");
    CHECK(batch.size == 53);
    REQUIRE(batch.uses.size() == 2);
    CHECK((batch.uses[0].input == "x" && batch.uses[0].axis == 0 && batch.uses[1].input == "z" &&
           batch.uses[1].axis == 0));
    const auto& unnamed = model.symbolic_dimensions[1];
    CHECK(unnamed.name.empty());
    CHECK(unnamed.size == 54);
    REQUIRE(unnamed.uses.size() == 1);
    CHECK((unnamed.uses[0].input == "u" && unnamed.uses[0].axis == 0));
  }
  SECTION("sizes given by data or input_shapes are used, and only what they leave gets a placeholder") {
    options.data_shapes.insert_or_assign("x", mase::shape{5, 3});
    options.input_shapes.insert_or_assign("u", mase::shape{2, 3});
    const auto model = m.import(options);
    CHECK(model.graph.at("z").as<mase::op::placeholder>().shape == mase::shape{5, 3});
    CHECK(model.graph.at("u").as<mase::op::placeholder>().shape == mase::shape{2, 3});
    CHECK(model.symbolic_dimensions.empty());
  }
  SECTION("without it (the default), an unsized symbolic dimension is an error, as running needs real sizes") {
    CHECK_THROWS_AS(m.import(), mase::onnx::unsized_input);
  }
  SECTION("a negative placeholder is refused") {
    options.symbolic_placeholder = -1;
    CHECK(message_of([&] { (void)m.import(options); }) ==
          "test.onnx: import_options::symbolic_placeholder is -1; give a positive size, or 0 to require every "
          "symbolic dimension's size");
  }
}

TEST_CASE("comparisons and logic fold where every input is a constant, as torch exports expand(-1, n), and run "
          "as ops otherwise") {
  // torch 1.13's expand(-1, 3) on x [2, 1]: Where(Equal(target, -1), 1, target) is the shape.
  model_builder m({2, 1});
  m.int64_initializer("target", {-1, 3});
  m.int64_initializer("minus_one", {-1});
  m.int64_initializer("one", {1});
  m.node("Equal", {"target", "minus_one"}, {"is_kept"}, "eq");
  m.node("Where", {"is_kept", "one", "target"}, {"shape"}, "where");
  m.node("Expand", {"x", "shape"}, {"y"}, "expand");
  m.output("y");
  const auto model = m.import();
  for (mase::node_id id : model.graph.order()) CHECK(model.graph[id].name != "eq");
  mase::evaluator ev(model.graph);
  const auto y = ev.run({{"x", mase::tensor({2, 1}, {1, 2})}});
  CHECK(y[0].shape() == mase::shape{2, 3});
  CHECK(std::vector<float>(y[0].values().begin(), y[0].values().end()) == std::vector<float>{1, 1, 1, 2, 2, 2});

  SECTION("Less, Not and a bool Cast on float constants") {
    model_builder f({2});
    f.initializer("a", {2}, {1, 5});
    f.initializer("b", {1}, {3});
    f.node("Less", {"a", "b"}, {"less"});
    f.node("Not", {"less"}, {"not"});
    set_int(f.node("Cast", {"not"}, {"mask"}), "to", TP::FLOAT);
    f.node("Mul", {"x", "mask"}, {"y"});
    f.output("y");
    const auto folded = f.import();
    mase::evaluator fev(folded.graph);
    const auto r = fev.run({{"x", mase::tensor({2}, {10, 20})}});
    CHECK(std::vector<float>(r[0].values().begin(), r[0].values().end()) == std::vector<float>{0, 20});
  }
  SECTION("on values computed at run time they become graph ops: Greater, Or, Where on x") {
    // y = where(x > 1 or x < -1, x, 0): clipping small values to zero, as torch exports it.
    model_builder r({5});
    r.initializer("one", {}, {1});
    r.initializer("minus_one", {}, {-1});
    r.initializer("zero", {}, {0});
    r.node("Greater", {"x", "one"}, {"big"}, "gt");
    r.node("Less", {"x", "minus_one"}, {"small"}, "lt");
    r.node("Or", {"big", "small"}, {"outside"}, "or");
    r.node("Where", {"outside", "x", "zero"}, {"y"}, "where");
    r.output("y");
    const auto model = r.import();
    CHECK(model.graph.at("gt").is<mase::op::gt>());
    CHECK(model.graph.at("or").is<mase::op::logical_or>());
    mase::evaluator rev(model.graph);
    const auto y = rev.run({{"x", mase::tensor({5}, {-3, -1, 0.5f, 1, 2})}});
    CHECK(std::vector<float>(y[0].values().begin(), y[0].values().end()) == std::vector<float>{-3, 0, 0, 0, 2});
  }
}

TEST_CASE("onnx-test's comparison reports the largest absolute and relative errors and where they are") {
  const mase::tensor expected({2, 3}, {2, 0.125f, 4, 1, 3, 6.5f});
  const mase::tensor actual({2, 3}, {2, 0.03125f, 4, 1, 3, 6});
  CHECK(mase::onnx::detail::compare_outputs(actual, expected, "y", 1e-3, 1e-7) ==
        "output y: 2 of 6 elements out of tolerance (atol 1e-07, rtol 0.001); largest absolute error 0.5 at y[1, 2] "
        "(flat index 5): 6 vs expected 6.5; largest relative error 0.75 at y[0, 1] (flat index 1): 0.03125 vs "
        "expected 0.125");
  CHECK(mase::onnx::detail::compare_outputs(actual, actual, "y", 0, 0).empty());
}
