// Checkpoints: a graph saved to <stem>.json + <stem>.safetensors reads back equal, bit for bit;
// the safetensors bytes follow the published layout; every kind of damage is a mase::error that
// names the problem; saving never leaves temporaries or half-written files behind.
#include <mase/io/checkpoint/codec.hpp>  // checkpoint_detail, beside the entry points

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

mase::tensor from_bits(const mase::shape& s, std::initializer_list<std::uint32_t> bits) {
  std::vector<float> values;
  for (std::uint32_t b : bits) values.push_back(std::bit_cast<float>(b));
  return mase::tensor(s, std::move(values));
}

mase::tensor counting(const mase::shape& s, float start) {
  mase::tensor t(s);
  for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = start + static_cast<float>(i) * 0.25f;
  return t;
}

// The checkpoint's pairing hash, from its definition in io/checkpoint/codec.hpp's comment: FNV-1a 64
// over little-endian 8-byte words, the last zero-padded, then the byte count. Written
// independently of the library's streaming version.
std::uint64_t fnv1a64_words(std::string_view bytes) {
  std::string padded(bytes);
  padded.append((8 - padded.size() % 8) % 8, '\0');
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < padded.size(); i += 8) {
    std::uint64_t w = 0;
    for (std::size_t k = 0; k < 8; ++k) w |= std::uint64_t{static_cast<unsigned char>(padded[i + k])} << (8 * k);
    h = (h ^ w) * 0x100000001b3ull;
  }
  return (h ^ bytes.size()) * 0x100000001b3ull;
}

// A safetensors file from its header text and data, laid out by hand from the spec.
std::string make_safetensors(std::string header, std::string_view data) {
  std::string file(8, '\0');
  const std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) file[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return file + header + std::string(data);
}

// Rewrites the .json's record of its .safetensors (size and hash) to match `safetensors`, so a
// test reaches the checks after the pairing check.
std::string repair_pairing(std::string json, std::string_view safetensors) {
  const auto begin = json.find("\"safetensors\": {");
  REQUIRE(begin != std::string::npos);
  const auto end = json.find('}', begin);
  return json.replace(begin, end + 1 - begin,
                      fmt::format("\"safetensors\": {{\"bytes\": {}, \"fnv1a64_words\": \"{:016x}\"}}", safetensors.size(),
                                  fnv1a64_words(safetensors)));
}

std::string replaced(std::string text, std::string_view from, std::string_view to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

// The message of the mase::error that loading gives ("" if it loads).
std::string load_error(const std::string& json, const std::string& safetensors,
                       mase::checkpoint_load_options options = {}) {
  try {
    (void)mase::graph_from_checkpoint_strings(json, safetensors, options);
  } catch (const mase::error& e) {
    return e.what();
  }
  return "";
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& p, std::string_view bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A fresh directory, removed at the end of the test.
struct temp_dir {
  fs::path path;
  temp_dir() {
    std::random_device rd;
    path = fs::temp_directory_path() / fmt::format("mase_checkpoint_test_{:08x}{:08x}", rd(), rd());
    fs::create_directories(path);
  }
  ~temp_dir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

mase::tensor_meta meta(const mase::shape& s, mase::format precision, std::optional<mase::tensor> value = std::nullopt) {
  return mase::tensor_meta{.shape = s, .precision = precision, .value = std::move(value)};
}

// Every metadata section filled with non-default values, every variant alternative present.
mase::node_metadata rich_metadata(std::string_view op_name) {
  using namespace mase;
  node_metadata m;
  m.common.mase_op = std::string(op_name);
  m.common.mase_type = node_kind::module_related_func;
  m.common.args.insert_or_assign(
      "data_in_0", meta({2, 4}, fixed_fmt{.width = 8, .frac = 3},
                        from_bits({2, 4}, {0x3f800000, 0x80000000, 0x7fc00001, 0xffc12345, 0x7f800001, 0x00000001,
                                           0x7f7fffff, 0xff800000})));
  m.common.args.insert_or_assign("weight", meta({3, 4}, formats::e4m3));
  m.common.args.insert_or_assign("bias", meta({1, 3}, parse_format("block_fp<8,8,127,[4,4],weight>")));
  m.common.args.insert_or_assign("inplace", config_value(std::in_place_type<bool>, true));
  m.common.args.insert_or_assign("dim", config_value(std::in_place_type<std::int64_t>, -1));
  m.common.args.insert_or_assign("alpha", config_value(std::in_place_type<double>, 0.1));
  m.common.args.insert_or_assign("huge", config_value(std::in_place_type<double>, 1e300));
  m.common.args.insert_or_assign("tiny", config_value(std::in_place_type<double>, 5e-324));
  m.common.args.insert_or_assign("whole", config_value(std::in_place_type<double>, 3.0));
  m.common.args.insert_or_assign("unbounded", config_value(std::in_place_type<double>, -std::numeric_limits<double>::infinity()));
  m.common.args.insert_or_assign("size", config_value(std::in_place_type<dims>, dims{2, -1, 0}));
  m.common.args.insert_or_assign("no_dims", config_value(std::in_place_type<dims>, dims{}));
  m.common.args.insert_or_assign("odd key. \"quoted\" \xc3\xa9", config_value(std::in_place_type<bool>, false));
  m.common.results.insert_or_assign("data_out_0", meta({2, 3}, parse_format("minifloat<8,4,7,ieee>"), counting({2, 3}, -1.0f)));
  m.common.results.insert_or_assign("data_out_1", meta({}, formats::float32, from_bits({}, {0x80000000})));

  statistic range;
  range.insert_or_assign("min", stat_value(-1.5));
  range.insert_or_assign("max", stat_value(2.25));
  range.insert_or_assign("count", stat_value(not_available{}));
  range.insert_or_assign("histogram", stat_value(std::vector<double>{0.1, 1.0 / 3.0, std::numeric_limits<double>::infinity(), 1e-310}));
  range.insert_or_assign("empty", stat_value(std::vector<double>{}));
  m.software.args["data_in_0"].stat.insert_or_assign("range_min_max", range);
  m.software.args["weight"].stat["variance_precise"].insert_or_assign("variance", stat_value(7.0));
  m.software.results["data_out_0"].stat["range_quantile"].insert_or_assign("max", stat_value(-0.0625));

  m.hardware.is_implicit = true;
  m.hardware.device_id = 3;
  m.hardware.toolchain = toolchain::mlir_hls;
  m.hardware.module = "fixed_linear";
  m.hardware.interface.insert_or_assign("weight", interface_entry{.storage = "URAM", .transpose = true});
  m.hardware.interface.insert_or_assign("bias", interface_entry{});
  m.hardware.verilog_param.insert_or_assign("DATA_IN_0_PRECISION_0", verilog_value(std::int64_t{8}));
  m.hardware.verilog_param.insert_or_assign("NEGATIVE", verilog_value(std::int64_t{-5}));
  m.hardware.verilog_param.insert_or_assign("HAS_BIAS", verilog_value(true));
  m.hardware.verilog_param.insert_or_assign("SHAPE", verilog_value(std::vector<std::int64_t>{1, 2, 3}));
  m.hardware.verilog_param.insert_or_assign("NOTHING", verilog_value(std::vector<std::int64_t>{}));
  m.hardware.verilog_param.insert_or_assign("NAME", verilog_value(std::string("fc1")));
  m.hardware.dependence_files = {"linear/rtl/fixed_linear.sv", "common/rtl/join2.sv"};
  m.hardware.max_parallelism = {1, 2, 3, 4};
  m.hardware.channels_last = true;
  return m;
}

// placeholder -> linear (special float bits) -> relu -> dropout -> split -> getitem x2, a
// constant, add, output; metadata everywhere.
mase::graph sample_graph() {
  using namespace mase;
  graph g;
  const node_id x = g.add("x", op::placeholder{.shape = {2, 4}});
  const node_id fc1 = g.add("fc1", op::linear{.in_features = 4, .out_features = 3, .bias = true}, {x});
  g.set_parameter(fc1, "weight",
                  from_bits({3, 4}, {0x00000000, 0x80000000, 0x7f800000, 0xff800000,   // ±0, ±inf
                                     0x7fc00000, 0x7fc00001, 0xffffffff, 0x7f800001,   // NaN payloads, signalling NaN
                                     0x00000001, 0x807fffff, 0x7f7fffff, 0x3eaaaaab}));  // subnormals, max, 1/3
  g.set_parameter(fc1, "bias", from_bits({3}, {0x3f800000, 0xbf800000, 0x80000000}));
  const node_id r = g.add("relu1", op::relu{.inplace = true}, {fc1});
  const node_id d = g.add("drop", op::dropout{.p = 0.1, .inplace = false}, {r});
  const node_id s = g.add("split1", op::split{.split_size = 2, .dim = -1}, {d});
  const node_id g0 = g.add("getitem0", op::getitem{.index = 0}, {s});
  const node_id g1 = g.add("getitem1", op::getitem{.index = -1}, {s});
  const node_id c = g.add("const1", op::constant{.shape = {2, 1}});
  g.set_parameter(c, "value", counting({2, 1}, 0.5f));
  const node_id a = g.add("add1", op::add{}, {g1, c});
  g.add("output", op::output{}, {g0, a});

  g[fc1].meta = rich_metadata("linear");
  g[x].meta.common.mase_op = "placeholder";
  g[x].meta.common.results.insert_or_assign("data_out_0", meta({2, 4}, formats::float16));
  g[x].meta.hardware.toolchain = toolchain::external_hls;  // module stays empty
  g[d].meta.common.args.insert_or_assign("p", config_value(std::in_place_type<double>, 0.1));
  g[s].meta.software.results["data_out_0"].stat["range_min_max"].insert_or_assign("count", stat_value(not_available{}));
  return g;
}

// A small graph for the damage tests.
mase::graph small_graph(float first_weight = 0.5f) {
  using namespace mase;
  graph g;
  const node_id x = g.add("x", op::placeholder{.shape = {1, 4}});
  const node_id fc1 = g.add("fc1", op::linear{.in_features = 4, .out_features = 3, .bias = true}, {x});
  g.set_parameter(fc1, "weight", counting({3, 4}, first_weight));
  g.set_parameter(fc1, "bias", counting({3}, -1.0f));
  const node_id r = g.add("relu1", op::relu{}, {fc1});
  g.add("output", op::output{}, {r});
  return g;
}

}  // namespace

TEST_CASE("the pairing hash is FNV-1a 64 over 8-byte words, however the bytes arrive") {
  // FNV-1a's offset basis and prime: the empty input hashes to basis * prime (the byte count 0).
  CHECK(fnv1a64_words("") == 0xcbf29ce484222325ull * 0x100000001b3ull);
  std::string bytes;
  for (int i = 0; i < 1000; ++i) bytes += static_cast<char>((i * 37 + 11) & 0xff);
  for (std::size_t length : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{8}, std::size_t{9},
                             std::size_t{63}, std::size_t{1000}})
    for (std::size_t chunk : {std::size_t{1}, std::size_t{3}, std::size_t{8}, std::size_t{13}, std::size_t{1000}}) {
      mase::checkpoint_detail::fnv1a64_words streaming;
      for (std::size_t at = 0; at < length; at += chunk)
        streaming.update(bytes.data() + at, std::min(chunk, length - at));
      INFO("length " << length << ", chunks of " << chunk);
      CHECK(streaming.value() == fnv1a64_words(std::string_view(bytes).substr(0, length)));
    }
  // A change in any one byte changes the hash; so does appending a zero byte.
  const std::uint64_t base = fnv1a64_words(bytes);
  for (std::size_t i = 0; i < bytes.size(); i += 97) {
    std::string changed = bytes;
    changed[i] = static_cast<char>(changed[i] ^ 0x10);
    CHECK(fnv1a64_words(changed) != base);
  }
  CHECK(fnv1a64_words(bytes + std::string(1, '\0')) != base);
  // What a save records is that hash of its .safetensors.
  const auto saved = mase::checkpoint_to_strings(sample_graph());
  CHECK_THAT(saved.json, Contains(fmt::format("\"fnv1a64_words\": \"{:016x}\"", fnv1a64_words(saved.safetensors))));
}

TEST_CASE("a graph with every op, metadata section and variant alternative reloads equal, from files") {
  const mase::graph original = sample_graph();
  temp_dir dir;
  const fs::path stem = dir.path / "model";
  mase::export_checkpoint(original, stem);

  // Only the two files: the temporaries were renamed away.
  CHECK(listing(dir.path) == std::vector<std::string>{"model.json", "model.safetensors"});

  const mase::graph reloaded = mase::from_checkpoint(stem);
  REQUIRE(reloaded == original);

  // graph::operator== compares doubles with ==, which cannot see the sign of zero: check bits.
  const auto& args = reloaded.at("fc1").meta.common.args;
  CHECK(std::bit_cast<std::uint64_t>(std::get<double>(std::get<mase::config_value>(args.at("tiny")))) == 1u);
  CHECK(std::holds_alternative<double>(std::get<mase::config_value>(args.at("whole"))));
  CHECK(std::holds_alternative<std::int64_t>(std::get<mase::config_value>(args.at("dim"))));
  const auto& software = reloaded.at("fc1").meta.software.results.at("data_out_0").stat.at("range_quantile");
  CHECK(std::bit_cast<std::uint64_t>(std::get<double>(software.at("max"))) == std::bit_cast<std::uint64_t>(-0.0625));
  // Node order and edges by name.
  std::vector<std::string> names;
  reloaded.for_each_node([&](const mase::node& n) { names.push_back(n.name); });
  CHECK(names == std::vector<std::string>{"x", "fc1", "relu1", "drop", "split1", "getitem0", "getitem1", "const1",
                                          "add1", "output"});
  CHECK(reloaded[reloaded.inputs(reloaded.id("add1"))[1]].name == "const1");

  // The stem may also be given as the .json path.
  CHECK(mase::from_checkpoint(dir.path / "model.json") == original);

  // Saving again over an existing checkpoint replaces it.
  const mase::graph other = small_graph();
  mase::export_checkpoint(other, stem);
  CHECK(mase::from_checkpoint(stem) == other);
  CHECK(listing(dir.path) == std::vector<std::string>{"model.json", "model.safetensors"});
}

TEST_CASE("the in-memory form equals the files and is a fixed point") {
  const mase::graph original = sample_graph();
  const mase::checkpoint_strings saved = mase::checkpoint_to_strings(original);
  const mase::graph reloaded = mase::graph_from_checkpoint_strings(saved.json, saved.safetensors);
  REQUIRE(reloaded == original);
  const mase::checkpoint_strings again = mase::checkpoint_to_strings(reloaded);
  CHECK(again.json == saved.json);
  CHECK(again.safetensors == saved.safetensors);

  temp_dir dir;
  mase::export_checkpoint(original, dir.path / "m");
  CHECK(read_file(dir.path / "m.json") == saved.json);
  CHECK(read_file(dir.path / "m.safetensors") == saved.safetensors);
}

TEST_CASE("doubles in metadata keep every bit: NaN payloads, -0, subnormals, random patterns") {
  using namespace mase;
  std::vector<double> values = {0.0,
                                -0.0,
                                0.1,
                                1.0 / 3.0,
                                5e-324,
                                -2.2250738585072014e-308,
                                std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity(),
                                std::bit_cast<double>(0x7ff8000000000000ull),   // the NaN spelled "nan"
                                std::bit_cast<double>(0xfff8000000000000ull),   // negative NaN
                                std::bit_cast<double>(0x7ff0000000000001ull),   // signalling NaN
                                std::bit_cast<double>(0x7ff8dead0000beefull)};  // payload
  std::mt19937_64 random(20240607);
  for (int i = 0; i < 2000; ++i) values.push_back(std::bit_cast<double>(random()));

  graph g;
  const node_id x = g.add("x", op::placeholder{.shape = {1}});
  g.add("drop", op::dropout{.p = -0.0, .inplace = false}, {x});
  statistic stat;
  stat.insert_or_assign("list", stat_value(values));
  for (std::size_t i = 0; i < 13; ++i) {
    stat.insert_or_assign(fmt::format("scalar_{}", i), stat_value(values[i]));
    g.at("x").meta.common.args.insert_or_assign(fmt::format("config_{}", i),
                                                config_value(std::in_place_type<double>, values[i]));
  }
  g.at("x").meta.software.args["data_in_0"].stat.insert_or_assign("all", stat);

  const checkpoint_strings saved = checkpoint_to_strings(g);
  CHECK_THAT(saved.json, Contains("\"nan\"") && Contains("\"nan:0x7ff8dead0000beef\"") && Contains("\"-inf\"") &&
                             Contains("-0.0"));
  const graph reloaded = graph_from_checkpoint_strings(saved.json, saved.safetensors);

  const auto bits = [](double v) { return std::bit_cast<std::uint64_t>(v); };
  const statistic& back = reloaded.at("x").meta.software.args.at("data_in_0").stat.at("all");
  const auto& list = std::get<std::vector<double>>(back.at("list"));
  REQUIRE(list.size() == values.size());
  for (std::size_t i = 0; i < values.size(); ++i) REQUIRE(bits(list[i]) == bits(values[i]));
  for (std::size_t i = 0; i < 13; ++i) {
    CHECK(bits(std::get<double>(back.at(fmt::format("scalar_{}", i)))) == bits(values[i]));
    const auto& arg = reloaded.at("x").meta.common.args.at(fmt::format("config_{}", i));
    CHECK(bits(std::get<double>(std::get<config_value>(arg))) == bits(values[i]));
  }
  CHECK(bits(reloaded.at("drop").as<op::dropout>().p) == bits(-0.0));
  // NaN != NaN, so the graphs are compared through their (bit-exact) serialization.
  CHECK(checkpoint_to_strings(reloaded).json == saved.json);
}

TEST_CASE("the safetensors bytes follow the published layout, byte by byte") {
  mase::graph g;
  const mase::node_id c = g.add("c", mase::op::constant{.shape = {2}});
  g.set_parameter(c, "value", mase::tensor({2}, {1.0f, -2.0f}));
  const std::string bytes = mase::checkpoint_to_strings(g).safetensors;

  // 8 bytes: the header length N = 120 as a little-endian u64.
  std::string expected("\x78\x00\x00\x00\x00\x00\x00\x00", 8);
  // N bytes: the JSON header, padded with spaces so the data starts at a multiple of 8 (8 + 120).
  expected += R"({"__metadata__":{"format":"mase-checkpoint","version":"1"},)"
              R"("c.value":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  expected += "  ";
  // The data: 1.0f = 0x3f800000 and -2.0f = 0xc0000000, little-endian.
  expected += std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8);
  CHECK(bytes.size() == 136);
  CHECK(bytes == expected);
}

TEST_CASE("the bytes the safetensors reference implementation writes for a (1, 2, 3) F32 tensor load") {
  // huggingface/safetensors, safetensors/src/tensor.rs, test_serialization: the file its
  // serialize() gives for {"attn.0": F32 [1, 2, 3] = 0 1 2 3 4 5}.
  const unsigned char reference[] = {
      64,  0,   0,   0,   0,   0,   0,   0,   123, 34,  97,  116, 116, 110, 46,  48,  34,  58,  123, 34,  100,
      116, 121, 112, 101, 34,  58,  34,  70,  51,  50,  34,  44,  34,  115, 104, 97,  112, 101, 34,  58,  91,
      49,  44,  50,  44,  51,  93,  44,  34,  100, 97,  116, 97,  95,  111, 102, 102, 115, 101, 116, 115, 34,
      58,  91,  48,  44,  50,  52,  93,  125, 125, 0,   0,   0,   0,   0,   0,   128, 63,  0,   0,   0,   64,
      0,   0,   64,  64,  0,   0,   128, 64,  0,   0,   160, 64};
  const std::string safetensors(reinterpret_cast<const char*>(reference), sizeof reference);
  const std::string json = repair_pairing(R"({"format": "mase-checkpoint", "version": 1, "safetensors": {},
    "nodes": [{"name": "attn", "op": "constant", "attributes": {"shape": [1, 2, 3]},
               "parameters": {"value": "attn.0"}}]})",
                                          safetensors);
  const mase::graph g = mase::graph_from_checkpoint_strings(json, safetensors);
  CHECK(g.parameter("attn.value") == mase::tensor({1, 2, 3}, {0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f}));
}

TEST_CASE("a safetensors file laid out by another writer loads (no padding, other key order, no __metadata__)") {
  // Two tensors stored in the opposite order to the nodes, as a foreign tool might.
  const std::string header = R"({"fc1.bias":{"shape":[2],"data_offsets":[0,8],"dtype":"F32"},)"
                             R"("fc1.weight":{"data_offsets":[8,16],"dtype":"F32","shape":[2,1]}})";
  const std::string data("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40", 16);  // 1 2 3 4
  const std::string safetensors = make_safetensors(header, data);
  const std::string json = repair_pairing(R"({"format": "mase-checkpoint", "version": 1,
    "safetensors": {},
    "nodes": [{"name": "x", "op": "placeholder", "attributes": {"shape": [1]}},
              {"name": "fc1", "op": "linear", "inputs": ["x"],
               "attributes": {"in_features": 1, "out_features": 2, "bias": true},
               "parameters": {"weight": "fc1.weight", "bias": "fc1.bias"}}]})",
                                          safetensors);
  const mase::graph g = mase::graph_from_checkpoint_strings(json, safetensors);
  CHECK(g.parameter("fc1.weight") == mase::tensor({2, 1}, {3.0f, 4.0f}));
  CHECK(g.parameter("fc1.bias") == mase::tensor({2}, {1.0f, 2.0f}));
  // Fields left out take the structs' defaults.
  CHECK(g.at("fc1").meta == mase::node_metadata{});
}

TEST_CASE("damaged safetensors bytes are mase::errors naming the problem") {
  const mase::checkpoint_strings good = mase::checkpoint_to_strings(small_graph());
  REQUIRE(load_error(good.json, good.safetensors).empty());
  const mase::checkpoint_load_options unpaired{.verify_pairing = false};

  SECTION("truncated at any point: the recorded size tells, and the structure tells without it") {
    const std::uint64_t header_size = [&] {
      std::uint64_t n = 0;
      for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(static_cast<unsigned char>(good.safetensors[static_cast<std::size_t>(i)])) << (8 * i);
      return n;
    }();
    const std::size_t cuts[] = {0, 3, 7, 8, 20, static_cast<std::size_t>(8 + header_size),
                                static_cast<std::size_t>(8 + header_size + 5), good.safetensors.size() - 1};
    for (std::size_t cut : cuts) {
      INFO("cut at " << cut);
      const std::string cut_file = good.safetensors.substr(0, cut);
      CHECK_THAT(load_error(good.json, cut_file), Contains("different saves") && Contains("truncated"));
      const std::string unpaired_message = load_error(good.json, cut_file, unpaired);
      if (cut < 8) CHECK_THAT(unpaired_message, Contains("shorter than safetensors' 8-byte header length"));
      else if (cut < 8 + header_size) CHECK_THAT(unpaired_message, Contains("runs past the end of the file"));
      else CHECK_THAT(unpaired_message, Contains("run past the end of the data") && Contains("truncated"));
      CHECK_THAT(unpaired_message, Contains("<checkpoint safetensors>"));
    }
  }

  SECTION("a flipped header length") {
    std::string huge = good.safetensors;
    huge[6] = '\x01';  // N += 2^48
    CHECK_THAT(load_error(repair_pairing(good.json, huge), huge), Contains("runs past the end of the file"));
    // 8 shorter cuts the closing brace whatever the padding (at most 7 spaces).
    std::string shorter = good.safetensors;
    std::uint64_t n = 0;
    for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(static_cast<unsigned char>(shorter[static_cast<std::size_t>(i)])) << (8 * i);
    n -= 8;
    for (int i = 0; i < 8; ++i) shorter[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
    CHECK_THAT(load_error(repair_pairing(good.json, shorter), shorter), Contains("header: not valid JSON"));
    std::string zero = good.safetensors;
    std::fill(zero.begin(), zero.begin() + 8, '\0');
    CHECK_THAT(load_error(repair_pairing(good.json, zero), zero), Contains("must be a JSON object starting with '{'"));
  }

  SECTION("a dtype other than F32") {
    const std::string bf16 = replaced(good.safetensors, R"("dtype":"F32")", R"("dtype":"BF16")");
    CHECK_THAT(load_error(repair_pairing(good.json, bf16), bf16), Contains("dtype BF16") && Contains("F32"));
  }

  SECTION("overlapping, gapped, mis-sized or out-of-range data_offsets") {
    const std::string data(12, '\0');
    auto error_for = [&](const std::string& header) {
      const std::string st = make_safetensors(header, data);
      return load_error(repair_pairing(good.json, st), st);
    };
    CHECK_THAT(error_for(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                         R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})"),
               Contains("\"a\" and \"b\" overlap"));
    CHECK_THAT(error_for(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                         R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})"),
               Contains("bytes 4 to 8 of the data belong to no tensor"));
    CHECK_THAT(error_for(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})"),
               Contains("the last 4 bytes of the data belong to no tensor"));
    CHECK_THAT(error_for(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,12]}})"),
               Contains("needs 8 bytes of F32 data, but data_offsets [0, 12] hold 12"));
    CHECK_THAT(error_for(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})"),
               Contains("run past the end of the data (12 bytes)"));
    // A declared shape far beyond the data is refused before the tensor is allocated.
    CHECK_THAT(error_for(R"({"a":{"dtype":"F32","shape":[1056914421,3],"data_offsets":[0,12]}})"),
               Contains("shape [1056914421, 3] needs more bytes of F32 data, but data_offsets [0, 12] hold 12"));
    CHECK_THAT(error_for(R"({"a":{"dtype":"F32","shape":[4611686018427387904,4611686018427387904,0],"data_offsets":[0,0]}})"),
               Contains("more elements than a tensor can hold"));
    CHECK_THAT(error_for(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]},"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})"),
               Contains("\"a\" appears twice"));
    CHECK_THAT(error_for(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12],"extra":1}})"),
               Contains("unknown field \"extra\""));
    CHECK_THAT(error_for(R"({"__metadata__":{"k":1},"a":{"dtype":"F32","shape":[3],"data_offsets":[0,12]}})"),
               Contains("must map strings to strings"));
    CHECK_THAT(error_for(fmt::format(R"({{"__metadata__":{{"k":{}}},"a":{{"dtype":"F32","shape":[3],"data_offsets":[0,12]}}}})",
                                     std::string(100000, '[') + std::string(100000, ']'))),
               Contains("header: the JSON nests deeper than 32 levels"));
  }

  SECTION("a tensor the .json needs is missing, or one it does not need is extra") {
    const std::string missing = replaced(good.json, R"("bias":"fc1.bias")", R"("bias":"fc1.bias2")");
    CHECK_THAT(load_error(missing, good.safetensors),
               Contains("nodes[1] (fc1): parameters.bias") && Contains("the tensor \"fc1.bias2\" is missing"));
    const std::string header = R"({"fc1.weight":{"dtype":"F32","shape":[3,4],"data_offsets":[0,48]}})";
    const std::string weights_only = make_safetensors(header, std::string(48, '\0'));
    CHECK_THAT(load_error(repair_pairing(good.json, weights_only), weights_only),
               Contains("the tensor \"fc1.bias\" is missing"));
    const std::string extra_header = R"({"fc1.weight":{"dtype":"F32","shape":[3,4],"data_offsets":[0,48]},)"
                                     R"("fc1.bias":{"dtype":"F32","shape":[3],"data_offsets":[48,60]},)"
                                     R"("stray":{"dtype":"F32","shape":[1],"data_offsets":[60,64]}})";
    const std::string extra = make_safetensors(extra_header, std::string(64, '\0'));
    CHECK_THAT(load_error(repair_pairing(good.json, extra), extra), Contains("\"stray\" is not referred to"));
    const std::string twice = replaced(good.json, R"("bias":"fc1.bias")", R"("bias":"fc1.weight")");
    CHECK_THAT(load_error(twice, good.safetensors), Contains("\"fc1.weight\" is used a second time"));
  }

  SECTION("the weights of another save, of the same size") {
    const mase::checkpoint_strings other = mase::checkpoint_to_strings(small_graph(0.75f));
    REQUIRE(other.safetensors.size() == good.safetensors.size());
    CHECK_THAT(load_error(good.json, other.safetensors), Contains("FNV-1a hash") && Contains("different saves"));
    CHECK(load_error(good.json, other.safetensors, unpaired).empty());
  }
}

TEST_CASE("damaged .json text is a mase::error naming the node and field") {
  const mase::checkpoint_strings good = mase::checkpoint_to_strings(small_graph());
  auto error_for = [&](const std::string& json) { return load_error(json, good.safetensors); };

  CHECK_THAT(error_for(good.json.substr(0, good.json.size() / 2)), Contains("<checkpoint json>: not valid JSON"));
  CHECK_THAT(error_for(""), Contains("not valid JSON"));
  CHECK_THAT(error_for("[1, 2]"), Contains("must be a JSON object"));
  // Deep nesting is refused without recursing as deep as the input.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK_THAT(error_for(deep), Contains("nests deeper than 32 levels"));
  CHECK_THAT(error_for(replaced(good.json, R"("args":{})", fmt::format(R"("args":{{"x":{{"shape":[{}]}},"y":1}})", deep))),
             Contains("nests deeper than 32 levels"));
  const std::string nested = std::string(10, '[') + std::string(10, ']');
  CHECK_THAT(error_for(replaced(good.json, R"("args":{})", fmt::format(R"("args":{{"x":{{"shape":[{}]}}}})", nested))),
             Contains("meta.common.args.x.shape[0]") && Contains("must be an integer, not an array"));
  CHECK_THAT(error_for(replaced(good.json, "\"version\": 1", "\"version\": 2")),
             Contains("checkpoint version 2 is newer than this mase (reads version 1)"));
  CHECK_THAT(error_for(replaced(good.json, "\"version\": 1", "\"version\": 0")), Contains("version 0 does not exist"));
  // A newer version is reported as such even when it has fields this version does not know.
  CHECK_THAT(error_for(replaced(good.json, "\"version\": 1,", "\"version\": 2, \"signature\": \"...\",")),
             Contains("checkpoint version 2 is newer than this mase (reads version 1)"));
  CHECK_THAT(error_for(replaced(good.json, "\"mase-checkpoint\"", "\"onnx\"")), Contains("not a mase checkpoint"));
  CHECK_THAT(error_for(replaced(good.json, "\"version\": 1,", "\"version\": 1, \"extra\": true,")),
             Contains("unknown field \"extra\""));
  CHECK_THAT(error_for(replaced(good.json, R"("op":"relu")", R"("op":"relux")")),
             Contains("nodes[2] (relu1): op: unknown op \"relux\"; did you mean relu"));
  CHECK_THAT(error_for(replaced(good.json, R"("op":"relu")", R"("op":"convolution_transpose_3d")")),
             Contains("unknown op \"convolution_transpose_3d\"; the ops this mase knows are: placeholder, ") &&
                 Contains(", relu,"));
  CHECK_THAT(error_for(replaced(good.json, R"("inplace":false)", R"("inplace":3)")),
             Contains("attribute \"inplace\" of op relu has the wrong type"));
  CHECK_THAT(error_for(replaced(good.json, R"("inplace":false)", R"("inplace":false,"slope":0.1)")),
             Contains("op relu has no attribute \"slope\""));
  CHECK_THAT(error_for(replaced(good.json, R"("in_features":4)", R"("in_features":18446744073709551615)")),
             Contains("attributes.in_features") && Contains("does not fit a 64-bit signed integer"));
  CHECK_THAT(error_for(replaced(good.json, R"("inputs":["fc1"])", R"("inputs":["fc9"])")),
             Contains("nodes[2] (relu1): inputs[0]") && Contains("unknown input \"fc9\""));
  CHECK_THAT(error_for(replaced(good.json, R"("name":"relu1")", R"("name":"fc1")")),
             Contains("a node named fc1 already exists"));
  CHECK_THAT(error_for(replaced(good.json, R"("name":"relu1")", R"("name":"2relu")")),
             Contains("is not an identifier"));
  // in_features 4 -> 3 makes the stored [3, 4] weight the wrong shape.
  CHECK_THAT(error_for(replaced(good.json, R"("in_features":4)", R"("in_features":3)")),
             Contains("nodes[1] (fc1): parameters.weight") && Contains("must have shape [3, 3], not [3, 4]"));
  CHECK_THAT(error_for(replaced(good.json, R"("inputs":["fc1"])", R"("inputs":[])")), Contains("takes 1 input(s)"));
  CHECK_THAT(error_for(replaced(good.json, R"("toolchain":"INTERNAL_RTL")", R"("toolchain":"VIVADO")")),
             Contains("meta.hardware.toolchain") && Contains("unknown toolchain \"VIVADO\""));
  CHECK_THAT(error_for(replaced(good.json, R"("mase_type":"placeholder")", R"("mase_type":"layer")")),
             Contains("meta.common.mase_type") && Contains("unknown node kind \"layer\""));
  CHECK_THAT(error_for(replaced(good.json, R"("max_parallelism":[4,4,4,4])", R"("max_parallelism":[4,4,4])")),
             Contains("must list 4 integers, not 3"));
  CHECK_THAT(error_for(replaced(good.json, R"("channels_last":false)", R"("channels_last":1)")),
             Contains("meta.hardware.channels_last") && Contains("must be true or false, not number"));
  CHECK_THAT(error_for(replaced(good.json, R"("device_id":-1)", R"("device_id":4294967296)")),
             Contains("does not fit a 32-bit integer"));
  CHECK_THAT(error_for(replaced(good.json, R"("args":{})", R"("args":{"data_in_0":{"shape":[1,4],"precision":"fixed<8,9000>"}})")),
             Contains("meta.common.args.data_in_0.precision") && Contains("fixed<8,9000>"));
  CHECK_THAT(error_for(replaced(good.json, R"("args":{})", R"("args":{"alpha":"nan:0x7ff0000000000000"})")),
             Contains("meta.common.args.alpha") && Contains("must be a number"));
  CHECK_THAT(error_for(replaced(good.json, R"("args":{})", R"("args":{"a":1,"a":2})")), Contains("\"a\" appears twice"));
  CHECK_THAT(error_for(replaced(good.json, R"("fnv1a64_words": ")", R"("fnv1a64_words": "x)")), Contains("16 hexadecimal digits"));
}

TEST_CASE("saving into a directory that does not exist fails cleanly and leaves nothing") {
  temp_dir dir;
  const fs::path stem = dir.path / "missing" / "model";
  REQUIRE_THROWS_MATCHES(mase::export_checkpoint(small_graph(), stem), mase::error,
                         Catch::Matchers::Predicate<mase::error>([](const mase::error& e) {
                           const std::string m = e.what();
                           return m.find("cannot save checkpoint") != std::string::npos &&
                                  m.find("model.safetensors") != std::string::npos &&
                                  m.find("No such file or directory") != std::string::npos;
                         }));
  CHECK(listing(dir.path).empty());
  CHECK_THROWS_WITH(mase::from_checkpoint(stem), Contains("model.json") && Contains("takes the stem"));
}

TEST_CASE("a save that fails part way removes its temporary and keeps the checkpoint already there") {
  temp_dir dir;
  const fs::path stem = dir.path / "model";
  // A directory where the .safetensors must go: found once the data is written, before any rename.
  fs::create_directories(dir.path / "model.safetensors" / "inside");
  CHECK_THROWS_WITH(mase::export_checkpoint(small_graph(), stem), Contains("cannot save checkpoint") && Contains("model.safetensors is a folder"));
  CHECK(listing(dir.path) == std::vector<std::string>{"model.safetensors"});

  // An earlier good checkpoint survives a later failing save untouched.
  const fs::path good = dir.path / "good";
  mase::export_checkpoint(small_graph(), good);
  const std::string json_before = read_file(dir.path / "good.json");
  mase::graph bad = small_graph(2.0f);
  bad.at("fc1").meta.common.mase_op = std::string("\xff\xfe");  // not UTF-8: refused before any file is touched
  CHECK_THROWS_WITH(mase::export_checkpoint(bad, good), Contains("cannot save checkpoint") && Contains("node fc1: meta.common.mase_op") && Contains("UTF-8"));
  CHECK(read_file(dir.path / "good.json") == json_before);
  CHECK(mase::from_checkpoint(good) == small_graph());
}

TEST_CASE("files from two different saves are detected, never loaded") {
  temp_dir dir;
  mase::export_checkpoint(small_graph(0.5f), dir.path / "a");
  mase::export_checkpoint(small_graph(0.75f), dir.path / "b");
  // What a save interrupted between its two renames leaves: new weights beside the old .json.
  fs::copy_file(dir.path / "b.safetensors", dir.path / "a.safetensors", fs::copy_options::overwrite_existing);
  CHECK_THROWS_WITH(mase::from_checkpoint(dir.path / "a"), Contains("a.safetensors") && Contains("different saves"));
  // Truncated on disk.
  fs::resize_file(dir.path / "b.safetensors", fs::file_size(dir.path / "b.safetensors") - 1);
  CHECK_THROWS_WITH(mase::from_checkpoint(dir.path / "b"), Contains("b.safetensors") && Contains("truncated"));
  CHECK_THROWS_WITH(mase::from_checkpoint(dir.path / "b", {.verify_pairing = false}),
                    Contains("b.safetensors") && Contains("run past the end of the data"));
  // A .json from a newer mase names the file.
  write_file(dir.path / "a.json", replaced(read_file(dir.path / "a.json"), "\"version\": 1", "\"version\": 2"));
  CHECK_THROWS_WITH(mase::from_checkpoint(dir.path / "a"),
                    Contains("a.json: checkpoint version 2 is newer than this mase (reads version 1)"));
}

TEST_CASE("an empty graph and a graph without tensors round-trip") {
  const mase::graph empty;
  const mase::checkpoint_strings saved = mase::checkpoint_to_strings(empty);
  CHECK(mase::graph_from_checkpoint_strings(saved.json, saved.safetensors) == empty);
  CHECK(saved.safetensors.size() % 8 == 0);

  mase::graph g;
  const mase::node_id x = g.add("x", mase::op::placeholder{.shape = {0, 3}});
  const mase::node_id c = g.add("c", mase::op::constant{.shape = {0, 3}});
  g.set_parameter(c, "value", mase::tensor({0, 3}));  // an empty tensor: allowed by the spec
  g.add("out", mase::op::output{}, {x, c});
  const mase::checkpoint_strings s = mase::checkpoint_to_strings(g);
  CHECK(mase::graph_from_checkpoint_strings(s.json, s.safetensors) == g);
}
