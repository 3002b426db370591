// Processes that end right after their requests complete: none may die at exit. A device
// worker or callback thread can still hold the last references to a model (and with them a
// Vulkan instance, whose destruction unloads the driver) when the application returns from
// main; before the exit guard (runtime/engine.cpp) such a process crashed in 1 to 3 of a
// thousand short runs, so these tests run many short processes at once, on GPU and
// HETERO:GPU,CPU, and ask that every one exits 0. No test decides by a clock.
#define BOOST_TEST_MODULE exit_tests
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>

#include "tests/support/gpu_env.hpp"
#include "tests/support/run_command.hpp"

namespace fs = std::filesystem;

namespace {

std::string troupe_bin() { return (fs::read_symlink("/proc/self/exe").parent_path() / "troupe").string(); }

/// ONNX conformance models (Debian's libonnx-testdata) the GPU runs; among them the cases
/// that crashed at exit when the exit race was found.
const std::vector<std::string>& models() {
  static const std::vector<std::string> m = [] {
    const std::string root = "/usr/share/libonnx-testdata/data/";
    std::vector<std::string> r;
    for (const char* c : {"node/test_sqrt", "node/test_triu_square_neg", "node/test_layer_normalization_2d_axis1",
                          "pytorch-converted/test_Conv2d_depthwise_padded", "node/test_softmax_axis_1",
                          "node/test_matmul_2d", "node/test_relu", "node/test_add_bcast"})
      r.push_back(root + c + "/model.onnx");
    return r;
  }();
  return m;
}

/// Runs every command line in `lines` through the shell, `parallel` at a time; the exit status
/// of each as the shell reports it (128 + N: killed by signal N).
std::map<std::string, std::vector<int>> run_all(const std::vector<std::string>& lines, int parallel) {
  const auto dir = fs::temp_directory_path() / ("troupe_exit_tests_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto list = dir / "commands.txt";
  {
    std::string text;
    for (const auto& l : lines) text += l + "\n";
    FILE* f = std::fopen(list.c_str(), "w");
    BOOST_REQUIRE(f);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  // Each line prints "<status> <line>"; xargs runs `parallel` of them at once.
  const std::string cmd = "xargs -d '\\n' -P " + std::to_string(parallel) +
                          " -I{} sh -c '{} >/dev/null 2>&1; echo \"$? {}\"' < " + list.string();
  auto r = troupe::tests::run_command(cmd);
  BOOST_REQUIRE(r);
  std::map<std::string, std::vector<int>> by_line;
  std::size_t at = 0;
  while (at < r->out.size()) {
    const auto end = r->out.find('\n', at);
    const std::string row = r->out.substr(at, end - at);
    at = end == std::string::npos ? r->out.size() : end + 1;
    const auto sp = row.find(' ');
    if (sp == std::string::npos) continue;
    by_line[row.substr(sp + 1)].push_back(std::stoi(row.substr(0, sp)));
  }
  fs::remove_all(dir);
  return by_line;
}

void expect_all_exit_0(const std::vector<std::string>& devices, int rounds) {
  const auto out = fs::temp_directory_path() / ("troupe_exit_tests_out_" + std::to_string(::getpid()));
  std::vector<std::string> lines;
  for (int r = 0; r < rounds; ++r)
    for (const auto& d : devices)
      for (std::size_t i = 0; i < models().size(); ++i) {
        BOOST_REQUIRE_MESSAGE(fs::exists(models()[i]), models()[i] + " missing: install libonnx-testdata");
        // run: one inference and out; bench -api async: completion callbacks, then out.
        lines.push_back(troupe_bin() + " run -d " + d + " -m " + models()[i] + " -o " + out.string() + "/" +
                        std::to_string(i) + "_" + d);
        lines.push_back(troupe_bin() + " bench -d " + d + " -m " + models()[i] + " -niter 4 -nireq 2 -api async");
      }
  const auto results = run_all(lines, 4);
  std::size_t runs = 0;
  for (const auto& [line, codes] : results) {
    runs += codes.size();
    for (int c : codes) BOOST_TEST(c == 0, "exit status " << c << " (128 + signal when over 128): " << line);
  }
  BOOST_TEST(runs == lines.size(), "every command reported its status");
  fs::remove_all(out);
}

} // namespace

BOOST_AUTO_TEST_SUITE(exit_with_work_just_done)

/// The exit guard waits for a completion callback still running when main returns (a system
/// tail): the probe's callback writes its marker after main has returned.
void expect_exit_waits_for_the_callback(const std::string& device) {
  const auto dir = fs::temp_directory_path() / ("troupe_exit_probe_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto marker = dir / "marker";
  const auto probe = (fs::read_symlink("/proc/self/exe").parent_path() / "exit_probe").string();
  auto r = troupe::tests::run_command(probe + " " + device + " " + models()[6] + " " + marker.string() + " 2>&1");
  BOOST_REQUIRE(r);
  BOOST_TEST(r->code == 0, "exit_probe on " << device << ": " << r->out);
  BOOST_TEST(fs::exists(marker), "on " << device << ", the process exited before its running callback finished");
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(exit_waits_for_a_running_callback_on_the_cpu) { expect_exit_waits_for_the_callback("CPU"); }

BOOST_AUTO_TEST_CASE(exit_waits_for_a_running_callback_on_the_gpu,
                     *boost::unit_test::precondition(troupe::tests::gpu_present{})) {
  expect_exit_waits_for_the_callback("GPU");
}

BOOST_AUTO_TEST_CASE(many_short_gpu_processes_exit_cleanly, *boost::unit_test::precondition(troupe::tests::gpu_present{})) {
  expect_all_exit_0({"GPU"}, 3);
}

BOOST_AUTO_TEST_CASE(many_short_hetero_processes_exit_cleanly,
                     *boost::unit_test::precondition(troupe::tests::gpu_present{})) {
  expect_all_exit_0({"HETERO:GPU,CPU"}, 3);
}

BOOST_AUTO_TEST_SUITE_END()
