/// String tensors: the Tensor API's std::string elements, the reference kernels that read and
/// write them (Cast, CastLike, StringNormalizer, the ops that only move elements), models
/// with string inputs, outputs and initializers on REFERENCE and CPU, the GPU's refusal, and
/// the wire format (export/import, remote devices).
#define BOOST_TEST_MODULE string_tests
#include <boost/test/unit_test.hpp>

#include <troupe/float16.hpp>
#include <troupe/troupe.hpp>

#include <cmath>
#include <sstream>

#include "benchmarks/tiny_onnx.hpp"
#include "graph/wire.hpp"
#include "kernels/reference/kernels.hpp"
#include "tests/support/test_tensors.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/gpu_env.hpp"
#include "tests/support/worker_process.hpp"

using namespace troupe;
namespace ref = troupe::kernels::reference;
using troupe::tests::expect_error;

namespace {

Tensor strings(Shape s, const std::vector<std::string>& v) {
  Tensor t(element_type::string, std::move(s));
  BOOST_REQUIRE_EQUAL(static_cast<std::size_t>(t.get_size()), v.size());
  std::copy(v.begin(), v.end(), t.data<std::string>());
  return t;
}

std::vector<std::string> values(const Tensor& t) {
  BOOST_REQUIRE((t.get_element_type() == element_type::string));
  return {t.data<std::string>(), t.data<std::string>() + t.get_size()};
}

graph::Op make_op(std::string type) {
  graph::Op op;
  op.type = std::move(type);
  op.name = "n";
  return op;
}

/// Runs one op on the reference kernels; outputs of the given types and shapes.
std::vector<Tensor> run(const graph::Op& op, std::vector<Tensor> in, std::vector<std::pair<element_type, Shape>> outs) {
  std::vector<Tensor> out;
  for (auto& [t, s] : outs) out.emplace_back(t, s);
  ref::evaluate(op, in, out);
  return out;
}

template <class T> Tensor numbers(element_type et, Shape s, const std::vector<T>& v) {
  Tensor t(et, std::move(s));
  std::copy(v.begin(), v.end(), t.data<T>());
  return t;
}

graph::Op cast_to(element_type t) {
  auto op = make_op("Cast");
  op.attrs["to"] = static_cast<int64_t>(t);
  return op;
}

graph::Op normalizer(const std::string& action, bool case_sensitive, std::vector<std::string> stopwords,
                     const std::string& locale = "") {
  auto op = make_op("StringNormalizer");
  op.attrs["case_change_action"] = action;
  op.attrs["is_case_sensitive"] = int64_t{case_sensitive ? 1 : 0};
  if (!stopwords.empty()) op.attrs["stopwords"] = std::move(stopwords);
  if (!locale.empty()) op.attrs["locale"] = locale;
  return op;
}

Tensor normalize(const graph::Op& op, const Tensor& x) {
  std::vector<Tensor> out{Tensor(element_type::string, x.get_shape())};
  ref::evaluate(op, {x}, out);
  return out[0];
}

std::string temp_file(const std::string& name) { return tests::temp_file("strings", name); }

void add_attr(onnx::NodeProto* n, const std::string& name, const std::vector<std::string>& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const auto& s : v) a->add_strings(s);
}
void add_attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
void add_attr(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

/// x: string [2, 2] -> Transpose -> Reshape [4] -> Concat with the initializer ["mon", "Tue"]
/// -> words [6] -> StringNormalizer (drop "-INF" in any case, upper) -> y: string [?];
/// x -> Cast -> n: f32 [2, 2]; words -> Cast to string (a copy) -> echo: string [6].
std::string string_model(const std::string& locale = "") {
  tiny_onnx::model_builder b;
  b.input("x", {2, 2}, onnx::TensorProto::STRING)
      .output("y", {-1}, onnx::TensorProto::STRING)
      .output("n", {2, 2})
      .output("echo", {6}, onnx::TensorProto::STRING);
  auto* init = b.graph->add_initializer();
  init->set_name("days");
  init->set_data_type(onnx::TensorProto::STRING);
  init->add_dims(2);
  init->add_string_data("mon");
  init->add_string_data("Tue");
  auto* shape = b.graph->add_initializer();
  shape->set_name("flat");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(1);
  shape->add_int64_data(4);
  b.node("Transpose", {"x"}, {"xt"}, "transpose")
      .node("Reshape", {"xt", "flat"}, {"xf"}, "reshape")
      .node("Concat", {"xf", "days"}, {"words"}, "concat")
      .node("StringNormalizer", {"words"}, {"y"}, "normalize")
      .node("Cast", {"x"}, {"n"}, "to_float")
      .node("Cast", {"words"}, {"echo"}, "echo");
  add_attr(b.graph->mutable_node(1), "allowzero", int64_t{0});
  add_attr(b.graph->mutable_node(2), "axis", int64_t{0});
  auto* norm = b.graph->mutable_node(3);
  add_attr(norm, "case_change_action", std::string("UPPER"));
  add_attr(norm, "is_case_sensitive", int64_t{0});
  add_attr(norm, "stopwords", std::vector<std::string>{"-INF"});
  if (!locale.empty()) add_attr(norm, "locale", locale);
  add_attr(b.graph->mutable_node(4), "to", int64_t{onnx::TensorProto::FLOAT});
  add_attr(b.graph->mutable_node(5), "to", int64_t{onnx::TensorProto::STRING});
  return b.write(temp_file("model" + locale + ".onnx"));
}

/// x = [["1.5", "nan"], ["-inf", " 2e3 "]]: y, n and echo as string_model computes them.
void check_string_model(InferRequest& r) {
  r.set_tensor("x", strings({2, 2}, {"1.5", "nan", "-inf", " 2e3 "}));
  r.infer();
  const Tensor y = r.get_tensor("y");
  BOOST_TEST((y.get_shape() == Shape{5}));
  BOOST_TEST(values(y) == (std::vector<std::string>{"1.5", "NAN", " 2E3 ", "MON", "TUE"}), boost::test_tools::per_element());
  const Tensor n = r.get_tensor("n");
  BOOST_TEST(n.data<float>()[0] == 1.5f);
  BOOST_TEST(std::isnan(n.data<float>()[1]));
  BOOST_TEST(n.data<float>()[2] == -INFINITY);
  BOOST_TEST(n.data<float>()[3] == 2000.0f);
  BOOST_TEST(values(r.get_tensor("echo")) == (std::vector<std::string>{"1.5", "-inf", "nan", " 2e3 ", "mon", "Tue"}),
             boost::test_tools::per_element());
}

} // namespace

// ---- Tensor ----------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_string_tensor_holds_std_strings_shared_by_copies_and_deep_by_clone) {
  Tensor t(element_type::string, {2, 3});
  BOOST_TEST(t.get_size() == 6);
  BOOST_TEST(t.get_byte_size() == 0u); // no fixed byte layout
  for (int i = 0; i < 6; ++i) BOOST_TEST(t.data<std::string>()[i].empty());
  t.data<std::string>()[4] = std::string(1000, 'x'); // heap storage, freed with the tensor
  Tensor copy = t;
  BOOST_TEST(copy.shares_buffer(t));
  copy.data<std::string>()[0] = "shared";
  BOOST_TEST(t.data<std::string>()[0] == "shared");
  Tensor deep = t.clone();
  BOOST_TEST(!deep.shares_buffer(t));
  deep.data<std::string>()[0] = "mine";
  BOOST_TEST(t.data<std::string>()[0] == "shared");
  BOOST_TEST(deep.data<std::string>()[4] == std::string(1000, 'x'));
  Tensor flat = t.reshaped({6});
  BOOST_TEST(flat.shares_buffer(t));
  Tensor dst(element_type::string, {3, 2});
  t.copy_to(dst);
  BOOST_TEST(dst.data<std::string>()[0] == "shared");
  Tensor wrong(element_type::f32, {2, 3});
  expect_error([&] { t.copy_to(wrong); }, {"string", "f32"});
  Tensor none(element_type::string, {0, 4});
  BOOST_TEST(none.clone().get_size() == 0);
}

// ---- Cast ------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(numbers_cast_to_strings_as_numpy_prints_them) {
  const std::vector<float> f{0.5f, 100.0f, 1e-5f, 1.5e16f, -0.0f, NAN, INFINITY, -INFINITY, 0.1f, 3.14159274f,
                             0.039187793f, 1e-4f};
  auto y = run(cast_to(element_type::string), {numbers(element_type::f32, {12}, f)}, {{element_type::string, {12}}});
  BOOST_TEST(values(y[0]) ==
                 (std::vector<std::string>{"0.5", "100.0", "1e-05", "1.5e+16", "-0.0", "nan", "inf", "-inf", "0.1",
                                           "3.1415927", "0.039187793", "0.0001"}),
             boost::test_tools::per_element());
  y = run(cast_to(element_type::string), {numbers<double>(element_type::f64, {2}, {0.1, 1.0 / 3})},
          {{element_type::string, {2}}});
  BOOST_TEST(values(y[0]) == (std::vector<std::string>{"0.1", "0.3333333333333333"}), boost::test_tools::per_element());
  y = run(cast_to(element_type::string), {numbers<int32_t>(element_type::i32, {2}, {-7, 2147483647})},
          {{element_type::string, {2}}});
  BOOST_TEST(values(y[0]) == (std::vector<std::string>{"-7", "2147483647"}), boost::test_tools::per_element());
  y = run(cast_to(element_type::string), {numbers<uint8_t>(element_type::boolean, {2}, {1, 0})},
          {{element_type::string, {2}}});
  BOOST_TEST(values(y[0]) == (std::vector<std::string>{"True", "False"}), boost::test_tools::per_element());
  // 16-bit floats print their own shortest digits: half(0.1) is 0.0999755859375.
  Tensor h(element_type::f16, {2});
  h.data<uint16_t>()[0] = float_to_half_bits(0.1f);
  h.data<uint16_t>()[1] = float_to_half_bits(65504.0f);
  y = run(cast_to(element_type::string), {h}, {{element_type::string, {2}}});
  BOOST_TEST(values(y[0]) == (std::vector<std::string>{"0.1", "65500.0"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(strings_cast_to_numbers_as_onnx_specifies) {
  auto y = run(cast_to(element_type::f32),
               {strings({9}, {"3.14", " 1e-5 ", "1E8", "+INF", "-inf", "NaN", "infinity", "-0", "1e99"})},
               {{element_type::f32, {9}}});
  const float* f = y[0].data<float>();
  BOOST_TEST(f[0] == 3.14f);
  BOOST_TEST(f[1] == 1e-5f);
  BOOST_TEST(f[2] == 1e8f);
  BOOST_TEST(f[3] == INFINITY);
  BOOST_TEST(f[4] == -INFINITY);
  BOOST_TEST(std::isnan(f[5]));
  BOOST_TEST(f[6] == INFINITY);
  BOOST_TEST((f[7] == 0.0f && std::signbit(f[7])));
  BOOST_TEST(f[8] == INFINITY); // past float's range, as numpy
  y = run(cast_to(element_type::i64), {strings({3}, {"100.5", "-42", "+7"})}, {{element_type::i64, {3}}});
  BOOST_TEST(y[0].data<int64_t>()[0] == 100);
  BOOST_TEST(y[0].data<int64_t>()[1] == -42);
  BOOST_TEST(y[0].data<int64_t>()[2] == 7);
  y = run(cast_to(element_type::boolean), {strings({3}, {"True", "0", "2.5"})}, {{element_type::boolean, {3}}});
  BOOST_TEST((y[0].data<bool>()[0] && !y[0].data<bool>()[1] && y[0].data<bool>()[2]));
  auto like = make_op("CastLike");
  y = run(like, {strings({1}, {"-2.5"}), Tensor(element_type::f64, {1})}, {{element_type::f64, {1}}});
  BOOST_TEST(y[0].data<double>()[0] == -2.5);
  y = run(like, {numbers<float>(element_type::f32, {1}, {2.0f}), Tensor(element_type::string, {1})},
          {{element_type::string, {1}}});
  BOOST_TEST(values(y[0])[0] == "2.0");
}

BOOST_AUTO_TEST_CASE(text_that_is_no_number_is_an_error_naming_the_op_and_the_element) {
  expect_error([] { run(cast_to(element_type::f32), {strings({2}, {"1", "abc"})}, {{element_type::f32, {2}}}); },
               {"Cast node 'n'", "element 1", "'abc'", "not a number"});
  expect_error([] { run(cast_to(element_type::i8), {strings({1}, {"1000"})}, {{element_type::i8, {1}}}); },
               {"Cast node 'n'", "'1000'", "out of the range of i8"});
  expect_error([] { run(cast_to(element_type::f32), {strings({1}, {"1.5x"})}, {{element_type::f32, {1}}}); },
               {"Cast node 'n'", "'1.5x'"});
}

// ---- StringNormalizer ------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(string_normalizer_drops_stopwords_then_changes_case) {
  const Tensor x = strings({5}, {"Monday", "monday", "Tuesday", "x y", "MONDAY"});
  BOOST_TEST(values(normalize(normalizer("NONE", true, {"monday"}), x)) ==
                 (std::vector<std::string>{"Monday", "Tuesday", "x y", "MONDAY"}),
             boost::test_tools::per_element());
  BOOST_TEST(values(normalize(normalizer("LOWER", false, {"monday"}), x)) == (std::vector<std::string>{"tuesday", "x y"}),
             boost::test_tools::per_element());
  BOOST_TEST(values(normalize(normalizer("UPPER", false, {"MonDay"}), x)) == (std::vector<std::string>{"TUESDAY", "X Y"}),
             boost::test_tools::per_element());
  // [1, C] stays 2-D; nothing kept is one empty string, [1] or [1, 1].
  const Tensor row = strings({1, 2}, {"a", "A"});
  const Tensor none = normalize(normalizer("NONE", false, {"a"}), row);
  BOOST_TEST((none.get_shape() == Shape{1, 1}));
  BOOST_TEST(values(none)[0].empty());
  BOOST_TEST((normalize(normalizer("NONE", false, {"a"}), strings({1}, {"a"})).get_shape() == Shape{1}));
}

BOOST_AUTO_TEST_CASE(string_normalizer_changes_the_case_of_utf8_text_by_its_locale) {
  const Tensor x = strings({3}, {"Straße", "ÉCOLE", "istanbul"});
  BOOST_TEST(values(normalize(normalizer("LOWER", true, {}), x)) ==
                 (std::vector<std::string>{"straße", "école", "istanbul"}),
             boost::test_tools::per_element());
  BOOST_TEST(values(normalize(normalizer("UPPER", true, {}, "en_US"), x)) ==
                 (std::vector<std::string>{"STRAßE", "ÉCOLE", "ISTANBUL"}), // ß has no one-letter capital
             boost::test_tools::per_element());
  // Turkish uppers i to dotted İ and lowers I to dotless ı.
  BOOST_TEST(values(normalize(normalizer("UPPER", true, {}, "tr_TR.UTF-8"), x))[2] == "İSTANBUL");
  BOOST_TEST(values(normalize(normalizer("LOWER", true, {}, "tr"), strings({1}, {"IRMAK"})))[0] == "ırmak");
  // Case-insensitive stopwords match beyond ASCII.
  BOOST_TEST(values(normalize(normalizer("NONE", false, {"école"}), x)) == (std::vector<std::string>{"Straße", "istanbul"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(string_normalizer_errors_name_the_op) {
  const Tensor x = strings({1}, {"a"});
  expect_error([&] { normalize(normalizer("UPPER", true, {}, "xx_YY"), x); },
               {"StringNormalizer node 'n'", "unknown locale 'xx_YY'"});
  expect_error([&] { normalize(normalizer("TITLE", true, {}), x); }, {"StringNormalizer node 'n'", "TITLE"});
  expect_error([&] { normalize(normalizer("NONE", true, {}), strings({2, 2}, {"a", "b", "c", "d"})); },
               {"StringNormalizer node 'n'", "[C] or [1, C]", "[2,2]"});
  expect_error([&] { normalize(normalizer("LOWER", true, {}), strings({2}, {"ok", "\xff\xfe"})); },
               {"StringNormalizer node 'n'", "element 1", "UTF-8"});
}

// ---- Ops that move elements ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(ops_that_only_move_elements_move_strings) {
  const Tensor x = strings({2, 2}, {"a", "b", "c", "d"});
  BOOST_TEST(values(run(make_op("Transpose"), {x}, {{element_type::string, {2, 2}}})[0]) ==
                 (std::vector<std::string>{"a", "c", "b", "d"}),
             boost::test_tools::per_element());
  auto concat = make_op("Concat");
  concat.attrs["axis"] = int64_t{1};
  BOOST_TEST(values(run(concat, {x, strings({2, 1}, {"e", "f"})}, {{element_type::string, {2, 3}}})[0]) ==
                 (std::vector<std::string>{"a", "b", "e", "c", "d", "f"}),
             boost::test_tools::per_element());
  BOOST_TEST(values(run(make_op("Gather"), {x, numbers<int64_t>(element_type::i64, {3}, {1, 0, 1})},
                        {{element_type::string, {3, 2}}})[0]) ==
                 (std::vector<std::string>{"c", "d", "a", "b", "c", "d"}),
             boost::test_tools::per_element());
  // Pad's padding is the constant given, or the empty string.
  const Tensor pads = numbers<int64_t>(element_type::i64, {4}, {0, 1, 0, 0});
  BOOST_TEST(values(run(make_op("Pad"), {x, pads, strings({}, {"_"})}, {{element_type::string, {2, 3}}})[0]) ==
                 (std::vector<std::string>{"_", "a", "b", "_", "c", "d"}),
             boost::test_tools::per_element());
  BOOST_TEST(values(run(make_op("Pad"), {x, pads}, {{element_type::string, {2, 3}}})[0]) ==
                 (std::vector<std::string>{"", "a", "b", "", "c", "d"}),
             boost::test_tools::per_element());
  BOOST_TEST(values(run(make_op("Where"), {numbers<uint8_t>(element_type::boolean, {2}, {1, 0}), x, strings({2}, {"y", "z"})},
                        {{element_type::string, {2, 2}}})[0]) ==
                 (std::vector<std::string>{"a", "z", "c", "z"}),
             boost::test_tools::per_element());
  expect_error([&] { run(make_op("Add"), {x, x}, {{element_type::string, {2, 2}}}); },
               {"Add node 'n'", "takes no string tensors"});
}

// ---- Models ----------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_model_with_string_inputs_outputs_and_initializers_runs_on_reference_and_cpu) {
  Core core;
  const auto path = string_model();
  for (const std::string device : {"REFERENCE", "CPU"}) {
    BOOST_TEST_CONTEXT(device) {
      auto model = core.read_model(path);
      BOOST_TEST((model.input("x").get_element_type() == element_type::string));
      auto cm = core.compile_model(model, device);
      auto r = cm.create_infer_request();
      check_string_model(r);
      // An output tensor the caller set receives the strings.
      Tensor mine(element_type::string, {6});
      r.set_tensor("echo", mine);
      r.infer();
      BOOST_TEST(mine.data<std::string>()[5] == "Tue");
      // Wrong element types get the type-mismatch error, both ways.
      expect_error([&] { r.set_tensor("x", Tensor(element_type::f32, {2, 2})); },
                   {"'x'", "wrong element type: expected string, got f32"});
      auto add = core.compile_model(tests::add_relu_model("strings"), device).create_infer_request();
      expect_error([&] { add.set_tensor("a", Tensor(element_type::string, {1, 16})); },
                   {"'a'", "wrong element type: expected f32, got string"});
    }
  }
}

BOOST_AUTO_TEST_CASE(an_unknown_locale_fails_reading_the_model_naming_the_op) {
  Core core;
  expect_error([&] { core.read_model(string_model("klingon")); },
               {"StringNormalizer node 'normalize'", "unknown locale 'klingon'"});
}

BOOST_AUTO_TEST_CASE(string_ops_stay_off_the_gpu_and_hetero_runs_them_on_the_cpu,
                     *boost::unit_test::precondition(tests::gpu_present())) {
  Core core;
  auto model = core.read_model(string_model());
  const auto gpu = tests::gpus_of(core).front();
  const auto refused = core.query_model_unsupported(model, gpu);
  BOOST_REQUIRE(refused.count("normalize"));
  BOOST_TEST(refused.at("normalize").find("string tensor") != std::string::npos, refused.at("normalize"));
  BOOST_TEST(refused.at("transpose").find("'x' is a string tensor") != std::string::npos, refused.at("transpose"));
  auto cm = core.compile_model(model, "HETERO:" + gpu + ",CPU");
  auto r = cm.create_infer_request();
  check_string_model(r);
}

// ---- Wire format: export/import and remote devices -------------------------------------------

BOOST_AUTO_TEST_CASE(string_tensors_round_trip_the_wire_format) {
  const Tensor t = strings({2, 2}, {"", std::string("nul\0inside", 10), "ünïcode", std::string(300, 'z')});
  const Tensor back = graph::decode_tensor(graph::encode_tensor(t), "test blob");
  BOOST_TEST((back.get_shape() == Shape{2, 2}));
  BOOST_TEST(values(back) == values(t), boost::test_tools::per_element());
  std::string blob = graph::encode_tensor(t);
  expect_error([&] { graph::decode_tensor(blob.substr(0, blob.size() - 5), "cut blob"); }, {"cut blob", "tensor"});
  // A string length that runs past the tensor's byte count is refused, not read.
  std::string forged = graph::encode_tensor(strings({2}, {"ab", "cd"}));
  forged[forged.size() - 6] = 9; // the second length: 2 -> 9
  expect_error([&] { graph::decode_tensor(forged, "forged blob"); }, {"forged blob"});
}

BOOST_AUTO_TEST_CASE(a_model_with_string_constants_exports_and_imports) {
  Core core;
  auto cm = core.compile_model(core.read_model(string_model()), "CPU");
  std::stringstream blob;
  cm.export_model(blob);
  auto imported = core.import_model(blob, "CPU");
  auto r = imported.create_infer_request();
  check_string_model(r);
}

BOOST_AUTO_TEST_CASE(a_remote_cpu_runs_string_models) {
  tests::worker_process w;
  Core client;
  client.add_node(w.address);
  auto cm = client.compile_model(string_model(), "CPU@" + w.address);
  auto r = cm.create_infer_request();
  check_string_model(r);
}
