/// Where on 4-byte elements by rows of the output's last axis (native_ops.hpp).
#include <cstdint>
#include <cstring>

#include "kernels/cpu/native_ops.hpp"
#include "kernels/reference/common.hpp"

namespace troupe::kernels::cpu {

namespace {

/// One row of `len` outputs; each operand steps by 1 along the row or repeats one value (0).
template <bool c_step, bool a_step, bool b_step>
void where_row(const bool* c, const uint32_t* a, const uint32_t* b, uint32_t* y, int64_t len) {
  for (int64_t i = 0; i < len; ++i) y[i] = c[c_step ? i : 0] ? a[a_step ? i : 0] : b[b_step ? i : 0];
}

using row_fn = void (*)(const bool*, const uint32_t*, const uint32_t*, uint32_t*, int64_t);

template <bool c_step, bool a_step> row_fn pick_b(bool b_step) {
  return b_step ? where_row<c_step, a_step, true> : where_row<c_step, a_step, false>;
}
template <bool c_step> row_fn pick_a(bool a_step, bool b_step) {
  return a_step ? pick_b<c_step, true>(b_step) : pick_b<c_step, false>(b_step);
}
row_fn pick(bool c_step, bool a_step, bool b_step) {
  return c_step ? pick_a<true>(a_step, b_step) : pick_a<false>(a_step, b_step);
}

} // namespace

bool is_native_where(const graph::Graph& g, const graph::Op& op) {
  if (op.type != "Where" || !op.domain.empty() || op.inputs.size() != 3 || op.outputs.size() != 1) return false;
  for (auto v : {op.inputs[0], op.inputs[1], op.inputs[2], op.outputs[0]})
    if (v == graph::no_value || !g.value(v).shape.is_static()) return false;
  const auto t = g.value(op.outputs[0]).type;
  return g.value(op.inputs[0]).type == element_type::boolean && element_size(t) == 4 && g.value(op.inputs[1]).type == t &&
         g.value(op.inputs[2]).type == t && shape_size(g.value(op.outputs[0]).shape.to_shape()) > 0;
}

void where_rows(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const Shape ys = out[0].get_shape();
  const std::vector<int64_t> cs = reference::broadcast_strides(ctx, in[0].get_shape(), ys),
                             as = reference::broadcast_strides(ctx, in[1].get_shape(), ys),
                             bs = reference::broadcast_strides(ctx, in[2].get_shape(), ys);
  const std::size_t r = ys.size();
  const int64_t len = r ? ys.back() : 1, rows = len ? shape_size(ys) / len : 0;
  const bool* c = in[0].data<bool>();
  const auto* a = static_cast<const uint32_t*>(in[1].data());
  const auto* b = static_cast<const uint32_t*>(in[2].data());
  auto* y = static_cast<uint32_t*>(out[0].data());
  const row_fn row = pick(r && cs[r - 1] != 0, r && as[r - 1] != 0, r && bs[r - 1] != 0);
  // The outer axes as an odometer: each operand's offset of the row's first element.
  std::vector<int64_t> idx(r ? r - 1 : 0, 0);
  int64_t co = 0, ao = 0, bo = 0;
  for (int64_t i = 0; i < rows; ++i) {
    row(c + co, a + ao, b + bo, y + i * len, len);
    for (std::size_t d = idx.size(); d-- > 0;) {
      co += cs[d];
      ao += as[d];
      bo += bs[d];
      if (++idx[d] < ys[d]) break;
      co -= cs[d] * ys[d];
      ao -= as[d] * ys[d];
      bo -= bs[d] * ys[d];
      idx[d] = 0;
    }
  }
}

} // namespace troupe::kernels::cpu
