#pragma once
/// A graph compiled on the CPU device, run on seeded random inputs (twice, and once more on a
/// clone) and compared with the reference kernels, element by element relative to 1 + |expected|.
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "kernels/cpu/cpu_device.hpp"
#include "tests/support/graph_builder.hpp"
#include "tests/support/random_tensor.hpp"

namespace troupe::tests {

/// Compiles on the CPU device, runs on random inputs and compares with the reference; the profile.
inline std::vector<kernels::op_profile> check(const graph::Graph& g, float tol = 1e-4f,
                                              element_type precision = element_type::f32, int threads = 2) {
  auto dev = kernels::cpu::make_cpu_device();
  for (const auto& op : g.ops) BOOST_TEST_REQUIRE(dev->query(g, op).supported, graph::describe(op));
  kernels::compile_config cfg;
  cfg.num_threads = threads;
  cfg.inference_precision = precision;
  cfg.profiling = true;
  auto exe = dev->compile(g, cfg);
  std::vector<Tensor> inputs;
  for (std::size_t k = 0; k < g.inputs.size(); ++k)
    inputs.push_back(random_tensor(g.value(g.inputs[k]).shape.to_shape(), 7 + static_cast<unsigned>(k)));
  auto expect = run_reference(g, inputs);
  for (int round = 0; round < 2; ++round) { // a second run reuses the buffers
    const auto got = tests::run_like(*exe, inputs, expect);
    for (std::size_t i = 0; i < got.size(); ++i) {
      double worst = 0;
      for (int64_t j = 0; j < got[i].get_size(); ++j) {
        double a = got[i].data<float>()[j], e = expect[i].data<float>()[j];
        worst = std::max(worst, std::abs(a - e) / (1.0 + std::abs(e)));
      }
      BOOST_TEST(worst <= tol, "output " << i << ": worst relative error " << worst);
    }
  }
  auto clone = exe->clone();
  std::vector<Tensor> got;
  clone->run(inputs, got);
  for (std::size_t i = 0; i < got.size(); ++i)
    for (int64_t j = 0; j < got[i].get_size(); ++j) {
      double a = got[i].data<float>()[j], e = expect[i].data<float>()[j];
      if (std::abs(a - e) / (1.0 + std::abs(e)) > tol) {
        BOOST_TEST(false, "clone output " << i << " differs at " << j);
        break;
      }
    }
  return exe->profile();
}

/// How many steps of a profile ran as `exec_type`.
inline int count_steps(const std::vector<kernels::op_profile>& prof, const std::string& exec_type) {
  int n = 0;
  for (const auto& p : prof) n += p.exec_type == exec_type;
  return n;
}

} // namespace troupe::tests
