/// OpenVINO's device strings and nested property maps (runtime/device_string): what parses,
/// and that every malformed string is an error naming the string and what is wrong.
#define BOOST_TEST_MODULE device_string_tests
#include <boost/test/unit_test.hpp>

#include <troupe/properties.hpp>

#include "runtime/device_string.hpp"
#include "tests/support/expect_error.hpp"

using namespace troupe;
using tests::expect_error;

BOOST_AUTO_TEST_CASE(plain_and_virtual_devices_parse) {
  auto p = parse_device_string("GPU.1");
  BOOST_TEST(p.virtual_device.empty());
  BOOST_TEST(p.device == "GPU.1");

  auto h = parse_device_string("HETERO:GPU.1, CPU");
  BOOST_TEST(h.virtual_device == "HETERO");
  BOOST_TEST_REQUIRE(h.devices.size() == 2u);
  BOOST_TEST(h.devices[0].name == "GPU.1");
  BOOST_TEST(h.devices[1].name == "CPU");
  BOOST_TEST(h.devices[0].requests == 0);

  auto m = parse_device_string("MULTI:GPU(4),CPU(2)");
  BOOST_TEST(m.virtual_device == "MULTI");
  BOOST_TEST(m.devices[0].requests == 4);
  BOOST_TEST(m.devices[1].requests == 2);

  auto a = parse_device_string("AUTO:-CPU");
  BOOST_TEST(a.virtual_device == "AUTO");
  BOOST_TEST(a.devices.empty());
  BOOST_TEST(a.excluded == std::vector<std::string>{"CPU"});

  auto bare = parse_device_string("HETERO"); // the list then comes from DEVICE_PRIORITIES
  BOOST_TEST(bare.virtual_device == "HETERO");
  BOOST_TEST(bare.devices.empty());
  BOOST_TEST(parse_priorities("HETERO", "GPU,CPU").size() == 2u);
}

BOOST_AUTO_TEST_CASE(malformed_device_strings_name_the_problem) {
  expect_error([] { parse_device_string("HETERO:"); }, {"'HETERO:'", "list", "empty"});
  expect_error([] { parse_device_string("HETERO: "); }, {"list", "empty"});
  expect_error([] { parse_device_string("HETERO:GPU,,CPU"); }, {"empty entry"});
  expect_error([] { parse_device_string("HETERO:CPU,CPU"); }, {"'CPU'", "listed twice"});
  expect_error([] { parse_device_string("HETERO:CPU,MULTI:GPU"); }, {"virtual device", "inside another"});
  expect_error([] { parse_device_string("HETERO:-CPU"); }, {"only AUTO takes exclusions"});
  expect_error([] { parse_device_string("MULTI:GPU(0)"); }, {"GPU(0)", "DEVICE(n)"});
  expect_error([] { parse_device_string("MULTI:GPU(x)"); }, {"GPU(x)", "DEVICE(n)"});
  expect_error([] { parse_device_string("MULTI:GPU(2"); }, {"GPU(2", "DEVICE(n)"});
  expect_error([] { parse_device_string("MULTI:GPU(2)x"); }, {"DEVICE(n)"});
  expect_error([] { parse_device_string("AUTO:-"); }, {"names no device"});
  expect_error([] { parse_device_string(""); }, {"device name is empty"});
  expect_error([] { parse_priorities("HETERO", ""); }, {"HETERO", "DEVICE_PRIORITIES is empty"});
  expect_error([] { parse_priorities("HETERO", "CPU,CPU"); }, {"HETERO", "DEVICE_PRIORITIES", "listed twice"});
}

BOOST_AUTO_TEST_CASE(device_properties_round_trip_and_errors) {
  const std::string text = "{GPU:{PERF_COUNT:YES,NUM_STREAMS:2},CPU:{INFERENCE_PRECISION_HINT:bf16}}";
  auto m = parse_device_properties("DEVICE_PROPERTIES", text);
  BOOST_TEST_REQUIRE(m.size() == 2u);
  BOOST_TEST(m["GPU"]["PERF_COUNT"].as_string() == "YES");
  BOOST_TEST(m["GPU"]["NUM_STREAMS"].as<int>() == 2);
  BOOST_TEST(m["CPU"]["INFERENCE_PRECISION_HINT"].as_string() == "bf16");
  BOOST_TEST(parse_device_properties("x", write_device_properties(m)) == m);
  BOOST_TEST(parse_device_properties("x", " { CPU : { } } ")["CPU"].empty());
  BOOST_TEST(parse_device_properties("x", "{}").empty());
  auto quoted = parse_device_properties("x", R"({GPU:{EXCLUDED_OPS:"Resize,Conv",N:1}})");
  BOOST_TEST(quoted["GPU"]["EXCLUDED_OPS"].as_string() == "Resize,Conv");
  BOOST_TEST(parse_device_properties("x", write_device_properties(quoted)) == quoted);
  BOOST_TEST(device_properties("CPU", {{"EXCLUDED_OPS", "A,B"}}).second.as_string() == R"({EXCLUDED_OPS:"A,B"})");
  expect_error([] { parse_device_properties("DEVICE_PROPERTIES", R"({GPU:{A:"x}})"); }, {"unterminated"});

  expect_error([] { parse_device_properties("DEVICE_PROPERTIES", "GPU:{}"); }, {"DEVICE_PROPERTIES", "expected '{'"});
  expect_error([] { parse_device_properties("DEVICE_PROPERTIES", "{GPU:{A:1}"); }, {"expected ','"});
  expect_error([] { parse_device_properties("DEVICE_PROPERTIES", "{GPU:{A:1},GPU:{}}"); }, {"'GPU' appears twice"});
  expect_error([] { parse_device_properties("DEVICE_PROPERTIES", "{GPU:{A:1,A:2}}"); }, {"'A' of 'GPU' appears twice"});
  expect_error([] { parse_device_properties("DEVICE_PROPERTIES", "{GPU:{A:}}"); }, {"expected a name or a value"});
  expect_error([] { parse_device_properties("DEVICE_PROPERTIES", "{}x"); }, {"unexpected text"});
}
