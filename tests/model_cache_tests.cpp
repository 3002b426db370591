/// Compiled models moved: CompiledModel::export_model / Core::import_model (bad streams are
/// errors saying what is wrong), and CACHE_DIR, which keeps no compiled model: reading one
/// back cost more than the graph passes it saved (docs/cache.md), so a compile with it is a
/// compile without it.
#define BOOST_TEST_MODULE model_cache_tests
#include <boost/test/unit_test.hpp>

#include <troupe/troupe.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#include "benchmarks/tiny_onnx.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/gpu_env.hpp"
#include "tests/support/random_tensor.hpp"
#include "tests/support/tensor_compare.hpp"

using namespace troupe;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& tag) {
  auto d = fs::temp_directory_path() / ("troupe_cache_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

/// conv -> relu -> global pool, with a BatchNormalization the graph passes fold into the conv:
/// the optimized graph differs from the model.
std::string conv_model(const fs::path& dir) {
  tiny_onnx::model_builder b;
  b.input("x", {1, 3, 8, 8}).output("y", {1, 4, 1, 1});
  std::vector<float> w(4 * 3 * 3 * 3);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 37) % 11) / 11.0f - 0.5f;
  b.float_initializer("w", {4, 3, 3, 3}, w);
  b.float_initializer("s", {4}, {1.0f, 2.0f, 0.5f, -1.0f}).float_initializer("bb", {4}, {0.1f, 0.2f, 0.3f, 0.4f});
  b.float_initializer("m", {4}, {0.0f, 0.1f, -0.1f, 0.2f}).float_initializer("v", {4}, {1.0f, 0.5f, 2.0f, 1.5f});
  b.node("Conv", {"x", "w"}, {"c"}, "conv").node("BatchNormalization", {"c", "s", "bb", "m", "v"}, {"n"}, "bn");
  b.node("Relu", {"n"}, {"r"}, "relu").node("GlobalAveragePool", {"r"}, {"y"}, "pool");
  return b.write((dir / "conv.onnx").string());
}

Tensor infer(CompiledModel& cm, const Tensor& x) {
  auto rq = cm.create_infer_request();
  rq.set_input_tensor(x);
  rq.infer();
  return rq.get_output_tensor();
}

std::vector<std::string> devices(Core& core) {
  std::vector<std::string> d{"CPU", "REFERENCE"};
  for (const auto& g : tests::gpus_of(core)) d.push_back(g);
  return d;
}

/// What `f` wrote to stderr (the library's warnings).
std::string stderr_of(const std::function<void()>& f) {
  std::fflush(stderr);
  const auto path = fs::temp_directory_path() / ("troupe_cache_stderr_" + std::to_string(::getpid()));
  const int saved = ::dup(2);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ::dup2(fd, 2);
  ::close(fd);
  try {
    f();
  } catch (...) {
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    throw;
  }
  std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  fs::remove(path);
  return ss.str();
}

std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> r;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".troupe") r.push_back(e.path());
  return r;
}

} // namespace

BOOST_AUTO_TEST_SUITE(model_cache)

BOOST_AUTO_TEST_CASE(export_then_import_runs_the_same_on_every_device, *boost::unit_test::precondition(tests::gpu_present())) {
  Core core;
  const auto dir = scratch("export");
  const auto path = conv_model(dir);
  const Tensor x = tests::random_tensor({1, 3, 8, 8}, 7);
  for (const auto& d : devices(core)) {
    auto cm = core.compile_model(path, d);
    std::stringstream blob;
    cm.export_model(blob);
    auto imported = core.import_model(blob, d);
    BOOST_TEST(imported.inputs().at(0).get_any_name() == "x");
    BOOST_TEST(imported.outputs().at(0).get_any_name() == "y");
    auto r = tests::compare(infer(imported, x), infer(cm, x), 0, 0);
    BOOST_TEST(r.ok, d << ": " << r.message);
  }
}

BOOST_AUTO_TEST_CASE(what_cannot_be_exported_or_imported_is_named) {
  Core core;
  const auto dir = scratch("refuse");
  const auto path = conv_model(dir);
  auto cm = core.compile_model(path, "CPU");
  std::stringstream good;
  cm.export_model(good);
  const std::string bytes = good.str();

  tests::expect_error([&] { std::stringstream s(bytes); core.import_model(s, "REFERENCE"); },
                      {"import_model", "exported from CPU, not REFERENCE"});
  tests::expect_error([&] { std::stringstream s(bytes); core.import_model(s, "HETERO:CPU"); },
                      {"import_model", "HETERO:CPU", "for one device"});
  tests::expect_error([&] { std::stringstream s("an onnx file, say"); core.import_model(s, "CPU"); },
                      {"import_model", "not a troupe compiled model"});
  tests::expect_error([&] { std::stringstream s(bytes.substr(0, bytes.size() / 2)); core.import_model(s, "CPU"); },
                      {"import_model", "truncated"});
  // An export of troupe before 2026-11-29 (format 1, with a cache key) is named as such.
  std::string old = bytes;
  old[std::string_view("troupe-compiled\n").size()] = 1;
  tests::expect_error([&] { std::stringstream s(old); core.import_model(s, "CPU"); },
                      {"import_model", "format version 1", "reads version 2"});
  std::string flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x40;
  tests::expect_error([&] { std::stringstream s(flipped); core.import_model(s, "CPU"); },
                      {"import_model", "checksum mismatch"});

  auto hetero = core.compile_model(path, "HETERO:CPU,REFERENCE");
  tests::expect_error([&] { std::stringstream s; hetero.export_model(s); },
                      {"export_model", "HETERO:CPU,REFERENCE", "only a model compiled for one device"});
  Model dynamic = core.read_model(path);
  dynamic.reshape(PartialShape{-1, 3, 8, 8});
  auto dyn = core.compile_model(dynamic, "CPU");
  tests::expect_error([&] { std::stringstream s; dyn.export_model(s); }, {"export_model", "dynamic shapes", "reshape"});
}

BOOST_AUTO_TEST_CASE(cache_dir_keeps_no_compiled_model_and_changes_no_result, *boost::unit_test::precondition(tests::gpu_present())) {
  const auto dir = scratch("dir");
  const auto path = conv_model(dir);
  const auto cache = dir / "cache";
  fs::create_directories(cache);
  // A compiled model an older troupe left there is neither read nor warned about.
  { std::ofstream(cache / "00112233445566778899aabbccddeeff.troupe") << "an entry of troupe before 2026-11-29"; }
  const Tensor x = tests::random_tensor({1, 3, 8, 8}, 8);
  for (const auto& d : [] {
         Core c;
         return devices(c);
       }()) {
    Core plain;
    auto cm = plain.compile_model(path, d);
    const Tensor want = infer(cm, x);
    for (int round = 0; round < 2; ++round) {
      Core core;
      core.set_property({{"CACHE_DIR", cache.string()}});
      CompiledModel with;
      const auto warnings = stderr_of([&] { with = core.compile_model(path, d); });
      BOOST_TEST(warnings.empty(), d << ": " << warnings);
      auto r = tests::compare(infer(with, x), want, 0, 0);
      BOOST_TEST(r.ok, d << " round " << round << ": " << r.message);
      // The CPU and REFERENCE have nothing a file could hold; a GPU's pipeline cache is its own
      // (gpu_tests: cache_dir_keeps_the_pipeline_cache_between_cores).
      if (d == "CPU" || d == "REFERENCE") BOOST_TEST(with.get_property("LOADED_FROM_CACHE").as<bool>() == false, d);
    }
  }
  BOOST_TEST(entries(cache).size() == 1u); // the old one only
  for (const auto& e : fs::directory_iterator(cache))
    BOOST_TEST(e.path().string().find(".tmp.") == std::string::npos, "a temporary file was left: " << e.path());
}

BOOST_AUTO_TEST_SUITE_END()
