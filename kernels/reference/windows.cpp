/// The signal windows (opset 17): HannWindow, HammingWindow, BlackmanWindow of `size` values,
/// periodic (N = size) or symmetric (N = size - 1), as the ONNX reference computes them.
#include <cmath>
#include <numbers>

#include "kernels/reference/common.hpp"

namespace troupe::kernels::reference {

namespace {

void window_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const auto size = to_ints(input(ctx, in, 0)).at(0);
  Tensor& y = output(ctx, out, 0);
  if (y.get_size() != std::max<int64_t>(size, 0)) fail(ctx, "output has " + std::to_string(y.get_size()) + " values, size is " + std::to_string(size));
  const double n1 = ctx.op.attr_int("periodic", 1) != 0 ? static_cast<double>(size) : static_cast<double>(size - 1);
  const double pi = std::numbers::pi;
  const std::string& t = ctx.op.type;
  std::vector<double> v(static_cast<std::size_t>(std::max<int64_t>(size, 0)));
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double n = static_cast<double>(i);
    if (t == "HannWindow") v[i] = std::pow(std::sin(n * pi / n1), 2);
    else if (t == "HammingWindow") v[i] = 25.0 / 46.0 - std::cos(n * pi * 2 / n1) * (1 - 25.0 / 46.0);
    else v[i] = 0.42 - std::cos(n * pi * 2 / n1) / 2 + std::cos(n * pi * 4 / n1) * 0.08;
  }
  from_doubles(y, v);
}

} // namespace

void register_windows(kernel_map& m) {
  for (const char* n : {"HannWindow", "HammingWindow", "BlackmanWindow"}) m[n] = window_kernel;
}

} // namespace troupe::kernels::reference
