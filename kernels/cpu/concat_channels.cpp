/// Channel Concat of 4-D maps laid out channels-last (nhwc) or in oneDNN's nChw16c, each with a
/// multiple of 8 channels (native_ops.hpp): every 8-channel run is one fixed-size copy.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cpu/native_ops.hpp"
#include "kernels/cpu/team.hpp"

namespace troupe::kernels::cpu {

namespace {

/// Where 8-channel run `u` of a map of `c` channels laid out as `layout` starts (image n,
/// pixel 0), and the bytes from one pixel's run to the next.
struct run_addressing {
  unsigned char* base;
  int64_t c, layout;
  template <int64_t Es>
  unsigned char* start(int64_t n, int64_t u, int64_t pixels) const {
    if (layout == concat_layout_nhwc) return base + (n * pixels * c + u * 8) * Es;
    const int64_t blocks = (c + 15) / 16;
    return base + ((n * blocks + u / 2) * pixels * 16 + (u % 2) * 8) * Es;
  }
  template <int64_t Es>
  int64_t pixel_stride() const {
    return (layout == concat_layout_nhwc ? c : 16) * Es;
  }
};

template <int64_t Es>
void concat(const std::vector<Tensor>& in, Tensor& out, const std::vector<int64_t>& layouts) {
  const auto& ys = out.get_shape();
  const int64_t n_batch = ys[0], c_out = ys[1], pixels = ys[2] * ys[3];
  const run_addressing y{static_cast<unsigned char*>(out.data()), c_out, layouts[0]};
  // The output's runs in order: which input and which of its runs each one copies.
  std::vector<run_addressing> src;
  std::vector<int64_t> src_of, run_of;
  for (std::size_t i = 0; i < in.size(); ++i) {
    src.push_back({static_cast<unsigned char*>(const_cast<void*>(in[i].data())), in[i].get_shape()[1], layouts[i + 1]});
    for (int64_t k = 0; k < in[i].get_shape()[1] / 8; ++k) {
      src_of.push_back(static_cast<int64_t>(i));
      run_of.push_back(k);
    }
  }
  // A blocked output whose channels end mid-block has one more run, of padding: it must read
  // zero (oneDNN's kernels multiply it by zero weights, and garbage could be NaN).
  const int64_t runs = c_out / 8, all_runs = runs + (layouts[0] == concat_layout_nchw16c && c_out % 16 != 0);
  constexpr int64_t chunk = 1024; // pixels per task
  const int64_t chunks = (pixels + chunk - 1) / chunk;
  const int64_t ds = y.pixel_stride<Es>();
  auto task = [&](int64_t n, int64_t j, int64_t q) {
    const int64_t p0 = q * chunk, count = std::min(chunk, pixels - p0);
    unsigned char* d = y.start<Es>(n, j, pixels) + p0 * ds;
    if (j == runs) {
      for (int64_t p = 0; p < count; ++p, d += ds) std::memset(d, 0, 8 * Es);
      return;
    }
    const auto& x = src[static_cast<std::size_t>(src_of[static_cast<std::size_t>(j)])];
    const int64_t ss = x.pixel_stride<Es>();
    const unsigned char* s = x.start<Es>(n, run_of[static_cast<std::size_t>(j)], pixels) + p0 * ss;
    for (int64_t p = 0; p < count; ++p, d += ds, s += ss) std::memcpy(d, s, 8 * Es);
  };
  const int64_t per_image = all_runs * chunks;
  if (per_image > 0)
    TROUPE_TEAM_FOR(t, n_batch * per_image, true, task(t / per_image, t % per_image / chunks, t % chunks));
}

} // namespace

void concat_channels(const reference::context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const auto layouts = ctx.op.attr_ints(concat_layouts_attr);
  if (ctx.op.attr_int(blocked_bf16_attr, 0) != 0)
    concat<2>(in, out[0], layouts);
  else
    concat<4>(in, out[0], layouts);
}

} // namespace troupe::kernels::cpu
