/// PrePostProcessor: the steps become ops every device runs. A u8 NHWC BGR frame normalized in
/// the engine equals the float frame normalized on the host; each step on CPU and GPU equals
/// the REFERENCE device; a step that does not fit names the input, the step and the mismatch.
#define BOOST_TEST_MODULE preprocess_tests
#include <boost/test/unit_test.hpp>

#include <troupe/troupe.hpp>

#include <cmath>
#include <filesystem>
#include <random>

#include <unistd.h>

#include "benchmarks/tiny_onnx.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/gpu_env.hpp"
#include "tests/support/ppocr_cases.hpp"
#include "tests/support/random_tensor.hpp"
#include "tests/support/tensor_compare.hpp"
#include "tests/support/test_data.hpp"

using namespace troupe;
using namespace troupe::preprocess;

namespace {

/// y = -x over x of `dims` (f32, NCHW): a real op on every device, nothing lost.
std::string neg_model(const std::vector<int64_t>& dims, const std::string& tag) {
  tiny_onnx::model_builder b;
  b.input("x", dims).output("y", dims).node("Neg", {"x"}, {"y"}, "neg");
  return b.write(
      (std::filesystem::temp_directory_path() / ("troupe_pp_" + tag + "_" + std::to_string(::getpid()) + ".onnx")).string());
}

Tensor random_u8(const Shape& s, unsigned seed) {
  Tensor t(element_type::u8, s);
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < t.get_size(); ++i) t.data<uint8_t>()[i] = static_cast<uint8_t>(rng() & 0xff);
  return t;
}

Tensor run(Core& core, const Model& m, const std::string& device, const Tensor& in) {
  auto cm = core.compile_model(m, device);
  auto rq = cm.create_infer_request();
  rq.set_input_tensor(in);
  rq.infer();
  return rq.get_output_tensor();
}

std::vector<std::string> devices_under_test(Core& core) {
  std::vector<std::string> d{"REFERENCE", "CPU"};
  for (const auto& g : tests::gpus_of(core)) d.push_back(g);
  if (tests::gpu_required() && tests::gpus_of(core).empty()) BOOST_ERROR("a GPU is required and none is here");
  return d;
}

const std::vector<float> mean3{123.675f, 116.28f, 103.53f}, scale3{58.395f, 57.12f, 57.375f};

/// The chain: u8 NHWC BGR in, f32 NCHW RGB normalized for the model.
Model normalized_u8_model(Core& core, const std::string& path) {
  Model m = core.read_model(path);
  PrePostProcessor ppp(m);
  ppp.input("x").tensor().set_element_type(element_type::u8).set_layout("NHWC").set_color_format(ColorFormat::BGR);
  ppp.input("x").preprocess().convert_element_type(element_type::f32).convert_color(ColorFormat::RGB).mean(mean3).scale(scale3);
  ppp.input("x").model().set_layout("NCHW");
  return ppp.build();
}

/// The same normalization on the host: NHWC BGR u8 -> NCHW RGB f32.
Tensor host_normalized(const Tensor& img) {
  const auto& s = img.get_shape(); // N H W C
  Tensor t(element_type::f32, {s[0], s[3], s[1], s[2]});
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t y = 0; y < s[1]; ++y)
      for (int64_t x = 0; x < s[2]; ++x)
        for (int64_t c = 0; c < 3; ++c) {
          float v = img.data<uint8_t>()[((n * s[1] + y) * s[2] + x) * 3 + (2 - c)];
          t.data<float>()[((n * 3 + c) * s[1] + y) * s[2] + x] = (v - mean3[c]) / scale3[c];
        }
  return t;
}

} // namespace

BOOST_AUTO_TEST_SUITE(preprocess)

BOOST_AUTO_TEST_CASE(the_built_model_takes_the_tensor_the_application_has) {
  Core core;
  Model m = normalized_u8_model(core, neg_model({1, 3, 5, 7}, "ports"));
  BOOST_TEST(m.inputs().size() == 1u);
  BOOST_TEST(m.input().get_any_name() == "x");
  BOOST_TEST((m.input().get_element_type() == element_type::u8));
  BOOST_TEST(m.input().get_partial_shape().to_string() == "[1,5,7,3]");
  BOOST_TEST(m.output().get_any_name() == "y");
  BOOST_TEST(m.output().get_partial_shape().to_string() == "[1,3,5,7]");
}

BOOST_AUTO_TEST_CASE(u8_nhwc_bgr_normalized_in_the_engine_equals_the_host_on_every_device, *boost::unit_test::precondition(tests::gpu_present())) {
  Core core;
  const std::string path = neg_model({2, 3, 5, 7}, "u8");
  Model m = normalized_u8_model(core, path);
  Model plain = core.read_model(path);
  Tensor img = random_u8({2, 5, 7, 3}, 1);
  for (const auto& d : devices_under_test(core)) {
    Tensor want = run(core, plain, d, host_normalized(img));
    Tensor got = run(core, m, d, img);
    auto r = tests::compare(got, want, 1e-5, 1e-5);
    BOOST_TEST(r.ok, d << ": " << r.message);
  }
}

/// Each step alone (with what it needs), on each device against REFERENCE.
BOOST_AUTO_TEST_CASE(each_step_on_each_device_equals_the_reference_device, *boost::unit_test::precondition(tests::gpu_present())) {
  Core core;
  const std::string path = neg_model({1, 3, 6, 10}, "steps");
  struct step_case {
    std::string name;
    std::function<void(PrePostProcessor&)> set;
    Tensor input;
  };
  std::vector<step_case> cases{
      {"convert_element_type u8",
       [](PrePostProcessor& p) {
         p.input().tensor().set_element_type(element_type::u8);
         p.input().preprocess().convert_element_type(element_type::f32);
       },
       random_u8({1, 3, 6, 10}, 2)},
      {"implicit conversion of i32",
       [](PrePostProcessor& p) { p.input().tensor().set_element_type(element_type::i32); },
       [] {
         Tensor t(element_type::i32, {1, 3, 6, 10});
         for (int64_t i = 0; i < t.get_size(); ++i) t.data<int32_t>()[i] = static_cast<int32_t>(i * 7919 % 2001) - 1000;
         return t;
       }()},
      {"reverse_channels",
       [](PrePostProcessor& p) {
         p.input().model().set_layout("NCHW");
         p.input().preprocess().reverse_channels();
       },
       tests::random_tensor({1, 3, 6, 10}, 3)},
      {"mean of one value, scale per channel",
       [](PrePostProcessor& p) {
         p.input().model().set_layout("NCHW");
         p.input().preprocess().mean(0.25f).scale({0.5f, 2.0f, -4.0f});
       },
       tests::random_tensor({1, 3, 6, 10}, 4)},
      {"NHWC to NCHW",
       [](PrePostProcessor& p) {
         p.input().tensor().set_layout("NHWC");
         p.input().model().set_layout("NCHW");
       },
       tests::random_tensor({1, 6, 10, 3}, 5)},
      {"convert_layout by order",
       [](PrePostProcessor& p) {
         p.input().tensor().set_shape({1, 10, 3, 6});
         p.input().preprocess().convert_layout(std::vector<uint64_t>{0, 2, 3, 1});
       },
       tests::random_tensor({1, 10, 3, 6}, 6)},
      {"resize linear from 9x13",
       [](PrePostProcessor& p) {
         p.input().tensor().set_spatial_static_shape(9, 13);
         p.input().model().set_layout("NCHW");
         p.input().preprocess().resize(ResizeAlgorithm::RESIZE_LINEAR);
       },
       tests::random_tensor({1, 3, 9, 13}, 7)},
      {"resize nearest from 4x5",
       [](PrePostProcessor& p) {
         p.input().tensor().set_spatial_static_shape(4, 5);
         p.input().model().set_layout("NCHW");
         p.input().preprocess().resize(ResizeAlgorithm::RESIZE_NEAREST);
       },
       tests::random_tensor({1, 3, 4, 5}, 8)},
  };
  for (const auto& c : cases) {
    Model m = core.read_model(path);
    PrePostProcessor ppp(m);
    c.set(ppp);
    m = ppp.build();
    Tensor want = run(core, m, "REFERENCE", c.input);
    for (const auto& d : devices_under_test(core)) {
      if (d == "REFERENCE") continue;
      auto r = tests::compare(run(core, m, d, c.input), want, 1e-5, 1e-5);
      BOOST_TEST(r.ok, c.name << " on " << d << ": " << r.message);
    }
  }
}

BOOST_AUTO_TEST_CASE(steps_compute_what_they_say_on_the_reference_device) {
  Core core;
  // NHWC BGR u8 -> RGB, mean, scale: checked element by element above on every device against
  // the host; here the resize's convention (OpenCV's INTER_LINEAR: half-pixel centres).
  Model m = core.read_model(neg_model({1, 1, 1, 2}, "resize_values"));
  PrePostProcessor ppp(m);
  ppp.input().tensor().set_spatial_static_shape(1, 4);
  ppp.input().model().set_layout("NCHW");
  ppp.input().preprocess().resize(ResizeAlgorithm::LINEAR);
  m = ppp.build();
  Tensor in(element_type::f32, {1, 1, 1, 4});
  for (int i = 0; i < 4; ++i) in.data<float>()[i] = static_cast<float>(i * 10);
  Tensor out = run(core, m, "REFERENCE", in);
  // Output pixel x samples input (x + 0.5) * 2 - 0.5: 0.5 and 2.5.
  BOOST_TEST(out.data<float>()[0] == -5.0f);
  BOOST_TEST(out.data<float>()[1] == -25.0f);
}

BOOST_AUTO_TEST_CASE(a_dynamic_spatial_tensor_is_resized_to_the_model) {
  Core core;
  Model m = core.read_model(neg_model({1, 3, 6, 10}, "dynamic"));
  PrePostProcessor ppp(m);
  ppp.input().tensor().set_element_type(element_type::u8).set_layout("NHWC").set_spatial_dynamic_shape();
  ppp.input().model().set_layout("NCHW");
  ppp.input().preprocess().convert_element_type(element_type::f32).resize(ResizeAlgorithm::LINEAR);
  m = ppp.build();
  BOOST_TEST(m.input().get_partial_shape().to_string() == "[1,?,?,3]");
  for (const auto& d : std::vector<std::string>{"REFERENCE", "CPU"}) {
    auto cm = core.compile_model(m, d);
    auto rq = cm.create_infer_request();
    for (auto hw : {std::pair<int64_t, int64_t>{12, 20}, {3, 4}}) {
      Tensor img = random_u8({1, hw.first, hw.second, 3}, 9);
      rq.set_input_tensor(img);
      rq.infer();
      BOOST_TEST(rq.get_output_tensor().get_shape() == (Shape{1, 3, 6, 10}), d);
    }
    // A uniform frame stays uniform through any resize.
    Tensor flat(element_type::u8, {1, 17, 29, 3});
    std::fill_n(flat.data<uint8_t>(), flat.get_size(), uint8_t{77});
    rq.set_input_tensor(flat);
    rq.infer();
    Tensor out = rq.get_output_tensor();
    for (int64_t i = 0; i < out.get_size(); ++i) BOOST_TEST(out.data<float>()[i] == -77.0f);
  }
}

BOOST_AUTO_TEST_CASE(outputs_are_converted_for_the_application) {
  Core core;
  Model m = core.read_model(neg_model({1, 3, 2, 4}, "post"));
  PrePostProcessor ppp(m);
  ppp.output().model().set_layout("NCHW");
  ppp.output().tensor().set_layout("NHWC").set_element_type(element_type::f16);
  m = ppp.build();
  BOOST_TEST(m.output().get_any_name() == "y");
  BOOST_TEST((m.output().get_element_type() == element_type::f16));
  BOOST_TEST(m.output().get_partial_shape().to_string() == "[1,2,4,3]");
  Tensor in = tests::random_tensor({1, 3, 2, 4}, 10);
  Tensor out = run(core, m, "CPU", in);
  BOOST_TEST(out.get_shape() == (Shape{1, 2, 4, 3}));
  auto got = tests::to_doubles(out);
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t i = 0; i < 8; ++i)
      BOOST_TEST(std::abs(got[static_cast<std::size_t>(i * 3 + c)] + in.data<float>()[c * 8 + i]) < 1e-3);
}

BOOST_AUTO_TEST_CASE(a_step_that_does_not_fit_is_named) {
  Core core;
  const std::string path = neg_model({1, 3, 6, 10}, "errors");
  auto expect = [&](const std::function<void(PrePostProcessor&)>& set, const std::vector<std::string>& pieces) {
    Model m = core.read_model(path);
    PrePostProcessor ppp(m);
    tests::expect_error([&] {
      set(ppp);
      ppp.build();
    }, pieces);
    BOOST_TEST((m.input().get_element_type() == element_type::f32)); // all or nothing
  };
  expect([](PrePostProcessor& p) {
    p.input().tensor().set_layout("NHWC");
    p.input().model().set_layout("NCHW");
    p.input().preprocess().mean({1, 2, 3, 4});
  }, {"input 'x'", "step mean", "4 values for 3 channels", "[N,C,H,W]"});
  expect([](PrePostProcessor& p) { p.input().model().set_layout("NCH"); },
         {"input 'x'", "model layout [N,C,H] has 3 dimensions", "[1,3,6,10]"});
  expect([](PrePostProcessor& p) {
    p.input().tensor().set_element_type(element_type::u8);
    p.input().preprocess().convert_element_type(element_type::i32).scale(255.0f);
  }, {"input 'x'", "step scale", "needs an f32 tensor", "i32", "convert_element_type(f32)"});
  expect([](PrePostProcessor& p) { p.input().preprocess().resize(ResizeAlgorithm::LINEAR); },
         {"input 'x'", "'H' and 'W'", "set_layout"});
  expect([](PrePostProcessor& p) {
    p.input().model().set_layout("NCHW");
    p.input().preprocess().convert_color(ColorFormat::RGB);
  }, {"input 'x'", "step convert_color", "set_color_format"});
  expect([](PrePostProcessor& p) {
    p.input().model().set_layout("NCHW");
    p.input().tensor().set_spatial_static_shape(12, 20);
  }, {"input 'x'", "[1,3,12,20]", "the model wants [1,3,6,10]", "resize"});
  expect([](PrePostProcessor& p) { p.input().preprocess().convert_layout(std::vector<uint64_t>{0, 1, 1, 2}); },
         {"input 'x'", "step convert_layout", "not a permutation"});
  expect([](PrePostProcessor& p) { p.input("image"); }, {"no input 'image'", "'x'"});
  expect([](PrePostProcessor& p) { p.input().preprocess().scale(0.0f); }, {"input 'x'", "step scale", "a scale of 0"});
  tests::expect_error([] { Layout("NCHC"); }, {"layout 'NCHC'", "'C' is named twice"});
  tests::expect_error([] { Layout("N-HW"); }, {"layout 'N-HW'", "'-' is not a dimension name"});
}

/// PP-OCR's classifier fed a u8 BGR frame, normalized in the engine as PaddleOCR normalizes
/// ((x / 255 - 0.5) / 0.5), equals the float frame normalized on the host.
BOOST_AUTO_TEST_CASE(ppocr_cls_with_u8_frames_equals_host_normalization,
                     *tests::needs_model_of(tests::ppocr_cls) * boost::unit_test::precondition(tests::gpu_present())) {
  Core core;
  const auto path = tests::ppocr_model(tests::ppocr_cls.model).path.string();
  Tensor img = random_u8({1, 48, 192, 3}, 11);
  Tensor host(element_type::f32, {1, 3, 48, 192});
  for (int64_t y = 0; y < 48; ++y)
    for (int64_t x = 0; x < 192; ++x)
      for (int64_t c = 0; c < 3; ++c)
        host.data<float>()[(c * 48 + y) * 192 + x] = (img.data<uint8_t>()[(y * 192 + x) * 3 + c] - 127.5f) / 127.5f;
  for (const auto& d : devices_under_test(core)) {
    Model plain = core.read_model(path);
    plain.reshape(PartialShape{1, 3, 48, 192});
    Model m = core.read_model(path);
    m.reshape(PartialShape{1, 3, 48, 192});
    PrePostProcessor ppp(m);
    ppp.input().tensor().set_element_type(element_type::u8).set_layout("NHWC").set_color_format(ColorFormat::BGR);
    ppp.input().preprocess().convert_element_type(element_type::f32).mean(127.5f).scale(127.5f);
    ppp.input().model().set_layout("NCHW");
    m = ppp.build();
    auto r = tests::compare(run(core, m, d, img), run(core, plain, d, host), 1e-4, 1e-5);
    BOOST_TEST(r.ok, "cls on " << d << ": " << r.message);
  }
}

BOOST_AUTO_TEST_SUITE_END()
