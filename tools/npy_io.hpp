#pragma once
/// NumPy .npy files (format 1.0 written; 1.0, 2.0 and 3.0 read): little-endian, C order.
#include <string>

#include <troupe/tensor.hpp>

namespace troupe::cli {

/// The .npy dtype of an element type ("<f4", "|b1", ...). bf16 has none in NumPy: write_npy
/// stores it as float32 (exact), and this returns "<f4" for it.
std::string npy_dtype(element_type t);

/// Writes the tensor's values in its own element type (bf16 as float32, see npy_dtype).
void write_npy(const std::string& path, const Tensor& t);

/// Reads a tensor of the file's own dtype and shape; errors name the file and what is wrong.
Tensor read_npy(const std::string& path);
/// The same from the file's bytes; `path` names it in errors.
Tensor parse_npy(const std::string& bytes, const std::string& path);

/// True when the path ends in .npy (any case).
bool is_npy_path(const std::string& path);

} // namespace troupe::cli
