#pragma once
// ONNX TensorProto <-> mase::tensor. mase computes in float32, so every numeric element type is
// read into float32: exact for integers up to 2^24 and for float16/bfloat16, rounded to nearest
// for double. Integer data is also available exactly (int64), for the attributes that ONNX
// passes as tensors (Reshape's shape, Slice's starts, …), where INT64_MAX means "to the end".

#include <mase/core/error.hpp>
#include <mase/core/shape.hpp>
#include <mase/core/tensor.hpp>
#include <mase/io/onnx/api.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/core.h>
#include <onnx/onnx_pb.h>

namespace mase::onnx {

namespace detail {

// A whole file's bytes; `what` names it in errors ("ONNX model").
inline std::string read_file(const std::filesystem::path& file, std::string_view what) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    throw error(fmt::format("{}: no such {} (not a regular file)", file.string(), what));
  std::ifstream in(file, std::ios::binary);
  if (!in) throw error(fmt::format("{}: cannot open the {}", file.string(), what));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw error(fmt::format("{}: reading the {} failed", file.string(), what));
  return bytes;
}

}  // namespace detail

// The element type names ONNX uses in its documentation ("float", "int64", …).
inline std::string_view element_type_name(int type) {
  using T = ::onnx::TensorProto;
  switch (type) {
    case T::FLOAT: return "float";
    case T::UINT8: return "uint8";
    case T::INT8: return "int8";
    case T::UINT16: return "uint16";
    case T::INT16: return "int16";
    case T::INT32: return "int32";
    case T::INT64: return "int64";
    case T::STRING: return "string";
    case T::BOOL: return "bool";
    case T::FLOAT16: return "float16";
    case T::DOUBLE: return "double";
    case T::UINT32: return "uint32";
    case T::UINT64: return "uint64";
    case T::COMPLEX64: return "complex64";
    case T::COMPLEX128: return "complex128";
    case T::BFLOAT16: return "bfloat16";
    default: return "undefined";
  }
}

// The types mase reads (into float32).
inline bool is_numeric_element_type(int type) {
  using T = ::onnx::TensorProto;
  switch (type) {
    case T::FLOAT: case T::DOUBLE: case T::FLOAT16: case T::BFLOAT16:
    case T::INT8: case T::INT16: case T::INT32: case T::INT64:
    case T::UINT8: case T::UINT16: case T::UINT32: case T::UINT64: case T::BOOL:
      return true;
    default:
      return false;
  }
}

inline bool is_integer_element_type(int type) {
  using T = ::onnx::TensorProto;
  return is_numeric_element_type(type) && type != T::FLOAT && type != T::DOUBLE && type != T::FLOAT16 &&
         type != T::BFLOAT16;
}

namespace detail {

inline float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const int exponent = (h >> 10) & 0x1f;
  const std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {  // zero or subnormal: mantissa · 2^-24, exact in float
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | static_cast<std::uint32_t>(exponent - 15 + 127) << 23 | (mantissa << 13));
}

inline float bfloat16_to_float(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

// Bytes per element in raw_data, or 0 for a type mase does not read.
inline std::size_t raw_element_size(int type) {
  using T = ::onnx::TensorProto;
  switch (type) {
    case T::INT8: case T::UINT8: case T::BOOL: return 1;
    case T::INT16: case T::UINT16: case T::FLOAT16: case T::BFLOAT16: return 2;
    case T::FLOAT: case T::INT32: case T::UINT32: return 4;
    case T::DOUBLE: case T::INT64: case T::UINT64: return 8;
    default: return 0;
  }
}

template <class T>
T load_little_endian(const char* p) {
  static_assert(std::endian::native == std::endian::little, "mase reads ONNX raw_data on little-endian hosts");
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace detail

// A TensorProto's values: as float32 (always) and exactly as int64 (integer types only).
struct tensor_data {
  mase::shape shape;
  int element_type = 0;
  std::vector<float> values;
  std::optional<std::vector<std::int64_t>> integers;
};

// Reads a TensorProto; `where` names it in errors ("model.onnx: initializer fc.weight").
inline tensor_data read_tensor_proto(const ::onnx::TensorProto& t, std::string_view where) {
  using T = ::onnx::TensorProto;
  const int type = t.data_type();
  if (t.data_location() == T::EXTERNAL || t.external_data_size() > 0)
    throw error(fmt::format("{}: the tensor's data is stored in an external file, which mase does not read; save the "
                            "model with its data inside the .onnx file",
                            where));
  if (!is_numeric_element_type(type))
    throw unsupported(fmt::format("{}: element type {} is not supported (mase reads numeric and bool tensors)", where,
                            element_type_name(type)));
  if (t.dims_size() > shape::max_rank)
    throw unsupported(fmt::format("{}: {} dimensions; mase handles at most {}", where, t.dims_size(), shape::max_rank));
  tensor_data out;
  out.element_type = type;
  std::size_t count = 1;
  for (std::int64_t d : t.dims()) {
    if (d < 0) throw error(fmt::format("{}: dimension {} is negative", where, d));
    // A bound far above any real model keeps a damaged size from asking for an absurd allocation.
    if (d > 0 && count > (std::size_t{1} << 32) / static_cast<std::size_t>(d))
      throw error(fmt::format("{}: the tensor has more than 2^32 elements", where));
    count *= static_cast<std::size_t>(d);
    out.shape.push_back(d);
  }
  const bool integer = is_integer_element_type(type);
  if (integer) out.integers.emplace();
  const auto put = [&](std::size_t i, double v, std::int64_t exact) {
    out.values[i] = static_cast<float>(v);
    if (integer) (*out.integers)[i] = exact;
  };
  const auto expect_count = [&](std::size_t have, std::string_view field) {
    if (have != count)
      throw error(fmt::format("{}: shape {} holds {} values but {} has {}", where, to_string(out.shape), count, field,
                              have));
  };
  // The declared shape is checked against the data actually present before anything is
  // allocated for it, so a damaged shape costs an error, not memory (count is at most 2^32).
  if (t.has_raw_data()) {
    const std::size_t size = detail::raw_element_size(type);
    if (t.raw_data().size() != count * size)
      throw error(fmt::format("{}: raw_data has {} bytes; shape {} of {} needs {}", where, t.raw_data().size(),
                              to_string(out.shape), element_type_name(type), count * size));
  } else {
    // Typed fields: float_data for float; double_data for double; int64_data for int64;
    // uint64_data for uint32/uint64; int32_data for every narrower type, float16 and bfloat16 bits.
    switch (type) {
      case T::FLOAT: expect_count(static_cast<std::size_t>(t.float_data_size()), "float_data"); break;
      case T::DOUBLE: expect_count(static_cast<std::size_t>(t.double_data_size()), "double_data"); break;
      case T::INT64: expect_count(static_cast<std::size_t>(t.int64_data_size()), "int64_data"); break;
      case T::UINT32:
      case T::UINT64: expect_count(static_cast<std::size_t>(t.uint64_data_size()), "uint64_data"); break;
      default: expect_count(static_cast<std::size_t>(t.int32_data_size()), "int32_data"); break;
    }
  }
  out.values.resize(count);
  if (integer) out.integers->resize(count);

  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    const std::size_t size = detail::raw_element_size(type);
    const char* p = raw.data();
    for (std::size_t i = 0; i < count; ++i, p += size) {
      switch (type) {
        case T::FLOAT: out.values[i] = detail::load_little_endian<float>(p); break;
        case T::DOUBLE: out.values[i] = static_cast<float>(detail::load_little_endian<double>(p)); break;
        case T::FLOAT16: out.values[i] = detail::half_to_float(detail::load_little_endian<std::uint16_t>(p)); break;
        case T::BFLOAT16:
          out.values[i] = detail::bfloat16_to_float(detail::load_little_endian<std::uint16_t>(p));
          break;
        case T::INT8: { const auto v = detail::load_little_endian<std::int8_t>(p); put(i, v, v); break; }
        case T::UINT8: { const auto v = detail::load_little_endian<std::uint8_t>(p); put(i, v, v); break; }
        case T::BOOL: { const bool v = *p != 0; put(i, v, v); break; }
        case T::INT16: { const auto v = detail::load_little_endian<std::int16_t>(p); put(i, v, v); break; }
        case T::UINT16: { const auto v = detail::load_little_endian<std::uint16_t>(p); put(i, v, v); break; }
        case T::INT32: { const auto v = detail::load_little_endian<std::int32_t>(p); put(i, v, v); break; }
        case T::UINT32: { const auto v = detail::load_little_endian<std::uint32_t>(p); put(i, v, v); break; }
        case T::INT64: {
          const auto v = detail::load_little_endian<std::int64_t>(p);
          put(i, static_cast<double>(v), v);
          break;
        }
        case T::UINT64: {
          const auto v = detail::load_little_endian<std::uint64_t>(p);
          put(i, static_cast<double>(v),
              v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                  ? std::numeric_limits<std::int64_t>::max()
                  : static_cast<std::int64_t>(v));
          break;
        }
        default: break;
      }
    }
    return out;
  }

  // The typed field's length was checked above.
  switch (type) {
    case T::FLOAT:
      for (std::size_t i = 0; i < count; ++i) out.values[i] = t.float_data(static_cast<int>(i));
      break;
    case T::DOUBLE:
      for (std::size_t i = 0; i < count; ++i) out.values[i] = static_cast<float>(t.double_data(static_cast<int>(i)));
      break;
    case T::INT64:
      for (std::size_t i = 0; i < count; ++i) {
        const std::int64_t v = t.int64_data(static_cast<int>(i));
        put(i, static_cast<double>(v), v);
      }
      break;
    case T::UINT32:
    case T::UINT64:
      for (std::size_t i = 0; i < count; ++i) {
        const std::uint64_t v = t.uint64_data(static_cast<int>(i));
        put(i, static_cast<double>(v),
            v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                ? std::numeric_limits<std::int64_t>::max()
                : static_cast<std::int64_t>(v));
      }
      break;
    default:
      for (std::size_t i = 0; i < count; ++i) {
        const std::int32_t v = t.int32_data(static_cast<int>(i));
        if (type == T::FLOAT16) out.values[i] = detail::half_to_float(static_cast<std::uint16_t>(v));
        else if (type == T::BFLOAT16) out.values[i] = detail::bfloat16_to_float(static_cast<std::uint16_t>(v));
        else put(i, v, v);
      }
      break;
  }
  return out;
}

// A float32 TensorProto holding `t`, named `name`.
inline ::onnx::TensorProto make_tensor_proto(const tensor& t, std::string_view name) {
  ::onnx::TensorProto proto;
  proto.set_name(std::string(name));
  proto.set_data_type(::onnx::TensorProto::FLOAT);
  for (std::int64_t d : t.shape()) proto.add_dims(d);
  static_assert(std::endian::native == std::endian::little, "mase writes ONNX raw_data on little-endian hosts");
  proto.set_raw_data(std::string(reinterpret_cast<const char*>(t.data()), t.size_in_bytes()));
  return proto;
}

}  // namespace mase::onnx
