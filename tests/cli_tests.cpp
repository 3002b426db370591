// The troupe command, run as a separate process: devices, query, run, bench (benchmark_app's
// flags, reports and configs), and bad usage. No test decides by a clock.
#define BOOST_TEST_MODULE cli_tests
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "benchmarks/tiny_onnx.hpp"
#include "tests/support/gpu_env.hpp"
#include "tests/support/ppocr_cases.hpp"
#include "tests/support/test_data.hpp"
#include "tests/support/run_command.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct result {
  int code = -1;
  std::string out; ///< stdout and stderr together
  std::string err; ///< stderr alone
};

/// The troupe binary sits beside this test (CMAKE_RUNTIME_OUTPUT_DIRECTORY).
std::string troupe_bin() { return (fs::read_symlink("/proc/self/exe").parent_path() / "troupe").string(); }

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

void spit(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

template <class T> std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

/// Runs `troupe args` (with `env`, "NAME=value ...", before it): its exit code, stderr alone,
/// and stdout followed by stderr.
result run(const std::string& args, const std::string& env = "") {
  result r;
  const std::string err_file = temp_dir() + "/stderr.txt";
  std::string cmd = (env.empty() ? "" : "env " + env + " ") + troupe_bin() + " " + args + " 2>" + err_file;
  const auto ran = troupe::tests::run_command(cmd);
  BOOST_REQUIRE(ran);
  r.code = ran->code;
  r.out = ran->out;
  r.err = slurp(err_file);
  r.out += r.err;
  return r;
}

/// y = a + b over [?, 8], z = Relu(a): two inputs with a dynamic batch, two outputs.
std::string two_output_model() {
  troupe::tiny_onnx::model_builder b;
  b.input("a", {-1, 8}).input("b", {-1, 8}).output("y", {-1, 8}).output("z", {-1, 8});
  b.node("Add", {"a", "b"}, {"y"}, "add").node("Relu", {"a"}, {"z"}, "relu");
  return b.write(temp_dir() + "/two.onnx");
}

/// n = Neg(v) over int64 [1, 4]: values above 2^24 must come back exact.
std::string i64_model() {
  troupe::tiny_onnx::model_builder b;
  b.input("v", {1, 4}, onnx::TensorProto::INT64).output("n", {1, 4}, onnx::TensorProto::INT64);
  b.node("Neg", {"v"}, {"n"}, "neg");
  return b.write(temp_dir() + "/i64.onnx");
}

/// The PP-OCR cls model; a test that needs it fails (never passes silently) when it is missing.
std::string cls_model() {
  const std::string m = std::string(TROUPE_DATA_DIR) + "/models/ch_ppocr_mobile_v2.0_cls_infer.onnx";
  BOOST_REQUIRE_MESSAGE(fs::exists(m), "missing " << m << ": fetch the test data with scripts/fetch_test_data.sh");
  return m;
}

json read_json(const std::string& path) {
  BOOST_REQUIRE_MESSAGE(fs::exists(path), "no file " << path);
  return json::parse(slurp(path));
}

/// A parsed .npy file: the header's dtype, order and shape, and the data bytes.
struct npy_file {
  std::string descr;
  bool fortran = true;
  std::vector<int64_t> shape;
  std::string data;
};

/// Parses the .npy format 1.0 header independently of troupe's writer.
npy_file read_npy(const std::string& path) {
  const std::string b = slurp(path);
  BOOST_REQUIRE_MESSAGE(b.size() >= 10 && b.compare(0, 6, "\x93NUMPY") == 0, path << " lacks the .npy magic");
  BOOST_REQUIRE_EQUAL(static_cast<int>(b[6]), 1);
  const std::size_t len = static_cast<unsigned char>(b[8]) | static_cast<std::size_t>(static_cast<unsigned char>(b[9])) << 8;
  BOOST_TEST((10 + len) % 64 == 0u, "the header pads to 64 bytes");
  const std::string h = b.substr(10, len);
  BOOST_TEST(h.back() == '\n');
  npy_file r;
  auto d = h.find("'descr': '");
  BOOST_REQUIRE(d != std::string::npos);
  r.descr = h.substr(d + 10, h.find('\'', d + 10) - d - 10);
  r.fortran = h.find("'fortran_order': False") == std::string::npos;
  auto s = h.find("'shape': (");
  BOOST_REQUIRE(s != std::string::npos);
  std::string dims = h.substr(s + 10, h.find(')', s) - s - 10);
  std::stringstream ss(dims);
  std::string item;
  while (std::getline(ss, item, ','))
    if (item.find_first_not_of(' ') != std::string::npos) r.shape.push_back(std::stoll(item));
  r.data = b.substr(10 + len);
  return r;
}

/// A .npy file written by hand (format 1.0) for input tests.
void write_npy(const std::string& path, const std::string& descr, const std::string& shape, const std::string& data) {
  std::string h = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  spit(path, out + h + data);
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

} // namespace

// ---- devices, query -----------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(devices_lists_cpu_and_properties) {
  auto r = run("devices");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(has(r.out, "CPU"));
  BOOST_TEST(has(r.out, "FULL_DEVICE_NAME"));
  BOOST_TEST(has(r.out, "NUM_STREAMS"));
}

BOOST_AUTO_TEST_CASE(query_prints_each_op_and_a_count) {
  auto m = two_output_model();
  auto r = run("query -m " + m + " -d CPU -shape a[2,8],b[2,8]");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(has(r.out, "add"));
  BOOST_TEST(has(r.out, "Relu"));
  BOOST_TEST(has(r.out, "2 of 2 ops supported by CPU"), r.out);
}

BOOST_AUTO_TEST_CASE(hetero_query_bench_and_run) {
  auto m = two_output_model();
  // The CPU "lacks" Relu: query shows where each op goes and why; bench and run use the split.
  auto r = run("query -m " + m + " -d HETERO:CPU,REFERENCE -shape a[2,8],b[2,8]", "TROUPE_EXCLUDED_OPS=CPU:Relu");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(has(r.out, "supported by CPU"), r.out);
  BOOST_TEST(has(r.out, "excluded by EXCLUDED_OPS; fallback to REFERENCE"), r.out);
  BOOST_TEST(has(r.out, "2 ops on HETERO:CPU,REFERENCE: 1 on CPU, 1 on REFERENCE"), r.out);
  r = run("bench -m " + m + " -d HETERO:CPU,REFERENCE -shape a[2,8],b[2,8] -niter 20 -pc", "TROUPE_EXCLUDED_OPS=CPU:Relu");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(has(r.out, "Execution Devices: [ CPU REFERENCE ]"), r.out);
  BOOST_TEST(has(r.out, "subgraph1: relu"), r.out);
  // Per-device values go to their own device of the list: 2 CPU streams + 1 REFERENCE stream.
  r = run("bench -m " + m + " -d HETERO:CPU,REFERENCE -shape a[2,8],b[2,8] -niter 20 -nstreams CPU:2,REFERENCE:1",
          "TROUPE_EXCLUDED_OPS=CPU:Relu");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(has(r.out, "OPTIMAL_NUMBER_OF_INFER_REQUESTS: 3"), r.out);
  r = run("bench -m " + m + " -d HETERO:CPU,REFERENCE -shape a[2,8],b[2,8] -niter 2 -nstreams GPU:2");
  BOOST_TEST(r.code == 2, r.out);
  BOOST_TEST(has(r.err, "not in the list of 'HETERO:CPU,REFERENCE'"), r.err);
  const auto dir = temp_dir() + "/hetero_run";
  r = run("run -m " + m + " -d HETERO:CPU,REFERENCE -shape a[2,8],b[2,8] -o " + dir);
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(std::filesystem::exists(dir + "/z.npy"));
  r = run("query -m " + m + " -d HETERO:CPU,CPU");
  BOOST_TEST(r.code == 1);
  BOOST_TEST(has(r.err, "listed twice"), r.err);
}

BOOST_AUTO_TEST_CASE(version_and_help) {
  auto r = run("--version");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(r.out.rfind("troupe ", 0) == 0u, r.out);
  BOOST_TEST(std::isdigit(static_cast<unsigned char>(r.out[7])), r.out);
  r = run("bench -h");
  BOOST_TEST(r.code == 0, r.out);
  for (const char* flag : {"-hint", "-infer_precision", "-ip", "-iop", "-report_type", "-json_stats", "-load_config",
                           "-dump_config", "-exec_graph_path", "-latency_percentile", "-pcsort", "-data_shape", "-layout"})
    BOOST_TEST(has(r.out, flag), flag);
  r = run("run --help");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(has(r.out, ".npy"), r.out);
}

// ---- run ----------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(run_writes_outputs_json_npy_and_f32_files) {
  auto m = two_output_model();
  auto dir = temp_dir() + "/out";
  // Inputs: a from a file, b from the seeded generator.
  std::vector<float> a(16);
  for (int i = 0; i < 16; ++i) a[static_cast<std::size_t>(i)] = static_cast<float>(i) - 8;
  spit(temp_dir() + "/a.bin", bytes_of(a));
  auto r = run("run -m " + m + " -d CPU -shape a[2,8],b[2,8] -i a=" + temp_dir() + "/a.bin -o " + dir);
  BOOST_TEST(r.code == 0, r.out);
  auto j = read_json(dir + "/outputs.json");
  BOOST_REQUIRE(j["outputs"].size() == 2u);
  BOOST_TEST(j["outputs"][0]["name"] == "y");
  BOOST_TEST(j["outputs"][0]["file"] == "y.f32");
  BOOST_TEST(j["outputs"][0]["npy"] == "y.npy");
  BOOST_TEST(j["outputs"][0]["element_type"] == "f32");
  BOOST_TEST((j["outputs"][0]["shape"] == json::array({2, 8})));
  auto z = slurp(dir + "/z.f32");
  BOOST_REQUIRE(z.size() == 64u);
  const float* zf = reinterpret_cast<const float*>(z.data());
  for (int i = 0; i < 16; ++i) BOOST_TEST(zf[i] == std::max(0.0f, a[static_cast<std::size_t>(i)]));
  // The .npy holds the same float32 values.
  auto zn = read_npy(dir + "/z.npy");
  BOOST_TEST(zn.descr == "<f4");
  BOOST_TEST(!zn.fortran);
  BOOST_TEST((zn.shape == std::vector<int64_t>{2, 8}));
  BOOST_TEST(zn.data == z);
  // y - a is b, the seeded input: mulberry32(12345) draws in [0,1).
  auto y = slurp(dir + "/y.f32");
  BOOST_REQUIRE(y.size() == 64u);
  const float* yf = reinterpret_cast<const float*>(y.data());
  for (int i = 0; i < 16; ++i) {
    float b = yf[i] - a[static_cast<std::size_t>(i)];
    BOOST_TEST((b >= 0.0f && b < 1.0f));
  }
  // Running again gives the same bytes (the generator is seeded); benchmark_app's name:file too.
  auto r2 = run("run -m " + m + " -shape a[2,8],b[2,8] -i a:" + temp_dir() + "/a.bin -o " + dir + "2");
  BOOST_TEST(r2.code == 0, r2.out);
  BOOST_TEST(slurp(dir + "2/y.f32") == y);
}

BOOST_AUTO_TEST_CASE(run_npy_round_trip_keeps_int64_exact) {
  auto m = i64_model();
  // Values past 2^24 (where float32 loses integers) and past 2^53 (where double does).
  const std::vector<int64_t> v = {16777217, -(int64_t{1} << 40) - 3, (int64_t{1} << 53) + 1, 7};
  write_npy(temp_dir() + "/v.npy", "<i8", "(1, 4)", bytes_of(v));
  auto dir = temp_dir() + "/i64out";
  auto r = run("run -m " + m + " -i v:" + temp_dir() + "/v.npy -o " + dir);
  BOOST_TEST(r.code == 0, r.out);
  auto n = read_npy(dir + "/n.npy");
  BOOST_TEST(n.descr == "<i8");
  BOOST_TEST((n.shape == std::vector<int64_t>{1, 4}));
  BOOST_REQUIRE(n.data.size() == 32u);
  std::vector<int64_t> got(4);
  std::memcpy(got.data(), n.data.data(), 32);
  for (std::size_t i = 0; i < 4; ++i) BOOST_TEST(got[i] == -v[i]);
  BOOST_TEST(read_json(dir + "/outputs.json")["outputs"][0]["element_type"] == "i64");
  // The output read back as an input: .npy in, .npy out, exact again.
  r = run("run -m " + m + " -i v:" + dir + "/n.npy -o " + dir + "2");
  BOOST_TEST(r.code == 0, r.out);
  std::memcpy(got.data(), read_npy(dir + "2/n.npy").data.data(), 32);
  for (std::size_t i = 0; i < 4; ++i) BOOST_TEST(got[i] == v[i]);
}

BOOST_AUTO_TEST_CASE(npy_files_whose_shape_the_data_cannot_hold_are_refused_naming_the_file) {
  // A dimension of 20 digits, a shape whose byte count overflows 64 bits (5 x 10^18 int64s), and
  // one that wants more data than the file holds: each an error naming the file, nothing
  // allocated for the shape's sake.
  auto m = i64_model();
  const std::vector<int64_t> v = {1, 2, 3, 4};
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"(99999999999999999999, 4)", "is too large"},
      {"(999999999999999999, 5)", "more than 2^64 bytes"},
      {"(1, 5)", "needs 40 bytes of data, the file holds 32"},
      {"", "malformed shape"},  // npy_reader_fuzz's first find: was std::out_of_range from substr
      {"(259200064800000, 816020, 0)", "more than 2^63 elements"}}; // its second: signed overflow
  for (const auto& [shape, why] : cases) {
    write_npy(temp_dir() + "/bad.npy", "<i8", shape, bytes_of(v));
    auto r = run("run -m " + m + " -i v:" + temp_dir() + "/bad.npy -o " + temp_dir() + "/badout");
    BOOST_TEST(r.code != 0, r.out);
    BOOST_TEST(has(r.out, "bad.npy"), r.out);
    BOOST_TEST(has(r.out, why), r.out);
  }
}

BOOST_AUTO_TEST_CASE(run_inputs_from_npy_and_folders_match_raw_files) {
  auto m = two_output_model();
  std::vector<float> a(8), b(8);
  for (int i = 0; i < 8; ++i) a[static_cast<std::size_t>(i)] = static_cast<float>(i) * 0.5f - 2, b[static_cast<std::size_t>(i)] = static_cast<float>(i);
  const auto t = temp_dir();
  spit(t + "/a1.bin", bytes_of(a));
  spit(t + "/b1.bin", bytes_of(b));
  write_npy(t + "/a1.npy", "<f4", "(1, 8)", bytes_of(a));
  // .npy of another type is converted to the input's f32.
  std::vector<double> bd(b.begin(), b.end());
  write_npy(t + "/b1.npy", "<f8", "(8,)", bytes_of(bd));
  fs::create_directories(t + "/folder_a");
  spit(t + "/folder_a/0.bin", bytes_of(a));
  std::vector<float> a2(8, 100.0f);
  spit(t + "/folder_a/1.bin", bytes_of(a2));
  spit(t + "/folder_a/notes.txt", "not input data");

  const std::string shape = " -shape a[1,8],b[1,8] ";
  auto raw = run("run -m " + m + shape + "-i a:" + t + "/a1.bin b=" + t + "/b1.bin -o " + t + "/raw");
  BOOST_TEST(raw.code == 0, raw.out);
  auto npy = run("run -m " + m + shape + "-i a:" + t + "/a1.npy -i b:" + t + "/b1.npy -o " + t + "/npy");
  BOOST_TEST(npy.code == 0, npy.out);
  BOOST_TEST(slurp(t + "/npy/y.f32") == slurp(t + "/raw/y.f32"));
  // A folder: its data files in name order; run infers the first set (0.bin) and says so.
  auto folder = run("run -m " + m + shape + "-i a:" + t + "/folder_a b:" + t + "/b1.bin -o " + t + "/folder");
  BOOST_TEST(folder.code == 0, folder.out);
  BOOST_TEST(has(folder.out, "infers the first"), folder.out);
  BOOST_TEST(slurp(t + "/folder/y.f32") == slurp(t + "/raw/y.f32"));
}

BOOST_AUTO_TEST_CASE(run_converts_input_and_output_types) {
  auto m = two_output_model();
  const auto t = temp_dir();
  // -ip f16: the file holds f16 values (-8..7 are exact), converted to the model's f32.
  std::vector<uint16_t> half(8);
  std::vector<float> a(8);
  for (int i = 0; i < 8; ++i) {
    a[static_cast<std::size_t>(i)] = static_cast<float>(i) - 4;
    const int v = i - 4;
    // f16 bits of small integers: sign, exponent 15 + e, mantissa.
    uint16_t bits = 0;
    if (v != 0) {
      unsigned mag = static_cast<unsigned>(v < 0 ? -v : v);
      int e = 0;
      while ((mag >> (e + 1)) != 0) ++e;
      bits = static_cast<uint16_t>((v < 0 ? 0x8000 : 0) | ((15 + e) << 10) | (((mag << 10) >> e) & 0x3ff));
    }
    half[static_cast<std::size_t>(i)] = bits;
  }
  spit(t + "/a_f16.bin", bytes_of(half));
  spit(t + "/a_f32.bin", bytes_of(a));
  spit(t + "/b_f16.bin", bytes_of(half));
  spit(t + "/b_f32.bin", bytes_of(a));
  // An unnamed -shape applies to every input, as in benchmark_app.
  auto f32 = run("run -m " + m + " -shape [1,8] -i a:" + t + "/a_f32.bin b:" + t + "/b_f32.bin -o " + t + "/t32");
  BOOST_TEST(f32.code == 0, f32.out);
  auto f16 = run("run -m " + m + " -shape a[1,8],b[1,8] -ip f16 -iop \"y:i32, z:f16\" -i a:" + t + "/a_f16.bin b:" + t +
                 "/b_f16.bin -o " + t + "/t16");
  BOOST_TEST(f16.code == 0, f16.out);
  BOOST_TEST(slurp(t + "/t16/y.f32") == slurp(t + "/t32/y.f32"));
  auto y = read_npy(t + "/t16/y.npy");
  BOOST_TEST(y.descr == "<i4");
  std::vector<int32_t> yi(8);
  std::memcpy(yi.data(), y.data.data(), 32);
  for (int i = 0; i < 8; ++i) BOOST_TEST(yi[static_cast<std::size_t>(i)] == 2 * (i - 4));
  BOOST_TEST(read_npy(t + "/t16/z.npy").descr == "<f2");
  BOOST_TEST(read_json(t + "/t16/outputs.json")["outputs"][1]["element_type"] == "f16");
}

BOOST_AUTO_TEST_CASE(run_matches_onnxruntime_on_the_seeded_input, *troupe::tests::needs_case(troupe::tests::ppocr_cls)) {
  auto m = cls_model();
  std::string ort = std::string(TROUPE_DATA_DIR) + "/ort/ch_ppocr_mobile_v2.0_cls_infer_1x3x48x192/";
  BOOST_REQUIRE_MESSAGE(fs::exists(ort + "input_x.f32"),
                        "missing " << ort << "input_x.f32: fetch the test data with scripts/fetch_test_data.sh");
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

// ---- troupe_roofline ----------------------------------------------------------------------

/// benchmarks/roofline.cpp, built beside this test: its table of cls (33 MFLOP) with a measured
/// peak, a row per op and the total; a missing model is an error naming the file, a flag's bad
/// number a usage error naming the flag.
BOOST_AUTO_TEST_CASE(roofline_prints_flops_peak_and_a_row_per_op, *troupe::tests::needs_case(troupe::tests::ppocr_cls)) {
  const auto tool = (fs::read_symlink("/proc/self/exe").parent_path() / "troupe_roofline").string();
  const auto ran = troupe::tests::run_command(tool + " -m " + cls_model() + " -shape x[1,3,48,192] -niter 3 -top 5 2>&1");
  BOOST_REQUIRE(ran);
  BOOST_TEST(ran->code == 0, ran->out);
  double gflop = 0, peak = 0;
  const auto at = ran->out.find(" GFLOP; peak");
  BOOST_REQUIRE_MESSAGE(at != std::string::npos, ran->out);
  gflop = std::stod(ran->out.substr(ran->out.rfind(' ', at - 1) + 1));
  const auto p = ran->out.find(") ", at);
  BOOST_REQUIRE(p != std::string::npos);
  peak = std::stod(ran->out.substr(p + 2));
  BOOST_TEST(gflop > 0.03);
  BOOST_TEST(gflop < 0.04);
  BOOST_TEST(peak > 1.0); // GFLOP/s of the probes on this machine
  // The 5 slowest ops (which ones depends on the machine's load: an input reorder can be one),
  // then "(the other ops)" and the total.
  int rows = 0;
  const auto table = ran->out.find("|---");
  BOOST_REQUIRE(table != std::string::npos);
  for (std::size_t i = ran->out.find("\n| ", table); i != std::string::npos; i = ran->out.find("\n| ", i + 1))
    if (ran->out.compare(i, 20, "\n| (the other ops) |") != 0 && ran->out.compare(i, 12, "\n| **all** |") != 0) ++rows;
  BOOST_TEST(rows == 5, ran->out);
  const auto other = ran->out.find("| (the other ops) | ");
  BOOST_REQUIRE_MESSAGE(other != std::string::npos, ran->out);
  const int others = std::stoi(ran->out.substr(other + 20));
  BOOST_TEST(ran->out.find("| **all** |") != std::string::npos, ran->out);
  // Every op listed (which 5 are slowest is the machine's business: on a loaded CI machine the
  // channel Muls outran every Conv): a row per op, no "other ops", and the Convs among them.
  const auto all = troupe::tests::run_command(tool + " -m " + cls_model() + " -shape x[1,3,48,192] -niter 1 -top 1000 2>&1");
  BOOST_REQUIRE(all);
  BOOST_TEST(all->code == 0, all->out);
  int listed = 0;
  for (std::size_t i = all->out.find("\n| ", all->out.find("|---")); i != std::string::npos; i = all->out.find("\n| ", i + 1))
    listed += all->out.compare(i, 12, "\n| **all** |") != 0;
  BOOST_TEST(listed == rows + others, all->out);
  BOOST_TEST(all->out.find("(the other ops)") == std::string::npos, all->out);
  BOOST_TEST(all->out.find("| p2o.Conv.") != std::string::npos, all->out);

  const auto missing = troupe::tests::run_command(tool + " -m " + temp_dir() + "/no_such.onnx 2>&1");
  BOOST_REQUIRE(missing);
  BOOST_TEST(missing->code != 0);
  BOOST_TEST(missing->out.find("no_such.onnx") != std::string::npos, missing->out);

  const auto bad = troupe::tests::run_command(tool + " -m " + cls_model() + " -niter 5x 2>&1");
  BOOST_REQUIRE(bad);
  BOOST_TEST(bad->code == 2);
  BOOST_TEST(bad->out.find("-niter takes an integer >= 1, got '5x'") != std::string::npos, bad->out);
}

/// A dynamically quantized model (lm_tiny_int8, whose products are MatMulIntegers): the tool
/// measures an int8 peak beside the float one and puts each integer row's rate against it.
BOOST_AUTO_TEST_CASE(roofline_puts_integer_ops_against_the_int8_peak, *troupe::tests::needs_models({"lm_tiny_int8"})) {
  const auto tool = (fs::read_symlink("/proc/self/exe").parent_path() / "troupe_roofline").string();
  const auto model = troupe::tests::data_path("models/lm_tiny_int8.onnx").string();
  const auto ran = troupe::tests::run_command(tool + " -m " + model + " -shape input_ids[1,8] -niter 2 -top 1000 2>&1");
  BOOST_REQUIRE(ran);
  BOOST_TEST_REQUIRE(ran->code == 0, ran->out);
  const std::string lead = "a 1024^3 u8 x s8 MatMulInteger here, same settings, ";
  const auto at = ran->out.find(lead);
  BOOST_REQUIRE_MESSAGE(at != std::string::npos, ran->out);
  const double int8_peak = std::stod(ran->out.substr(at + lead.size()));
  BOOST_TEST(int8_peak > 1.0, ran->out);
  // | name | type | kernel | ms | % time | MFLOP | GFLOP/s | % peak | MB | GB/s |
  int integer_rows = 0;
  for (std::size_t i = ran->out.find("\n| "); i != std::string::npos; i = ran->out.find("\n| ", i + 1)) {
    std::vector<std::string> cells;
    std::size_t end = ran->out.find('\n', i + 1), from = i + 2;
    for (std::size_t bar; (bar = ran->out.find('|', from)) < end; from = bar + 1) cells.push_back(ran->out.substr(from, bar - from));
    if (cells.size() < 9 || cells[1].find("MatMulInteger") == std::string::npos) continue;
    ++integer_rows;
    const double gops = std::stod(cells[6]), share = std::stod(cells[7]);
    BOOST_TEST(std::abs(share - 100 * gops / int8_peak) <= 0.1 + 0.01 * share, cells[0] << ": " << share << " % of the peak, "
                                                                                         << gops << " GOP/s of " << int8_peak);
  }
  BOOST_TEST(integer_rows >= 1, ran->out);
}

// ---- bench --------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(bench_issue_line_writes_the_json_report,
                     *troupe::tests::needs_models({"ch_ppocr_mobile_v2.0_cls_infer", "ch_ppocr_mobile_v2.0_cls_static"})) {
  auto m = cls_model();
  const auto folder = temp_dir() + "/R";
  // The issue's line, as written, on the cls model with its input fixed at [1,3,48,192].
  const auto static_model = troupe::tests::data_path("models/ch_ppocr_mobile_v2.0_cls_static.onnx").string();
  auto r = run("bench -m " + static_model + " -d CPU -hint tput -niter 100 -report_type average_counters -report_folder " +
               folder + " -json_stats");
  BOOST_TEST(r.code == 0, r.out);
  for (const char* s : {"[Step 1/11] Parsing and validating input arguments", "[Step 11/11] Dumping statistics report",
                        "[ INFO ] Model inputs:", "x (node: x) : f32 / [N,C,H,W] / [1,3,48,192]",
                        "[ INFO ] Execution Devices: [ CPU ]", "[ INFO ] Count:               100 iterations",
                        "[ INFO ] Duration:", "[ INFO ] Latency:", "Median:", "Average:", "Min:", "Max:",
                        "[ INFO ] Throughput:", " FPS"})
    BOOST_TEST(has(r.out, s), s);
  auto j = read_json(folder + "/benchmark_report.json");
  const auto& res = j["execution_results"];
  for (const char* k : {"throughput", "latency_median", "latency_avg", "latency_min", "latency_max", "iterations_num",
                        "execution_time", "execution_devices", "load_model_time", "first_inference_time",
                        "read_model_time", "percentile_boundary", "failed_requests", "redispatched_requests"})
    BOOST_TEST(res.contains(k), k);
  BOOST_TEST(res["iterations_num"] == 100);
  BOOST_TEST(res["failed_requests"] == 0);
  BOOST_TEST(res["redispatched_requests"] == 0);
  BOOST_TEST(res["execution_devices"] == "CPU");
  BOOST_TEST(res["throughput"].get<double>() > 0);
  BOOST_TEST(res["latency_min"].get<double>() <= res["latency_median"].get<double>());
  BOOST_TEST(res["latency_median"].get<double>() <= res["latency_max"].get<double>());
  BOOST_TEST(j["configuration_setup"]["target_device"] == "CPU");
  BOOST_TEST(j["configuration_setup"]["api"] == "async");
  BOOST_TEST(j["cmd_options"]["hint"] == "tput");
  auto c = read_json(folder + "/benchmark_average_counters_report.json");
  BOOST_TEST(c["report_type"] == "average");
  BOOST_TEST(c["avg_performance"]["nodes"].size() > 0u);
  BOOST_TEST(!fs::exists(folder + "/benchmark_report.csv"));

  // The model as shipped has the input [?,3,?,?]: with -shape it runs the same way.
  r = run("bench -m " + m + " -d CPU -hint tput -niter 100 -report_type average_counters -report_folder " + folder +
          "2 -json_stats -shape x[1,3,48,192]");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(read_json(folder + "2/benchmark_report.json")["execution_results"]["iterations_num"] == 100);

  // Without a shape the dynamic input has no data to run on: an error naming the flags.
  r = run("bench -m " + m + " -d CPU -hint tput -niter 100");
  BOOST_TEST(r.code == 1, r.out);
  BOOST_TEST(has(r.err, "-data_shape x["), r.err);
  BOOST_TEST(has(r.err, "-shape x["), r.err);
}

/// -ip u8 with -mean_values / -scale_values: steps of the model (PrePostProcessor), as
/// benchmark_app applies them; what does not fit is named.
BOOST_AUTO_TEST_CASE(bench_u8_input_with_mean_and_scale_in_the_model,
                     *troupe::tests::needs_models({"ch_ppocr_mobile_v2.0_cls_static"})) {
  const auto m = troupe::tests::data_path("models/ch_ppocr_mobile_v2.0_cls_static.onnx").string();
  auto r = run("bench -m " + m + " -niter 20 -ip u8 -mean_values [127.5,127.5,127.5] -scale_values [127.5,127.5,127.5] -pc");
  BOOST_TEST(r.code == 0, r.out << r.err);
  BOOST_TEST(has(r.out, "Input 'x': fed as u8, converted, mean subtracted, divided by the scale in the model"), r.out);
  BOOST_TEST(has(r.out, "x (node: x) : u8 / [N,C,H,W] / [1,3,48,192]"), r.out);
  BOOST_TEST(has(r.out, "x/preprocess/0_convert_element_type"), r.out); // the step runs on the device, profiled
  BOOST_TEST(!has(r.out, "converted to the compiled model's type by the tool"), r.out);

  r = run("bench -m " + m + " -niter 2 -mean_values [1,2]");
  BOOST_TEST(r.code == 1, r.out);
  BOOST_TEST(has(r.err, "input 'x', step mean: 2 values for 3 channels"), r.err);
  r = run("bench -m " + m + " -niter 2 -scale_values y[1,2,3]");
  BOOST_TEST(r.code == 1, r.out);
  BOOST_TEST(has(r.err, "-scale_values: the model has no input 'y'; its inputs: 'x'"), r.err);
  r = run("bench -m " + m + " -niter 2 -mean_values [1,two,3]");
  BOOST_TEST(r.code == 2, r.out);
  BOOST_TEST(has(r.err, "-mean_values takes numbers, got 'two'"), r.err);
}

BOOST_AUTO_TEST_CASE(bench_csv_reports_sync_and_async) {
  auto m = two_output_model();
  const auto t = temp_dir();
  auto r = run("bench -m " + m + " -shape a[1,8],b[1,8] -niter 5 -api sync -report_type detailed_counters -report_folder " +
               t + "/csv");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(has(r.out, "Start inference synchronously"), r.out);
  auto csv = slurp(t + "/csv/benchmark_report.csv");
  for (const char* s : {"Command line parameters;\n", "niter;5;\n", "Configuration setup;\n", "API;sync;\n",
                        "Execution results;\n", "total number of iterations;5;\n", "Median latency (ms);", "throughput;",
                        "compile model time (ms);", "execution devices;CPU;\n"})
    BOOST_TEST(has(csv, s), s << " in\n" << csv);
  auto counters = slurp(t + "/csv/benchmark_detailed_counters_report.csv");
  BOOST_TEST(has(counters, "layerName;execStatus;layerType;execType;realTime (ms);cpuTime (ms);\n"), counters);
  BOOST_TEST(has(counters, "add;EXECUTED;"), counters);
  BOOST_TEST(has(counters, "Total;;;;"), counters);
  BOOST_TEST(!fs::exists(t + "/csv/benchmark_report.json"));

  // async with 2 requests: 5 iterations round up to 6 (every request runs as often).
  r = run("bench -m " + m + " -shape a[1,8],b[1,8] -niter 5 -nireq 2 -report_type no_counters -report_folder " + t +
          "/csv2");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(has(r.out, "aligned by request number from 5 to 6"), r.out);
  BOOST_TEST(has(r.out, "Count:               6 iterations"), r.out);
  BOOST_TEST(has(slurp(t + "/csv2/benchmark_report.csv"), "total number of iterations;6;"));
  BOOST_TEST(!fs::exists(t + "/csv2/benchmark_no_counters_report.csv"));
}

BOOST_AUTO_TEST_CASE(bench_hints_percentile_counters_and_exec_graph) {
  auto m = two_output_model();
  const auto t = temp_dir();
  auto r = run("bench -m " + m + " -shape a[1,8],b[1,8] -niter 4 -hint latency -latency_percentile 90 -pc "
               "-exec_graph_path " + t + "/exec.xml -report_folder " + t + "/lat -json_stats");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(has(r.out, "PERFORMANCE_HINT: LATENCY"), r.out);
  BOOST_TEST(has(r.out, "Start inference synchronously"), r.out); // -hint latency: api sync
  BOOST_TEST(has(r.out, "90 percentile:"), r.out);
  BOOST_TEST(has(r.out, "Performance counts for 0-th infer request:"), r.out);
  BOOST_TEST(has(r.out, "Full device name:"), r.out);
  auto xml = slurp(t + "/exec.xml");
  BOOST_TEST(has(xml, "<layer id=\"0\" name=\"add\""), xml);
  BOOST_TEST(has(xml, "primitiveType=\""), xml);
  // -report_folder and -json_stats alone write the no_counters report.
  auto j = read_json(t + "/lat/benchmark_report.json");
  BOOST_TEST(j["execution_results"]["percentile_boundary"] == 90);

  r = run("bench -m " + m + " -shape a[1,8],b[1,8] -niter 2 -hint ctput -nireq 1");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(has(r.out, "cumulative_throughput"), r.out);
  BOOST_TEST(has(r.out, "PERFORMANCE_HINT: THROUGHPUT"), r.out);

  r = run("bench -m " + m + " -shape a[1,8],b[1,8] -niter 2 -hint none -nstreams 1 -pcsort simple_sort");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(!has(r.out, "PERFORMANCE_HINT: THROUGHPUT"), r.out);
  BOOST_TEST(has(r.out, "Sort performance counts for 0-th infer request:"), r.out);
  BOOST_TEST(has(r.out, "proportion:"), r.out);

  // Default hint: throughput, with benchmark_app's warning.
  r = run("bench -m " + m + " -shape a[1,8],b[1,8] -niter 2 -nireq 1");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(has(r.out, "performance hint will be set to THROUGHPUT"), r.out);
}

BOOST_AUTO_TEST_CASE(bench_batch_layout_and_data_shape) {
  auto m = two_output_model();
  const auto t = temp_dir();
  // -b sets N, found through -layout; the batch counts frames in the report.
  auto r = run("bench -m " + m + " -shape a[1,8],b[1,8] -layout a[NC],b[NC] -b 3 -niter 2 -nireq 1 -report_folder " +
               t + "/b -json_stats");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(has(r.out, "Model batch size: 3"), r.out);
  BOOST_TEST(has(r.out, "[3,8]"), r.out);
  BOOST_TEST(read_json(t + "/b/benchmark_report.json")["configuration_setup"]["batch_size"] == 3);
  // Without a layout a 2-d input has no N: -b cannot apply.
  r = run("bench -m " + m + " -shape a[1,8],b[1,8] -b 3 -niter 2");
  BOOST_TEST(r.code == 1, r.out);
  BOOST_TEST(has(r.err, "-layout"), r.err);
  // A dynamic model runs on -data_shape tensors; two shapes make two test configurations.
  r = run("bench -m " + m + " -data_shape a[2,8][4,8],b[2,8][4,8] -niter 4 -nireq 2 -pcseq");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(has(r.out, "Test Config 1"), r.out);
  BOOST_TEST(has(r.out, "dyn:[?,8]"), r.out);
  BOOST_TEST(has(r.out, "Latency for each data shape group:"), r.out);
  BOOST_TEST(has(r.out, "a[4,8],b[4,8]"), r.out);
}

BOOST_AUTO_TEST_CASE(bench_inputs_name_colon_file_folder_and_npy) {
  auto m = two_output_model();
  const auto t = temp_dir();
  fs::create_directories(t + "/in_a");
  std::vector<float> a(8, 1.0f), b(8, 2.0f);
  spit(t + "/in_a/first.bin", bytes_of(a));
  spit(t + "/in_a/second.bin", bytes_of(b));
  write_npy(t + "/b.npy", "<f4", "(1, 8)", bytes_of(b));
  auto r = run("bench -m " + m + " -shape a[1,8],b[1,8] -i a:" + t + "/in_a b:" + t + "/b.npy -niter 4 -nireq 2");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(has(r.out, "For input a 2 files were added."), r.out);
  BOOST_TEST(has(r.out, "Test Config 0"), r.out);
  BOOST_TEST(has(r.out, "Test Config 1"), r.out);
  BOOST_TEST(has(r.out, "first.bin"), r.out);
  BOOST_TEST(has(r.out, "second.bin"), r.out);
  BOOST_TEST(has(r.out, "b.npy"), r.out);
}

BOOST_AUTO_TEST_CASE(bench_config_dump_and_load_round_trip) {
  auto m = two_output_model();
  const auto t = temp_dir();
  // -niter 0 compiles and stops: a dynamic model needs no shapes then.
  auto r = run("bench -m " + m + " -niter 0 -hint latency -nstreams 1 -nthreads 1 -dump_config " + t + "/one.json");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(has(r.out, "Skipping inference due to -niter 0"), r.out);
  auto one = read_json(t + "/one.json");
  BOOST_TEST(one["CPU"]["PERFORMANCE_HINT"] == "LATENCY");
  BOOST_TEST(one["CPU"]["NUM_STREAMS"] == "1");
  BOOST_TEST(one["CPU"]["INFERENCE_NUM_THREADS"] == "1");
  BOOST_TEST(one["CPU"]["PERF_COUNT"] == "NO");
  r = run("bench -m " + m + " -niter 0 -load_config " + t + "/one.json -dump_config " + t + "/two.json");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(read_json(t + "/two.json") == one);
  // The file's values reach the device; the command line wins over them.
  spit(t + "/streams.json", R"({"CPU": {"NUM_STREAMS": "2", "PERFORMANCE_HINT": "THROUGHPUT"}, "GPU": {"NUM_STREAMS": "1"}})");
  r = run("bench -m " + m + " -shape a[1,8],b[1,8] -niter 2 -load_config " + t + "/streams.json");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(has(r.out, "NUM_STREAMS: 2"), r.out);
  r = run("bench -m " + m + " -shape a[1,8],b[1,8] -niter 2 -nstreams 1 -load_config " + t + "/streams.json");
  BOOST_TEST(r.code == 0, r.out);
  BOOST_TEST(has(r.out, "NUM_STREAMS: 1"), r.out);
}

BOOST_AUTO_TEST_CASE(bench_cache_dir_is_the_cores_cache_dir) {
  auto m = two_output_model();
  const auto t = temp_dir();
  // benchmark_app's -cache_dir: the Core's CACHE_DIR, created when missing. The CPU keeps no
  // compiled model there (docs/cache.md): step 8 says NO each time and no file is written.
  for (int i = 0; i < 2; ++i) {
    auto r = run("bench -m " + m + " -shape a[1,8],b[1,8] -niter 1 -cache_dir " + t + "/cache/sub");
    BOOST_TEST(r.code == 0, r.out);
    BOOST_TEST(std::filesystem::is_directory(t + "/cache/sub"));
    BOOST_TEST(has(r.out, "LOADED_FROM_CACHE: NO"), r.out);
  }
  BOOST_TEST(std::filesystem::is_empty(t + "/cache/sub"));
  // Processes sharing one folder: eight at once, none fails, none reads half a file, and no
  // temporary file is left behind. On a GPU they share its pipeline cache file.
  const bool gpu = static_cast<bool>(troupe::tests::gpu_present{}(0));
  const std::string device = gpu ? " -d GPU.0" : "";
  const auto shared = t + "/cache/shared";
  std::ostringstream many;
  many << "(";
  for (int i = 0; i < 8; ++i)
    many << "(" << troupe_bin() << " bench -m " << m << " -shape a[1,8],b[1,8] -niter 1" << device << " -cache_dir " << shared
         << " > " << t << "/p" << i << ".txt 2>&1; echo $? > " << t << "/p" << i << ".rc) & ";
  many << "wait)";
  BOOST_TEST(std::system(many.str().c_str()) == 0);
  for (int i = 0; i < 8; ++i) {
    const auto out = slurp(t + "/p" + std::to_string(i) + ".txt");
    BOOST_TEST(slurp(t + "/p" + std::to_string(i) + ".rc") == "0\n", out);
    BOOST_TEST(has(out, "LOADED_FROM_CACHE: "), out);
    BOOST_TEST(!has(out, "warning"), out);
    BOOST_TEST(!has(out, "[ ERROR ]"), out);
  }
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(shared)) {
    ++files;
    BOOST_TEST(e.path().filename().string().rfind("troupe-vulkan-", 0) == 0u, e.path());
    BOOST_TEST(e.path().string().find(".tmp.") == std::string::npos, e.path());
  }
  BOOST_TEST(files == (gpu ? 1 : 0));
  auto r = run("bench -m " + m + " -shape a[1,8],b[1,8] -niter 1" + device + " -cache_dir " + shared);
  BOOST_TEST(r.code == 0, r.out);
  r = run("bench -m " + m + " -shape a[1,8],b[1,8] -niter 1 -cache_dir /dev/null");
  BOOST_TEST(r.code == 1, r.out);
  BOOST_TEST(has(r.err, "CACHE_DIR"), r.err);
  BOOST_TEST(has(r.err, "not a folder"), r.err);
}

BOOST_AUTO_TEST_CASE(bench_bad_config_names_file_key_and_reason) {
  auto m = two_output_model();
  const auto t = temp_dir();
  struct bad_case {
    const char* content;
    std::vector<std::string> expect;
  };
  const std::vector<bad_case> cases = {
      {"{\"CPU\": {\"NUM_STREAMS\": \"2\"", {"not valid JSON"}},
      {"[1, 2]", {"expected an object of devices"}},
      {"{\"NPU\": {\"NUM_STREAMS\": \"2\"}}", {"key 'NPU'", "unknown device"}},
      {"{\"CPU\": {\"NUM_STREAMS\": 2}}", {"key 'CPU.NUM_STREAMS'", "expected a string"}},
      {"{\"CPU\": {\"NUM_STREAMS\": \"zero\"}}", {"key 'CPU.NUM_STREAMS'", "bad value 'zero'"}},
      {"{\"CPU\": {\"CACHE_SIZE\": \"1\"}}", {"key 'CPU.CACHE_SIZE'", "no property"}},
      {"{\"CPU\": {\"CACHE_DIR\": \"/dev/null\"}}", {"key 'CPU.CACHE_DIR'", "'/dev/null'", "not a folder"}},
      {"{\"CPU\": \"fast\"}", {"key 'CPU'", "expected an object of properties"}},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto file = t + "/bad" + std::to_string(i) + ".json";
    spit(file, cases[i].content);
    auto r = run("bench -m " + m + " -shape a[1,8],b[1,8] -niter 1 -load_config " + file);
    BOOST_TEST(r.code == 1, cases[i].content << ": " << r.out);
    BOOST_TEST(has(r.err, "-load_config '" + file + "'"), r.err);
    for (const auto& e : cases[i].expect) BOOST_TEST(has(r.err, e), cases[i].content << ": " << e << " in " << r.err);
  }
  auto r = run("bench -m " + m + " -niter 1 -load_config " + t + "/no_such.json");
  BOOST_TEST(r.code == 1, r.out);
  BOOST_TEST(has(r.err, "no_such.json"), r.err);
  // run reads the same files.
  r = run("run -m " + m + " -shape a[1,8],b[1,8] -o " + t + "/o -load_config " + t + "/bad2.json");
  BOOST_TEST(r.code == 1, r.out);
  BOOST_TEST(has(r.err, "key 'NPU'"), r.err);
}

BOOST_AUTO_TEST_CASE(bench_config_sections_for_hetero) {
  // A HETERO section applies to HETERO with any list; its own properties are checked by name.
  auto m = two_output_model();
  const auto t = temp_dir();
  spit(t + "/cost.json", "{\"HETERO\": {\"HETERO_PLACEMENT\": \"COST\"}}");
  auto r = run("bench -m " + m + " -d HETERO:CPU,REFERENCE -shape a[1,8],b[1,8] -niter 2 -pc -load_config " + t + "/cost.json");
  BOOST_TEST(r.code == 0, r.out << r.err);
  // -pc: the measured rows beside the prediction.
  BOOST_TEST(has(r.out, "predicted (ms): "), r.out);
  BOOST_TEST(has(r.out, "Predicted (HETERO_PLACEMENT): from calibration: one request predicted"), r.out);
  spit(t + "/bad.json", "{\"HETERO\": {\"HETERO_PLACEMENT\": \"FASTEST\"}}");
  r = run("bench -m " + m + " -d HETERO:CPU,REFERENCE -shape a[1,8],b[1,8] -niter 1 -load_config " + t + "/bad.json");
  BOOST_TEST(r.code == 1, r.out);
  for (const char* e : {"key 'HETERO.HETERO_PLACEMENT'", "'FASTEST'", "PRIORITY", "COST"}) BOOST_TEST(has(r.err, e), r.err);
  spit(t + "/batch.json", "{\"BATCH\": {\"AUTO_BATCH_TIMEOUT\": \"1\"}}");
  r = run("bench -m " + m + " -shape a[1,8],b[1,8] -niter 1 -load_config " + t + "/batch.json");
  BOOST_TEST(r.code == 1, r.out);
  BOOST_TEST(has(r.err, "no BATCH device"), r.err);
}

// ---- bad input ----------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(bad_input_exits_nonzero_with_a_message) {
  auto m = two_output_model();
  auto dir = temp_dir() + "/bad";
  auto r = run("run -m " + m + " -shape nope[1,8] -o " + dir);
  BOOST_TEST(r.code == 1);
  BOOST_TEST(has(r.err, "troupe: error:"), r.out);
  BOOST_TEST(has(r.err, "nope"), r.out);

  r = run("run -m " + m + " -d NPU -shape a[1,8],b[1,8] -o " + dir);
  BOOST_TEST(r.code == 1);
  BOOST_TEST(has(r.err, "NPU"), r.out);

  r = run("run -m " + temp_dir() + "/missing.onnx -o " + dir);
  BOOST_TEST(r.code == 1);
  BOOST_TEST(has(r.err, "missing.onnx"), r.out);

  // A file of the wrong size names the input, the expected and the actual bytes.
  spit(temp_dir() + "/short.bin", "abc");
  r = run("run -m " + m + " -shape a[1,8],b[1,8] -i a=" + temp_dir() + "/short.bin -o " + dir);
  BOOST_TEST(r.code == 1);
  BOOST_TEST(has(r.err, "input 'a'"), r.out);
  BOOST_TEST(has(r.err, "expected 32 bytes"), r.out);
  BOOST_TEST(has(r.err, "got 3 bytes"), r.out);
  r = run("bench -m " + m + " -shape a[1,8],b[1,8] -niter 1 -i b:" + temp_dir() + "/short.bin");
  BOOST_TEST(r.code == 1);
  BOOST_TEST(has(r.err, "input 'b'"), r.out);
  BOOST_TEST(has(r.err, "expected 32 bytes"), r.out);
  // A .npy of the wrong element count.
  write_npy(temp_dir() + "/three.npy", "<f4", "(3,)", std::string(12, '\0'));
  r = run("run -m " + m + " -shape a[1,8],b[1,8] -i a:" + temp_dir() + "/three.npy -o " + dir);
  BOOST_TEST(r.code == 1);
  BOOST_TEST(has(r.err, "input 'a'"), r.out);
  BOOST_TEST(has(r.err, "expected 8 elements"), r.out);
  // -i naming an input the model lacks.
  r = run("run -m " + m + " -shape a[1,8],b[1,8] -i c:" + temp_dir() + "/short.bin -o " + dir);
  BOOST_TEST(r.code == 1);
  BOOST_TEST(has(r.err, "no input 'c'"), r.out);

  r = run("run -m " + m + " -o " + dir); // dynamic inputs and no -shape
  BOOST_TEST(r.code == 1);
  BOOST_TEST(has(r.err, "-shape"), r.out);

  r = run("bench -m " + m + " -nstreams 0 -shape a[1,8],b[1,8] -niter 1");
  BOOST_TEST(r.code == 1);
  BOOST_TEST(has(r.err, "NUM_STREAMS"), r.out);
}

BOOST_AUTO_TEST_CASE(flag_errors_exit_2_with_usage_on_stderr) {
  auto m = two_output_model();
  struct flag_case {
    std::string args;
    std::vector<std::string> expect; ///< in stderr, besides "usage:"
  };
  const std::vector<flag_case> cases = {
      {"frobnicate", {"unknown command 'frobnicate'"}},
      {"bench -m " + m + " -frob 3", {"unknown flag '-frob'"}},
      {"bench -m " + m + " --frob", {"unknown flag '-frob'"}},
      {"bench -m", {"-m needs a value", "a model file"}},
      {"bench -m " + m + " -niter", {"-niter needs a value", "an integer"}},
      {"bench -m " + m + " -d -niter 3", {"-d needs a value"}},
      {"bench -m " + m + " -hint fast", {"-hint takes throughput", "got 'fast'"}},
      {"bench -m " + m + " -niter ten", {"-niter takes an integer", "got 'ten'"}},
      {"bench -m " + m + " -niter -3", {"-niter takes an integer", "got '-3'"}},
      {"bench -m " + m + " -api later", {"-api takes sync or async"}},
      {"bench -m " + m + " -report_type all", {"-report_type takes"}},
      {"bench -m " + m + " -pcsort up", {"-pcsort takes sort"}},
      {"bench -m " + m + " -latency_percentile 0", {"-latency_percentile takes an integer from 1 to 100"}},
      {"bench -m " + m + " -json_stats=maybe", {"-json_stats is a switch"}},
      {"bench -m " + m + " -json_stats out.json", {"unexpected argument 'out.json'"}},
      {"bench -m " + m + " -ip int3", {"-ip takes an element type", "got 'int3'"}},
      {"bench -m " + m + " -iop x", {"-iop takes name:type"}},
      {"bench -m " + m + " -shape x[1,2", {"-shape takes", "missing ']'"}},
      {"bench -m " + m + " -layout x[N1]", {"-layout takes one letter per dimension"}},
      {"bench -m " + m + " -cache_dir", {"-cache_dir needs a value", "a folder"}},
      {"bench -m " + m + " -pin YES", {"-pin is not supported"}},
      {"bench -m " + m + " -d CPU -infer_precision GPU:f16", {"-infer_precision", "not the target device 'CPU'"}},
      {"bench -niter 3", {"-m is required"}},
      {"run -m " + m, {"-o is required"}},
      {"query -m " + m + " -d", {"-d needs a value"}},
      {"devices extra", {"unexpected argument 'extra'"}},
  };
  for (const auto& c : cases) {
    auto r = run(c.args);
    BOOST_TEST(r.code == 2, c.args << ": " << r.out);
    BOOST_TEST(has(r.err, "usage:"), c.args << ": " << r.err);
    for (const auto& e : c.expect) BOOST_TEST(has(r.err, e), c.args << ": '" << e << "' not in " << r.err);
  }
}
