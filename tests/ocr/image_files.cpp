#include "tests/ocr/image_files.hpp"

#include <cerrno>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include <png.h>
// jpeglib.h needs <cstdio> (FILE) before it.
#include <jpeglib.h>

namespace troupe::ocr::tests {
namespace {

// As in examples/ocr/image.cpp: everything with a destructor lives in the *_state structs the
// caller owns, so libpng's and libjpeg's longjmp skip no destructor.

using file_ptr = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

file_ptr create(const std::string& path) {
  errno = 0;
  file_ptr f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) throw std::runtime_error(path + ": cannot create: " + std::strerror(errno));
  return f;
}

struct png_state {
  png_structp png = nullptr;
  png_infop info = nullptr;
  char message[200] = {};
  std::vector<png_bytep> rows;
  std::vector<png_color> palette;
  ~png_state() { png_destroy_write_struct(&png, info ? &info : nullptr); }
};

void png_fail(png_structp png, png_const_charp msg) {
  auto* st = static_cast<png_state*>(png_get_error_ptr(png));
  std::snprintf(st->message, sizeof st->message, "%s", msg);
  png_longjmp(png, 1);
}
void png_quiet(png_structp, png_const_charp) {}

bool encode_png(png_state& st, std::FILE* f, int width, int height, int color_type, int bit_depth, bool interlaced) {
  if (setjmp(png_jmpbuf(st.png))) return false;
  png_init_io(st.png, f);
  png_set_IHDR(st.png, st.info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), bit_depth,
               color_type, interlaced ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  if (!st.palette.empty()) png_set_PLTE(st.png, st.info, st.palette.data(), static_cast<int>(st.palette.size()));
  png_write_info(st.png, st.info);
  png_write_image(st.png, st.rows.data());
  png_write_end(st.png, nullptr);
  return true;
}

struct jpeg_state {
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr err{};
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = {};
  bool created = false;
  ~jpeg_state() {
    if (created) jpeg_destroy_compress(&cinfo);
  }
};

void jpeg_fail(j_common_ptr c) {
  auto* st = static_cast<jpeg_state*>(c->client_data);
  (*c->err->format_message)(c, st->message);
  std::longjmp(st->jump, 1);
}
void jpeg_quiet(j_common_ptr) {}

/// libjpeg's errors end in jpeg_fail (a message and a longjmp), its warnings nowhere.
void quiet_errors(jpeg_state& st) {
  st.cinfo.err = jpeg_std_error(&st.err);
  st.err.error_exit = &jpeg_fail;
  st.err.output_message = &jpeg_quiet;
  st.cinfo.client_data = &st;
}

/// `cmyk_row` is null for `img`'s BGR pixels, else one row of 4-byte CMYK pixels used for every row.
bool encode_jpeg(jpeg_state& st, std::FILE* f, const image& img, int quality, bool gray, std::uint8_t* cmyk_row,
                 bool adobe) {
  if (setjmp(st.jump)) return false;
  jpeg_create_compress(&st.cinfo);
  st.created = true;
  jpeg_stdio_dest(&st.cinfo, f);
  st.cinfo.image_width = static_cast<JDIMENSION>(img.width);
  st.cinfo.image_height = static_cast<JDIMENSION>(img.height);
  st.cinfo.input_components = cmyk_row ? 4 : 3;
  st.cinfo.in_color_space = cmyk_row ? JCS_CMYK : JCS_EXT_BGR;
  jpeg_set_defaults(&st.cinfo);
  if (gray) jpeg_set_colorspace(&st.cinfo, JCS_GRAYSCALE);
  if (cmyk_row) st.cinfo.write_Adobe_marker = adobe ? TRUE : FALSE;
  jpeg_set_quality(&st.cinfo, quality, TRUE);
  jpeg_start_compress(&st.cinfo, TRUE);
  while (st.cinfo.next_scanline < st.cinfo.image_height) {
    JSAMPROW row = cmyk_row ? cmyk_row : const_cast<JSAMPROW>(img.at(0, static_cast<int>(st.cinfo.next_scanline)));
    jpeg_write_scanlines(&st.cinfo, &row, 1);
  }
  jpeg_finish_compress(&st.cinfo);
  return true;
}

} // namespace

void write_png_raw(const std::string& path, int width, int height, int color_type, int bit_depth,
                   const std::vector<std::vector<std::uint8_t>>& rows, const std::vector<std::uint8_t>& palette,
                   bool interlaced) {
  file_ptr f = create(path);
  png_state st;
  st.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &st, &png_fail, &png_quiet);
  if (!st.png) throw std::runtime_error(path + ": cannot start libpng");
  st.info = png_create_info_struct(st.png);
  if (!st.info) throw std::runtime_error(path + ": cannot start libpng");
  for (const auto& r : rows) st.rows.push_back(const_cast<png_bytep>(r.data()));
  for (std::size_t i = 0; i + 2 < palette.size(); i += 3) st.palette.push_back({palette[i], palette[i + 1], palette[i + 2]});
  if (!encode_png(st, f.get(), width, height, color_type, bit_depth, interlaced))
    throw std::runtime_error(path + ": cannot write PNG: " + st.message);
  if (std::fclose(f.release()) != 0) throw std::runtime_error(path + ": cannot write");
}

void write_jpeg(const std::string& path, const image& img, int quality, bool gray) {
  file_ptr f = create(path);
  jpeg_state st;
  quiet_errors(st);
  if (!encode_jpeg(st, f.get(), img, quality, gray, nullptr, false))
    throw std::runtime_error(path + ": cannot write JPEG: " + st.message);
  if (std::fclose(f.release()) != 0) throw std::runtime_error(path + ": cannot write");
}

void write_jpeg_cmyk(const std::string& path, int w, int h, const std::uint8_t (&cmyk)[4], bool adobe) {
  file_ptr f = create(path);
  jpeg_state st;
  quiet_errors(st);
  std::vector<std::uint8_t> row;
  for (int x = 0; x < w; ++x) row.insert(row.end(), cmyk, cmyk + 4);
  const image size_only(w, h); // encode_jpeg reads only its size here
  if (!encode_jpeg(st, f.get(), size_only, 95, false, row.data(), adobe))
    throw std::runtime_error(path + ": cannot write JPEG: " + st.message);
  if (std::fclose(f.release()) != 0) throw std::runtime_error(path + ": cannot write");
}

void truncate_file(const std::string& path, std::size_t bytes) { std::filesystem::resize_file(path, bytes); }

std::size_t file_size(const std::string& path) { return static_cast<std::size_t>(std::filesystem::file_size(path)); }

} // namespace troupe::ocr::tests
