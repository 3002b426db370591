/// RNN, GRU and LSTM (opset 7/14), all directions, sequence_lens, clip, custom activations,
/// LSTM peepholes and input_forget, GRU linear_before_reset, layout 0 ([seq, batch, ...]) and
/// 1 ([batch, seq, ...]), in double, step by step as the ONNX operator docs write the equations.
#include <cmath>

#include "kernels/reference/common.hpp"

namespace troupe::kernels::reference {

namespace {

/// One of ONNX's recurrent activation functions with its alpha and beta.
struct activation {
  std::string name;
  double alpha = 0, beta = 0;
  double operator()(double x) const {
    if (name == "Sigmoid") return 1 / (1 + std::exp(-x));
    if (name == "Tanh") return std::tanh(x);
    if (name == "Relu") return std::max(0.0, x);
    if (name == "Affine") return alpha * x + beta;
    if (name == "LeakyRelu") return x < 0 ? alpha * x : x;
    if (name == "ThresholdedRelu") return x > alpha ? x : 0;
    if (name == "ScaledTanh") return alpha * std::tanh(beta * x);
    if (name == "HardSigmoid") return std::max(0.0, std::min(1.0, alpha * x + beta));
    if (name == "Elu") return x < 0 ? alpha * (std::exp(x) - 1) : x;
    if (name == "Softsign") return x / (1 + std::abs(x));
    return std::log1p(std::exp(x)); // Softplus (checked below)
  }
};

/// The activations of each direction: the attribute's, or the op's defaults; alpha and beta
/// taken in order by those that use them, with ONNX's defaults otherwise.
std::vector<std::vector<activation>> activations(const context& ctx, int dirs, const std::vector<std::string>& defaults) {
  auto names = ctx.op.has_attr("activations") ? std::get<std::vector<std::string>>(ctx.op.attrs.at("activations"))
                                              : std::vector<std::string>{};
  if (names.empty())
    for (int d = 0; d < dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  if (names.size() != defaults.size() * static_cast<std::size_t>(dirs))
    fail(ctx, "activations lists " + std::to_string(names.size()) + " functions, not " +
                  std::to_string(defaults.size() * static_cast<std::size_t>(dirs)));
  const auto alphas = ctx.op.attr_floats("activation_alpha"), betas = ctx.op.attr_floats("activation_beta");
  std::size_t ai = 0, bi = 0;
  std::vector<std::vector<activation>> r(static_cast<std::size_t>(dirs));
  for (std::size_t k = 0; k < names.size(); ++k) {
    activation a{names[k]};
    static const std::map<std::string, std::pair<double, double>> params = {
        {"Affine", {1, 0}}, {"LeakyRelu", {0.01, 0}}, {"ThresholdedRelu", {1, 0}}, {"ScaledTanh", {1, 1}},
        {"HardSigmoid", {0.2, 0.5}}, {"Elu", {1, 0}}};
    static const std::vector<std::string> known = {"Sigmoid", "Tanh", "Relu", "Softsign", "Softplus"};
    if (auto it = params.find(a.name); it != params.end()) {
      a.alpha = ai < alphas.size() ? alphas[ai++] : it->second.first;
      if (a.name == "Affine" || a.name == "ScaledTanh" || a.name == "HardSigmoid") a.beta = bi < betas.size() ? betas[bi++] : it->second.second;
    } else if (std::find(known.begin(), known.end(), a.name) == known.end()) {
      fail(ctx, "activation '" + a.name + "' is not one ONNX defines for recurrent ops");
    }
    r[k / defaults.size()].push_back(a);
  }
  return r;
}

void recurrent_kernel(const context& ctx, const std::vector<Tensor>& in, std::vector<Tensor>& out) {
  const std::string& type = ctx.op.type;
  const int gates = type == "RNN" ? 1 : type == "GRU" ? 3 : 4;
  const std::string direction = ctx.op.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    fail(ctx, "direction '" + direction + "' is not forward, reverse or bidirectional");
  const int dirs = direction == "bidirectional" ? 2 : 1;
  const bool batch_first = ctx.op.attr_int("layout", 0) == 1;
  const Tensor& x = input(ctx, in, 0);
  const Shape& xs = x.get_shape();
  if (xs.size() != 3) fail(ctx, "X must be 3-D, not " + to_string(xs));
  const int64_t seq = batch_first ? xs[1] : xs[0], batch = batch_first ? xs[0] : xs[1], isz = xs[2];
  const int64_t hid = input(ctx, in, 2).get_shape().back();
  const auto xv = to_doubles(x), w = to_doubles(input(ctx, in, 1)), r = to_doubles(input(ctx, in, 2));
  const auto bias = has_input(in, 3) ? to_doubles(in[3]) : std::vector<double>(static_cast<std::size_t>(dirs * 2 * gates * hid), 0.0);
  std::vector<int64_t> lens(static_cast<std::size_t>(batch), seq);
  if (has_input(in, 4)) lens = to_ints(in[4]);
  const auto h0 = has_input(in, 5) ? to_doubles(in[5]) : std::vector<double>(static_cast<std::size_t>(dirs * batch * hid), 0.0);
  const auto c0 = type == "LSTM" && has_input(in, 6) ? to_doubles(in[6]) : std::vector<double>(static_cast<std::size_t>(dirs * batch * hid), 0.0);
  const auto peep = type == "LSTM" && has_input(in, 7) ? to_doubles(in[7]) : std::vector<double>(static_cast<std::size_t>(dirs * 3 * hid), 0.0);
  // Every input's size against X's and R's (a model from a client must not read past them).
  auto expect = [&](const char* what, std::size_t got, int64_t want) {
    if (static_cast<int64_t>(got) != want)
      fail(ctx, std::string(what) + " has " + std::to_string(got) + " values, not " + std::to_string(want) + " (" +
                    std::to_string(dirs) + " directions, " + std::to_string(gates) + " gates, hidden " + std::to_string(hid) +
                    ", input " + std::to_string(isz) + ", batch " + std::to_string(batch) + ")");
  };
  if (ctx.op.has_attr("hidden_size") && ctx.op.attr_int("hidden_size", 0) != hid)
    fail(ctx, "hidden_size " + std::to_string(ctx.op.attr_int("hidden_size", 0)) + " differs from R's last dim " + std::to_string(hid));
  expect("W", w.size(), dirs * gates * hid * isz);
  expect("R", r.size(), dirs * gates * hid * hid);
  expect("B", bias.size(), dirs * 2 * gates * hid);
  expect("sequence_lens", lens.size(), batch);
  expect("initial_h", h0.size(), dirs * batch * hid);
  expect("initial_c", c0.size(), dirs * batch * hid);
  expect("P", peep.size(), dirs * 3 * hid);
  const bool clipping = ctx.op.has_attr("clip");
  const double clip = ctx.op.attr_float("clip", 0);
  const bool before_reset = ctx.op.attr_int("linear_before_reset", 0) != 0, coupled = ctx.op.attr_int("input_forget", 0) != 0;
  const auto acts = activations(ctx, dirs, type == "RNN" ? std::vector<std::string>{"Tanh"}
                                           : type == "GRU" ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                           : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"});
  auto cl = [&](double v) { return clipping ? std::min(clip, std::max(-clip, v)) : v; };
  std::vector<double> y(static_cast<std::size_t>(seq * dirs * batch * hid), 0.0), yh(static_cast<std::size_t>(dirs * batch * hid)),
      yc(yh.size());
  for (int d = 0; d < dirs; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const auto& f = acts[static_cast<std::size_t>(d)];
    auto W = [&](int64_t row, int64_t col) { return w[static_cast<std::size_t>((d * gates * hid + row) * isz + col)]; };
    auto R = [&](int64_t row, int64_t col) { return r[static_cast<std::size_t>((d * gates * hid + row) * hid + col)]; };
    auto Wb = [&](int64_t row) { return bias[static_cast<std::size_t>(d * 2 * gates * hid + row)]; };
    auto Rb = [&](int64_t row) { return bias[static_cast<std::size_t>(d * 2 * gates * hid + gates * hid + row)]; };
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<double> h(static_cast<std::size_t>(hid)), c(static_cast<std::size_t>(hid));
      // initial_h and initial_c: [dirs, batch, hidden], or [batch, dirs, hidden] in layout 1.
      const int64_t state = batch_first ? b * dirs + d : d * batch + b;
      for (int64_t k = 0; k < hid; ++k) {
        h[static_cast<std::size_t>(k)] = h0[static_cast<std::size_t>(state * hid + k)];
        c[static_cast<std::size_t>(k)] = c0[static_cast<std::size_t>(state * hid + k)];
      }
      const int64_t len = lens[static_cast<std::size_t>(b)];
      if (len < 0 || len > seq) fail(ctx, "sequence_lens[" + std::to_string(b) + "] = " + std::to_string(len) + " is outside [0, " + std::to_string(seq) + "]");
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = reverse ? len - 1 - step : step;
        auto X = [&](int64_t col) { return xv[static_cast<std::size_t>((batch_first ? b * seq + t : t * batch + b) * isz + col)]; };
        // xw[g*hid+k] = X W^T + Wb; hr[g*hid+k] = H R^T + Rb.
        std::vector<double> xw(static_cast<std::size_t>(gates * hid)), hr(xw.size());
        for (int64_t row = 0; row < gates * hid; ++row) {
          double s = Wb(row), q = Rb(row);
          for (int64_t col = 0; col < isz; ++col) s += X(col) * W(row, col);
          for (int64_t col = 0; col < hid; ++col) q += h[static_cast<std::size_t>(col)] * R(row, col);
          xw[static_cast<std::size_t>(row)] = s;
          hr[static_cast<std::size_t>(row)] = q;
        }
        std::vector<double> nh(static_cast<std::size_t>(hid));
        const auto H = static_cast<std::size_t>(hid);
        if (type == "GRU") {
          std::vector<double> z(H), rr(H);
          for (std::size_t k = 0; k < H; ++k) {
            z[k] = f[0](cl(xw[k] + hr[k]));
            rr[k] = f[0](cl(xw[H + k] + hr[H + k]));
          }
          for (std::size_t k = 0; k < H; ++k) {
            double pre;
            if (before_reset) {
              pre = xw[2 * H + k] + rr[k] * hr[2 * H + k]; // r * (H R^T + Rb)
            } else {
              double q = Rb(2 * hid + static_cast<int64_t>(k)); // (r * H) R^T + Rb
              for (int64_t col = 0; col < hid; ++col)
                q += rr[static_cast<std::size_t>(col)] * h[static_cast<std::size_t>(col)] * R(2 * hid + static_cast<int64_t>(k), col);
              pre = xw[2 * H + k] + q;
            }
            nh[k] = (1 - z[k]) * f[1](cl(pre)) + z[k] * h[k];
          }
        }
        for (std::size_t k = 0; k < H && type != "GRU"; ++k) {
          const std::size_t P = static_cast<std::size_t>(d * 3 * hid);
          if (type == "RNN") {
            nh[k] = f[0](cl(xw[k] + hr[k]));
            continue;
          }
          // LSTM gates in order i, o, f, c; peepholes i, o, f.
          const double i = f[0](cl(xw[k] + hr[k] + peep[P + k] * c[k]));
          const double fg = coupled ? 1 - i : f[0](cl(xw[2 * H + k] + hr[2 * H + k] + peep[P + 2 * H + k] * c[k]));
          const double cc = f[1](cl(xw[3 * H + k] + hr[3 * H + k]));
          c[k] = fg * c[k] + i * cc;
          const double o = f[0](cl(xw[H + k] + hr[H + k] + peep[P + H + k] * c[k]));
          nh[k] = o * f[2](c[k]);
        }
        h = nh;
        for (int64_t k = 0; k < hid; ++k)
          y[static_cast<std::size_t>(((batch_first ? (b * seq + t) * dirs + d : (t * dirs + d) * batch + b)) * hid + k)] = h[static_cast<std::size_t>(k)];
      }
      for (int64_t k = 0; k < hid; ++k) {
        const auto at = static_cast<std::size_t>((batch_first ? b * dirs + d : d * batch + b) * hid + k);
        yh[at] = h[static_cast<std::size_t>(k)];
        yc[at] = c[static_cast<std::size_t>(k)];
      }
    }
  }
  if (has_output(out, 0)) from_doubles(out[0], y);
  if (has_output(out, 1)) from_doubles(out[1], yh);
  if (has_output(out, 2)) from_doubles(out[2], yc);
}

} // namespace

void register_recurrent(kernel_map& m) {
  for (const char* n : {"RNN", "GRU", "LSTM"}) m[n] = recurrent_kernel;
}

} // namespace troupe::kernels::reference
