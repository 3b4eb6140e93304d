#pragma once
// Node metadata: MASE's three sections (common / software / hardware) as structs, with MASE's
// names for every entry (data_in_0…, weight, bias, data_out_0…; verilog parameters in capitals).
// MASE's schema (DeepWok/mase at ae4660b1): src/chop/ir/graph/mase_metadata.py, filled by
// src/chop/passes/graph/analysis/add_metadata/add_common_metadata.py and add_hardware_metadata.py.

#include <mase/core/compiled.hpp>
#include <mase/core/ordered_map.hpp>
#include <mase/core/shape.hpp>
#include <mase/core/tensor.hpp>
#include <mase/format/format.hpp>
#include <mase/ir/kind.hpp>
#include <mase/ir/op/op_base.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <variant>
#include <vector>

namespace mase {

// A field of a metadata struct: its name (MASE's) and its member. Every metadata struct lists its
// fields once, in a static fields(); its equality (below), its printing (ir/print.hpp) and its
// checkpoint codec (io/checkpoint/codec.hpp) all go through that list, and a static_assert checks
// that it names every member, so a new field cannot be forgotten by any of them.
template <class Struct, class T>
struct metadata_field {
  using value_type = T;
  std::string_view name;
  T Struct::*member;
};
template <class Struct, class T>
constexpr metadata_field<Struct, T> metadata_field_of(std::string_view name, T Struct::*member) noexcept {
  return {name, member};
}
template <class Struct>
concept described_metadata = requires { Struct::fields(); };


// Whether a field holds something to print or save: a tensor's value is recorded only sometimes,
// and prints and checkpoints leave an unrecorded one out.
template <class T>
constexpr bool field_recorded(const T&) noexcept {
  return true;
}
inline bool field_recorded(const std::optional<tensor>& value) noexcept { return value.has_value(); }

// A tensor argument or result: its shape, its number format and, when recorded, its value.
// An unquantized tensor has precision float32 (MASE's type "float", precision [32]).
struct tensor_meta {
  mase::shape shape;
  format precision = formats::float32;
  std::optional<tensor> value;

  // MASE's "type" string, derived from the precision so the two cannot disagree:
  // "float" for float32, else the format family ("fixed", "minifloat", "block_fp", …).
  std::string type() const;

  // In MASE's order (its "type" comes first, derived).
  static constexpr auto fields() {
    return std::tuple{metadata_field_of("precision", &tensor_meta::precision),
                      metadata_field_of("shape", &tensor_meta::shape), metadata_field_of("value", &tensor_meta::value)};
  }
};

// A non-tensor argument (softmax's dim, inplace, …), with its value.
using config_value = attribute_value;

// An entry of common.args: a tensor or a config value.
using arg_meta = std::variant<tensor_meta, config_value>;


struct common_meta {
  std::string mase_op;
  node_kind mase_type = node_kind::placeholder;
  // data_in_0, data_in_1, … then parameters (weight, bias, …) then config args, in that order.
  ordered_map<arg_meta> args;
  // data_out_0, data_out_1, …
  ordered_map<tensor_meta> results;

  static constexpr auto fields() {
    return std::tuple{metadata_field_of("mase_op", &common_meta::mase_op),
                      metadata_field_of("mase_type", &common_meta::mase_type),
                      metadata_field_of("args", &common_meta::args), metadata_field_of("results", &common_meta::results)};
  }
};

// A statistic's fields: a number, a list of numbers, or MASE's "NA" (too few samples).
struct not_available {
  friend bool operator==(not_available, not_available) = default;
};
using stat_value = std::variant<double, std::vector<double>, not_available>;
// One statistic ("range_min_max": {min, max, range, count}).
using statistic = ordered_map<stat_value>;

// software.args[entry] / software.results[entry]: the statistics profiled for it.
struct software_entry {
  ordered_map<statistic> stat;
  static constexpr auto fields() { return std::tuple{metadata_field_of("stat", &software_entry::stat)}; }
};

struct software_meta {
  ordered_map<software_entry> args;
  ordered_map<software_entry> results;
  static constexpr auto fields() {
    return std::tuple{metadata_field_of("args", &software_meta::args), metadata_field_of("results", &software_meta::results)};
  }
};

// MASE_HARDWARE_TOOLCHAIN.
enum class toolchain : std::uint8_t { internal_rtl, external_rtl, internal_hls, external_hls, mlir_hls };
inline constexpr std::array<std::string_view, 5> toolchain_names{"INTERNAL_RTL", "EXTERNAL_RTL", "INTERNAL_HLS",
                                                                 "EXTERNAL_HLS", "MLIR_HLS"};
constexpr std::string_view to_string(toolchain t) noexcept { return toolchain_names[static_cast<std::size_t>(t)]; }
inline toolchain toolchain_from_string(std::string_view name) {
  for (std::size_t i = 0; i < toolchain_names.size(); ++i)
    if (toolchain_names[i] == name) return static_cast<toolchain>(i);
  throw error(fmt::format("unknown toolchain \"{}\"; the toolchains are INTERNAL_RTL, EXTERNAL_RTL, INTERNAL_HLS, "
                          "EXTERNAL_HLS and MLIR_HLS",
                          name));
}

// How a parameter reaches the hardware.
struct interface_entry {
  std::string storage = "BRAM";
  bool transpose = false;
  static constexpr auto fields() {
    return std::tuple{metadata_field_of("storage", &interface_entry::storage),
                      metadata_field_of("transpose", &interface_entry::transpose)};
  }
};

// A Verilog parameter value: an integer, a flag, a list (array parameters) or a string.
using verilog_value = std::variant<std::int64_t, bool, std::vector<std::int64_t>, std::string>;

struct hardware_meta {
  bool is_implicit = false;
  int device_id = -1;
  mase::toolchain toolchain = toolchain::internal_rtl;
  std::optional<std::string> module;  // the RTL top module; none for HLS nodes
  ordered_map<interface_entry> interface;  // per parameter arg
  ordered_map<verilog_value> verilog_param;  // DATA_IN_0_PRECISION_0, …
  std::vector<std::string> dependence_files;  // relative to the RTL library
  std::array<int, 4> max_parallelism{4, 4, 4, 4};
  // Its rank-4 streams ([N, C, H, W] maps) run channels-last: each sample H x W pixels of C
  // channels (add_hardware_metadata sets it on the nodes with a map where hardware_options asks).
  bool channels_last = false;
  // MASE's names, in MASE's order (and channels_last, mase's own).
  static constexpr auto fields() {
    return std::tuple{metadata_field_of("is_implicit", &hardware_meta::is_implicit),
                      metadata_field_of("device_id", &hardware_meta::device_id),
                      metadata_field_of("toolchain", &hardware_meta::toolchain),
                      metadata_field_of("module", &hardware_meta::module),
                      metadata_field_of("interface", &hardware_meta::interface),
                      metadata_field_of("verilog_param", &hardware_meta::verilog_param),
                      metadata_field_of("dependence_files", &hardware_meta::dependence_files),
                      metadata_field_of("max_parallelism", &hardware_meta::max_parallelism),
                      metadata_field_of("channels_last", &hardware_meta::channels_last)};
  }
};



// MASE's entry names: data_in_<i>, data_out_<i>.
inline std::string data_in_name(std::size_t i) { return fmt::format("data_in_{}", i); }
inline std::string data_out_name(std::size_t i) { return fmt::format("data_out_{}", i); }

struct node_metadata {
  common_meta common;
  software_meta software;
  hardware_meta hardware;
  static constexpr auto fields() {
    return std::tuple{metadata_field_of("common", &node_metadata::common),
                      metadata_field_of("software", &node_metadata::software),
                      metadata_field_of("hardware", &node_metadata::hardware)};
  }
};

inline std::string tensor_meta::type() const {
  return precision.visit([&](const auto& f) -> std::string {
    using F = std::decay_t<decltype(f)>;
    if constexpr (std::is_same_v<F, fixed_fmt>) return "fixed";
    else if constexpr (std::is_same_v<F, minifloat_fmt>) return f == formats::float32 ? "float" : "minifloat";
    else if constexpr (std::is_same_v<F, log_fmt>) return "log";
    else if constexpr (std::is_same_v<F, binary_fmt>) return "binary";
    else if constexpr (std::is_same_v<F, ternary_fmt>) return "ternary";
    else if constexpr (std::is_same_v<F, residual_sign_fmt>) return "residual_sign";
    else if constexpr (std::is_same_v<F, block_fp_fmt>) return "block_fp";
    else if constexpr (std::is_same_v<F, block_minifloat_fmt>) return "block_minifloat";
    else if constexpr (std::is_same_v<F, block_log_fmt>) return "block_log";
    else if constexpr (std::is_same_v<F, mxint_fmt>) return "mxint";
    else return "mx";
  });
}

// Metadata compares bit for bit, as tensors do (ir/metadata_definitions.hpp), every listed field.
MASE_COMPILED_INLINE bool operator==(const tensor_meta& a, const tensor_meta& b);
MASE_COMPILED_INLINE bool operator==(const common_meta& a, const common_meta& b);
MASE_COMPILED_INLINE bool operator==(const software_entry& a, const software_entry& b);
MASE_COMPILED_INLINE bool operator==(const software_meta& a, const software_meta& b);
MASE_COMPILED_INLINE bool operator==(const interface_entry& a, const interface_entry& b);
MASE_COMPILED_INLINE bool operator==(const hardware_meta& a, const hardware_meta& b);
MASE_COMPILED_INLINE bool operator==(const node_metadata& a, const node_metadata& b);

}  // namespace mase

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/ir/metadata_definitions.hpp>
#endif
