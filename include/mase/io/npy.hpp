#pragma once
// NumPy's .npy files (numpy.save / numpy.load), the simplest way to hand arrays between Python
// and mase:
//
//   mase::tensor x = mase::npy::load("x.npy");   // any numeric dtype, converted to float32
//   mase::npy::save("y.npy", y);                  // '<f4', format version 1.0
//
// The format (numpy/lib/format.py): the magic "\x93NUMPY", a major and a minor version byte, the
// header's length (2 bytes little-endian in version 1, 4 bytes in versions 2 and 3), the header
// (a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with
// spaces and ended by '\n' so that the data start 64-byte aligned), then the data.
//
// load reads versions 1.0, 2.0 and 3.0 with little-endian (or byte-sized) dtypes f2 f4 f8, i1 i2
// i4 i8, u1 u2 u4 u8 and b1, in C order; the values become float32 (f8 and 64-bit integers round
// to the nearest float). Fortran order, big-endian data, other dtypes (complex, strings, objects,
// records), more than shape::max_rank dimensions and files whose size does not match the header
// are errors naming the file and the problem. save writes atomically (a temporary file renamed
// into place), so a failed save leaves no partial file.

#include <mase/core/compiled.hpp>
#include <mase/core/tensor.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace mase::npy {

// The array in a .npy file's bytes, as float32; `file` names it in errors (see the top of this
// file for what is read). Nothing is allocated before the header's shape is checked against the
// bytes present.
MASE_COMPILED_INLINE tensor from_npy_bytes(std::string_view all, const std::filesystem::path& file);

// The array in `file`, as float32 (see the top of this file for what is read).
MASE_COMPILED_INLINE tensor load(const std::filesystem::path& file);

// The .npy bytes numpy.save writes for a float32 array of this shape and these values.
MASE_COMPILED_INLINE std::string to_npy_bytes(const tensor& t);

// Writes `t` to `file` as a '<f4' .npy (version 1.0), atomically.
MASE_COMPILED_INLINE void save(const std::filesystem::path& file, const tensor& t);

}  // namespace mase::npy

#if !MASE_EXTERN_INSTANTIATIONS
#include <mase/io/npy_definitions.hpp>
#endif
