#pragma once
// The checkpoint codec: the definitions of io/checkpoint.hpp's entry points, and the format they
// read and write. Included by io/checkpoint.hpp in the header-only mode; in the compiled mode
// (core/compiled.hpp) mase::mase holds them for mase::graph, and a unit includes this header
// only to use the codec's parts (checkpoint_detail).
//
// <stem>.safetensors holds every tensor: each parameter as "<node>.<role>" ("fc1.weight") and
// each recorded metadata value as "<node>.meta.common.args.<entry>.value" or
// "<node>.meta.common.results.<entry>.value". It is Hugging Face's safetensors format, so
// other tools read the weights: an 8-byte little-endian header length N; N bytes of JSON
// header {"__metadata__": {"format": "mase-checkpoint", "version": "1"}, "<name>": {"dtype":
// "F32", "shape": [...], "data_offsets": [begin, end]}, ...} padded with spaces so the data
// starts 8-byte aligned; then the data, little-endian float32, row-major, tensors back to back
// in node order with no holes. Only F32 is read or written (mase::tensor is float32).
//
// <stem>.json holds the graph and all metadata; strings name the tensors:
//
//   {"format": "mase-checkpoint", "version": 1,
//    "safetensors": {"bytes": <size of the .safetensors>, "fnv1a64_words": "<16 hex digits>"},
//    "nodes": [ <node>, ... ]}                          // topological order, one node per line
//   <node> = {"name": "fc1", "op": "linear",
//             "attributes": {"in_features": 4, "out_features": 3, "bias": true},  // mase::op_attributes
//             "inputs": ["x"],                                                    // earlier nodes, by name
//             "parameters": {"weight": "fc1.weight", "bias": "fc1.bias"},         // role -> tensor
//             "meta": {"common": <common>, "software": <software>, "hardware": <hardware>}}
//   <common> = {"mase_op": "linear", "mase_type": "module_related_func",
//               "args": {"data_in_0": <tensor_meta>, "inplace": <value>, ...},    // object: tensor; else config
//               "results": {"data_out_0": <tensor_meta>, ...}}
//   <tensor_meta> = {"shape": [1, 4], "precision": "fixed<8,3>",   // mase::to_string(format)
//                    "value": "fc1.meta.common.args.data_in_0.value"}   // only when a value is recorded
//   <value> = true | 7 | 0.5 | [1, 4] (dims) | <non-finite>   // attribute_value: JSON's type picks the alternative
//   <software> = {"args": {<entry>: {"stat": {<statistic>: {<field>: <stat>, ...}}}}, "results": {...}}
//   <stat> = 0.25 | [0.5, <non-finite>, ...] | "NA"            // double, list of doubles, not_available
//   <hardware> = {"is_implicit": false, "device_id": -1, "toolchain": "INTERNAL_RTL",
//                 "module": "fixed_linear" | null, "interface": {"weight": {"storage": "BRAM", "transpose": false}},
//                 "verilog_param": {"NAME": 8 | true | [1, 2] | "text"}, "dependence_files": ["..."],
//                 "max_parallelism": [4, 4, 4, 4], "channels_last": false}
//   <non-finite> = "inf" | "-inf" | "nan" (0x7ff8000000000000) | "nan:0x<16 hex digits>" (any other NaN)
//
// Finite doubles are JSON numbers in the shortest spelling that reads back to the same double
// (-0 is "-0.0"); JSON has no NaN or infinity, hence the strings. Objects keep their order
// (ordered_map order); a key given twice is an error. When reading, every field but "name" and
// "op" may be left out (it takes the struct's default); unknown fields are errors.
//
// Saving is atomic per file: each is written to a temporary in its directory, flushed, synced
// and renamed into place, the .safetensors first and the .json last. The .json records the
// size and hash (fnv1a64_words, below) of its .safetensors, so a .json paired with another save's weights
// (a save interrupted between the two renames, or files copied from different saves) is
// reported, never loaded. Every malformed input is a mase::error naming the file, the node and
// the field.

#include <mase/core/deferred.hpp>
#include <mase/core/error.hpp>
#include <mase/core/ordered_map.hpp>
#include <mase/core/shape.hpp>
#include <mase/core/temp_file.hpp>
#include <mase/core/tensor.hpp>
#include <mase/format/format_string.hpp>
#include <mase/io/checkpoint.hpp>
#include <mase/ir/graph.hpp>
#include <mase/ir/metadata.hpp>
#include <mase/ir/op_traits.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#if __has_include(<unistd.h>)
#include <unistd.h>  // fsync
#define MASE_CHECKPOINT_HAS_FSYNC 1
#endif

namespace mase {

namespace checkpoint_detail {

using json = nlohmann::ordered_json;

inline constexpr std::string_view format_name = "mase-checkpoint";
// The safetensors reference implementation refuses larger headers; so do we, before allocating.
inline constexpr std::uint64_t max_safetensors_header = 100'000'000;

// ---- hashing ---------------------------------------------------------------------------------

// FNV-1a 64 taken a little-endian 8-byte word at a time (the last, partial word zero-padded),
// then the byte count ("fnv1a64_words" in the .json). A few lines in any language, and each step is a
// bijection of the state, so a change in any one word of the file always changes the hash.
// Word steps make it about 8 times faster than byte-wise FNV-1a, which bounded save and load.
struct fnv1a64_words {
  static constexpr std::uint64_t offset_basis = 0xcbf29ce484222325ull;
  static constexpr std::uint64_t prime = 0x100000001b3ull;

  std::uint64_t state = offset_basis;
  std::uint64_t bytes = 0;
  char pending[8] = {};
  std::size_t pending_size = 0;

  void update(const char* data, std::size_t size) noexcept {
    if (size == 0) return;  // data may be null then, which memcpy does not allow
    bytes += size;
    if (pending_size > 0) {  // complete a word split across calls
      const std::size_t taken = std::min(size, sizeof pending - pending_size);
      std::memcpy(pending + pending_size, data, taken);
      pending_size += taken;
      data += taken;
      size -= taken;
      if (pending_size < sizeof pending) return;
      mix(word(pending));
      pending_size = 0;
    }
    std::uint64_t h = state;
    for (; size >= 8; data += 8, size -= 8) h = (h ^ word(data)) * prime;
    state = h;
    if (size > 0) std::memcpy(pending, data, size);  // size < 8 here
    pending_size = size;
  }

  std::uint64_t value() const noexcept {
    std::uint64_t h = state;
    if (pending_size > 0) {
      char last[8] = {};
      std::memcpy(last, pending, pending_size);
      h = (h ^ word(last)) * prime;
    }
    return (h ^ bytes) * prime;
  }

private:
  void mix(std::uint64_t w) noexcept { state = (state ^ w) * prime; }
  static std::uint64_t word(const char* p) noexcept {
    std::uint64_t w = 0;
    for (int i = 7; i >= 0; --i) w = (w << 8) | static_cast<unsigned char>(p[i]);
    return w;
  }
};

// ---- strings ---------------------------------------------------------------------------------

// RFC 3629 UTF-8 (no overlong forms, surrogates or code points past U+10FFFF): what JSON text
// may hold. Checked when saving so the message names the field.
inline bool is_valid_utf8(std::string_view s) noexcept {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto lead = static_cast<unsigned char>(s[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    std::size_t extra = 0;
    std::uint32_t code = 0;
    std::uint32_t smallest = 0;
    if (lead >= 0xC2 && lead <= 0xDF) extra = 1, code = lead & 0x1Fu, smallest = 0x80;
    else if (lead >= 0xE0 && lead <= 0xEF) extra = 2, code = lead & 0x0Fu, smallest = 0x800;
    else if (lead >= 0xF0 && lead <= 0xF4) extra = 3, code = lead & 0x07u, smallest = 0x10000;
    else return false;
    if (s.size() - i <= extra) return false;
    for (std::size_t k = 1; k <= extra; ++k) {
      const auto next = static_cast<unsigned char>(s[i + k]);
      if ((next & 0xC0u) != 0x80u) return false;
      code = (code << 6) | (next & 0x3Fu);
    }
    if (code < smallest || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += extra + 1;
  }
  return true;
}

// ---- doubles ---------------------------------------------------------------------------------

inline constexpr std::uint64_t canonical_nan_bits = 0x7ff8000000000000ull;

inline json put_double(double v) {
  if (std::isfinite(v)) return json(v);
  if (std::isinf(v)) return json(v > 0 ? "inf" : "-inf");
  const auto bits = std::bit_cast<std::uint64_t>(v);
  if (bits == canonical_nan_bits) return json("nan");
  return json(fmt::format("nan:0x{:016x}", bits));
}

inline std::optional<double> parse_non_finite(std::string_view s) {
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  if (s == "nan") return std::bit_cast<double>(canonical_nan_bits);
  constexpr std::string_view prefix = "nan:0x";
  if (s.size() != prefix.size() + 16 || s.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::uint64_t bits = 0;
  const char* first = s.data() + prefix.size();
  const char* last = s.data() + s.size();
  const auto [end, ec] = std::from_chars(first, last, bits, 16);
  if (ec != std::errc() || end != last) return std::nullopt;
  const double v = std::bit_cast<double>(bits);
  if (!std::isnan(v)) return std::nullopt;
  return v;
}

// ---- reading JSON ----------------------------------------------------------------------------

[[noreturn]] inline void fail(std::string_view where, std::string_view what) {
  throw error(fmt::format("{}: {}", where, what));
}

// Deeper than any checkpoint or safetensors header nests (a checkpoint needs 11 levels).
// nlohmann's ordered_json copies values recursively when an object grows, so a deeply nested
// value would overflow the stack: such values are not built at all.
inline constexpr int max_json_depth = 32;

// Parses JSON text, refusing a key given twice in one object (both JSON libraries and the
// safetensors spec leave that to the reader; silently keeping one would lose data) and
// nesting deeper than max_json_depth.
template <class Json>
Json parse_json(std::string_view text, std::string_view where) {
  std::vector<std::unordered_set<std::string>> open_objects;
  std::optional<std::string> duplicate;
  bool too_deep = false;
  const auto watch_keys = [&](int depth, typename Json::parse_event_t event, Json& parsed) {
    using event_t = typename Json::parse_event_t;
    if ((event == event_t::object_start || event == event_t::array_start) && depth >= max_json_depth) {
      too_deep = true;
      return false;  // skipped: its contents are read but not stored
    }
    if (event == event_t::object_start) open_objects.emplace_back();
    else if (event == event_t::object_end && !open_objects.empty()) open_objects.pop_back();
    else if (event == event_t::key && !open_objects.empty() && parsed.is_string()) {
      const auto& key = parsed.template get_ref<const std::string&>();
      if (!open_objects.back().insert(key).second && !duplicate) duplicate = key;
    }
    return true;
  };
  Json document;
  try {
    document = Json::parse(text.begin(), text.end(), watch_keys);
  } catch (const nlohmann::json::exception& e) {
    fail(where, fmt::format("not valid JSON ({})", e.what()));
  }
  if (too_deep) fail(where, fmt::format("the JSON nests deeper than {} levels", max_json_depth));
  if (duplicate) fail(where, fmt::format("the key \"{}\" appears twice in one object", *duplicate));
  return document;
}

// A JSON value for a message: scalars as written (long strings cut), containers by type only
// (dumping them would recurse as deep as the input nests).
template <class Json>
std::string describe(const Json& j) {
  if (j.is_object() || j.is_array()) return std::string(j.is_object() ? "an object" : "an array");
  std::string text = j.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

template <class Json>
const Json& object_at(const Json& j, std::string_view where) {
  if (!j.is_object()) fail(where, fmt::format("must be a JSON object, not {}", j.type_name()));
  return j;
}

template <class Json>
const Json& array_at(const Json& j, std::string_view where) {
  if (!j.is_array()) fail(where, fmt::format("must be a JSON array, not {}", j.type_name()));
  return j;
}

// Refuses fields other than `known` (a typo must not be ignored silently).
template <class Json, class Names>
void only_field_names(const Json& object, const Names& known, std::string_view where) {
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) != known.end()) continue;
    std::string list;
    for (std::string_view k : known) list += fmt::format("{}{}", list.empty() ? "" : ", ", k);
    fail(where, fmt::format("unknown field \"{}\"; the fields are: {}", it.key(), list));
  }
}
template <class Json>
void only_fields(const Json& object, std::initializer_list<std::string_view> known, std::string_view where) {
  only_field_names(object, known, where);
}

template <class Json>
const Json* field(const Json& object, std::string_view key) {
  const auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &*it;
}

template <class Json>
const Json& required_field(const Json& object, std::string_view key, std::string_view where) {
  if (const Json* j = field(object, key)) return *j;
  fail(where, fmt::format("the field \"{}\" is missing", key));
}

inline std::string member_path(std::string_view where, std::string_view key) { return fmt::format("{}.{}", where, key); }
// The first field below a node: "nodes[1] (fc1): parameters".
inline std::string node_field(std::string_view node_where, std::string_view key) {
  return fmt::format("{}: {}", node_where, key);
}
inline std::string index_path(std::string_view where, std::size_t i) { return fmt::format("{}[{}]", where, i); }

template <class Json>
std::string get_string(const Json& j, std::string_view where) {
  if (!j.is_string()) fail(where, fmt::format("must be a string, not {}", j.type_name()));
  return j.template get<std::string>();
}

template <class Json>
bool get_bool(const Json& j, std::string_view where) {
  if (!j.is_boolean()) fail(where, fmt::format("must be true or false, not {}", j.type_name()));
  return j.template get<bool>();
}

template <class Json>
std::int64_t get_int64(const Json& j, std::string_view where) {
  if (j.is_number_unsigned()) {
    const auto u = j.template get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail(where, fmt::format("{} does not fit a 64-bit signed integer", u));
    return static_cast<std::int64_t>(u);
  }
  if (j.is_number_integer()) return j.template get<std::int64_t>();
  fail(where, fmt::format("must be an integer, not {}", describe(j)));
}

template <class Json>
std::uint64_t get_uint64(const Json& j, std::string_view where) {
  if (j.is_number_unsigned()) return j.template get<std::uint64_t>();
  fail(where, fmt::format("must be a non-negative integer, not {}", describe(j)));
}

inline int get_int(const json& j, std::string_view where) {
  const std::int64_t v = get_int64(j, where);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    fail(where, fmt::format("{} does not fit a 32-bit integer", v));
  return static_cast<int>(v);
}

inline double get_double(const json& j, std::string_view where) {
  if (j.is_number_float()) return j.get<double>();
  if (j.is_number_unsigned()) return static_cast<double>(j.get<std::uint64_t>());
  if (j.is_number_integer()) return static_cast<double>(j.get<std::int64_t>());
  if (j.is_string())
    if (const auto v = parse_non_finite(j.get_ref<const std::string&>())) return *v;
  fail(where, fmt::format("must be a number or one of \"inf\", \"-inf\", \"nan\", \"nan:0x<16 hex digits>\", not {}",
                          describe(j)));
}

// A list of at most shape::max_rank integers.
inline shape get_dims(const json& j, std::string_view where) {
  array_at(j, where);
  if (j.size() > static_cast<std::size_t>(shape::max_rank))
    fail(where, fmt::format("has {} entries; a shape has at most {}", j.size(), shape::max_rank));
  shape s;
  for (std::size_t i = 0; i < j.size(); ++i) s.push_back(get_int64(j[i], index_path(where, i)));
  return s;
}

// ---- writing JSON ----------------------------------------------------------------------------

inline std::string put_text(const std::string& s, std::string_view where) {
  if (!is_valid_utf8(s)) fail(where, "is not valid UTF-8 text, which JSON cannot hold");
  return s;
}

inline json put_dims(const shape& s) {
  json list = json::array();
  for (std::int64_t d : s) list.push_back(d);
  return list;
}

template <class T>
inline constexpr bool unhandled_alternative = false;

// attribute_value: JSON's own types tell the alternatives apart (2 is an integer, 2.0 a double).
inline json put_attribute(const attribute_value& v) {
  return std::visit(
      [](const auto& x) -> json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::int64_t>) return json(x);
        else if constexpr (std::is_same_v<T, double>) return put_double(x);
        else if constexpr (std::is_same_v<T, dims>) return put_dims(x);
        else static_assert(unhandled_alternative<T>, "checkpoint.hpp: add the new attribute_value alternative here and in get_attribute");
      },
      v);
}

inline attribute_value get_attribute(const json& j, std::string_view where) {
  if (j.is_boolean()) return attribute_value(std::in_place_type<bool>, j.get<bool>());
  if (j.is_number_integer()) return attribute_value(std::in_place_type<std::int64_t>, get_int64(j, where));
  if (j.is_number_float() || j.is_string()) return attribute_value(std::in_place_type<double>, get_double(j, where));
  if (j.is_array()) return attribute_value(std::in_place_type<dims>, get_dims(j, where));
  fail(where, fmt::format("must be true/false, an integer, a number or a list of integers, not {}", j.type_name()));
}

inline json put_verilog_value(const verilog_value& v, std::string_view where) {
  return std::visit(
      [&](const auto& x) -> json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, bool>) return json(x);
        else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) return json(x);
        else if constexpr (std::is_same_v<T, std::string>) return json(put_text(x, where));
        else static_assert(unhandled_alternative<T>, "checkpoint.hpp: add the new verilog_value alternative here and in get_verilog_value");
      },
      v);
}

inline verilog_value get_verilog_value(const json& j, std::string_view where) {
  if (j.is_boolean()) return verilog_value(std::in_place_type<bool>, j.get<bool>());
  if (j.is_number_integer()) return verilog_value(std::in_place_type<std::int64_t>, get_int64(j, where));
  if (j.is_string()) return verilog_value(std::in_place_type<std::string>, j.get<std::string>());
  if (j.is_array()) {
    std::vector<std::int64_t> list;
    list.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) list.push_back(get_int64(j[i], index_path(where, i)));
    return verilog_value(std::in_place_type<std::vector<std::int64_t>>, std::move(list));
  }
  fail(where, fmt::format("must be an integer, true/false, a list of integers or a string, not {}", describe(j)));
}

inline json put_stat(const stat_value& v) {
  return std::visit(
      [](const auto& x) -> json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, double>) return put_double(x);
        else if constexpr (std::is_same_v<T, std::vector<double>>) {
          json list = json::array();
          for (double d : x) list.push_back(put_double(d));
          return list;
        } else if constexpr (std::is_same_v<T, not_available>) return json("NA");
        else static_assert(unhandled_alternative<T>, "checkpoint.hpp: add the new stat_value alternative here and in get_stat");
      },
      v);
}

inline stat_value get_stat(const json& j, std::string_view where) {
  if (j.is_string() && j.get_ref<const std::string&>() == "NA") return not_available{};
  if (j.is_array()) {
    std::vector<double> list;
    list.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) list.push_back(get_double(j[i], index_path(where, i)));
    return list;
  }
  if (j.is_number() || j.is_string()) return get_double(j, where);
  fail(where, fmt::format("must be a number, a list of numbers or \"NA\", not {}", j.type_name()));
}

// ---- tensors ---------------------------------------------------------------------------------

// The tensors of a checkpoint being saved, in file order, with their names.
struct tensor_list {
  std::vector<std::pair<std::string, const tensor*>> entries;
  std::unordered_set<std::string> names;

  void add(std::string name, const tensor& t, std::string_view where) {
    if (!names.insert(name).second)
      fail(where, fmt::format("the tensor name \"{}\" is used twice; rename one of the metadata entries", name));
    entries.emplace_back(std::move(name), &t);
  }
};

// The tensors of a checkpoint being loaded: each must be used exactly once.
class tensor_store {
public:
  tensor_store(std::string json_file, std::string safetensors_file)
      : json_file_(std::move(json_file)), safetensors_file_(std::move(safetensors_file)) {}

  void add(std::string name, tensor t) {
    order_.push_back(name);
    slots_.emplace(std::move(name), std::optional<tensor>(std::move(t)));
  }

  tensor take(const std::string& name, std::string_view where) {
    const auto it = slots_.find(name);
    if (it == slots_.end()) fail(where, fmt::format("the tensor \"{}\" is missing from {}", name, safetensors_file_));
    if (!it->second) fail(where, fmt::format("the tensor \"{}\" is used a second time; each tensor has one place", name));
    tensor t = std::move(*it->second);
    it->second.reset();
    return t;
  }

  // Every tensor of the .safetensors belongs somewhere in the .json.
  void check_all_used() const {
    for (const std::string& name : order_)
      if (slots_.at(name))
        throw error(fmt::format("{}: the tensor \"{}\" is not referred to by {}; the two files do not belong together",
                                safetensors_file_, name, json_file_));
  }

private:
  std::string json_file_;
  std::string safetensors_file_;
  std::vector<std::string> order_;
  std::unordered_map<std::string, std::optional<tensor>> slots_;
};

// ---- safetensors -----------------------------------------------------------------------------

inline void store_le64(char* out, std::uint64_t v) noexcept {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(static_cast<unsigned char>(v >> (8 * i)));
}
inline std::uint64_t load_le64(const char* in) noexcept {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}

// float32 values in safetensors' byte order (little-endian), whatever the host's.
inline void swap_to_little_endian(char* bytes, std::size_t size) noexcept {
  if constexpr (std::endian::native == std::endian::big)
    for (std::size_t i = 0; i + 4 <= size; i += 4) {
      std::swap(bytes[i], bytes[i + 3]);
      std::swap(bytes[i + 1], bytes[i + 2]);
    }
  else (void)bytes, (void)size;
}

struct write_result {
  std::uint64_t size = 0;
  std::uint64_t hash = 0;
};

// Writes the safetensors file for `tensors` to `sink` (sink(const char*, std::size_t)).
template <class Sink>
write_result write_safetensors(const tensor_list& tensors, Sink&& sink) {
  // The header is written by hand: it is flat, and building it as a JSON object would cost a
  // key search per tensor.
  std::string header = fmt::format(R"({{"__metadata__":{{"format":"{}","version":"{}"}})", format_name, checkpoint_version);
  std::uint64_t offset = 0;
  for (const auto& [name, t] : tensors.entries) {
    const std::uint64_t bytes = t->size_in_bytes();
    header += fmt::format(R"(,{}:{{"dtype":"F32","shape":{},"data_offsets":[{},{}]}})", json(name).dump(),
                          put_dims(t->shape()).dump(), offset, offset + bytes);
    offset += bytes;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');

  fnv1a64_words hash;
  auto emit = [&](const char* data, std::size_t size) {
    if (size == 0) return;  // an empty tensor's data() may be null
    hash.update(data, size);
    sink(data, size);
  };
  char length[8];
  store_le64(length, header.size());
  emit(length, sizeof length);
  emit(header.data(), header.size());
  for (const auto& [name, t] : tensors.entries) {
    if constexpr (std::endian::native == std::endian::little) {
      emit(reinterpret_cast<const char*>(t->data()), t->size_in_bytes());
    } else {
      std::vector<char> chunk(reinterpret_cast<const char*>(t->data()),
                              reinterpret_cast<const char*>(t->data()) + t->size_in_bytes());
      swap_to_little_endian(chunk.data(), chunk.size());
      emit(chunk.data(), chunk.size());
    }
  }
  return {8 + header.size() + offset, hash.value()};
}

struct safetensors_entry {
  std::string name;
  shape dims;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

struct safetensors_contents {
  std::vector<std::pair<std::string, tensor>> tensors;  // in data order
  std::uint64_t hash = 0;                               // fnv1a64_words of the whole file
};

// Reads and checks a safetensors file of `size` bytes from `read` (read(char*, std::uint64_t)
// -> bool: the next bytes, false if there were fewer). Nothing is allocated before the length
// it depends on is checked against `size`.
template <class Reader>
safetensors_contents read_safetensors(Reader&& read, std::uint64_t size, const std::string& file) {
  fnv1a64_words hash;
  auto take = [&](char* out, std::uint64_t n, std::string_view what) {
    if (!read(out, n)) fail(file, fmt::format("the file ended while reading {} (it changed while being read?)", what));
    hash.update(out, static_cast<std::size_t>(n));
  };

  if (size < 8)
    fail(file, fmt::format("the file is {} bytes, shorter than safetensors' 8-byte header length: it is truncated", size));
  char length_bytes[8];
  take(length_bytes, 8, "the header length");
  const std::uint64_t header_size = load_le64(length_bytes);
  if (header_size > size - 8)
    fail(file, fmt::format("the header length {} runs past the end of the file ({} bytes): the file is truncated "
                           "or not safetensors",
                           header_size, size));
  if (header_size > max_safetensors_header)
    fail(file, fmt::format("the header length {} exceeds safetensors' limit of {} bytes", header_size,
                           max_safetensors_header));
  std::string header(static_cast<std::size_t>(header_size), '\0');
  take(header.data(), header_size, "the header");
  if (header.empty() || header[0] != '{') fail(file, "the header must be a JSON object starting with '{'");

  // Order is irrelevant here (offsets place the data), so a sorted map: fast for many tensors.
  const auto document = parse_json<deferred_t<nlohmann::json, Reader>>(header, fmt::format("{}: header", file));
  object_at(document, fmt::format("{}: header", file));

  const std::uint64_t data_size = size - 8 - header_size;
  std::vector<safetensors_entry> entries;
  for (auto it = document.begin(); it != document.end(); ++it) {
    const std::string where = fmt::format("{}: header entry \"{}\"", file, it.key());
    if (it.key() == "__metadata__") {
      object_at(*it, where);
      for (const auto& value : *it)
        if (!value.is_string()) fail(where, "must map strings to strings");
      continue;
    }
    const auto& entry = object_at(*it, where);
    only_fields(entry, {"dtype", "shape", "data_offsets"}, where);
    const std::string dtype = get_string(required_field(entry, "dtype", where), member_path(where, "dtype"));
    if (dtype != "F32")
      fail(where, fmt::format("the tensor has dtype {}; mase checkpoints hold F32 (float32) tensors only", dtype));
    const auto& shape_json = array_at(required_field(entry, "shape", where), member_path(where, "shape"));
    if (shape_json.size() > static_cast<std::size_t>(shape::max_rank))
      fail(where, fmt::format("the shape has {} dimensions; mase tensors have at most {}", shape_json.size(),
                              shape::max_rank));
    safetensors_entry e{.name = it.key(), .dims = {}, .begin = 0, .end = 0};
    // Counted as shape::numel counts, refusing any step that would overflow.
    std::uint64_t count = 1;
    for (std::size_t i = 0; i < shape_json.size(); ++i) {
      const std::uint64_t d = get_uint64(shape_json[i], index_path(member_path(where, "shape"), i));
      if (d > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
          (d != 0 && count > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) / d))
        fail(where, "the shape has more elements than a tensor can hold");
      count *= d;
      e.dims.push_back(static_cast<std::int64_t>(d));
    }
    const auto& offsets = array_at(required_field(entry, "data_offsets", where), member_path(where, "data_offsets"));
    if (offsets.size() != 2) fail(where, "data_offsets must be [begin, end]");
    e.begin = get_uint64(offsets[0], member_path(where, "data_offsets[0]"));
    e.end = get_uint64(offsets[1], member_path(where, "data_offsets[1]"));
    if (e.begin > e.end) fail(where, fmt::format("data_offsets [{}, {}] end before they begin", e.begin, e.end));
    if (e.end > data_size)
      fail(where, fmt::format("data_offsets [{}, {}] run past the end of the data ({} bytes): the file is truncated",
                              e.begin, e.end, data_size));
    if (count > data_size / 4 || count * 4 != e.end - e.begin)
      fail(where, fmt::format("shape {} needs {} bytes of F32 data, but data_offsets [{}, {}] hold {}",
                              to_string(e.dims), count <= data_size / 4 ? fmt::format("{}", count * 4) : "more",
                              e.begin, e.end, e.end - e.begin));
    entries.push_back(std::move(e));
  }

  // The data must be covered exactly: no overlaps, no holes (the spec's rule against polyglots).
  std::sort(entries.begin(), entries.end(), [](const safetensors_entry& a, const safetensors_entry& b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  std::uint64_t covered = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const safetensors_entry& e = entries[i];
    if (e.begin < covered)
      fail(file, fmt::format("the data of tensors \"{}\" and \"{}\" overlap (data_offsets [{}, {}] and [{}, {}])",
                             entries[i - 1].name, e.name, entries[i - 1].begin, entries[i - 1].end, e.begin, e.end));
    if (e.begin > covered)
      fail(file, fmt::format("bytes {} to {} of the data belong to no tensor (a hole before \"{}\")", covered, e.begin,
                             e.name));
    covered = e.end;
  }
  if (covered != data_size)
    fail(file, fmt::format("the last {} bytes of the data belong to no tensor", data_size - covered));

  safetensors_contents contents;
  contents.tensors.reserve(entries.size());
  for (safetensors_entry& e : entries) {
    tensor t(e.dims);
    take(reinterpret_cast<char*>(t.data()), e.end - e.begin, fmt::format("tensor \"{}\"", e.name));
    swap_to_little_endian(reinterpret_cast<char*>(t.data()), static_cast<std::size_t>(e.end - e.begin));
    contents.tensors.emplace_back(std::move(e.name), std::move(t));
  }
  contents.hash = hash.value();
  return contents;
}

// ---- metadata to JSON ------------------------------------------------------------------------

// Where a metadata field sits: the text errors name ("node fc1: meta.common.args.data_in_0"), and
// the node and dotted path ("meta.common.args.data_in_0") that a recorded value's tensor is named
// by ("fc1.meta.common.args.data_in_0.value"). Saving adds the tensors to `tensors`.
struct field_place {
  std::string where;
  std::string node;
  std::string path;
  tensor_list* tensors = nullptr;
  field_place member(std::string_view key) const { return {member_path(where, key), node, member_path(path, key), tensors}; }
};

// A metadata field's value, by its type; a described struct (ir/metadata.hpp) as an object of its
// fields, those not recorded left out.
inline json put_field_value(bool v, const field_place&) { return v; }
inline json put_field_value(int v, const field_place&) { return v; }
inline json put_field_value(toolchain t, const field_place&) { return std::string(to_string(t)); }
inline json put_field_value(node_kind k, const field_place&) { return std::string(to_string(k)); }
inline json put_field_value(const std::string& s, const field_place& at) { return put_text(s, at.where); }
inline json put_field_value(const std::optional<std::string>& s, const field_place& at) {
  return s ? json(put_text(*s, at.where)) : json(nullptr);
}
inline json put_field_value(const std::vector<std::string>& list, const field_place& at) {
  json j = json::array();
  for (std::size_t i = 0; i < list.size(); ++i) j.push_back(put_text(list[i], index_path(at.where, i)));
  return j;
}
template <std::size_t N>
json put_field_value(const std::array<int, N>& list, const field_place&) {
  return json(list);
}
inline json put_field_value(const shape& s, const field_place&) { return put_dims(s); }
inline json put_field_value(const format& f, const field_place&) { return to_string(f); }
// A recorded value: saved as a tensor of its own, named here.
inline json put_field_value(const std::optional<tensor>& value, const field_place& at) {
  const std::string name = fmt::format("{}.{}", at.node, at.path);
  at.tensors->add(name, *value, at.where);
  return name;
}
inline json put_field_value(const verilog_value& v, const field_place& at) { return put_verilog_value(v, at.where); }
inline json put_field_value(const stat_value& v, const field_place&) { return put_stat(v); }
template <described_metadata S>
json put_field_value(const S& s, const field_place& at);
// An argument: a tensor as an object, a config value as itself.
inline json put_field_value(const arg_meta& arg, const field_place& at) {
  if (const auto* t = std::get_if<tensor_meta>(&arg)) return put_field_value(*t, at);
  return put_attribute(std::get<config_value>(arg));
}
template <class T>
json put_field_value(const ordered_map<T>& map, const field_place& at) {
  json j = json::object();
  for (const auto& [key, value] : map) {
    const field_place entry = at.member(key);
    j[put_text(key, entry.where)] = put_field_value(value, entry);
  }
  return j;
}
template <described_metadata S>
json put_field_value(const S& s, const field_place& at) {
  json j = json::object();
  std::apply(
      [&](const auto&... f) {
        const auto put = [&](std::string_view name, const auto& value) {
          if (field_recorded(value)) j[std::string(name)] = put_field_value(value, at.member(name));
        };
        (put(f.name, s.*f.member), ...);
      },
      S::fields());
  return j;
}

inline json put_node(const graph& g, const node& n, tensor_list& tensors) {
  const std::string where = fmt::format("node {}", n.name);
  json j = json::object();
  j["name"] = n.name;
  j["op"] = std::string(n.op_name());
  json& attributes = j["attributes"] = json::object();
  for (const auto& [name, value] : op_attributes(n.op)) attributes[std::string(name)] = put_attribute(value);
  json& inputs = j["inputs"] = json::array();
  for (node_id in : n.inputs) inputs.push_back(g[in].name);

  // A parameter the op does not declare could not be set again on loading: refuse it now.
  const parameter_list specs = op_parameters(n.op);
  json& parameters = j["parameters"] = json::object();
  for (const auto& entry : n.parameters) {
    const std::string& role = entry.first;  // not a structured binding: clang 14 cannot capture those
    const tensor& t = entry.second;
    const auto spec = std::find_if(specs.begin(), specs.end(), [&](const parameter_spec& p) { return p.role == role; });
    if (spec == specs.end() || !(spec->shape == t.shape()))
      fail(where, fmt::format("parameter \"{}\" of shape {} is not one that op {} declares; graph::set_parameter "
                              "checks this",
                              role, to_string(t.shape()), n.op_name()));
    const std::string tensor_name = fmt::format("{}.{}", n.name, role);
    parameters[role] = tensor_name;
    tensors.add(tensor_name, t, where);
  }

  j["meta"] = put_field_value(n.meta, field_place{node_field(where, "meta"), n.name, "meta", &tensors});
  return j;
}

// What a save writes, computed before any file is touched (so a graph that cannot be saved
// leaves the old checkpoint alone).
struct checkpoint_plan {
  std::vector<json> nodes;
  tensor_list tensors;
};

// The checkpoint format's JSON side: a class template only so that the compiled mode compiles it
// once (core/compiled.hpp); its members are defined at the end of this section.
using safetensors_reader = std::function<bool(char*, std::uint64_t)>;
template <class Graph>
struct checkpoint_codec {
  static checkpoint_plan plan(const Graph& g);
  // The .json text: top-level fields on their own lines and one node per line, so that a diff
  // of two checkpoints shows which nodes changed.
  static std::string json_text(const checkpoint_plan& plan, write_result safetensors);
  // The graph saved as `json_text`, its tensors read from `read` (safetensors_size bytes).
  static Graph load(std::string_view json_text, const std::string& json_file, const safetensors_reader& read,
                    std::uint64_t safetensors_size, const std::string& safetensors_file,
                    const checkpoint_load_options& options);
};

template <class Graph>
checkpoint_plan checkpoint_codec<Graph>::plan(const Graph& g) {
  checkpoint_plan plan;
  plan.nodes.reserve(g.size());
  for (node_id id : g.order()) plan.nodes.push_back(put_node(g, g[id], plan.tensors));
  return plan;
}

template <class Graph>
std::string checkpoint_codec<Graph>::json_text(const checkpoint_plan& plan, write_result safetensors) {
  std::string text = fmt::format("{{\n  \"format\": \"{}\",\n  \"version\": {},\n", format_name, checkpoint_version);
  text += fmt::format("  \"safetensors\": {{\"bytes\": {}, \"fnv1a64_words\": \"{:016x}\"}},\n", safetensors.size,
                      safetensors.hash);
  text += "  \"nodes\": [";
  for (std::size_t i = 0; i < plan.nodes.size(); ++i) {
    text += i == 0 ? "\n    " : ",\n    ";
    text += plan.nodes[i].dump();
  }
  text += plan.nodes.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return text;
}

// ---- metadata from JSON ----------------------------------------------------------------------

// A metadata field's value from its JSON, by its type (put_field_value's inverse); a recorded
// tensor value is taken from `store`.
inline void get_field_value(const json& j, bool& v, std::string_view where, tensor_store&) { v = get_bool(j, where); }
inline void get_field_value(const json& j, int& v, std::string_view where, tensor_store&) { v = get_int(j, where); }
inline void get_field_value(const json& j, toolchain& t, std::string_view where, tensor_store&) {
  try {
    t = toolchain_from_string(get_string(j, where));
  } catch (const error& e) {
    fail(where, e.what());
  }
}
inline void get_field_value(const json& j, node_kind& k, std::string_view where, tensor_store&) {
  try {
    k = node_kind_from_string(get_string(j, where));
  } catch (const error& e) {
    fail(where, e.what());
  }
}
inline void get_field_value(const json& j, std::string& s, std::string_view where, tensor_store&) {
  s = get_string(j, where);
}
inline void get_field_value(const json& j, std::optional<std::string>& s, std::string_view where, tensor_store&) {
  if (j.is_null()) s.reset();
  else s = get_string(j, where);
}
inline void get_field_value(const json& j, std::vector<std::string>& list, std::string_view where, tensor_store&) {
  array_at(j, where);
  list.clear();
  for (std::size_t i = 0; i < j.size(); ++i) list.push_back(get_string(j[i], index_path(where, i)));
}
template <std::size_t N>
void get_field_value(const json& j, std::array<int, N>& list, std::string_view where, tensor_store&) {
  array_at(j, where);
  if (j.size() != N) fail(where, fmt::format("must list {} integers, not {}", N, j.size()));
  for (std::size_t i = 0; i < N; ++i) list[i] = get_int(j[i], index_path(where, i));
}
inline void get_field_value(const json& j, shape& s, std::string_view where, tensor_store&) { s = get_dims(j, where); }
inline void get_field_value(const json& j, format& f, std::string_view where, tensor_store&) {
  const std::string text = get_string(j, where);
  try {
    f = parse_format(text);
  } catch (const error& e) {
    fail(where, e.what());
  }
}
inline void get_field_value(const json& j, std::optional<tensor>& value, std::string_view where, tensor_store& store) {
  value = store.take(get_string(j, where), where);
}
inline void get_field_value(const json& j, verilog_value& v, std::string_view where, tensor_store&) {
  v = get_verilog_value(j, where);
}
inline void get_field_value(const json& j, stat_value& v, std::string_view where, tensor_store&) { v = get_stat(j, where); }
template <described_metadata S>
void get_field_value(const json& j, S& s, std::string_view where, tensor_store& store);
inline void get_field_value(const json& j, arg_meta& arg, std::string_view where, tensor_store& store) {
  if (j.is_object()) {
    tensor_meta t;
    get_field_value(j, t, where, store);
    arg = std::move(t);
  } else {
    arg = arg_meta(std::in_place_type<config_value>, get_attribute(j, where));
  }
}
template <class T>
void get_field_value(const json& j, ordered_map<T>& map, std::string_view where, tensor_store& store) {
  object_at(j, where);
  for (auto it = j.begin(); it != j.end(); ++it) {
    T value{};
    get_field_value(*it, value, member_path(where, it.key()), store);
    map.insert_or_assign(it.key(), std::move(value));
  }
}
template <described_metadata S>
void get_field_value(const json& j, S& s, std::string_view where, tensor_store& store) {
  object_at(j, where);
  const auto names = std::apply([](const auto&... f) { return std::array<std::string_view, sizeof...(f)>{f.name...}; },
                                S::fields());
  only_field_names(j, names, where);
  std::apply(
      [&](const auto&... f) {
        const auto read = [&](const auto& f_) {
          if (const json* v = field(j, f_.name)) get_field_value(*v, s.*f_.member, member_path(where, f_.name), store);
        };
        (read(f), ...);
      },
      S::fields());
}

inline void add_node(graph& g, const json& j, std::size_t index, tensor_store& store, std::string_view file,
                     const vocabulary& ops) {
  std::string where = fmt::format("{}: nodes[{}]", file, index);
  object_at(j, where);
  const std::string name = get_string(required_field(j, "name", where), node_field(where, "name"));
  where += fmt::format(" ({})", name);
  only_fields(j, {"name", "op", "attributes", "inputs", "parameters", "meta"}, where);
  const std::string op_name = get_string(required_field(j, "op", where), node_field(where, "op"));

  ordered_map<attribute_value> attributes;
  if (const json* a = field(j, "attributes")) {
    const std::string at = node_field(where, "attributes");
    object_at(*a, at);
    for (auto it = a->begin(); it != a->end(); ++it)
      attributes.insert_or_assign(it.key(), get_attribute(*it, member_path(at, it.key())));
  }
  if (!ops.contains(op_name)) {
    const std::vector<std::string_view> known = ops.names();
    // The nearest names if they are near (a typo), else the whole vocabulary.
    std::string all;
    for (std::string_view k : known) all += fmt::format("{}{}", all.empty() ? "" : ", ", k);
    const std::string near = nearest_names(op_name, known);
    fail(node_field(where, "op"), near.empty() ? fmt::format("unknown op \"{}\"; the ops this mase knows are: {}", op_name, all)
                                               : fmt::format("unknown op \"{}\"; did you mean {}?", op_name, near));
  }
  any_op op = ops.make(op_name, attributes, where);

  std::vector<node_id> inputs;
  if (const json* in = field(j, "inputs")) {
    const std::string at = node_field(where, "inputs");
    array_at(*in, at);
    for (std::size_t i = 0; i < in->size(); ++i) {
      const std::string input = get_string((*in)[i], index_path(at, i));
      const auto id = g.find(input);
      if (!id) fail(index_path(at, i), fmt::format("unknown input \"{}\": no earlier node has that name", input));
      inputs.push_back(*id);
    }
  }

  node_id id;
  try {
    id = g.add(name, std::move(op), std::move(inputs));
  } catch (const error& e) {
    fail(where, e.what());
  }

  if (const json* p = field(j, "parameters")) {
    const std::string at = node_field(where, "parameters");
    object_at(*p, at);
    for (auto it = p->begin(); it != p->end(); ++it) {
      const std::string role_at = member_path(at, it.key());
      tensor t = store.take(get_string(*it, role_at), role_at);
      try {
        g.set_parameter(id, it.key(), std::move(t));
      } catch (const error& e) {
        fail(role_at, e.what());
      }
    }
  }
  if (const json* m = field(j, "meta")) {
    node_metadata meta;
    get_field_value(*m, meta, node_field(where, "meta"), store);
    g[id].meta = std::move(meta);
  }
}

template <class Graph>
Graph checkpoint_codec<Graph>::load(std::string_view json_text, const std::string& json_file,
                                    const safetensors_reader& read, std::uint64_t safetensors_size,
                                    const std::string& safetensors_file, const checkpoint_load_options& options) {
  try {
    const json document = parse_json<json>(json_text, json_file);
    object_at(document, json_file);
    // Format and version first: a newer version may have fields this one does not know.
    const std::string format = get_string(required_field(document, "format", json_file), member_path(json_file, "format"));
    if (format != format_name)
      fail(json_file, fmt::format("not a mase checkpoint (its format is \"{}\", not \"{}\")", format, format_name));
    const std::int64_t version = get_int64(required_field(document, "version", json_file), member_path(json_file, "version"));
    if (version > checkpoint_version)
      fail(json_file, fmt::format("checkpoint version {} is newer than this mase (reads version {})", version,
                                  checkpoint_version));
    if (version < 1) fail(json_file, fmt::format("checkpoint version {} does not exist (versions start at 1)", version));
    only_fields(document, {"format", "version", "safetensors", "nodes"}, json_file);

    const std::string pairing_at = member_path(json_file, "safetensors");
    const json& pairing = object_at(required_field(document, "safetensors", json_file), pairing_at);
    only_fields(pairing, {"bytes", "fnv1a64_words"}, pairing_at);
    const std::uint64_t recorded_size = get_uint64(required_field(pairing, "bytes", pairing_at), member_path(pairing_at, "bytes"));
    const std::string hash_at = member_path(pairing_at, "fnv1a64_words");
    const std::string hash_text = get_string(required_field(pairing, "fnv1a64_words", pairing_at), hash_at);
    std::uint64_t recorded_hash = 0;
    if (const auto [end, ec] = std::from_chars(hash_text.data(), hash_text.data() + hash_text.size(), recorded_hash, 16);
        hash_text.size() != 16 || ec != std::errc() || end != hash_text.data() + hash_text.size())
      fail(hash_at, fmt::format("must be 16 hexadecimal digits, not \"{}\"", hash_text));
    const json& nodes = array_at(required_field(document, "nodes", json_file), member_path(json_file, "nodes"));

    if (options.verify_pairing && recorded_size != safetensors_size)
      fail(safetensors_file, fmt::format("the file is {} bytes, but {} was saved with one of {} bytes: the two files "
                                         "come from different saves (or the .safetensors is truncated)",
                                         safetensors_size, json_file, recorded_size));
    safetensors_contents contents = read_safetensors(read, safetensors_size, safetensors_file);
    if (options.verify_pairing && contents.hash != recorded_hash)
      fail(safetensors_file, fmt::format("its FNV-1a hash is {:016x}, but {} was saved with one whose hash is {:016x}: "
                                         "the two files come from different saves",
                                         contents.hash, json_file, recorded_hash));

    tensor_store store(json_file, safetensors_file);
    for (auto& [name, t] : contents.tensors) store.add(std::move(name), std::move(t));
    contents.tensors.clear();

    Graph g;
    const vocabulary& ops = options.ops != nullptr ? *options.ops : builtin_vocabulary();
    for (std::size_t i = 0; i < nodes.size(); ++i) add_node(g, nodes[i], i, store, json_file, ops);
    store.check_all_used();
    return g;
  } catch (const nlohmann::json::exception& e) {
    // Every access above checks types first; this is a safety net, still naming the file.
    throw error(fmt::format("{}: unexpected JSON content ({})", json_file, e.what()));
  }
}

#if MASE_EXTERN_INSTANTIATIONS
extern template struct checkpoint_codec<graph>;
#endif

// ---- files -----------------------------------------------------------------------------------

inline std::filesystem::path with_suffix(const std::filesystem::path& stem, std::string_view suffix) {
  std::filesystem::path p = stem;
  p += std::string(suffix);
  return p;
}

// A file streamed into a mase::temp_file beside `final_path` (removed if anything fails) and
// renamed onto `final_path` by rename_into_place(), after finish() flushed and synced it: the rename must never
// expose a file whose data is still only in the page cache (a power cut would leave it empty).
class streamed_file {
public:
  explicit streamed_file(const std::filesystem::path& final_path) : final_(final_path), temp_(final_path, "tmp") {
    file_ = std::fopen(temp_.path().string().c_str(), "wb");
    if (file_ == nullptr) io_failed("opening");
  }
  streamed_file(const streamed_file&) = delete;
  streamed_file& operator=(const streamed_file&) = delete;
  ~streamed_file() {
    if (file_ != nullptr) std::fclose(file_);  // before temp_ removes the file
  }

  void write(const char* data, std::size_t size) {
    if (size != 0 && std::fwrite(data, 1, size, file_) != size) io_failed("writing");
  }

  // Completes the temporary file (its data on disk); rename_into_place() then publishes it.
  void finish() {
    if (std::fflush(file_) != 0) io_failed("writing");
#ifdef MASE_CHECKPOINT_HAS_FSYNC
    if (::fsync(::fileno(file_)) != 0) io_failed("syncing");
#endif
    if (std::fclose(std::exchange(file_, nullptr)) != 0) io_failed("closing");
  }

  void rename_into_place() { temp_.rename_to(final_); }

private:
  [[noreturn]] void io_failed(std::string_view doing) {
    const int code = errno;
    throw error(fmt::format("cannot write {}: {} {} failed: {}", final_.string(), doing, temp_.path().string(),
                            std::generic_category().message(code)));
  }

  std::filesystem::path final_;
  temp_file temp_;
  std::FILE* file_ = nullptr;
};

// Accepts "model", and "model.json" / "model.safetensors" when those are what exists.
inline std::filesystem::path checkpoint_stem(const std::filesystem::path& stem) {
  std::error_code ec;
  if (std::filesystem::exists(with_suffix(stem, ".json"), ec)) return stem;
  const auto ext = stem.extension();
  if (ext == ".json" || ext == ".safetensors") return std::filesystem::path(stem).replace_extension();
  return stem;
}

inline std::ifstream open_for_reading(const std::filesystem::path& path, std::uint64_t& size) {
  std::error_code ec;
  size = std::filesystem::file_size(path, ec);
  if (ec)
    throw error(fmt::format("cannot load checkpoint: cannot read {} ({}); from_checkpoint takes the stem, e.g. "
                            "\"out/model\" for out/model.json and out/model.safetensors",
                            path.string(), ec.message()));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error(fmt::format("cannot load checkpoint: cannot open {}", path.string()));
  return in;
}

}  // namespace checkpoint_detail

// The entry points declared in io/checkpoint.hpp.

template <class Graph>
checkpoint_strings checkpoint_to_strings(const std::type_identity_t<Graph>& g) {
  using namespace checkpoint_detail;
  try {
    const checkpoint_plan plan = checkpoint_codec<Graph>::plan(g);
    checkpoint_strings out;
    const write_result written =
        write_safetensors(plan.tensors, [&](const char* data, std::size_t size) { out.safetensors.append(data, size); });
    out.json = checkpoint_codec<Graph>::json_text(plan, written);
    return out;
  } catch (const error& e) {
    throw error(fmt::format("cannot save checkpoint: {}", e.what()));
  } catch (const nlohmann::json::exception& e) {
    throw error(fmt::format("cannot save checkpoint: {}", e.what()));
  }
}

template <class Graph>
Graph graph_from_checkpoint_strings(std::string_view json_text, std::string_view safetensors_bytes,
                                    const checkpoint_load_options& options) {
  std::size_t position = 0;
  auto read = [&](char* out, std::uint64_t n) {
    if (n > safetensors_bytes.size() - position) return false;
    std::copy_n(safetensors_bytes.data() + position, static_cast<std::size_t>(n), out);
    position += static_cast<std::size_t>(n);
    return true;
  };
  return checkpoint_detail::checkpoint_codec<Graph>::load(json_text, "<checkpoint json>", read, safetensors_bytes.size(),
                                                          "<checkpoint safetensors>", options);
}

template <class Graph>
void export_checkpoint(const std::type_identity_t<Graph>& g, const std::filesystem::path& stem) {
  using namespace checkpoint_detail;
  try {
    // Everything that can be refused is refused here, before any file is touched.
    const checkpoint_plan plan = checkpoint_codec<Graph>::plan(g);
    check_checkpoint_stem(stem);
    // Both files are complete on disk before either replaces anything, so a failure (a full
    // disk, a folder in the way) leaves any previous pair exactly as it was.
    streamed_file weights(with_suffix(stem, ".safetensors"));
    const write_result written =
        write_safetensors(plan.tensors, [&](const char* data, std::size_t size) { weights.write(data, size); });
    weights.finish();
    const std::string text = checkpoint_codec<Graph>::json_text(plan, written);
    streamed_file graph_file(with_suffix(stem, ".json"));
    graph_file.write(text.data(), text.size());
    graph_file.finish();
    weights.rename_into_place();
    graph_file.rename_into_place();
  } catch (const error& e) {
    throw error(fmt::format("cannot save checkpoint {}: {}", stem.string(), e.what()));
  } catch (const nlohmann::json::exception& e) {
    throw error(fmt::format("cannot save checkpoint {}: {}", stem.string(), e.what()));
  }
}

template <class Graph>
Graph from_checkpoint(const std::filesystem::path& stem, const checkpoint_load_options& options) {
  using namespace checkpoint_detail;
  const std::filesystem::path base = checkpoint_stem(stem);
  const std::filesystem::path json_path = with_suffix(base, ".json");
  const std::filesystem::path safetensors_path = with_suffix(base, ".safetensors");

  std::uint64_t json_size = 0;
  std::ifstream json_in = open_for_reading(json_path, json_size);
  if (json_size > std::numeric_limits<std::size_t>::max() / 2)
    throw error(fmt::format("{}: the file is too large to read", json_path.string()));
  std::string json_text(static_cast<std::size_t>(json_size), '\0');
  if (!json_in.read(json_text.data(), static_cast<std::streamsize>(json_size)))
    throw error(fmt::format("{}: the file ended early while being read (it changed while being read?)", json_path.string()));

  std::uint64_t safetensors_size = 0;
  std::ifstream safetensors_in = open_for_reading(safetensors_path, safetensors_size);
  auto read = [&](char* out, std::uint64_t n) {
    return static_cast<bool>(safetensors_in.read(out, static_cast<std::streamsize>(n)));
  };
  return checkpoint_codec<Graph>::load(json_text, json_path.string(), read, safetensors_size, safetensors_path.string(),
                                       options);
}

}  // namespace mase
