#pragma once
// Reading and writing .npy files (io/npy.hpp declares it): inline in the header-only mode,
// compiled once in mase::mase (src/checkpoint.cpp) otherwise.

#include <mase/io/npy.hpp>

// A unit that links the compiled library (mase::mase) gets these from the library; defining them again here would
// break the link with duplicate symbols.
#if MASE_EXTERN_INSTANTIATIONS && !defined(MASE_DEFINE_COMPILED)
#error "this header holds definitions that the compiled library (mase::mase) provides; include <mase/io/npy.hpp> instead"
#endif

#include <mase/core/error.hpp>
#include <mase/core/shape.hpp>
#include <mase/core/temp_file.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace mase::npy {

namespace detail {

// Element types as numpy's descr spells them, without the byte-order character.
enum class element_kind : std::uint8_t { floating, signed_integer, unsigned_integer, boolean };

struct element_type {
  element_kind kind;
  std::size_t bytes;
};

// What the header says.
struct header {
  element_type type;
  mase::shape dims;
};

inline constexpr std::string_view magic = "\x93NUMPY";

MASE_COMPILED_INLINE std::uint64_t read_little_endian(const char* bytes, std::size_t count) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < count; ++i)
    value |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  return value;
}

// IEEE binary16 to float, exactly (every half is a float).
MASE_COMPILED_INLINE float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1Fu;
  const std::uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));  // inf, NaN (payload kept)
  if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  // Zero and subnormals: mantissa · 2^-24, exact in float.
  const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  return sign != 0 ? -magnitude : magnitude;
}

// A small reader for the header's Python literal: a dict of string keys to strings, booleans and
// tuples of integers. Anything else is reported with the position it was found at.
class literal_reader {
public:
  literal_reader(std::string_view text, const std::filesystem::path& file) : text_(text), file_(file) {}

  [[noreturn]] void fail(std::string_view what) const {
    throw error(fmt::format("cannot load {}: the .npy header {} (at character {} of \"{}\"); the file is damaged or "
                            "was not written by numpy.save",
                            file_.string(), what, position_, text_));
  }

  // A well-formed header describing an array mase does not take.
  [[noreturn]] void refuse(std::string_view what) const {
    throw error(fmt::format("cannot load {}: {}", file_.string(), what));
  }

  void skip_space() {
    while (position_ < text_.size() && (text_[position_] == ' ' || text_[position_] == '\t' ||
                                        text_[position_] == '\n' || text_[position_] == '\r'))
      ++position_;
  }
  bool at_end() {
    skip_space();
    return position_ >= text_.size();
  }
  bool accept(char c) {
    skip_space();
    if (position_ < text_.size() && text_[position_] == c) {
      ++position_;
      return true;
    }
    return false;
  }
  void expect(char c, std::string_view what) {
    if (!accept(c)) fail(fmt::format("lacks {}", what));
  }
  bool peek(char c) {
    skip_space();
    return position_ < text_.size() && text_[position_] == c;
  }

  std::string string() {
    skip_space();
    if (position_ >= text_.size() || (text_[position_] != '\'' && text_[position_] != '"')) fail("lacks a quoted string");
    const char quote = text_[position_++];
    const std::size_t end = text_.find(quote, position_);
    if (end == std::string_view::npos) fail("has an unterminated string");
    std::string value(text_.substr(position_, end - position_));
    position_ = end + 1;
    return value;
  }

  bool boolean() {
    skip_space();
    for (const auto& [word, value] : {std::pair<std::string_view, bool>{"True", true}, {"False", false}})
      if (text_.substr(position_, word.size()) == word) {
        position_ += word.size();
        return value;
      }
    fail("has a value that is neither True nor False");
  }

  std::int64_t integer() {
    skip_space();
    std::int64_t value = 0;
    std::size_t digits = 0;
    while (position_ < text_.size() && text_[position_] >= '0' && text_[position_] <= '9') {
      if (value > (std::numeric_limits<std::int64_t>::max() - 9) / 10) fail("has a dimension too large to hold");
      value = value * 10 + (text_[position_++] - '0');
      ++digits;
    }
    if (digits == 0) fail("has a dimension that is not a non-negative integer");
    if (position_ < text_.size() && text_[position_] == 'L') ++position_;  // Python 2's long suffix
    return value;
  }

  // "()", "(5,)", "(2, 3)", "(2, 3,)"
  mase::shape tuple() {
    expect('(', "the shape tuple's '('");
    mase::shape dims;
    std::int64_t count = 0;
    while (!accept(')')) {
      const std::int64_t d = integer();
      if (++count > mase::shape::max_rank)
        refuse(fmt::format("the array has more than {} dimensions, which mase tensors cannot hold", mase::shape::max_rank));
      dims.push_back(d);
      if (accept(')')) break;
      expect(',', "a ',' between dimensions");
    }
    return dims;
  }

private:
  std::string_view text_;
  const std::filesystem::path& file_;
  std::size_t position_ = 0;
};

MASE_COMPILED_INLINE element_type parse_descr(std::string_view descr, const std::filesystem::path& file) {
  const auto unsupported = [&](std::string_view why) -> error {
    return error(fmt::format("cannot load {}: dtype '{}' {}; save a numeric array, e.g. "
                             "numpy.save(path, array.astype(numpy.float32))",
                             file.string(), descr, why));
  };
  if (descr.size() >= 2 && descr[1] == 'O') throw unsupported("holds Python objects (pickled), which mase does not read");
  if (descr.size() < 3) throw unsupported("is not a dtype mase reads");
  const char order = descr[0];
  const char code = descr[1];
  std::size_t bytes = 0;
  for (char c : descr.substr(2)) {
    if (c < '0' || c > '9' || bytes > 16) throw unsupported("is not a dtype mase reads");
    bytes = bytes * 10 + static_cast<std::size_t>(c - '0');
  }
  std::optional<element_kind> kind;
  if (code == 'f' && (bytes == 2 || bytes == 4 || bytes == 8)) kind = element_kind::floating;
  if (code == 'i' && (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8)) kind = element_kind::signed_integer;
  if (code == 'u' && (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8)) kind = element_kind::unsigned_integer;
  if (code == 'b' && bytes == 1) kind = element_kind::boolean;
  if (!kind) throw unsupported("is not one of the dtypes mase reads (f2 f4 f8, i1 i2 i4 i8, u1 u2 u4 u8, b1)");
  // Byte order: '|' (not applicable) only for single bytes; '=' is the writer's native order.
  const bool little = order == '<' || (order == '=' && std::endian::native == std::endian::little);
  if (bytes == 1 ? order != '|' && order != '<' && order != '>' && order != '=' : !little) {
    if (order == '>' || order == '=')
      throw error(fmt::format("cannot load {}: the data are big-endian ('{}'); mase reads little-endian .npy files; "
                              "convert with array.astype(array.dtype.newbyteorder('<'))",
                              file.string(), descr));
    throw unsupported("has an invalid byte order");
  }
  return {*kind, bytes};
}

MASE_COMPILED_INLINE header parse_header(std::string_view text, const std::filesystem::path& file) {
  // The padding (spaces and the final '\n') is no part of the dict; messages quote the dict only.
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.remove_suffix(1);
  literal_reader r(text, file);
  std::optional<element_type> type;
  std::optional<bool> fortran_order;
  std::optional<mase::shape> dims;
  r.expect('{', "the opening '{' of its dict");
  while (!r.accept('}')) {
    const std::string key = r.string();
    r.expect(':', fmt::format("a ':' after '{}'", key));
    if (key == "descr") {
      if (r.peek('[')) r.refuse("the array has a structured (record) dtype, which mase does not read; save one field");
      type = parse_descr(r.string(), file);
    } else if (key == "fortran_order") {
      fortran_order = r.boolean();
    } else if (key == "shape") {
      dims = r.tuple();
    } else {
      r.fail(fmt::format("has an unknown key '{}' (the keys are descr, fortran_order and shape)", key));
    }
    if (r.accept('}')) break;
    r.expect(',', "a ',' between entries");
  }
  if (!r.at_end()) r.fail("has text after its dict");
  if (!type || !fortran_order || !dims) r.fail("lacks one of the keys descr, fortran_order and shape");
  if (*fortran_order)
    throw error(fmt::format("cannot load {}: the array is stored in Fortran (column-major) order; mase reads C order; "
                            "save numpy.ascontiguousarray(array) instead",
                            file.string()));
  return {*type, *dims};
}

MASE_COMPILED_INLINE std::string read_whole_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw error(fmt::format("cannot load {}: the file does not exist or is not readable", file.string()));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw error(fmt::format("cannot load {}: reading failed", file.string()));
  return std::move(bytes).str();
}

// The data bytes the header's shape needs, or nothing when that number overflows: the shape's
// dimensions are each below 2^63 but their product is unchecked (shape::numel would overflow).
MASE_COMPILED_INLINE std::optional<std::size_t> data_bytes_of(const header& h) {
  if (std::find(h.dims.begin(), h.dims.end(), 0) != h.dims.end()) return 0;
  std::size_t bytes = h.type.bytes;
  for (const std::int64_t d : h.dims)
    if (__builtin_mul_overflow(bytes, static_cast<std::size_t>(d), &bytes)) return std::nullopt;
  return bytes;
}

// Converts `count` little-endian elements of `type` to float.
MASE_COMPILED_INLINE void convert(const char* bytes, element_type type, std::size_t count, float* out) {
  const std::size_t b = type.bytes;
  switch (type.kind) {
    case element_kind::floating:
      if (b == 2)
        for (std::size_t i = 0; i < count; ++i)
          out[i] = half_to_float(static_cast<std::uint16_t>(read_little_endian(bytes + i * b, b)));
      else if (b == 4)
        for (std::size_t i = 0; i < count; ++i)
          out[i] = std::bit_cast<float>(static_cast<std::uint32_t>(read_little_endian(bytes + i * b, b)));
      else
        for (std::size_t i = 0; i < count; ++i)
          out[i] = static_cast<float>(std::bit_cast<double>(read_little_endian(bytes + i * b, b)));
      return;
    case element_kind::signed_integer:
      for (std::size_t i = 0; i < count; ++i) {
        const std::uint64_t raw = read_little_endian(bytes + i * b, b);
        // Sign-extend from b bytes.
        const unsigned shift = static_cast<unsigned>(64 - 8 * b);
        out[i] = static_cast<float>(static_cast<std::int64_t>(raw << shift) >> shift);
      }
      return;
    case element_kind::unsigned_integer:
      for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<float>(read_little_endian(bytes + i * b, b));
      return;
    case element_kind::boolean:
      for (std::size_t i = 0; i < count; ++i) out[i] = bytes[i] != 0 ? 1.0f : 0.0f;
      return;
  }
}

}  // namespace detail

MASE_COMPILED_INLINE tensor from_npy_bytes(std::string_view all, const std::filesystem::path& file) {
  if (all.size() < detail::magic.size() + 2 || all.substr(0, detail::magic.size()) != detail::magic)
    throw error(fmt::format("cannot load {}: not a .npy file (it does not start with numpy's magic \"\\x93NUMPY\")",
                            file.string()));
  const int major = static_cast<unsigned char>(all[6]);
  const int minor = static_cast<unsigned char>(all[7]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    throw error(fmt::format("cannot load {}: .npy format version {}.{} is not one mase reads (1.0, 2.0, 3.0)",
                            file.string(), major, minor));
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  const std::size_t header_start = 8 + length_bytes;
  if (all.size() < header_start)
    throw error(fmt::format("cannot load {}: the file ends inside the .npy preamble ({} bytes)", file.string(), all.size()));
  const std::size_t header_length = detail::read_little_endian(all.data() + 8, length_bytes);
  if (all.size() - header_start < header_length)
    throw error(fmt::format("cannot load {}: the header should be {} bytes but the file ends after {}; the file is "
                            "truncated",
                            file.string(), header_length, all.size() - header_start));
  const detail::header h = detail::parse_header(all.substr(header_start, header_length), file);

  const std::size_t data_start = header_start + header_length;
  const std::optional<std::size_t> data_bytes = detail::data_bytes_of(h);
  if (!data_bytes)
    throw error(fmt::format("cannot load {}: the shape {} is too large (its size in bytes overflows)", file.string(),
                            to_string(h.dims)));
  const std::size_t present = all.size() - data_start;
  if (present != *data_bytes)
    throw error(fmt::format("cannot load {}: shape {} with {}-byte elements needs {} data bytes but the file holds {}; "
                            "the file is {}",
                            file.string(), to_string(h.dims), h.type.bytes, *data_bytes, present,
                            present < *data_bytes ? "truncated" : "damaged (extra bytes after the data)"));
  // Only now, with the shape matching the bytes present, is the tensor allocated.
  tensor t(h.dims);
  detail::convert(all.data() + data_start, h.type, *data_bytes / h.type.bytes, t.data());
  return t;
}

MASE_COMPILED_INLINE tensor load(const std::filesystem::path& file) { return from_npy_bytes(detail::read_whole_file(file), file); }

MASE_COMPILED_INLINE std::string to_npy_bytes(const tensor& t) {
  std::string dims = "(";
  for (int i = 0; i < t.rank(); ++i) dims += fmt::format("{}{}", i == 0 ? "" : ", ", t.shape()[i]);
  if (t.rank() == 1) dims += ",";
  dims += ")";
  std::string header = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': {}, }}", dims);
  // Pad with spaces so the data start at a multiple of 64, the last byte being '\n'.
  const std::size_t preamble = detail::magic.size() + 2 + 2;
  const std::size_t unpadded = preamble + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';

  std::string bytes(detail::magic);
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xFF);
  bytes += static_cast<char>((header.size() >> 8) & 0xFF);
  bytes += header;
  const std::size_t data_start = bytes.size();
  bytes.resize(data_start + t.size_in_bytes());
  if constexpr (std::endian::native == std::endian::little) {
    if (t.size() != 0) std::memcpy(bytes.data() + data_start, t.data(), t.size_in_bytes());
  } else {
    for (std::size_t i = 0; i < t.size(); ++i) {
      const std::uint32_t word = std::bit_cast<std::uint32_t>(t.data()[i]);
      const char le[4] = {static_cast<char>(word & 0xFF), static_cast<char>((word >> 8) & 0xFF),
                          static_cast<char>((word >> 16) & 0xFF), static_cast<char>(word >> 24)};
      std::memcpy(bytes.data() + data_start + 4 * i, le, 4);
    }
  }
  return bytes;
}

MASE_COMPILED_INLINE void save(const std::filesystem::path& file, const tensor& t) { write_file_atomically(file, to_npy_bytes(t)); }
}  // namespace mase::npy
