/// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool (shaders/pool.comp), 2-D over NCHW
/// or 1-D over NCL (as 2-D with H = 1), and Resize (shaders/resize.comp), 2-D over NCHW.
#include <cmath>

#include "kernels/vulkan/lowering.hpp"
#include "kernels/vulkan/window_1d.hpp"

namespace troupe::kernels::vulkan {

namespace {

/// f32 X of rank 4 (NCHW), or 3 (NCL) and 5 (NCDHW) when `one_d` (other window ranks) is allowed;
/// one output (MaxPool: two).
std::string check_f32(const graph::Graph& g, const graph::Op& op, bool one_d) {
  if (op.inputs.empty() || op.inputs[0] == graph::no_value) return "expects X";
  if (g.value(op.inputs[0]).type != element_type::f32) return "the shader is float32 only";
  const auto rank = shape_of(g, op.inputs[0]).size();
  if (rank != 4 && !(one_d && (rank == 3 || rank == 5)))
    return one_d ? "only 3-D NCL, 4-D NCHW and 5-D NCDHW input have a Vulkan shader" : "only 4-D NCHW input has a Vulkan shader";
  for (std::size_t i = 1; i < op.outputs.size(); ++i)
    if (op.outputs[i] != graph::no_value && (op.type != "MaxPool" || i > 1))
      return "a second output (Indices) has no Vulkan shader";
  return "";
}

bool has_indices(const graph::Op& op) { return op.outputs.size() > 1 && op.outputs[1] != graph::no_value; }

std::string check_4d_f32(const graph::Graph& g, const graph::Op& op) { return check_f32(g, op, false); }

/// A 3-D window (5-D NCDHW input): the depth's length, output length, kernel, stride, begin pad,
/// dilation and end pad (spec ids 18..24 of pool.comp); H and W go through the 2-D spec as usual.
std::array<int64_t, 7> depth_of(const graph::Op& op, const Shape& x, const Shape& y, bool global) {
  if (x.size() != 5) return {1, 1, 1, 1, 0, 1, 0};
  if (global) return {x[2], 1, x[2], 1, 0, 1, 0};
  const auto k = op.attr_ints("kernel_shape"), s = op.attr_ints("strides", {1, 1, 1}), d = op.attr_ints("dilations", {1, 1, 1});
  const auto p = op.attr_string("auto_pad", "NOTSET") == "NOTSET" ? op.attr_ints("pads", {0, 0, 0, 0, 0, 0}) : std::vector<int64_t>(6, 0);
  return {x[2], y[2], k[0], s[0], p[0], d[0], p[3]};
}

/// The op with the depth taken out of a 3-D window's attributes (the 2-D part of it).
graph::Op without_depth(const graph::Op& op) {
  graph::Op r = op;
  for (const char* a : {"kernel_shape", "strides", "dilations"})
    if (op.has_attr(a)) {
      auto v = op.attr_ints(a);
      r.attrs[a] = std::vector<int64_t>(v.begin() + 1, v.end());
    }
  if (op.has_attr("pads")) {
    auto v = op.attr_ints("pads");
    r.attrs["pads"] = std::vector<int64_t>{v[1], v[2], v[4], v[5]};
  }
  return r;
}

/// (N, C, D, H, W) without D; other shapes as 2-D (N, C, H, W).
Shape plane_of(Shape s) {
  if (s.size() == 5) s.erase(s.begin() + 2);
  return as_2d(std::move(s));
}

/// A global pool over more than this many elements per channel runs as a reduction on
/// shaders/reduce.comp, a 64-wide workgroup per channel (no invocation loops over the plane).
constexpr int64_t wg_plane = 256;

/// The elements of one channel's plane.
int64_t plane_size(const Shape& x) {
  int64_t n = 1;
  for (std::size_t i = 2; i < x.size(); ++i) n *= x[i];
  return n;
}

void pool(op_builder& b, bool is_max, bool global) {
  const auto& g = b.graph();
  const Shape xr = shape_of(g, b.op().inputs[0]), yr = shape_of(g, b.op().outputs[0]);
  if (global && plane_size(xr) > wg_plane) {
    const int64_t channels = xr[0] * xr[1], plane = plane_size(xr);
    if (channels == 0) return;
    spec_map s{{0, static_cast<uint32_t>(channels)}, {1, 1}, {2, 1}, {3, 1}, {4, 1},
               {5, static_cast<uint32_t>(channels)}, {6, static_cast<uint32_t>(plane)}, {7, 1u << 5},
               {8, static_cast<uint32_t>(plane)}, {9, is_max ? 2u : 0u}};
    b.dispatch("reduce_wg", std::move(s), {b.input(0), b.output(0)}, static_cast<uint64_t>(channels) * 64);
    return;
  }
  const Shape x = plane_of(xr), y = plane_of(yr);
  const auto depth = depth_of(b.op(), xr, yr, global);
  const graph::Op op = xr.size() == 5 ? without_depth(b.op()) : op_as_2d(b.op(), xr.size());
  std::vector<int64_t> k = global ? std::vector<int64_t>{x[2], x[3]} : op.attr_ints("kernel_shape");
  std::vector<int64_t> s = global ? std::vector<int64_t>{1, 1} : op.attr_ints("strides", {1, 1});
  std::vector<int64_t> d = global ? std::vector<int64_t>{1, 1} : op.attr_ints("dilations", {1, 1});
  auto p = global ? std::vector<int64_t>(4, 0) : window_pads(op, x, y, k, s, d);
  spec_map spec;
  uint32_t i = 0;
  for (int64_t v : {x[0] * x[1], x[2], x[3], y[2], y[3], k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1]})
    spec[i++] = static_cast<uint32_t>(v);
  spec[13] = is_max ? 1 : 0;
  spec[14] = op.attr_int("count_include_pad", 0) != 0 ? 1 : 0;
  spec[15] = static_cast<uint32_t>(p[2]);
  spec[16] = static_cast<uint32_t>(p[3]);
  for (uint32_t j = 0; j < 7; ++j) spec[18 + j] = static_cast<uint32_t>(depth[j]);
  if (shape_size(yr) == 0) return;
  if (has_indices(op)) {
    spec[17] = op.attr_int("storage_order", 0) != 0 ? 1 : 0;
    b.dispatch("pool_indices", std::move(spec), {b.input(0), b.output(0), b.output(1)}, static_cast<uint64_t>(shape_size(yr)), 1, 2);
    return;
  }
  b.dispatch("pool", std::move(spec), {b.input(0), b.output(0)}, static_cast<uint64_t>(shape_size(yr)));
}

std::string check_window(const graph::Graph& g, const graph::Op& op) {
  auto w = check_f32(g, op, true);
  if (!w.empty()) return w;
  const auto spatial = shape_of(g, op.inputs[0]).size() - 2;
  if (op.attr_ints("kernel_shape").size() != spatial)
    return "kernel_shape must have " + std::to_string(spatial) + " values";
  if (has_indices(op) && g.value(op.outputs[1]).type != element_type::i64) return std::string("Indices must be int64");
  auto ap = op.attr_string("auto_pad", "NOTSET");
  if (ap != "NOTSET" && ap != "VALID" && ap != "SAME_UPPER" && ap != "SAME_LOWER") return "unknown auto_pad '" + ap + "'";
  if (spatial == 3 && ap != "NOTSET" && ap != "VALID") return "auto_pad '" + ap + "' on a 3-D window has no Vulkan shader";
  if (spatial == 3 && op.has_attr("pads") && op.attr_ints("pads").size() != 6) return std::string("pads must have 6 values");
  return std::string();
}

/// Resize's conditions that no shape changes.
std::string resize_attrs(const graph::Op& op) {
  auto mode = op.attr_string("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "cubic") return "mode '" + mode + "' has no Vulkan shader";
  static const char* coords[] = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel",
                                 "tf_half_pixel_for_nearest", "tf_half_pixel_for_nn", "tf_crop_and_resize",
                                 "half_pixel_symmetric"};
  auto ct = op.attr_string("coordinate_transformation_mode", "half_pixel");
  bool ok = false;
  for (auto* c : coords) ok = ok || ct == c;
  if (!ok) return "coordinate_transformation_mode '" + ct + "' has no Vulkan shader";
  auto nm = op.attr_string("nearest_mode", "round_prefer_floor");
  if (nm != "round_prefer_floor" && nm != "round_prefer_ceil" && nm != "floor" && nm != "ceil")
    return "nearest_mode '" + nm + "' has no Vulkan shader";
  if (op.attr_int("antialias", 0) != 0) return std::string("antialias has no Vulkan shader");
  if (op.has_attr("axes")) { // only H and W (preprocessing's resize names them)
    auto axes = op.attr_ints("axes");
    for (auto& a : axes) a = a < 0 ? a + 4 : a;
    if (axes != std::vector<int64_t>{2, 3}) return std::string("axes other than [2, 3] have no Vulkan shader");
  }
  return std::string();
}

/// tf_crop_and_resize: the first and last output index whose source coordinate lies on the
/// input (one run, the coordinate being monotonic), decided in double as the reference does: a
/// float test in the shader flips at the edge of wide inputs. first > last when none does.
std::pair<int64_t, int64_t> crop_inside(double start, double end, int64_t n_in, int64_t n_out, double len_out) {
  const double len = static_cast<double>(n_in - 1);
  int64_t first = n_out, last = -1;
  for (int64_t o = 0; o < n_out; ++o) {
    const double c = len_out > 1 ? start * len + static_cast<double>(o) * (end - start) * len / (len_out - 1)
                                 : 0.5 * (start + end) * len;
    if (c < 0 || c > len) continue;
    first = std::min(first, o);
    last = o;
  }
  return {first, last};
}

/// tf_crop_and_resize: a constant f32 roi over all 4 axes whose N and C part is the whole axis
/// (the shader crops H and W only).
std::string check_roi(const graph::Graph& g, const graph::Op& op) {
  if (op.inputs.size() < 2 || op.inputs[1] == graph::no_value || !g.is_constant(op.inputs[1]))
    return "tf_crop_and_resize needs a constant roi";
  if (g.value(op.inputs[1]).type != element_type::f32) return "tf_crop_and_resize needs a float32 roi";
  if (op.has_attr("axes")) return "tf_crop_and_resize with axes has no Vulkan shader";
  auto roi = const_floats(g, op, 1);
  if (roi.size() != 8) return "tf_crop_and_resize needs an roi of 8 values";
  if (roi[0] != 0 || roi[1] != 0 || roi[4] != 1 || roi[5] != 1)
    return "tf_crop_and_resize cropping N or C has no Vulkan shader";
  return "";
}

} // namespace

void add_pool_rules(rule_table& t) {
  const std::string window =
      "f32 4-D NCHW input with a 2-D kernel, 3-D NCL with a 1-D one, or 5-D NCDHW with a 3-D one (auto_pad NOTSET or VALID)";
  const char* global = "f32 3-D NCL, 4-D NCHW or 5-D NCDHW input";
  t["MaxPool"] = {check_window, [](op_builder& b) { pool(b, true, false); }, window + "; the Indices output (either storage_order)"};
  t["AveragePool"] = {check_window, [](op_builder& b) { pool(b, false, false); }, window};
  auto check_global = [](const graph::Graph& g, const graph::Op& op) { return check_f32(g, op, true); };
  t["GlobalAveragePool"] = {check_global, [](op_builder& b) { pool(b, false, true); }, global};
  t["GlobalMaxPool"] = {check_global, [](op_builder& b) { pool(b, true, true); }, global};
  // Each output element loops over its window (a global pool: the whole plane).
  auto window_trips = [](const graph::Graph& g, const graph::Op& op) {
    const Shape x = shape_of(g, op.inputs[0]);
    const bool global = op.type.rfind("Global", 0) == 0;
    if (global && plane_size(x) > wg_plane) return static_cast<uint64_t>(plane_size(x) + 63) / 64 + 6;
    uint64_t n = 1, rows = 1;
    const auto k = global ? std::vector<int64_t>(x.begin() + 2, x.end()) : op.attr_ints("kernel_shape");
    for (std::size_t i = 0; i < k.size(); ++i) {
      n *= static_cast<uint64_t>(k[i]);
      if (i + 1 < k.size()) rows *= static_cast<uint64_t>(k[i]);
    }
    return n + rows + 1;
  };
  for (const char* n : {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"}) t[n].trips = window_trips;

  t["Resize"] = {
      [](const graph::Graph& g, const graph::Op& op) {
        auto w = check_4d_f32(g, op);
        if (w.empty()) w = resize_attrs(op);
        if (!w.empty()) return w;
        Shape x = shape_of(g, op.inputs[0]), y = shape_of(g, op.outputs[0]);
        if (x[0] != y[0] || x[1] != y[1]) return std::string("resizing N or C has no Vulkan shader");
        // tf_half_pixel_for_nn maps o to o + 0.5 on N and C too (scale 1): the reference then
        // interpolates across images and channels, and rounds up with ceil modes; only
        // nearest rounding down keeps them.
        auto ct = op.attr_string("coordinate_transformation_mode", "half_pixel");
        auto nm = op.attr_string("nearest_mode", "round_prefer_floor");
        if ((ct == "tf_half_pixel_for_nn" || ct == "tf_half_pixel_for_nearest") && (x[0] > 1 || x[1] > 1) &&
            (op.attr_string("mode", "nearest") != "nearest" || (nm != "floor" && nm != "round_prefer_floor")))
          return "coordinate_transformation_mode '" + ct + "' with this mode shifts N or C, which has no Vulkan shader";
        bool legacy = op.input_count() == 2; // Resize-10: (X, scales), asymmetric + floor
        std::size_t scales_at = legacy ? 1 : 2;
        if (scales_at < op.inputs.size() && op.inputs[scales_at] != graph::no_value && !g.is_constant(op.inputs[scales_at]))
          return std::string("scales must be a constant");
        if (!legacy && op.attr_string("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize")
          return check_roi(g, op);
        return std::string();
      },
      [](op_builder& b) {
        const auto& g = b.graph();
        const auto& op = b.op();
        Shape x = shape_of(g, op.inputs[0]), y = shape_of(g, op.outputs[0]);
        bool legacy = op.input_count() == 2; // Resize-10: (X, scales), asymmetric + floor
        std::size_t scales_at = legacy ? 1 : 2;
        float sh = float(y[2]) / float(x[2]), sw = float(y[3]) / float(x[3]);
        float lh = float(y[2]), lw = float(y[3]);
        // Scales given (and no sizes) are used as given, as ONNX says; otherwise output/input.
        bool sizes = op.inputs.size() > 3 && op.inputs[3] != graph::no_value;
        if (!sizes && scales_at < op.inputs.size() && op.inputs[scales_at] != graph::no_value) {
          auto sc = const_floats(g, op, scales_at);
          if (sc.size() == 4 || (sc.size() == 2 && op.has_attr("axes"))) {
            sh = sc[sc.size() - 2];
            sw = sc[sc.size() - 1];
            lh = float(x[2]) * sh; // ONNX transforms with the unrounded output length
            lw = float(x[3]) * sw;
          }
        }
        auto ct = legacy ? std::string("asymmetric") : op.attr_string("coordinate_transformation_mode", "half_pixel");
        std::map<std::string, uint32_t> coords = {{"half_pixel", 0}, {"asymmetric", 1}, {"align_corners", 2},
                                                  {"pytorch_half_pixel", 3}, {"tf_half_pixel_for_nearest", 4},
                                                  {"tf_half_pixel_for_nn", 4}, {"tf_crop_and_resize", 5},
                                                  {"half_pixel_symmetric", 6}};
        std::map<std::string, uint32_t> nearest = {
            {"round_prefer_floor", 0}, {"round_prefer_ceil", 1}, {"floor", 2}, {"ceil", 3}};
        spec_map spec;
        spec[0] = static_cast<uint32_t>(x[0] * x[1]);
        spec[1] = static_cast<uint32_t>(x[2]);
        spec[2] = static_cast<uint32_t>(x[3]);
        spec[3] = static_cast<uint32_t>(y[2]);
        spec[4] = static_cast<uint32_t>(y[3]);
        spec[5] = float_bits(sh);
        spec[6] = float_bits(sw);
        auto mode = op.attr_string("mode", "nearest");
        spec[7] = mode == "cubic" ? 2 : mode == "linear" ? 1 : 0;
        spec[8] = coords.at(ct);
        spec[9] = nearest.at(legacy ? std::string("floor") : op.attr_string("nearest_mode", "round_prefer_floor"));
        spec[10] = float_bits(lh);
        spec[11] = float_bits(lw);
        spec[12] = float_bits(op.attr_float("cubic_coeff_a", -0.75f));
        spec[13] = op.attr_int("exclude_outside", 0) != 0 ? 1 : 0;
        spec[14] = float_bits(op.attr_float("extrapolation_value", 0.0f));
        if (!legacy && ct == "tf_crop_and_resize") {
          auto roi = const_floats(g, op, 1); // [starts..., ends...] over the 4 axes
          const double len_out[2] = {lh, lw};
          for (uint32_t i = 0; i < 2; ++i) {
            spec[15 + i] = float_bits(roi[2 + i]);
            spec[17 + i] = float_bits(roi[6 + i]);
            auto [first, last] = crop_inside(roi[2 + i], roi[6 + i], x[2 + i], y[2 + i], len_out[i]);
            spec[19 + 2 * i] = static_cast<uint32_t>(first);
            spec[20 + 2 * i] = static_cast<uint32_t>(last);
          }
        }
        b.dispatch("resize", std::move(spec), {b.input(0), b.output(0)}, static_cast<uint64_t>(shape_size(y)));
      },
      "f32 4-D NCHW input, H and W resized (not N or C); mode nearest, linear or cubic (cubic_coeff_a, "
      "exclude_outside); coordinate_transformation_mode half_pixel, half_pixel_symmetric, asymmetric, align_corners, "
      "pytorch_half_pixel, tf_half_pixel_for_nearest (with N = C = 1 unless mode nearest rounding down) or tf_crop_and_resize (constant f32 roi of 8 values, N and C spanning [0, 1]; "
      "extrapolation_value); nearest_mode round_prefer_floor, round_prefer_ceil, floor or ceil; no antialias; axes, "
      "if given, [2, 3]; scales constant",
      resize_attrs,
      // The roi does not key the per-value compile: one that is an input would stay one, and the
      // crop needs it as a constant (the check of its N and C part); a constant roi stays constant.
      [](const graph::Graph& g, const graph::Op& op) {
        return op.input_count() > 2 && op.attr_string("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize" &&
                       !g.is_constant(op.inputs[1])
                   ? std::string("tf_crop_and_resize whose output shape waits on input values has no Vulkan shader when its roi "
                                 "is not a constant (it must be one when the shader is built)")
                   : std::string();
      }};
}

} // namespace troupe::kernels::vulkan
