// The troupe command, run as a separate process: devices, query, run, bench, and bad usage.
#include <boost/test/unit_test.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "benchmarks/tiny_onnx.hpp"

namespace fs = std::filesystem;

namespace {

struct result {
  int code = -1;
  std::string out; ///< stdout and stderr together
};

/// The troupe binary sits beside this test (CMAKE_RUNTIME_OUTPUT_DIRECTORY).
std::string troupe_bin() { return (fs::read_symlink("/proc/self/exe").parent_path() / "troupe").string(); }

result run(const std::string& args) {
  result r;
  std::string cmd = troupe_bin() + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  BOOST_REQUIRE(p);
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string temp_dir() {
  auto d = fs::temp_directory_path() / ("troupe_cli_tests_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d.string();
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

/// y = a + b over [1, 8], z = Relu(a) with a dynamic batch.
std::string two_output_model() {
  troupe::tiny_onnx::model_builder b;
  b.input("a", {-1, 8}).input("b", {-1, 8}).output("y", {-1, 8}).output("z", {-1, 8});
  b.node("Add", {"a", "b"}, {"y"}, "add").node("Relu", {"a"}, {"z"}, "relu");
  return b.write(temp_dir() + "/two.onnx");
}

std::string cls_model() {
  for (std::string d : {std::string(TROUPE_DATA_DIR) + "/models/", std::string("/tmp/ort/models/gutenye/package/assets/")})
    if (fs::exists(d + "ch_ppocr_mobile_v2.0_cls_infer.onnx")) return d + "ch_ppocr_mobile_v2.0_cls_infer.onnx";
  return "";
}

} // namespace

BOOST_AUTO_TEST_CASE(devices_lists_cpu_and_properties) {
  auto r = run("devices");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(r.out.find("CPU") != std::string::npos);
  BOOST_TEST(r.out.find("FULL_DEVICE_NAME") != std::string::npos);
  BOOST_TEST(r.out.find("NUM_STREAMS") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(query_prints_each_op_and_a_count) {
  auto m = two_output_model();
  auto r = run("query -m " + m + " -d CPU -shape a[2,8],b[2,8]");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(r.out.find("add") != std::string::npos);
  BOOST_TEST(r.out.find("Relu") != std::string::npos);
  BOOST_TEST(r.out.find("2 of 2 ops supported by CPU") != std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(run_writes_outputs_json_and_f32_files) {
  auto m = two_output_model();
  auto dir = temp_dir() + "/out";
  // Inputs: a from a file, b from the seeded generator.
  std::vector<float> a(16);
  for (int i = 0; i < 16; ++i) a[static_cast<std::size_t>(i)] = static_cast<float>(i) - 8;
  {
    std::ofstream f(temp_dir() + "/a.bin", std::ios::binary);
    f.write(reinterpret_cast<const char*>(a.data()), 64);
  }
  auto r = run("run -m " + m + " -d CPU -shape a[2,8],b[2,8] -i a=" + temp_dir() + "/a.bin -o " + dir);
  BOOST_TEST(r.code == 0, r.out);
  auto json = slurp(dir + "/outputs.json");
  BOOST_TEST(json.find("\"y\"") != std::string::npos, json);
  BOOST_TEST(json.find("[2, 8]") != std::string::npos, json);
  BOOST_TEST(json.find("f32") != std::string::npos, json);
  auto z = slurp(dir + "/z.f32");
  BOOST_REQUIRE(z.size() == 64u);
  const float* zf = reinterpret_cast<const float*>(z.data());
  for (int i = 0; i < 16; ++i) BOOST_TEST(zf[i] == std::max(0.0f, a[static_cast<std::size_t>(i)]));
  // y - a is b, the seeded input: mulberry32(12345) draws in [0,1), and the first one is fixed.
  auto y = slurp(dir + "/y.f32");
  BOOST_REQUIRE(y.size() == 64u);
  const float* yf = reinterpret_cast<const float*>(y.data());
  for (int i = 0; i < 16; ++i) {
    float b = yf[i] - a[static_cast<std::size_t>(i)];
    BOOST_TEST((b >= 0.0f && b < 1.0f));
  }
  // Running again gives the same bytes (the generator is seeded).
  auto r2 = run("run -m " + m + " -shape a[2,8],b[2,8] -i a=" + temp_dir() + "/a.bin -o " + dir + "2");
  BOOST_TEST(r2.code == 0, r2.out);
  BOOST_TEST(slurp(dir + "2/y.f32") == y);
}

BOOST_AUTO_TEST_CASE(run_matches_onnxruntime_on_the_seeded_input) {
  auto m = cls_model();
  std::string ort = std::string(TROUPE_DATA_DIR) + "/ort/ch_ppocr_mobile_v2.0_cls_infer_1x3x48x192/";
  if (m.empty() || !fs::exists(ort + "input_x.f32")) {
    BOOST_TEST_MESSAGE("no PP-OCR cls model or onnxruntime outputs; skipped");
    return;
  }
  auto dir = temp_dir() + "/cls";
  auto r = run("run -m " + m + " -d CPU -shape x[1,3,48,192] -o " + dir);
  BOOST_TEST(r.code == 0, r.out);
  // The seeded input is bit-exact: the same run from ORT's saved input gives the same bytes.
  auto r2 = run("run -m " + m + " -d CPU -shape [1,3,48,192] -i x=" + ort + "input_x.f32 -o " + dir + "2");
  BOOST_TEST(r2.code == 0, r2.out);
  BOOST_TEST(slurp(dir + "/softmax_0.tmp_0.f32") == slurp(dir + "2/softmax_0.tmp_0.f32"));
  auto ours = slurp(dir + "/softmax_0.tmp_0.f32");
  auto theirs = slurp(ort + "output_softmax_0.tmp_0.f32");
  BOOST_REQUIRE(ours.size() == theirs.size());
  const float* o = reinterpret_cast<const float*>(ours.data());
  const float* t = reinterpret_cast<const float*>(theirs.data());
  for (std::size_t i = 0; i < ours.size() / 4; ++i) BOOST_TEST(std::abs(o[i] - t[i]) < 1e-4f);
}

BOOST_AUTO_TEST_CASE(bench_writes_json_stats) {
  auto m = two_output_model();
  auto json_path = temp_dir() + "/stats.json";
  for (std::string api : {"sync", "async"}) {
    auto r = run("bench -m " + m + " -d CPU -shape a[1,8],b[1,8] -niter 5 -api " + api +
                 " -hint throughput -json_stats " + json_path);
    BOOST_TEST(r.code == 0, r.out);
    BOOST_TEST(r.out.find("throughput") != std::string::npos);
    auto json = slurp(json_path);
    for (const char* k : {"throughput_fps", "latency_median_ms", "latency_avg_ms", "latency_min_ms", "latency_max_ms",
                          "compile_ms", "first_inference_ms", "count", "duration_ms", "device", "hint", "nireq",
                          "nstreams", "nthreads"})
      BOOST_TEST(json.find(std::string("\"") + k + "\"") != std::string::npos, k);
    BOOST_TEST(json.find("\"count\": 5") != std::string::npos, json);
  }
  auto pc = run("bench -m " + m + " -shape a[1,8],b[1,8] -niter 3 -api sync -pc");
  BOOST_TEST(pc.code == 0, pc.out);
  BOOST_TEST(pc.out.find("add") != std::string::npos, pc.out);
}

BOOST_AUTO_TEST_CASE(bad_input_exits_nonzero_with_a_message) {
  auto m = two_output_model();
  auto dir = temp_dir() + "/bad";
  auto r = run("run -m " + m + " -shape nope[1,8] -o " + dir);
  BOOST_TEST(r.code == 1);
  BOOST_TEST(r.out.find("troupe: error:") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("nope") != std::string::npos, r.out);

  r = run("run -m " + m + " -d NPU -shape a[1,8],b[1,8] -o " + dir);
  BOOST_TEST(r.code == 1);
  BOOST_TEST(r.out.find("NPU") != std::string::npos, r.out);

  r = run("run -m " + temp_dir() + "/missing.onnx -o " + dir);
  BOOST_TEST(r.code == 1);
  BOOST_TEST(r.out.find("missing.onnx") != std::string::npos, r.out);

  {
    std::ofstream f(temp_dir() + "/short.bin", std::ios::binary);
    f << "abc";
  }
  r = run("run -m " + m + " -shape a[1,8],b[1,8] -i a=" + temp_dir() + "/short.bin -o " + dir);
  BOOST_TEST(r.code == 1);
  BOOST_TEST(r.out.find("'a'") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("32 bytes") != std::string::npos, r.out);
  BOOST_TEST(r.out.find("3 bytes") != std::string::npos, r.out);

  r = run("run -m " + m + " -o " + dir); // dynamic inputs and no -shape
  BOOST_TEST(r.code == 1);
  BOOST_TEST(r.out.find("-shape") != std::string::npos, r.out);

  r = run("bench -m " + m + " -nstreams 0 -shape a[1,8],b[1,8] -niter 1");
  BOOST_TEST(r.code == 1);
  BOOST_TEST(r.out.find("NUM_STREAMS") != std::string::npos, r.out);

  r = run("frobnicate");
  BOOST_TEST(r.code == 2);
  BOOST_TEST(r.out.find("usage") != std::string::npos, r.out);
  r = run("run -m");
  BOOST_TEST(r.code == 2);
  r = run("bench -m " + m + " -hint fast");
  BOOST_TEST(r.code == 2);
}
