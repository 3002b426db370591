/// The PNG and JPEG reader of troupe_ocr (examples/ocr/image.cpp: libpng and libjpeg, whose
/// errors longjmp): any bytes give an image or a std::runtime_error naming the file, never a
/// crash, a leak, a hang or pixels the header's size does not justify. The input is written to
/// a file of its own in /dev/shm (read_image takes a path, as troupe_ocr does).
/// TROUPE_FUZZ_SEEDS=DIR writes seeds there instead: PNGs and a JPEG, made here.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <jpeglib.h>
#include <unistd.h>

#include "image.hpp"

namespace {

constexpr int max_side = 1024; // the reader checks it before allocating; a fuzzer's images stay small

const std::string& scratch() {
  static const std::string path = [] {
    const char* shm = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    return std::string(shm) + "/troupe_image_fuzz_" + std::to_string(getpid());
  }();
  return path;
}

void write_jpeg(const std::string& path, int w, int h) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return;
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  jpeg_stdio_dest(&c, f);
  c.image_width = static_cast<JDIMENSION>(w);
  c.image_height = static_cast<JDIMENSION>(h);
  c.input_components = 3;
  c.in_color_space = JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_start_compress(&c, TRUE);
  std::vector<JSAMPLE> row(static_cast<std::size_t>(w) * 3);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w * 3; ++x) row[static_cast<std::size_t>(x)] = static_cast<JSAMPLE>((x * 7 + y * 13) & 0xff);
    JSAMPROW r = row.data();
    jpeg_write_scanlines(&c, &r, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::fclose(f);
}

void write_seeds(const std::string& dir) {
  troupe::ocr::image a(2, 2, 200), b(7, 3, 30);
  b.at(3, 1)[0] = 255;
  troupe::ocr::write_png(dir + "/seed0.png", a);
  troupe::ocr::write_png(dir + "/seed1.png", b);
  write_jpeg(dir + "/seed2.jpg", 9, 5);
  write_jpeg(dir + "/seed3.jpg", 16, 16);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("TROUPE_FUZZ_SEEDS")) {
    write_seeds(dir);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const std::string& path = scratch();
  if (std::FILE* f = std::fopen(path.c_str(), "wb")) {
    if (size) std::fwrite(data, 1, size, f);
    std::fclose(f);
  } else {
    return 0;
  }
  try {
    const auto img = troupe::ocr::read_image(path, max_side);
    if (img.width <= 0 || img.height <= 0 || img.width > max_side || img.height > max_side ||
        img.bgr.size() != static_cast<std::size_t>(img.width) * static_cast<std::size_t>(img.height) * 3)
      __builtin_trap(); // an image that disagrees with itself or with the bound
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).rfind(path, 0) != 0) __builtin_trap(); // the error names the file
  }
  return 0;
}
