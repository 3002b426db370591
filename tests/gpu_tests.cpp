/// The GPU devices through the public API: enumeration (lazy, cached per Core, two copies of
/// one ICD are GPU.0 and GPU.1, no Vulkan is a clear error), "GPU" = "GPU.0", properties kept
/// per device, PP-OCR models on GPU against onnxruntime and the CPU, profiling rows, streams,
/// an op the GPU lacks, and the troupe command on GPU. In CI (CI=true or TROUPE_REQUIRE_GPU=1) a missing GPU is a failure;
/// elsewhere the GPU cases are skipped with the reason.
#define BOOST_TEST_MODULE gpu_tests
#include <boost/test/unit_test.hpp>
#include <boost/test/tools/assertion_result.hpp>

#include <troupe/troupe.hpp>

#include "actors/messages.hpp"
#include "runtime/compiled_model_impl.hpp"
#include "tests/support/test_tensors.hpp"
#include "tests/support/gpu_env.hpp"
#include "tests/support/ppocr_cases.hpp"

#include "benchmarks/tiny_onnx.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/tensor_compare.hpp"
#include "tests/support/test_data.hpp"
#include "tests/support/run_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <iostream>
#include <condition_variable>
#include <latch>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace fs = std::filesystem;
namespace utf = boost::unit_test;
using namespace troupe;
using tests::expect_error;

namespace {

const fs::path lavapipe_icd = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";


/// Points the loader at these ICD files only (both the current and the legacy variable).
struct scoped_icds {
  tests::scoped_env files, legacy;
  explicit scoped_icds(const std::string& list) : files("VK_DRIVER_FILES", list), legacy("VK_ICD_FILENAMES", list) {}
};


void require_gpu(const Core& core) {
  BOOST_REQUIRE_MESSAGE(!tests::gpus_of(core).empty(),
                        "no Vulkan device: lavapipe (mesa-vulkan-drivers) must be installed, and VK_DRIVER_FILES "
                        "(if set) must name its ICD file");
}

/// Two copies of lavapipe's ICD in a temporary folder: two Vulkan devices.
struct two_icd_copies {
  fs::path dir = fs::temp_directory_path() / ("troupe_gpu_icd_" + std::to_string(getpid()));
  two_icd_copies() {
    fs::create_directories(dir);
    fs::copy_file(lavapipe_icd, dir / "lvp0.json", fs::copy_options::overwrite_existing);
    fs::copy_file(lavapipe_icd, dir / "lvp1.json", fs::copy_options::overwrite_existing);
  }
  ~two_icd_copies() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string list() const { return (dir / "lvp0.json").string() + ":" + (dir / "lvp1.json").string(); }
};

std::string temp_file(const std::string& name) { return tests::temp_file("gpu", name); }

/// y = relu(a + b) over [1, n].
std::string add_relu_model(int64_t n = 64) {
  tiny_onnx::model_builder b;
  b.input("a", {1, n}).input("b", {1, n}).output("y", {1, n});
  b.node("Add", {"a", "b"}, {"s"}, "add").node("Relu", {"s"}, {"y"}, "relu");
  return b.write(temp_file("add_relu.onnx"));
}

Tensor ramp(const Shape& s, float scale, float offset) {
  Tensor t(element_type::f32, s);
  for (int64_t i = 0; i < t.get_size(); ++i)
    t.data<float>()[i] = scale * static_cast<float>(i % 97) + offset;
  return t;
}

// ---- PP-OCR models -------------------------------------------------------------------------

using tests::model_case;
const model_case& cls = tests::ppocr_cls;
const model_case& rec = tests::ppocr_rec;
const model_case& det320 = tests::ppocr_det320;

/// The troupe command (beside this test) with `args`: exit code and stdout+stderr.
std::pair<int, std::string> troupe_cli(const std::string& args) {
  std::string cmd = (fs::read_symlink("/proc/self/exe").parent_path() / "troupe").string() + " " + args + " 2>&1";
  const auto r = tests::run_command(cmd);
  BOOST_REQUIRE(r);
  return {r->code, r->out};
}

/// GPU output vs onnxruntime and vs the CPU device, at the model tests' tolerance.
void check_model_on_gpu(const model_case& c) {
  Core core;
  require_gpu(core);
  auto gpu = tests::run_on_device(core, c, "GPU");
  auto vs_ort = tests::compare_scaled(gpu, tests::ort_output(c), 1e-4, 1e-5);
  std::cout << c.model << " " << c.tag << " on GPU vs onnxruntime: " << vs_ort.message << "\n";
  BOOST_TEST(vs_ort.ok, c.model << " " << c.tag << " on GPU vs onnxruntime: " << vs_ort.message);
  auto cpu = tests::run_on_device(core, c, "CPU");
  auto vs_cpu = tests::compare_scaled(gpu, cpu, 1e-4, 1e-5);
  std::cout << c.model << " " << c.tag << " on GPU vs CPU: " << vs_cpu.message << "\n";
  BOOST_TEST(vs_cpu.ok, c.model << " " << c.tag << " on GPU vs CPU: " << vs_cpu.message);
}

} // namespace

// ---- enumeration ---------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(available_devices_lists_gpus_with_their_properties, *utf::precondition(tests::gpu_present())) {
  Core core;
  require_gpu(core);
  auto devs = core.available_devices();
  BOOST_TEST(devs.front() == "CPU");
  auto gpus = tests::gpus_of(core);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    // GPU.0, GPU.1, ... in order, right after the CPU.
    BOOST_TEST(gpus[i] == "GPU." + std::to_string(i));
    BOOST_TEST(devs[i + 1] == gpus[i]);
    const auto& d = gpus[i];
    BOOST_TEST(!core.get_property(d, "FULL_DEVICE_NAME").as_string().empty());
    auto type = core.get_property(d, "DEVICE_TYPE").as_string();
    BOOST_TEST((type == "discrete" || type == "integrated" || type == "virtual" || type == "cpu" || type == "other"),
               type);
    BOOST_TEST(core.get_property(d, "GPU_DEVICE_TOTAL_MEM_SIZE").as<int64_t>() > 0);
    BOOST_TEST(core.get_property(d, "SUBGROUP_SIZE").as<int>() > 0);
    auto fp16 = core.get_property(d, "FP16_SUPPORTED").as_string();
    BOOST_TEST((fp16 == "YES" || fp16 == "NO"), fp16);
    BOOST_TEST(core.get_property(d, "DEVICE_UUID").as_string().size() == 32u);
    BOOST_TEST(core.get_property(d, "AVAILABLE_DEVICES").as_string() == d);
    BOOST_TEST(core.get_property(d, "INFERENCE_PRECISION_HINT").as_string() == "f32");
    auto props = core.get_property(d, "SUPPORTED_PROPERTIES").as<std::vector<std::string>>();
    for (const char* p : {"FULL_DEVICE_NAME", "DEVICE_TYPE", "GPU_DEVICE_TOTAL_MEM_SIZE", "SUBGROUP_SIZE",
                          "FP16_SUPPORTED", "PERF_COUNT", "PERFORMANCE_HINT", "NUM_STREAMS", "INFERENCE_PRECISION_HINT"})
      BOOST_TEST(std::count(props.begin(), props.end(), p) == 1, d << " lacks " << p);
    // Each listed property answers.
    for (const auto& p : props) BOOST_CHECK_NO_THROW(core.get_property(d, p));
    BOOST_TEST(std::count(props.begin(), props.end(), "INFERENCE_NUM_THREADS") == 0);
  }
  // The CPU has no GPU facts.
  expect_error([&] { core.get_property("CPU", "SUBGROUP_SIZE"); }, {"SUBGROUP_SIZE", "CPU"});
}

BOOST_AUTO_TEST_CASE(gpu_alone_means_gpu0, *utf::precondition(tests::gpu_present())) {
  Core core;
  require_gpu(core);
  BOOST_TEST(core.get_property("GPU", "AVAILABLE_DEVICES").as_string() == "GPU.0");
  BOOST_TEST(core.get_property("GPU", "DEVICE_INDEX").as_string() == core.get_property("GPU.0", "DEVICE_INDEX").as_string());
  // A property set through "GPU" is GPU.0's.
  core.set_property("GPU", {{"PERFORMANCE_HINT", "THROUGHPUT"}});
  BOOST_TEST(core.get_property("GPU.0", "PERFORMANCE_HINT").as_string() == "THROUGHPUT");
  auto model = core.read_model(add_relu_model());
  auto compiled = core.compile_model(model, "GPU");
  BOOST_TEST(compiled.get_property("EXECUTION_DEVICES").as_string() == "GPU.0");
  BOOST_TEST(compiled.get_property("PERFORMANCE_HINT").as_string() == "THROUGHPUT");
  auto req = compiled.create_infer_request();
  Tensor a = ramp({1, 64}, 1, -40), b = ramp({1, 64}, 0.5f, 3);
  req.set_input_tensor(0, a);
  req.set_input_tensor(1, b);
  req.infer();
  auto y = req.get_output_tensor();
  for (int i = 0; i < 64; ++i)
    BOOST_TEST(y.data<float>()[i] == std::max(0.0f, a.data<float>()[i] + b.data<float>()[i]));
}

BOOST_AUTO_TEST_CASE(enumeration_is_lazy_and_cached_per_core, *utf::precondition(tests::gpu_present())) {
  std::optional<Core> core;
  core.emplace(); // no Vulkan yet: the constructor must not enumerate
  {
    scoped_icds none("/nonexistent/troupe_no_such_icd.json");
    BOOST_TEST(tests::gpus_of(*core).empty()); // enumerated now, with no ICD
  }
  // Cached: the ICDs are back, but this Core already knows it has no GPU.
  BOOST_TEST(tests::gpus_of(*core).empty());
  Core fresh;
  BOOST_TEST(!tests::gpus_of(fresh).empty());
}

BOOST_AUTO_TEST_CASE(no_vulkan_means_cpu_only_and_a_clear_error) {
  scoped_icds none("/nonexistent/troupe_no_such_icd.json");
  Core core;
  auto devs = core.available_devices();
  BOOST_TEST(devs == std::vector<std::string>{"CPU"});
  auto model = core.read_model(add_relu_model());
  expect_error([&] { core.compile_model(model, "GPU"); },
               {"device 'GPU' is not available: no Vulkan device found; available devices: CPU"});
  expect_error([&] { core.compile_model(model, "GPU.1"); }, {"device 'GPU.1' is not available", "no Vulkan device"});
  expect_error([&] { core.query_model(model, "GPU"); }, {"device 'GPU' is not available"});
  expect_error([&] { core.get_property("GPU", "FULL_DEVICE_NAME"); }, {"device 'GPU' is not available"});
  // The CPU is unaffected.
  auto req = core.compile_model(model, "CPU").create_infer_request();
  req.set_input_tensor(0, ramp({1, 64}, 1, 0));
  req.set_input_tensor(1, ramp({1, 64}, 1, 0));
  req.infer();
  BOOST_TEST(req.get_output_tensor().data<float>()[3] == 6.0f);
}

BOOST_AUTO_TEST_CASE(unknown_gpu_index_names_the_devices, *utf::precondition(tests::gpu_present())) {
  Core core;
  require_gpu(core);
  auto model = core.read_model(add_relu_model());
  expect_error([&] { core.compile_model(model, "GPU.99"); }, {"unknown device 'GPU.99'", "GPU.0", "CPU"});
  expect_error([&] { core.compile_model(model, "GPU.x"); }, {"unknown device 'GPU.x'"});
}

// ---- properties ----------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(gpu_properties_are_validated_and_kept_per_device, *utf::precondition(tests::gpu_present())) {
  Core core;
  require_gpu(core);
  auto model = core.read_model(add_relu_model());
  if (core.get_property("GPU", "FP16_SUPPORTED").as_string() == "YES") {
    auto f16 = core.compile_model(model, "GPU", {inference_precision(element_type::f16)});
    BOOST_TEST(f16.get_property("INFERENCE_PRECISION_HINT").as_string() == "f16");
  } else {
    expect_error([&] { core.compile_model(model, "GPU", {inference_precision(element_type::f16)}); },
                 {"INFERENCE_PRECISION_HINT", "'f16'", "GPU", "shaderFloat16", "f32"});
  }
  expect_error([&] { core.compile_model(model, "GPU", {inference_precision(element_type::bf16)}); },
               {"INFERENCE_PRECISION_HINT", "'bf16'", "GPU"});
  // GPU_F16_ARITHMETIC: by default only where f16 math is native (not on a CPU-type device such
  // as lavapipe, which emulates it); the compiled model says what it runs with.
  const bool native = core.get_property("GPU", "FP16_SUPPORTED").as_string() == "YES" &&
                      core.get_property("GPU", "DEVICE_TYPE").as_string() != "cpu";
  BOOST_TEST(core.get_property("GPU", "GPU_F16_ARITHMETIC").as<bool>() == native);
  BOOST_TEST(core.compile_model(model, "GPU").get_property("GPU_F16_ARITHMETIC").as<bool>() == false, "f32 precision");
  if (core.get_property("GPU", "FP16_SUPPORTED").as_string() == "YES") {
    auto on = core.compile_model(model, "GPU", {inference_precision(element_type::f16), {"GPU_F16_ARITHMETIC", true}});
    BOOST_TEST(on.get_property("GPU_F16_ARITHMETIC").as<bool>());
  }
  expect_error([&] { core.compile_model(model, "GPU", {{"GPU_F16_ARITHMETIC", "maybe"}}); },
               {"GPU_F16_ARITHMETIC", "'maybe'", "GPU", "YES, NO"});
  expect_error([&] { core.compile_model(model, "CPU", {{"GPU_F16_ARITHMETIC", "YES"}}); }, {"GPU_F16_ARITHMETIC", "CPU"});
  expect_error([&] { core.compile_model(model, "GPU", {{"INFERENCE_NUM_THREADS", "2"}}); },
               {"INFERENCE_NUM_THREADS", "GPU"});
  expect_error([&] { core.set_property("GPU.0", {{"NO_SUCH", "1"}}); }, {"NO_SUCH", "GPU.0"});
  expect_error([&] { core.set_property("GPU", {{"SUBGROUP_SIZE", "8"}}); }, {"SUBGROUP_SIZE", "read-only"});
  expect_error([&] { core.compile_model(model, "GPU", {{"NUM_STREAMS", "0"}}); }, {"NUM_STREAMS", "'0'", "GPU"});

  // Set for one device, seen by no other.
  core.set_property("CPU", {{"INFERENCE_NUM_THREADS", "1"}, {"PERF_COUNT", "YES"}});
  core.set_property("GPU.0", {{"NUM_STREAMS", "2"}});
  BOOST_TEST(core.get_property("CPU", "NUM_STREAMS").as<int>() == 1);
  BOOST_TEST(core.get_property("GPU.0", "PERF_COUNT").as<bool>() == false);
  auto on_gpu = core.compile_model(model, "GPU");
  BOOST_TEST(on_gpu.get_property("NUM_STREAMS").as<int>() == 2);
  BOOST_TEST(on_gpu.get_property("PERF_COUNT").as<bool>() == false);
  auto on_cpu = core.compile_model(model, "CPU");
  BOOST_TEST(on_cpu.get_property("NUM_STREAMS").as<int>() == 1);
  BOOST_TEST(on_cpu.get_property("PERF_COUNT").as<bool>() == true);
  if (tests::gpus_of(core).size() > 1) {
    BOOST_TEST(core.get_property("GPU.1", "NUM_STREAMS").as<int>() == 1);
    BOOST_TEST(core.compile_model(model, "GPU.1").get_property("NUM_STREAMS").as<int>() == 1);
  }
  // The hint picks streams the GPU way.
  auto tput = core.compile_model(model, "GPU.0", {performance_hint("THROUGHPUT"), {"NUM_STREAMS", "AUTO"}});
  BOOST_TEST(tput.get_property("NUM_STREAMS").as<int>() == 2);
  BOOST_TEST(tput.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS").as<int>() == 2);
}

/// y = relu(a + b) on `device` of `core`, checked against the host's sum.
void check_add_relu(CompiledModel& cm) {
  auto req = cm.create_infer_request();
  auto a = ramp({1, 64}, 1, -20), b = ramp({1, 64}, 0.25f, 1);
  req.set_input_tensor(0, a);
  req.set_input_tensor(1, b);
  req.infer();
  auto y = req.get_output_tensor(0);
  for (int64_t i = 0; i < 64; ++i)
    BOOST_TEST(y.data<float>()[i] == std::max(0.0f, a.data<float>()[i] + b.data<float>()[i]));
}

/// The one pipeline cache file in `dir` (the test's devices are copies of one driver); the
/// folder also holds compiled models (*.troupe, docs/cache.md).
fs::path only_cache_file(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() != ".troupe") files.push_back(e.path());
  BOOST_TEST_REQUIRE(files.size() == 1u, "pipeline cache files in " << dir << ": " << files.size());
  BOOST_TEST(files[0].filename().string().rfind("troupe-vulkan-", 0) == 0u, files[0]);
  return files[0];
}

BOOST_AUTO_TEST_CASE(cache_dir_keeps_the_pipeline_cache_between_cores, *utf::precondition(tests::gpu_present())) {
  const fs::path dir = temp_file("cache_dir");
  fs::remove_all(dir);
  const std::string model_file = add_relu_model();
  std::size_t written = 0;
  {
    Core core;
    require_gpu(core);
    core.set_property({{"CACHE_DIR", dir.string()}}); // created on the spot
    BOOST_TEST(core.get_property("GPU", "CACHE_DIR").as_string() == dir.string());
    auto cm = core.compile_model(model_file, "GPU");
    BOOST_TEST(cm.get_property("LOADED_FROM_CACHE").as<bool>() == false, "a new folder holds no cache");
    check_add_relu(cm);
    written = fs::file_size(only_cache_file(dir));
    // Our header (28 bytes), then at least Vulkan's 32-byte VkPipelineCacheHeaderVersionOne.
    BOOST_TEST(written >= 28u + 32u);
  }
  // A second Core (a new VkDevice) reads it back. Whether that saves work is the driver's: the
  // file must hold pipelines past Vulkan's header (lavapipe of Mesa 22.3 writes the header only).
  std::ifstream in(only_cache_file(dir), std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  uint32_t vk_header = 0;
  std::memcpy(&vk_header, bytes.data() + 28, 4);
  {
    Core core;
    core.set_property({{"CACHE_DIR", dir.string()}});
    auto cm = core.compile_model(model_file, "GPU");
    BOOST_TEST(cm.get_property("LOADED_FROM_CACHE").as<bool>() == (bytes.size() > 28u + vk_header),
               "file of " << bytes.size() << " bytes, Vulkan header of " << vk_header);
    check_add_relu(cm);
  }
  // A damaged file is skipped, the model compiles and runs, and the file is written anew.
  for (const std::string damage : {"truncated", "garbage"}) {
    {
      std::ofstream out(only_cache_file(dir), std::ios::binary | std::ios::trunc);
      if (damage == "truncated") out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() - 1));
      else out << "not a pipeline cache at all";
    }
    Core core;
    core.set_property({{"CACHE_DIR", dir.string()}});
    auto cm = core.compile_model(model_file, "GPU");
    BOOST_TEST(cm.get_property("LOADED_FROM_CACHE").as<bool>() == false, damage);
    check_add_relu(cm);
    BOOST_TEST(fs::file_size(only_cache_file(dir)) == written, damage << ": rewritten whole");
  }
  // A device's own CACHE_DIR wins over the Core's; the CPU writes nothing to either.
  {
    Core core;
    const fs::path own = dir / "gpu0";
    core.set_property({{"CACHE_DIR", dir.string()}});
    core.set_property("GPU.0", {{"CACHE_DIR", own.string()}});
    auto cm = core.compile_model(model_file, "GPU.0");
    check_add_relu(cm);
    BOOST_TEST((fs::exists(own) && !fs::is_empty(own)));
    auto cpu = core.compile_model(model_file, "CPU");
    BOOST_TEST(cpu.get_property("LOADED_FROM_CACHE").as<bool>() == false);
    check_add_relu(cpu);
  }
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(cache_dir_errors_name_the_folder_and_reason, *utf::precondition(tests::gpu_present())) {
  Core core;
  const std::string file = temp_file("not_a_folder");
  std::ofstream(file) << "x";
  expect_error([&] { core.set_property({{"CACHE_DIR", file}}); }, {"CACHE_DIR", file, "not a folder"});
  expect_error([&] { core.set_property("GPU", {{"CACHE_DIR", file}}); }, {"CACHE_DIR", "GPU", file, "not a folder"});
  expect_error([&] { core.set_property({{"CACHE_DIR", file + "/below"}}); }, {"CACHE_DIR", "cannot create the folder"});
  expect_error([&] { core.set_property({{"NUM_STREAMS", "2"}}); }, {"NUM_STREAMS", "not a property of the Core"});
  fs::remove(file);
}

BOOST_AUTO_TEST_CASE(streams_run_requests_in_parallel_with_right_results, *utf::precondition(tests::gpu_present())) {
  Core core;
  require_gpu(core);
  auto model = core.read_model(add_relu_model(4096));
  auto compiled = core.compile_model(model, "GPU", {num_streams(3)});
  BOOST_TEST_REQUIRE(compiled.get_property("NUM_STREAMS").as<int>() == 3);
  std::vector<InferRequest> reqs;
  for (int r = 0; r < 6; ++r) {
    reqs.push_back(compiled.create_infer_request());
    reqs.back().set_input_tensor(0, ramp({1, 4096}, 1, static_cast<float>(-r * 10)));
    reqs.back().set_input_tensor(1, ramp({1, 4096}, 0.25f, 1));
  }

  // Parallel, observed without a clock: a sink that holds each run just before it starts, on
  // the thread of the stream that runs it, until three have arrived. The three pass only if
  // three streams have a request in flight at the same moment; with fewer running in parallel
  // the last never arrives and the test hangs (CTest's TIMEOUT reports it) instead of passing.
  {
    struct held_start : actors::completion_sink {
      std::latch all_in_flight{3};
      std::mutex m;
      std::condition_variable cv;
      std::set<std::thread::id> threads;
      int done = 0, errors = 0;
      void on_started(uint64_t) noexcept override {
        {
          std::lock_guard l(m);
          threads.insert(std::this_thread::get_id());
        }
        all_in_flight.arrive_and_wait();
      }
      void on_outputs(uint64_t, std::vector<Tensor>, std::vector<kernels::op_profile>) noexcept override { end(false); }
      void on_error(uint64_t, const actors::failure&) noexcept override { end(true); }
      bool wanted(uint64_t) const noexcept override { return true; }
      void end(bool error) {
        std::lock_guard l(m);
        ++done;
        errors += error;
        cv.notify_all();
      }
    };
    auto sink = std::make_shared<held_start>();
    for (int r = 0; r < 3; ++r) {
      auto& req = reqs[static_cast<std::size_t>(r)];
      compiled.impl()->runner->submit(
          actors::inference{static_cast<uint64_t>(r + 1), {req.get_input_tensor(0), req.get_input_tensor(1)}, sink, 0});
    }
    std::unique_lock l(sink->m);
    sink->cv.wait(l, [&] { return sink->done == 3; });
    BOOST_TEST(sink->errors == 0);
    BOOST_TEST(sink->threads.size() == 3u); // three stream threads, none the test's own
    BOOST_TEST(sink->threads.count(std::this_thread::get_id()) == 0u);
  }

  // Right results with more requests than streams, round after round.
  for (int round = 0; round < 5; ++round) {
    for (auto& r : reqs) r.start_async();
    for (auto& r : reqs) r.wait();
    for (int r = 0; r < 6; ++r) {
      const float* a = reqs[static_cast<std::size_t>(r)].get_input_tensor(0).data<float>();
      const float* b = reqs[static_cast<std::size_t>(r)].get_input_tensor(1).data<float>();
      const float* y = reqs[static_cast<std::size_t>(r)].get_output_tensor().data<float>();
      int bad = 0;
      for (int i = 0; i < 4096; ++i) bad += y[i] != std::max(0.0f, a[i] + b[i]);
      BOOST_TEST(bad == 0, "request " << r << " round " << round);
    }
  }
}

BOOST_AUTO_TEST_CASE(profiling_has_upload_and_download_rows, *utf::precondition(tests::gpu_present())) {
  Core core;
  require_gpu(core);
  auto model = core.read_model(add_relu_model());
  auto compiled = core.compile_model(model, "GPU", {enable_profiling(true)});
  auto req = compiled.create_infer_request();
  req.set_input_tensor(0, ramp({1, 64}, 1, 0));
  req.set_input_tensor(1, ramp({1, 64}, 1, 0));
  req.infer();
  auto rows = req.get_profiling_info();
  auto has_type = [&](const std::string& t) {
    return std::any_of(rows.begin(), rows.end(), [&](const ProfilingInfo& p) { return p.node_type == t; });
  };
  BOOST_TEST(has_type("Upload"));
  BOOST_TEST(has_type("Download"));
  BOOST_TEST(has_type("Add"));
  for (const auto& r : rows) std::cout << "  " << r.node_name << " " << r.node_type << " " << r.exec_type << " "
                                       << r.real_time.count() << " us\n";
  // Without PERF_COUNT: no counters, and the error says why.
  auto plain = core.compile_model(model, "GPU").create_infer_request();
  plain.set_input_tensor(0, ramp({1, 64}, 1, 0));
  plain.set_input_tensor(1, ramp({1, 64}, 1, 0));
  plain.infer();
  expect_error([&] { plain.get_profiling_info(); }, {"PERF_COUNT"});
}

BOOST_AUTO_TEST_CASE(a_held_output_keeps_its_values_while_blocks_are_reused, *utf::precondition(tests::gpu_present())) {
  // Outputs come from blocks of earlier outputs the caller let go (kernels/output_pool.hpp,
  // whose own cases are in cpu_tests): a tensor still held must never be one of them. Run 1's
  // output is held through runs 2..5; every run's values are its own.
  Core core;
  require_gpu(core);
  auto req = core.compile_model(core.read_model(add_relu_model()), "GPU").create_infer_request();
  Tensor held;
  for (int run = 0; run < 6; ++run) {
    req.set_input_tensor(0, ramp({1, 64}, 1, static_cast<float>(run)));
    req.set_input_tensor(1, ramp({1, 64}, 1, 0));
    req.infer();
    const Tensor out = req.get_output_tensor(0);
    for (int64_t i = 0; i < 64; i += 21) BOOST_TEST(out.data<float>()[i] == 2.f * static_cast<float>(i) + run);
    if (run == 1) held = out;
    else BOOST_TEST(out.data() != held.data());
  }
  BOOST_TEST(held.data<float>()[21] == 43.f);
}

// ---- ops the GPU lacks ---------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(an_op_the_gpu_lacks_names_op_node_and_device, *utf::precondition(tests::gpu_present())) {
  Core core;
  require_gpu(core);
  // y = LpNormalization(relu(a)): Relu runs on the GPU, LpNormalization has no shader.
  tiny_onnx::model_builder b;
  b.input("a", {2, 5}).output("y", {2, 5});
  b.node("Relu", {"a"}, {"r"}, "relu").node("LpNormalization", {"r"}, {"y"}, "my_lpnorm");
  auto model = core.read_model(b.write(temp_file("lpnorm.onnx")));
  auto q = core.query_model(model, "GPU");
  BOOST_TEST(q.count("relu") == 1);
  BOOST_TEST(q.count("my_lpnorm") == 0);
  // The reason the device gives names the op; supported ops have none.
  auto why = core.query_model_unsupported(model, "GPU");
  BOOST_TEST(why.count("relu") == 0);
  BOOST_TEST_REQUIRE(why.count("my_lpnorm") == 1);
  BOOST_TEST(why.at("my_lpnorm").find("LpNormalization") != std::string::npos, why.at("my_lpnorm"));
  expect_error([&] { core.compile_model(model, "GPU"); }, {"LpNormalization", "my_lpnorm", "GPU.0"});
  // The CPU runs it: the refusal is the GPU's, not the model's.
  BOOST_CHECK_NO_THROW(core.compile_model(model, "CPU"));
  // `troupe query` prints the device's reason on the op's line.
  auto [code, out] = troupe_cli("query -m " + temp_file("lpnorm.onnx") + " -d GPU");
  BOOST_TEST(code == 0, out);
  auto line = out.substr(out.find("my_lpnorm"));
  line = line.substr(0, line.find('\n'));
  BOOST_TEST(line.find("not supported: ") != std::string::npos, line);
  BOOST_TEST(line.find("LpNormalization") != std::string::npos, line);
  BOOST_TEST(out.find("1 of 2 ops supported by GPU") != std::string::npos, out);

  // NonZero too (data-dependent output shape).
  tiny_onnx::model_builder nz;
  nz.input("x", {2, 3}).output("idx", {2, -1}, onnx::TensorProto::INT64);
  nz.node("NonZero", {"x"}, {"idx"}, "my_nonzero");
  auto nz_model = core.read_model(nz.write(temp_file("nonzero.onnx")));
  BOOST_TEST(core.query_model(nz_model, "GPU.0").count("my_nonzero") == 0);
  expect_error([&] { core.compile_model(nz_model, "GPU.0"); }, {"NonZero", "my_nonzero", "GPU.0"});
}

/// A Reshape whose target the caller gives: the GPU takes it, compiling once per target value
/// at run time; a target that does not fit fails that request only, naming the op.
BOOST_AUTO_TEST_CASE(shapes_that_wait_on_input_values_compile_per_value, *utf::precondition(tests::gpu_present())) {
  Core core;
  require_gpu(core);
  tiny_onnx::model_builder b;
  b.input("x", {2, 6}).input("target", {2}, onnx::TensorProto::INT64).output("y", {-1, -1});
  b.node("Relu", {"x"}, {"r"}, "relu").node("Reshape", {"r", "target"}, {"y"}, "my_reshape");
  const auto path = b.write(temp_file("reshape_by_value.onnx"));
  auto model = core.read_model(path);
  auto placed = core.query_placement(model, "GPU");
  BOOST_TEST_REQUIRE(placed.count("my_reshape") == 1);
  BOOST_TEST(placed.at("my_reshape").device == "GPU");
  BOOST_TEST(placed.at("my_reshape").why.find("wait on input values") != std::string::npos, placed.at("my_reshape").why);
  auto compiled = core.compile_model(model, "GPU");
  auto req = compiled.create_infer_request();
  Tensor x(element_type::f32, {2, 6});
  for (int i = 0; i < 12; ++i) x.data<float>()[i] = static_cast<float>(i) - 5.5f;
  auto run = [&](std::vector<int64_t> dims) {
    Tensor t(element_type::i64, {2});
    std::copy(dims.begin(), dims.end(), t.data<int64_t>());
    req.set_tensor("x", x);
    req.set_tensor("target", t);
    req.infer();
    return req.get_tensor("y");
  };
  for (auto dims : {std::vector<int64_t>{3, 4}, {4, 3}, {3, 4}, {-1, 2}}) {
    auto y = run(dims);
    const Shape want = dims[0] < 0 ? Shape{6, 2} : Shape{dims[0], dims[1]};
    BOOST_TEST(y.get_shape() == want);
    for (int i = 0; i < 12; ++i) BOOST_TEST(y.data<float>()[i] == std::max(0.0f, static_cast<float>(i) - 5.5f));
  }
  expect_error([&] { run({5, 5}); }, {"my_reshape"});
  BOOST_TEST(run({2, 6}).get_shape() == (Shape{2, 6})); // the next request runs
  expect_error([&] {
    std::ostringstream out;
    compiled.export_model(out);
  }, {"export_model", "values of inputs"});
}

BOOST_AUTO_TEST_CASE(a_tensor_larger_than_the_gpu_allows_is_a_clear_error, *utf::precondition(tests::gpu_present())) {
  Core core;
  require_gpu(core);
  tiny_onnx::model_builder b;
  b.input("x", {1, 64, 1024, 1024}).output("y", {1, 64, 1024, 1024}); // 256 MiB: lavapipe allows 128 MiB
  b.node("Relu", {"x"}, {"y"}, "big_relu");
  auto model = core.read_model(b.write(temp_file("big_relu.onnx")));
  const std::string limit = core.get_property("GPU.0", "FULL_DEVICE_NAME").as_string().find("llvmpipe") != std::string::npos
                                ? "134217728"
                                : "bytes)";
  expect_error([&] { core.compile_model(model, "GPU.0"); },
               {"Relu", "big_relu", "'x'", "268435456 bytes", limit, "GPU.0", "largest storage buffer"});
  // The device is still fine afterwards.
  auto small = core.compile_model(core.read_model(add_relu_model()), "GPU.0");
  auto request = small.create_infer_request();
  request.set_input_tensor(0, ramp({1, 64}, 1, -10));
  request.set_input_tensor(1, ramp({1, 64}, 0, 1));
  request.infer();
  BOOST_TEST(request.get_output_tensor().data<float>()[0] == 0.0f);
  BOOST_TEST(request.get_output_tensor().data<float>()[20] == 11.0f);
}

BOOST_AUTO_TEST_CASE(query_model_agrees_with_compile, *utf::precondition(tests::gpu_present()) * tests::needs_model_of(cls)) {
  Core core;
  require_gpu(core);
  auto model = core.read_model(tests::ppocr_model(cls.model).path.string());
  model.reshape({{model.input().get_any_name(), PartialShape(cls.shape)}});
  auto q = core.query_model(model, "GPU");
  // Everything in cls runs on the GPU (compile_model below would throw otherwise).
  BOOST_TEST(q.size() == model.get_ops().size());
  for (const auto& [op, dev] : q) BOOST_TEST(dev == "GPU");
  BOOST_CHECK_NO_THROW(core.compile_model(model, "GPU"));
}

// ---- real models ---------------------------------------------------------------------------

/// Precondition of the f16 cases: skipped, with the reason, on a GPU without f16; never on
/// lavapipe, which has shaderFloat16 + storageBuffer16BitAccess (there the case runs and fails).
struct gpu_has_f16 {
  boost::test_tools::assertion_result operator()(utf::test_unit_id) const {
    Core core;
    if (tests::gpus_of(core).empty()) return true; // gpu_present decides; the case fails on it
    const auto name = core.get_property("GPU", "FULL_DEVICE_NAME").as_string();
    if (core.get_property("GPU", "FP16_SUPPORTED").as_string() == "YES" || name.find("llvmpipe") != std::string::npos)
      return true;
    boost::test_tools::assertion_result r(false);
    r.message() << "GPU.0 (" << name << ") has no f16";
    return r;
  }
};

/// INFERENCE_PRECISION_HINT=f16 (float16 tensors and weights on the device; f32 at the
/// boundary) against onnxruntime's f32 output: max|gpu - ref| / max|ref|. `arithmetic`:
/// GPU_F16_ARITHMETIC, float16 math in the Conv/MatMul/Gemm loops too (else f32 math).
/// Returns the output.
std::vector<float> check_model_on_gpu_f16(const model_case& c, double bound, bool arithmetic) {
  Core core;
  require_gpu(core);
  BOOST_TEST_REQUIRE(core.get_property("GPU", "FP16_SUPPORTED").as_string() == "YES",
                     core.get_property("GPU", "FULL_DEVICE_NAME").as_string() << " lacks f16");
  auto got = tests::run_on_device(core, c, "GPU",
                                  {inference_precision(element_type::f16), {"GPU_F16_ARITHMETIC", arithmetic}});
  auto ref = tests::ort_output(c);
  BOOST_TEST_REQUIRE(got.size() == ref.size());
  double worst = 0, top = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    worst = std::max(worst, std::abs(double(got[i]) - ref[i]));
    top = std::max(top, std::abs(double(ref[i])));
  }
  const char* what = arithmetic ? "f16 storage and arithmetic" : "f16 storage";
  std::cout << c.model << " " << c.tag << " on GPU in " << what << " vs onnxruntime: max error " << worst
            << ", max|ref| " << top << ", relative " << worst / top << "\n";
  BOOST_TEST(worst / top <= bound, c.model << " in " << what << ": max error / max|ref| = " << worst / top);
  BOOST_TEST(worst / top > 0.0, "f16 must round something"); // it really ran narrowed
  return got;
}

/// Both f16 modes of one model: each within `bound`, and they differ (the f16math shader
/// variants really ran).
void check_model_on_gpu_f16_modes(const model_case& c, double bound) {
  auto storage = check_model_on_gpu_f16(c, bound, false);
  auto math = check_model_on_gpu_f16(c, bound, true);
  BOOST_TEST((storage != math), c.model << ": f16 arithmetic gave the f32-arithmetic output");
}

BOOST_AUTO_TEST_CASE(cls_on_gpu_in_f16, *utf::precondition(tests::gpu_present()) * utf::precondition(gpu_has_f16()) *
                                           tests::needs_case(cls)) { check_model_on_gpu_f16_modes(cls, 2e-2); }
BOOST_AUTO_TEST_CASE(rec_on_gpu_in_f16, *utf::precondition(tests::gpu_present()) * utf::precondition(gpu_has_f16()) *
                                           tests::needs_case(rec)) { check_model_on_gpu_f16_modes(rec, 5e-2); }
BOOST_AUTO_TEST_CASE(det320_on_gpu_in_f16, *utf::precondition(tests::gpu_present()) * utf::precondition(gpu_has_f16()) *
                                           tests::needs_case(det320)) { check_model_on_gpu_f16_modes(det320, 5e-2); }

BOOST_AUTO_TEST_CASE(cls_on_gpu, *utf::precondition(tests::gpu_present()) * tests::needs_case(cls)) { check_model_on_gpu(cls); }
BOOST_AUTO_TEST_CASE(rec_on_gpu, *utf::precondition(tests::gpu_present()) * tests::needs_case(rec)) { check_model_on_gpu(rec); }
BOOST_AUTO_TEST_CASE(det320_on_gpu, *utf::precondition(tests::gpu_present()) * tests::needs_case(det320)) { check_model_on_gpu(det320); }

BOOST_AUTO_TEST_CASE(two_gpus_each_run_cls, *utf::precondition(tests::gpu_present()) * tests::needs_case(cls)) {
  // Use the environment's ICDs when they give two devices (scripts/test.sh does); otherwise two
  // copies of lavapipe's ICD made here.
  std::optional<two_icd_copies> copies;
  std::optional<scoped_icds> env;
  {
    Core probe;
    require_gpu(probe);
    if (tests::gpus_of(probe).size() < 2) {
      BOOST_TEST_REQUIRE(fs::exists(lavapipe_icd), "lavapipe's ICD file is missing: install mesa-vulkan-drivers");
      copies.emplace();
      env.emplace(copies->list());
    }
  }
  Core core;
  auto gpus = tests::gpus_of(core);
  BOOST_TEST_REQUIRE(gpus.size() >= 2u);
  // Identical drivers are told apart by index.
  BOOST_TEST(core.get_property("GPU.0", "DEVICE_INDEX").as_string() !=
             core.get_property("GPU.1", "DEVICE_INDEX").as_string());
  auto ref = tests::ort_output(cls);
  auto out0 = tests::run_on_device(core, cls, "GPU.0");
  auto out1 = tests::run_on_device(core, cls, "GPU.1");
  for (const auto* out : {&out0, &out1}) {
    auto c = tests::compare_scaled(*out, ref, 1e-4, 1e-5);
    BOOST_TEST(c.ok, "cls on GPU." << (out == &out0 ? 0 : 1) << " vs onnxruntime: " << c.message);
  }
  auto between = tests::compare_scaled(out0, out1, 1e-4, 1e-5);
  std::cout << "cls GPU.0 vs GPU.1: " << (out0 == out1 ? "bit-identical" : between.message) << "\n";
  BOOST_TEST(between.ok, "GPU.0 vs GPU.1: " << between.message);
}

// ---- the troupe command --------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(cli_devices_run_bench_query_on_gpu, *utf::precondition(tests::gpu_present()) * tests::needs_model_of(cls)) {
  Core core;
  require_gpu(core);
  auto [code, out] = troupe_cli("devices");
  BOOST_TEST(code == 0, out);
  for (const char* s : {"CPU\n", "GPU.0\n", "SUBGROUP_SIZE", "FP16_SUPPORTED", "GPU_DEVICE_TOTAL_MEM_SIZE", "DEVICE_TYPE"})
    BOOST_TEST(out.find(s) != std::string::npos, "troupe devices lacks '" << s << "':\n" << out);

  const auto model = tests::ppocr_model(cls.model).path.string();
  const auto dir = temp_file("cli_out");
  std::tie(code, out) = troupe_cli("run -m " + model + " -d GPU -shape x[1,3,48,192] -o " + dir);
  BOOST_TEST(code == 0, out);
  BOOST_TEST(fs::exists(fs::path(dir) / "outputs.json"), out);
  fs::remove_all(dir);

  std::tie(code, out) = troupe_cli("bench -m " + model + " -d GPU.0 -shape x[1,3,48,192] -niter 3 -pc");
  BOOST_TEST(code == 0, out);
  BOOST_TEST(out.find("Upload") != std::string::npos, out);
  BOOST_TEST(out.find("Download") != std::string::npos, out);
  BOOST_TEST(out.find("Throughput:") != std::string::npos, out);

  std::tie(code, out) = troupe_cli("bench -m " + model + " -d GPU -shape x[1,3,48,192] -niter 4 -hint throughput");
  BOOST_TEST(code == 0, out);
  BOOST_TEST(out.find("2 streams") != std::string::npos, out);

  std::tie(code, out) = troupe_cli("query -m " + model + " -d GPU -shape x[1,3,48,192]");
  BOOST_TEST(code == 0, out);
  BOOST_TEST(out.find("supported by GPU") != std::string::npos, out);

  // f16 where the device has it (lavapipe does); bf16 never on a GPU.
  std::tie(code, out) = troupe_cli("bench -m " + model + " -d GPU -shape x[1,3,48,192] -niter 1 -infer_precision f16");
  BOOST_TEST(code == 0, out);
  std::tie(code, out) = troupe_cli("bench -m " + model + " -d GPU -shape x[1,3,48,192] -niter 1 -infer_precision bf16");
  BOOST_TEST(code != 0, out);
  BOOST_TEST(out.find("INFERENCE_PRECISION_HINT") != std::string::npos, out);
}
