#pragma once
/// Packing an ONNX recurrent op's weights for the native steps (avx512_recurrent.hpp): W or R
/// [D, G, K] (G gate rows) becomes, per direction, blocks of `width` gate columns, each block's
/// K rows one after another (a block then streams from memory in order: rows of all G columns
/// lay 4 KB apart at 256 units), with chosen source rows per column and zeros elsewhere.
#include <cstdint>
#include <vector>

#include <troupe/tensor.hpp>

namespace troupe::kernels::cpu {

/// Gate columns per block of the packed W^T (the input product) and R^T (the recurrent one).
inline constexpr int64_t input_block_columns = 64, recurrent_block_columns = 128;

/// `g` rounded up to whole blocks of both widths.
inline int64_t padded_gate_columns(int64_t g) {
  return (g + recurrent_block_columns - 1) / recurrent_block_columns * recurrent_block_columns;
}

/// m [D, G, K] as [D, columns / width, K, width]: column c takes m's row source_row[c] (-1, or
/// c past the list: zeros). `columns` is a multiple of `width`.
Tensor pack_gate_columns(const Tensor& m, const std::vector<int64_t>& source_row, int64_t columns, int64_t width);

/// first, first + 1, ..., first + n - 1: n gate rows in their order.
std::vector<int64_t> gate_rows(int64_t first, int64_t n);

} // namespace troupe::kernels::cpu
