#include "runtime/nominal_rates.hpp"

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>

namespace troupe {

namespace {

/// The host CPU's clock in GHz: cpufreq's maximum, else /proc/cpuinfo's current, else 2.5.
double host_ghz() {
  std::ifstream f("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  double khz = 0;
  if (f >> khz && khz > 0) return khz / 1e6;
  std::ifstream info("/proc/cpuinfo");
  std::string line;
  while (std::getline(info, line))
    if (line.rfind("cpu MHz", 0) == 0)
      if (auto c = line.find(':'); c != std::string::npos) {
        const double mhz = std::atof(line.c_str() + c + 1);
        if (mhz > 0) return mhz / 1000;
      }
  return 2.5;
}

/// f32 operations per cycle and core of oneDNN's ISA: two FMA units of its vector width.
double flops_per_cycle(const std::string& isa) {
  if (isa.rfind("avx512", 0) == 0) return 64;
  if (isa.rfind("avx2", 0) == 0) return 32;
  if (isa == "avx") return 16;
  if (isa == "sse41") return 8;
  return 4;
}

/// The host's cores at half their vector peak (what oneDNN's convolutions sustain at PP-OCR's
/// sizes on this project's machines, docs/roofline.md, rounded down).
double host_gflops(const std::string& isa) {
  const double cores = std::max(1u, std::thread::hardware_concurrency());
  return 0.5 * cores * flops_per_cycle(isa) * host_ghz();
}

std::string field(const std::map<std::string, std::string>& info, const std::string& key) {
  auto it = info.find(key);
  return it == info.end() ? "" : it->second;
}

} // namespace

graph::device_rates nominal_rates(const std::string& name, const kernels::device& dev) {
  const auto info = dev.info();
  const std::string kind = name.substr(0, name.find_first_of(".@"));
  const double host_gbps = std::min(50.0, 5.0 * std::max(1u, std::thread::hardware_concurrency()));
  graph::device_rates r;
  if (kind == "CPU") {
    r = {host_gflops(field(info, "ONEDNN_ISA").empty() ? "avx2" : field(info, "ONEDNN_ISA")), host_gbps, 3, {5, 1e-4}};
  } else if (kind == "GPU") {
    const auto type = field(info, "DEVICE_TYPE");
    if (type == "discrete") r = {5000, 300, 10, {50, 1e-4}};                 // PCIe at ~10 GB/s
    else if (type == "cpu") r = {host_gflops("avx2") / 4, host_gbps / 2, 20, {30, 2e-4}}; // lavapipe on the host's cores
    else r = {500, 30, 10, {30, 1e-4}};                                      // integrated, virtual
  } else {
    r = {1, 5, 1, {1, 1e-4}}; // REFERENCE: plain loops, one op at a time
  }
  if (name.find('@') != std::string::npos) r.io = {300, 1e-3}; // a node's: a network round trip, ~1 GB/s
  return r;
}

} // namespace troupe
