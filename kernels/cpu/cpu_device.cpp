#include "kernels/cpu/cpu_device.hpp"

#include <exception>
#include <fstream>
#include <sstream>
#include <thread>

#include <troupe/exception.hpp>

#include "graph/op_domain.hpp"
#include "kernels/cpu/cpu_executable.hpp"
#include "kernels/cpu/plan_builder.hpp"

namespace troupe::kernels::cpu {

namespace {

std::string cpuinfo_field(const std::string& key) {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) {
      auto c = line.find(':');
      if (c == std::string::npos) continue;
      auto v = line.substr(c + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  return "";
}

std::string isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
  case dnnl::cpu_isa::sse41: return "sse41";
  case dnnl::cpu_isa::avx: return "avx";
  case dnnl::cpu_isa::avx2: return "avx2";
  case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
  case dnnl::cpu_isa::avx512_core: return "avx512_core";
  case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
  case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
  case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
  default: return "generic";
  }
}

} // namespace

std::map<std::string, std::string> cpu_device::info() const {
  std::string model = cpuinfo_field("model name");
  bool bf16 = false;
  {
    std::istringstream flags(cpuinfo_field("flags"));
    std::string f;
    while (flags >> f) bf16 = bf16 || f == "avx512_bf16" || f == "amx_bf16";
  }
  return {{"FULL_DEVICE_NAME", model.empty() ? "CPU" : model},
          {"OPTIMIZATION_CAPABILITIES", bf16 ? "FP32 BF16" : "FP32"},
          {"ONEDNN_ISA", isa_name(dnnl::get_effective_cpu_isa())}};
}

support cpu_device::query(const graph::Graph& g, const graph::Op& op) const {
  if (auto why = graph::domain_refusal(op); !why.empty()) return {false, "the CPU cannot run it: " + why};
  if (auto why = reference::unsupported_in_subgraphs(op); !why.empty()) return {false, why};
  if (auto why = reference::string_refusal(g, op); !why.empty()) return {false, why}; // oneDNN holds no strings
  if (reference::find_kernel(op.type)) return {true, ""};
  std::string why;
  if (dnnl_handles(g, op, &why)) return {true, ""};
  return {false, why};
}

std::unique_ptr<executable> cpu_device::compile(const graph::Graph& g, const compile_config& cfg) const {
  if (cfg.inference_precision != element_type::f32 && cfg.inference_precision != element_type::bf16)
    throw Exception("CPU: INFERENCE_PRECISION_HINT must be f32 or bf16, got " + to_string(cfg.inference_precision));
  // Build on a thread of its own: any OpenMP team that oneDNN starts while creating primitives
  // and reordering weights then ends with that thread. A team left on the caller's thread would
  // keep idle OpenMP threads alive, and libgomp throttles every barrier's spin once it manages
  // more threads than there are cores (PP-OCR cls at 2 threads: 3.6 ms instead of 0.45 ms).
  std::shared_ptr<const plan> p;
  std::exception_ptr error;
  std::thread builder([&] {
    try {
      p = build_plan(g, cfg.num_threads, cfg.inference_precision, cfg.profiling, cfg.derived.get());
    } catch (...) {
      error = std::current_exception();
    }
  });
  builder.join();
  if (error) std::rethrow_exception(error);
  auto blocks = program_output_pool(cfg, p->outputs.size());
  return std::make_unique<cpu_executable>(std::move(p), std::move(blocks));
}

std::unique_ptr<kernels::device> make_cpu_device() { return std::make_unique<cpu_device>(); }

} // namespace troupe::kernels::cpu
