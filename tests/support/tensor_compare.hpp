#pragma once
/// Comparing tensors in tests: any numeric element type, as doubles.
#include <troupe/tensor.hpp>

#include <string>
#include <vector>

namespace troupe::tests {

/// The elements as doubles (f32, f64, f16, bf16, integers, bool); throws for strings.
std::vector<double> to_doubles(const Tensor& t);

struct comparison {
  bool ok = true;
  double max_abs_error = 0;
  double max_abs_ref = 0;
  std::string message; ///< the first mismatch, when not ok
};

/// Same shape and |got - ref| <= atol + rtol * |ref| everywhere (NaN matches NaN).
comparison compare(const Tensor& got, const Tensor& ref, double rtol, double atol);

/// The model-test tolerance: max|got - ref| <= rel * max|ref| + abs.
comparison compare_scaled(const std::vector<float>& got, const std::vector<float>& ref, double rel, double abs);

/// Reads a raw little-endian float32 file.
std::vector<float> read_f32_file(const std::string& path);

} // namespace troupe::tests
