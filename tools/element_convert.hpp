#pragma once
/// Tensor values converted between element types. troupe's runtime has no pre/post-processing
/// step (OpenVINO's PrePostProcessor), so -ip/-op/-iop convert here, on the host.
#include <vector>

#include <troupe/tensor.hpp>

namespace troupe::cli {

/// Every type but string and undefined.
bool convertible(element_type t);

/// A new tensor of type `to` holding each value converted as a C++ cast would, except where a
/// cast is undefined: float to integer saturates at the type's limits and NaN becomes 0.
/// f16 and bf16 round to nearest even; booleans read and write 0/1. Integers convert exactly
/// between integer types that hold them (i64 stays i64 bit for bit).
Tensor convert(const Tensor& t, element_type to);

/// The values as float32 (the `.f32` files of `troupe run`).
std::vector<float> to_floats(const Tensor& t);

} // namespace troupe::cli
