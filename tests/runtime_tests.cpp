// The public API: Core, Model, CompiledModel, InferRequest -- behaviour and every bad-input error.
#define BOOST_TEST_MODULE runtime_tests
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include <troupe/troupe.hpp>

#include "actors/device_pool.hpp"
#include "benchmarks/tiny_onnx.hpp"
#include "runtime/compiled_model_impl.hpp"
#include "runtime/engine.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/test_data.hpp"

using namespace troupe;
using tests::expect_error;
namespace fs = std::filesystem;

namespace {

std::string temp_path(const std::string& name) {
  auto dir = fs::temp_directory_path() / ("troupe_runtime_tests_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

std::string add_model() { return tiny_onnx::write_add_model(temp_path("add.onnx")); }

/// y = Relu(x * w + b) with a dynamic batch: exercises lazy per-shape compilation.
std::string dynamic_model() {
  tiny_onnx::model_builder b;
  b.input("x", {-1, 4}).output("y", {-1, 4});
  b.float_initializer("w", {4}, {1, -2, 3, -4}).float_initializer("b", {4}, {0.5f, 0.5f, 0.5f, 0.5f});
  b.node("Mul", {"x", "w"}, {"xw"}, "mul").node("Add", {"xw", "b"}, {"s"}, "add").node("Relu", {"s"}, {"y"}, "relu");
  return b.write(temp_path("dynamic.onnx"));
}

Tensor filled(Shape s, float v) {
  Tensor t(element_type::f32, std::move(s));
  for (int64_t i = 0; i < t.get_size(); ++i) t.data<float>()[i] = v + static_cast<float>(i);
  return t;
}

} // namespace

BOOST_AUTO_TEST_CASE(devices_and_properties) {
  Core core;
  auto devs = core.available_devices();
  BOOST_TEST(devs.size() >= 1u);
  BOOST_TEST(devs[0] == "CPU");
  BOOST_TEST(std::count(devs.begin(), devs.end(), "REFERENCE") == 0);
  BOOST_TEST(!core.get_property("CPU", "FULL_DEVICE_NAME").as_string().empty());
  auto props = core.get_property("CPU", "SUPPORTED_PROPERTIES").as<std::vector<std::string>>();
  BOOST_TEST(std::count(props.begin(), props.end(), "NUM_STREAMS") == 1);
  BOOST_TEST(core.get_property("CPU", "AVAILABLE_DEVICES").as_string() == "CPU");
  core.set_property("CPU", {{"PERFORMANCE_HINT", "THROUGHPUT"}});
  BOOST_TEST(core.get_property("CPU", "PERFORMANCE_HINT").as_string() == "THROUGHPUT");
  expect_error([&] { core.get_property("CPU", "NO_SUCH"); }, {"NO_SUCH", "CPU"});
  expect_error([&] { core.get_property("NPU", "FULL_DEVICE_NAME"); }, {"NPU", "CPU"});
  expect_error([&] { core.set_property("CPU", {{"FULL_DEVICE_NAME", "x"}}); }, {"FULL_DEVICE_NAME", "read-only"});
}

BOOST_AUTO_TEST_CASE(compile_errors_name_the_thing) {
  Core core;
  auto path = add_model();
  auto model = core.read_model(path);
  expect_error([&] { core.compile_model(model, "NPU"); }, {"unknown device 'NPU'", "CPU"});
  expect_error([&] { core.compile_model(model, "BATCH:CPU"); }, {"BATCH", "not supported yet"});
  expect_error([&] { core.compile_model(model, "CPU", {{"FOO", "1"}}); }, {"FOO", "CPU"});
  expect_error([&] { core.compile_model(model, "CPU", {{"NUM_STREAMS", "0"}}); }, {"NUM_STREAMS", "'0'", "AUTO"});
  expect_error([&] { core.compile_model(model, "CPU", {{"INFERENCE_NUM_THREADS", "-1"}}); },
               {"INFERENCE_NUM_THREADS", "'-1'"});
  expect_error([&] { core.compile_model(model, "CPU", {{"PERFORMANCE_HINT", "FAST"}}); },
               {"PERFORMANCE_HINT", "'FAST'", "LATENCY, THROUGHPUT"});
  expect_error([&] { core.compile_model(model, "CPU", {{"PERF_COUNT", "maybe"}}); }, {"PERF_COUNT", "'maybe'", "YES"});
  expect_error([&] { core.compile_model(model, "CPU", {{"INFERENCE_PRECISION_HINT", "i8"}}); },
               {"INFERENCE_PRECISION_HINT", "'i8'", "f32"});
  expect_error([&] { core.compile_model(model, "REFERENCE", {{"INFERENCE_PRECISION_HINT", "bf16"}}); },
               {"INFERENCE_PRECISION_HINT", "bf16", "REFERENCE"});
  expect_error([&] { core.read_model(temp_path("missing.onnx")); }, {"missing.onnx"});
}

BOOST_AUTO_TEST_CASE(read_model_from_memory_equals_the_file) {
  Core core;
  const auto path = dynamic_model();
  std::ifstream file(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  auto model = core.read_model_from_memory(bytes.data(), bytes.size(), "dyn.onnx");
  BOOST_TEST(model.get_friendly_name() == "dyn.onnx");
  BOOST_TEST(model.input().get_any_name() == "x");
  BOOST_TEST(model.get_ops().size() == 3u);
  auto req = core.compile_model(model, "CPU").create_infer_request();
  req.set_input_tensor(filled({2, 4}, 1.0f));
  req.infer();
  // y = Relu(x * [1,-2,3,-4] + 0.5), x = 1..8
  const std::vector<float> want{1.5f, 0.0f, 9.5f, 0.0f, 5.5f, 0.0f, 21.5f, 0.0f};
  auto y = req.get_output_tensor();
  BOOST_TEST(std::vector<float>(y.data<float>(), y.data<float>() + 8) == want, boost::test_tools::per_element());
  expect_error([&] { core.read_model_from_memory(bytes.data(), bytes.size() / 2, "half.onnx"); }, {"half.onnx"});
}

BOOST_AUTO_TEST_CASE(unsupported_op_names_op_node_and_device) {
  tiny_onnx::model_builder b;
  b.input("x", {1, 4}).output("y", {1, 4}).node("NoSuchOp", {"x"}, {"y"}, "weird");
  auto path = b.write(temp_path("weird.onnx"));
  Core core;
  try {
    auto model = core.read_model(path);
    expect_error([&] { core.compile_model(model, "CPU"); }, {"NoSuchOp", "weird"});
  } catch (const Exception& e) {
    // The reader or shape inference may already refuse the unknown op; it must name it.
    BOOST_TEST(std::string(e.what()).find("NoSuchOp") != std::string::npos, e.what());
  }
}

BOOST_AUTO_TEST_CASE(model_ports_and_reshape) {
  Core core;
  auto model = core.read_model(dynamic_model());
  BOOST_TEST(model.inputs().size() == 1u);
  BOOST_TEST(model.input().get_any_name() == "x");
  BOOST_TEST(!model.input().get_partial_shape().is_static());
  expect_error([&] { model.input("nope"); }, {"nope", "'x'"});
  expect_error([&] { model.reshape({{"nope", PartialShape{2, 4}}}); }, {"nope", "'x'"});
  // A shape the ops cannot take names the op; the model stays as it was (all or nothing).
  expect_error([&] { model.reshape({{"x", PartialShape{2, 5}}}); }, {"mul", "[2,5]"});
  BOOST_TEST(!model.input().get_partial_shape().is_static());
  // As ov::Model::reshape, the rank may change where the ops allow it.
  model.reshape({{"x", PartialShape{2, 3, 4}}});
  BOOST_TEST(model.output().get_partial_shape().to_string() == "[2,3,4]");
  model.reshape({{"x", PartialShape{3, 4}}});
  BOOST_TEST(model.input().get_partial_shape().is_static());
  BOOST_TEST(model.output().get_partial_shape().to_string() == "[3,4]");
  BOOST_TEST(model.get_ops().size() == 3u);
  BOOST_TEST(model.get_ops()[0].get_friendly_name() == "mul");
  BOOST_TEST(model.get_ops()[0].get_type_name() == "Mul");
  auto q = core.query_model(model, "CPU");
  BOOST_TEST(q.count("mul") == 1u);
  BOOST_TEST(q.at("relu") == "CPU");
}

BOOST_AUTO_TEST_CASE(sync_infer_on_every_device) {
  Core core;
  auto path = add_model();
  for (std::string dev : {"CPU", "REFERENCE"}) {
    BOOST_TEST_CONTEXT("device " << dev) {
      auto cm = core.compile_model(path, dev);
      BOOST_TEST(cm.get_property("EXECUTION_DEVICES").as_string() == dev);
      auto req = cm.create_infer_request();
      req.set_tensor("a", filled({1, 8}, 1));
      req.set_tensor("b", filled({1, 8}, 10));
      req.infer();
      auto y = req.get_tensor("y");
      BOOST_TEST((y.get_shape() == Shape({1, 8})));
      for (int i = 0; i < 8; ++i) BOOST_TEST(y.data<float>()[i] == 11.0f + 2.0f * static_cast<float>(i));
      BOOST_TEST(req.get_output_tensor(0).data<float>()[0] == 11.0f);
    }
  }
}

BOOST_AUTO_TEST_CASE(input_tensor_checks) {
  Core core;
  auto cm = core.compile_model(add_model(), "CPU");
  auto req = cm.create_infer_request();
  expect_error([&] { req.set_tensor("c", filled({1, 8}, 0)); }, {"'c'", "'a'", "'b'"});
  expect_error([&] { req.set_tensor("a", Tensor(element_type::i64, {1, 8})); }, {"'a'", "f32", "i64"});
  expect_error([&] { req.set_tensor("a", filled({8}, 0)); }, {"'a'", "[1,8]", "[8]"});
  expect_error([&] { req.set_tensor("a", filled({1, 7}, 0)); }, {"'a'", "[1,8]", "[1,7]"});
  expect_error([&] { req.set_input_tensor(5, filled({1, 8}, 0)); }, {"#5"});
  req.set_tensor("a", filled({1, 8}, 0));
  // An unset static input runs with the request's own zero-filled tensor (as OpenVINO's).
  req.infer();
  for (int i = 0; i < 8; ++i) BOOST_TEST(req.get_tensor("y").data<float>()[i] == static_cast<float>(i));
  // get_tensor of that input gives the same allocated tensor, which the user fills in place.
  auto b = req.get_tensor("b");
  BOOST_TEST((b.get_shape() == Shape({1, 8})));
  for (int i = 0; i < 8; ++i) b.data<float>()[i] = 100;
  req.infer();
  BOOST_TEST(req.get_tensor("y").data<float>()[3] == 103.0f);
}

BOOST_AUTO_TEST_CASE(dynamic_shapes_compile_per_shape) {
  Core core;
  auto cm = core.compile_model(dynamic_model(), "CPU");
  auto req = cm.create_infer_request();
  expect_error([&] { req.get_tensor("x"); }, {"'x'", "dynamic"});
  expect_error([&] { req.infer(); }, {"input 'x' is not set", "dynamic input"});
  expect_error([&] { req.set_tensor("x", filled({2, 5}, 0)); }, {"'x'", "[2,5]"});
  for (int64_t batch : {1, 3, 1, 2}) {
    req.set_tensor("x", filled({batch, 4}, 1));
    req.infer();
    auto y = req.get_tensor("y");
    BOOST_TEST((y.get_shape() == Shape({batch, 4})));
    // x = 1,2,3,4,...: y = relu(x*w + 0.5)
    const float w[4] = {1, -2, 3, -4};
    for (int64_t i = 0; i < batch * 4; ++i)
      BOOST_TEST(y.data<float>()[i] == std::max(0.0f, (1.0f + float(i)) * w[i % 4] + 0.5f));
  }
}

/// RUNTIME_COMPILES counts what a dynamic model compiled while serving, and
/// RUNTIME_CACHE_CAPACITY bounds what it keeps, on one device, HETERO and MULTI alike.
BOOST_AUTO_TEST_CASE(runtime_compiles_are_counted_and_the_cache_is_bounded) {
  Core core;
  const auto path = dynamic_model();
  const float w[4] = {1, -2, 3, -4};
  auto run = [&](InferRequest& req, int64_t batch) {
    req.set_tensor("x", filled({batch, 4}, 1));
    req.infer();
    auto y = req.get_tensor("y");
    BOOST_TEST((y.get_shape() == Shape({batch, 4})));
    for (int64_t i = 0; i < batch * 4; ++i)
      BOOST_TEST(y.data<float>()[i] == std::max(0.0f, (1.0f + float(i)) * w[i % 4] + 0.5f));
  };
  const std::vector<int64_t> batches{1, 3, 1, 2, 3};
  for (const std::string dev : {"CPU", "HETERO:CPU,REFERENCE", "MULTI:CPU,REFERENCE"}) {
    BOOST_TEST_CONTEXT(dev) {
      auto cm = core.compile_model(path, dev);
      BOOST_TEST(cm.get_property("RUNTIME_COMPILES").as<int>() == 0);
      BOOST_TEST(cm.get_property("RUNTIME_COMPILE_MS").as<double>() == 0.0);
      auto req = cm.create_infer_request();
      for (auto b : batches) run(req, b);
      BOOST_TEST(cm.get_property("RUNTIME_COMPILE_MS").as<double>() > 0.0); // their time, added up
      // Three distinct shapes. MULTI may run a shape on either device: each compiles its own.
      const int compiles = cm.get_property("RUNTIME_COMPILES").as<int>();
      if (dev.rfind("MULTI", 0) == 0) BOOST_TEST((compiles >= 3 && compiles <= 6), compiles);
      else BOOST_TEST(compiles == 3);
    }
  }
  // Keeping one program (HETERO: one split): every change of shape compiles again (1, 3, 1, 2,
  // 3: five times), and what an evicted one ran stays right.
  for (const std::string dev : {"CPU", "HETERO:CPU,REFERENCE"}) {
    BOOST_TEST_CONTEXT(dev << " keeping one") {
      auto one = core.compile_model(path, dev, {{"RUNTIME_CACHE_CAPACITY", 1}});
      BOOST_TEST(one.get_property("RUNTIME_CACHE_CAPACITY").as<int>() == 1);
      auto req = one.create_infer_request();
      for (auto b : batches) run(req, b);
      BOOST_TEST(one.get_property("RUNTIME_COMPILES").as<int>() == 5);
    }
  }
  BOOST_TEST(core.compile_model(path, "CPU").get_property("RUNTIME_CACHE_CAPACITY").as<int>() == 128);
  expect_error([&] { core.compile_model(path, "CPU", {{"RUNTIME_CACHE_CAPACITY", -1}}); },
               {"RUNTIME_CACHE_CAPACITY", "-1", ">= 0"});
}

BOOST_AUTO_TEST_CASE(async_callback_wait_for_and_profiling) {
  Core core;
  auto cm = core.compile_model(add_model(), "CPU", {{"PERF_COUNT", "YES"}});
  auto req = cm.create_infer_request();
  req.set_tensor("a", filled({1, 8}, 0));
  req.set_tensor("b", filled({1, 8}, 0));
  std::atomic<int> calls{0};
  std::atomic<bool> had_error{false};
  req.set_callback([&](std::exception_ptr e) {
    had_error = e != nullptr;
    ++calls;
  });
  // The bound is no verdict: an hour outlasts CTest's TIMEOUT (wait_for's false, when the
  // request cannot finish in time, is checked in busy_request_and_cancel, on a held stream).
  for (int i = 0; i < 50; ++i) {
    req.start_async();
    BOOST_TEST(req.wait_for(std::chrono::hours(1)));
  }
  BOOST_TEST(calls.load() == 50);
  BOOST_TEST(!had_error.load());
  req.wait(); // nothing running: returns at once
  auto prof = req.get_profiling_info();
  BOOST_TEST(!prof.empty());
  auto plain = core.compile_model(add_model(), "CPU").create_infer_request();
  expect_error([&] { plain.get_profiling_info(); }, {"PERF_COUNT"});
}

BOOST_AUTO_TEST_CASE(concurrent_requests_from_several_threads) {
  Core core;
  auto cm = core.compile_model(add_model(), "CPU", {{"PERFORMANCE_HINT", "THROUGHPUT"}});
  BOOST_TEST(cm.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS").as<int>() >= 1);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      auto req = cm.create_infer_request();
      for (int i = 0; i < 200; ++i) {
        req.set_tensor("a", filled({1, 8}, float(t)));
        req.set_tensor("b", filled({1, 8}, float(i)));
        req.infer();
        auto y = req.get_tensor("y");
        for (int k = 0; k < 8; ++k)
          if (y.data<float>()[k] != float(t) + float(i) + 2.0f * float(k)) ++wrong;
      }
    });
  for (auto& th : threads) th.join();
  BOOST_TEST(wrong.load() == 0);
}

namespace {

/// Wraps a compiled model's runner and holds the runs it is given until the test lets them
/// go: a request is then certainly still running, with no clock deciding.
struct holding_runner : actors::runner {
  explicit holding_runner(std::unique_ptr<actors::runner> r) : inner(std::move(r)) {}
  std::unique_ptr<actors::runner> inner;
  std::mutex m;
  std::deque<actors::inference> held;
  void submit(actors::inference job) override {
    std::lock_guard l(m);
    held.push_back(std::move(job));
  }
  /// Lets the held runs go, oldest first.
  void release() {
    std::deque<actors::inference> jobs;
    {
      std::lock_guard l(m);
      jobs.swap(held);
    }
    for (auto& j : jobs) inner->submit(std::move(j));
  }
};

holding_runner& hold_runs(CompiledModel& cm) {
  auto h = std::make_unique<holding_runner>(std::move(cm.impl()->runner));
  auto& ref = *h;
  cm.impl()->runner = std::move(h);
  return ref;
}

} // namespace

BOOST_AUTO_TEST_CASE(busy_request_and_cancel) {
  // The model's runs are held: a request started is certainly still running when it is
  // cancelled, and its run happens later, with the request no longer waiting for it.
  Core core;
  auto cm = core.compile_model(add_model(), "CPU", {{"NUM_STREAMS", "1"}});
  auto& runs = hold_runs(cm);
  auto req = cm.create_infer_request();
  req.set_tensor("a", filled({1, 8}, 1));
  req.set_tensor("b", filled({1, 8}, 1));
  std::atomic<int> calls{0}, errors{0};
  req.set_callback([&](std::exception_ptr e) {
    if (e) ++errors;
    ++calls;
  });
  req.start_async();
  expect_error([&] { req.start_async(); }, {"busy"});
  BOOST_TEST(!req.wait_for(std::chrono::milliseconds(1))); // it cannot finish: its run is held
  req.cancel();
  expect_error([&] { req.wait(); }, {"cancelled"});
  BOOST_TEST(calls.load() == 1);
  BOOST_TEST(errors.load() == 1);

  // The next run goes after the cancelled one on the one stream. The cancelled run's result
  // reaches the request while the next run is in flight, and must not complete it.
  req.set_tensor("a", filled({1, 8}, 100));
  req.start_async();
  runs.release();
  req.wait();
  BOOST_TEST(calls.load() == 2);
  BOOST_TEST(errors.load() == 1);
  const auto y = req.get_tensor("y");
  for (int i = 0; i < 8; ++i) BOOST_TEST(y.data<float>()[i] == 101.0f + 2.0f * float(i)); // not the cancelled 2 + 2i
  req.cancel(); // nothing running: no effect
  req.wait();
}

BOOST_AUTO_TEST_CASE(a_slow_callback_does_not_stall_the_device) {
  // One stream. A's callback does not return until B, started from inside it, has finished
  // on that stream: with callbacks on the stream's thread, B could never run (CTest's timeout
  // would report the hang; no clock decides here).
  Core core;
  auto cm = core.compile_model(add_model(), "CPU", {{"NUM_STREAMS", "1"}});
  auto a = cm.create_infer_request(), b = cm.create_infer_request();
  for (auto* r : {&a, &b}) {
    r->set_tensor("a", filled({1, 8}, 1));
    r->set_tensor("b", filled({1, 8}, 2));
  }
  std::thread::id callback_thread;
  bool b_done_inside = false;
  a.set_callback([&](std::exception_ptr) {
    callback_thread = std::this_thread::get_id();
    b.start_async();
    b.wait();
    b_done_inside = true;
  });
  a.start_async();
  a.wait(); // returns once the callback has
  BOOST_TEST(b_done_inside);
  BOOST_TEST((callback_thread != std::this_thread::get_id()));
  BOOST_TEST(b.get_tensor("y").data<float>()[0] == 3.0f);

  // A callback that waits for another request whose own callback is queued behind it on the
  // callback thread: wait() there returns with the result, not after that callback.
  std::atomic<int> b_calls{0};
  b.set_callback([&](std::exception_ptr) { ++b_calls; });
  a.start_async();
  a.wait();
  b.wait();
  BOOST_TEST(b_calls.load() == 1);
}

BOOST_AUTO_TEST_CASE(dropping_every_handle_while_a_callback_runs_tears_down_without_a_hang) {
  // The request, its model and the Core are dropped while the request's callback waits: the
  // last reference then goes on a thread of the Core's own actor system, whose teardown
  // waits for that thread's actor. The teardown must finish (a hang is CTest's timeout).
  const auto destroyed = engine::systems_destroyed();
  std::promise<void> dropped;
  auto go = dropped.get_future().share();
  {
    Core core;
    auto cm = core.compile_model(add_model(), "CPU");
    auto req = cm.create_infer_request();
    req.set_tensor("a", filled({1, 8}, 1));
    req.set_tensor("b", filled({1, 8}, 2));
    req.set_callback([go](std::exception_ptr) { go.wait(); });
    req.start_async();
  }
  dropped.set_value();
  while (engine::systems_destroyed() == destroyed) std::this_thread::yield();
}

BOOST_AUTO_TEST_CASE(a_core_made_on_a_thread_that_lives_on_is_destroyed_on_another) {
  // CAF's per-thread logger reference would make the teardown wait for the making thread.
  const auto destroyed = engine::systems_destroyed();
  std::unique_ptr<Core> core;
  CompiledModel cm;
  std::promise<void> made, torn_down;
  std::thread maker([&] {
    core = std::make_unique<Core>();
    cm = core->compile_model(add_model(), "MULTI:CPU,REFERENCE");
    cm.set_property({{"DEVICE_PRIORITIES", "REFERENCE,CPU"}});
    {
      auto req = cm.create_infer_request();
      req.set_tensor("a", filled({1, 8}, 1));
      req.set_tensor("b", filled({1, 8}, 2));
      req.set_callback([](std::exception_ptr) {});
      req.infer();
    }
    made.set_value();
    torn_down.get_future().wait(); // alive while the main thread tears the Core down
  });
  made.get_future().wait();
  cm = CompiledModel();
  core.reset();
  // The last reference may go on one of the system's threads (a callback's): then it is torn
  // down on another thread, soon. A hang is CTest's timeout.
  while (engine::systems_destroyed() == destroyed) std::this_thread::yield();
  torn_down.set_value();
  maker.join();
}

BOOST_AUTO_TEST_CASE(device_errors_complete_once_and_next_request_works) {
  // Gather with an index taken from the input: out of range is a run-time error of the device.
  tiny_onnx::model_builder b;
  b.input("i", {1}, onnx::TensorProto::INT64).output("y", {1});
  b.float_initializer("data", {4}, {10, 11, 12, 13});
  b.node("Gather", {"data", "i"}, {"y"}, "gather");
  auto path = b.write(temp_path("gather.onnx"));
  Core core;
  for (std::string dev : {"REFERENCE", "CPU"}) {
    BOOST_TEST_CONTEXT("device " << dev) {
      auto cm = core.compile_model(path, dev);
      auto req = cm.create_infer_request();
      std::atomic<int> calls{0}, errors{0};
      req.set_callback([&](std::exception_ptr e) {
        ++calls;
        if (e) ++errors;
      });
      Tensor idx(element_type::i64, {1});
      idx.data<int64_t>()[0] = 1000;
      req.set_tensor("i", idx);
      expect_error([&] { req.infer(); }, {"gather"});
      BOOST_TEST(calls.load() == 1);
      BOOST_TEST(errors.load() == 1);
      expect_error([&] { req.wait(); }, {"gather"}); // the error stays until the next run
      idx.data<int64_t>()[0] = 2;
      req.infer();
      BOOST_TEST(calls.load() == 2);
      BOOST_TEST(errors.load() == 1);
      BOOST_TEST(req.get_tensor("y").data<float>()[0] == 12.0f);
    }
  }
}

BOOST_AUTO_TEST_CASE(compiled_model_properties) {
  Core core;
  auto path = add_model();
  auto lat = core.compile_model(path, "CPU", {{"PERFORMANCE_HINT", "LATENCY"}});
  BOOST_TEST(lat.get_property("NUM_STREAMS").as<int>() == 1);
  BOOST_TEST(lat.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS").as<int>() == 1);
  auto tp = core.compile_model(path, "CPU", {{"PERFORMANCE_HINT", "THROUGHPUT"}});
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  BOOST_TEST(tp.get_property("NUM_STREAMS").as<int>() == cores);
  BOOST_TEST(tp.get_property("INFERENCE_NUM_THREADS").as<int>() == cores);
  auto three = core.compile_model(path, "CPU", {{"NUM_STREAMS", "3"}, {"INFERENCE_NUM_THREADS", "3"}});
  BOOST_TEST(three.get_property("NUM_STREAMS").as<int>() == 3);
  BOOST_TEST(three.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS").as<int>() == 3);
  BOOST_TEST(three.get_property("PERF_COUNT").as_string() == "NO");
  expect_error([&] { three.get_property("NOPE"); }, {"NOPE"});
  // Core-level defaults are merged under compile_model's own properties.
  core.set_property("CPU", {{"NUM_STREAMS", "2"}});
  BOOST_TEST(core.compile_model(path, "CPU").get_property("NUM_STREAMS").as<int>() == 2);
  BOOST_TEST(core.compile_model(path, "CPU", {{"NUM_STREAMS", "1"}}).get_property("NUM_STREAMS").as<int>() == 1);
}

BOOST_AUTO_TEST_CASE(any_parses_and_names_bad_values) {
  BOOST_TEST(Any("12").as<int>() == 12);
  BOOST_TEST(Any(true).as_string() == "YES");
  BOOST_TEST(Any("false").as<bool>() == false);
  BOOST_TEST((Any(element_type::bf16).as<element_type>() == element_type::bf16));
  BOOST_TEST(Any(std::vector<std::string>{"a", "b"}).as<std::vector<std::string>>().size() == 2u);
  expect_error([] { Any("12x").as<int>(); }, {"12x"});
  expect_error([] { Any("perhaps").as<bool>(); }, {"perhaps"});
}

BOOST_AUTO_TEST_CASE(real_ppocr_model_runs_without_reshape, *tests::needs_models({"ch_ppocr_mobile_v2.0_cls_infer"})) {
  const auto path = tests::ppocr_model("ch_ppocr_mobile_v2.0_cls_infer").path.string();
  Core core;
  auto cm = core.compile_model(path, "CPU");
  auto req = cm.create_infer_request();
  Tensor x(cm.input().get_element_type(), {1, 3, 48, 192});
  for (int64_t i = 0; i < x.get_size(); ++i) x.data<float>()[i] = static_cast<float>(i % 255) / 255.0f;
  req.set_input_tensor(x);
  req.infer();
  auto y = req.get_output_tensor();
  BOOST_TEST((y.get_shape() == Shape({1, 2})));
  float sum = y.data<float>()[0] + y.data<float>()[1]; // softmax output
  BOOST_TEST(std::abs(sum - 1.0f) < 1e-4f);
}

BOOST_AUTO_TEST_CASE(models_of_one_core_share_the_devices_workers) {
  // Two models, each with 2 CPU streams, in one Core: one pool of 2 workers runs both, so
  // their 40 requests start at most 2 worker threads (with a pool per model: 4).
  const auto workers_before = actors::device_pool::workers_started();
  Core core;
  auto path = add_model();
  std::vector<CompiledModel> models{core.compile_model(path, "CPU", {num_streams(2)}),
                                    core.compile_model(path, "CPU", {num_streams(2)})};
  std::vector<InferRequest> reqs;
  for (int r = 0; r < 40; ++r) {
    reqs.push_back(models[static_cast<std::size_t>(r % 2)].create_infer_request());
    Tensor a(element_type::f32, {1, 8}), b(element_type::f32, {1, 8});
    for (int i = 0; i < 8; ++i) a.data<float>()[i] = b.data<float>()[i] = float(r);
    reqs.back().set_tensor("a", a);
    reqs.back().set_tensor("b", b);
  }
  for (auto& r : reqs) r.start_async();
  for (std::size_t r = 0; r < reqs.size(); ++r) {
    reqs[r].wait();
    BOOST_TEST(reqs[r].get_tensor("y").data<float>()[0] == 2.0f * float(r));
  }
  BOOST_TEST(actors::device_pool::workers_started() - workers_before <= 2u);
  BOOST_TEST(actors::device_pool::workers_started() - workers_before >= 1u);
}

