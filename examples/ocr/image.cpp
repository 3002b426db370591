#include "image.hpp"

#include <cerrno>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

#include <png.h>
// jpeglib.h needs <cstdio> (FILE) before it.
#include <jpeglib.h>
#include <jerror.h>

namespace troupe::ocr {
namespace {

/// libpng and libjpeg report errors by longjmp. These readers keep every object with a
/// destructor outside the function that calls setjmp (in the *_state structs its caller
/// owns), so a longjmp never skips a destructor, and the handlers below only copy the message
/// and jump: nothing prints to stderr and nothing calls exit().

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw std::runtime_error(path + ": " + why);
}

void check_size(const std::string& path, unsigned long w, unsigned long h, int max_side) {
  const unsigned long limit = max_side < 0 ? 0 : static_cast<unsigned long>(max_side);
  if (w > limit || h > limit)
    fail(path, "image " + std::to_string(w) + "x" + std::to_string(h) + " is larger than the limit of " +
                   std::to_string(max_side) + " pixels per side");
}

using file_ptr = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

enum class format { png, jpeg };

/// The whole file, once its first bytes say PNG or JPEG (a large file of another kind is not
/// read).
std::vector<std::uint8_t> read_file(const std::string& path, format& kind) {
  errno = 0;
  file_ptr f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) fail(path, std::string("cannot open: ") + std::strerror(errno));
  std::vector<std::uint8_t> bytes;
  std::uint8_t chunk[1 << 16];
  for (bool first = true;; first = false) {
    const std::size_t n = std::fread(chunk, 1, sizeof chunk, f.get());
    // A directory opens but does not read (EISDIR).
    if (std::ferror(f.get())) fail(path, std::string("cannot read: ") + std::strerror(errno));
    bytes.insert(bytes.end(), chunk, chunk + n);
    if (first) {
      static constexpr std::uint8_t png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
      if (n >= 8 && std::memcmp(chunk, png_magic, 8) == 0) kind = format::png;
      else if (n >= 3 && chunk[0] == 0xff && chunk[1] == 0xd8 && chunk[2] == 0xff) kind = format::jpeg;
      else fail(path, n == 0 ? "not a PNG or JPEG image (the file is empty)" : "not a PNG or JPEG image");
    }
    if (n < sizeof chunk) break;
  }
  return bytes;
}

// ---- PNG --------------------------------------------------------------------------------

struct png_state {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0, pos = 0;
  bool ran_out = false; ///< the read callback hit the end of the file: "truncated"
  char message[200] = {};
  png_structp png = nullptr;
  png_infop info = nullptr;
  std::vector<std::uint8_t> pixels; ///< decoded rows, `channels` samples per pixel
  std::vector<png_bytep> rows;
  int channels = 0;
  png_uint_32 width = 0, height = 0;

  ~png_state() { png_destroy_read_struct(&png, info ? &info : nullptr, nullptr); }
};

void png_on_error(png_structp png, png_const_charp msg) {
  auto* st = static_cast<png_state*>(png_get_error_ptr(png));
  std::snprintf(st->message, sizeof st->message, "%s", msg);
  png_longjmp(png, 1);
}

/// Warnings (a bad ICC profile, a bad ancillary chunk CRC) do not stop the read.
void png_on_warning(png_structp, png_const_charp) {}

void png_read_bytes(png_structp png, png_bytep out, std::size_t n) {
  auto* st = static_cast<png_state*>(png_get_io_ptr(png));
  if (st->size - st->pos < n) {
    st->ran_out = true;
    char msg[64]; // no std::string here: png_error longjmps past this frame
    std::snprintf(msg, sizeof msg, "the file ends after %zu bytes", st->size);
    png_error(png, msg);
  }
  std::memcpy(out, st->data + st->pos, n);
  st->pos += n;
}

/// False when libpng failed (st.message says why); throws for an image over the size limit.
bool decode_png(png_state& st, const std::string& path, int max_side) {
  if (setjmp(png_jmpbuf(st.png))) return false;
  png_set_read_fn(st.png, &st, &png_read_bytes);
  png_read_info(st.png, st.info);
  st.width = png_get_image_width(st.png, st.info);
  st.height = png_get_image_height(st.png, st.info);
  check_size(path, st.width, st.height, max_side);
  const int color = png_get_color_type(st.png, st.info);
  const int depth = png_get_bit_depth(st.png, st.info);
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(st.png);
  if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(st.png);
  // A tRNS chunk would become alpha, which is dropped anyway: leave it out.
  if (depth == 16) png_set_strip_16(st.png);
  png_set_interlace_handling(st.png);
  png_read_update_info(st.png, st.info);
  st.channels = png_get_channels(st.png, st.info);
  const std::size_t row_bytes = png_get_rowbytes(st.png, st.info);
  st.pixels.resize(row_bytes * st.height);
  st.rows.resize(st.height);
  for (png_uint_32 y = 0; y < st.height; ++y) st.rows[y] = st.pixels.data() + y * row_bytes;
  png_read_image(st.png, st.rows.data());
  // No png_read_end: a file whose pixels are complete reads even if its IEND is missing.
  return true;
}

image read_png(const std::string& path, const std::vector<std::uint8_t>& bytes, int max_side) {
  png_state st;
  st.data = bytes.data();
  st.size = bytes.size();
  st.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &st, &png_on_error, &png_on_warning);
  if (!st.png) fail(path, "cannot start libpng");
  st.info = png_create_info_struct(st.png);
  if (!st.info) fail(path, "cannot start libpng");
  if (!decode_png(st, path, max_side))
    fail(path, std::string(st.ran_out ? "truncated PNG: " : "bad PNG: ") + st.message);

  image out(static_cast<int>(st.width), static_cast<int>(st.height));
  const int c = st.channels; // 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA
  for (png_uint_32 y = 0; y < st.height; ++y) {
    const std::uint8_t* in = st.rows[y];
    std::uint8_t* o = out.at(0, static_cast<int>(y));
    for (png_uint_32 x = 0; x < st.width; ++x, in += c, o += 3) {
      if (c <= 2) o[0] = o[1] = o[2] = in[0];
      else o[0] = in[2], o[1] = in[1], o[2] = in[0];
    }
  }
  return out;
}

// ---- JPEG -------------------------------------------------------------------------------

struct jpeg_failure : jpeg_error_mgr {
  std::jmp_buf jump;
  bool truncated = false;
  char message[JMSG_LENGTH_MAX] = {};
};

struct jpeg_state {
  jpeg_decompress_struct cinfo{};
  jpeg_failure err;
  bool created = false;
  std::vector<std::uint8_t> row; ///< one CMYK row

  ~jpeg_state() {
    if (created) jpeg_destroy_decompress(&cinfo);
  }
};

void jpeg_on_error(j_common_ptr c) {
  auto* err = static_cast<jpeg_failure*>(c->err);
  (*c->err->format_message)(c, err->message);
  std::longjmp(err->jump, 1);
}

/// libjpeg only warns when the data ends early (it pads the image with gray): that is an
/// error here. Other warnings (corrupt data it recovers from) and trace messages are ignored.
void jpeg_on_message(j_common_ptr c, int level) {
  if (level == -1 && c->err->msg_code == JWRN_JPEG_EOF) {
    auto* err = static_cast<jpeg_failure*>(c->err);
    err->truncated = true;
    (*c->err->format_message)(c, err->message);
    std::longjmp(err->jump, 1);
  }
}

void jpeg_output_nothing(j_common_ptr) {}

bool decode_jpeg(jpeg_state& st, const std::vector<std::uint8_t>& bytes, image& out, const std::string& path,
                 int max_side) {
  if (setjmp(st.err.jump)) return false;
  jpeg_create_decompress(&st.cinfo);
  st.created = true;
  jpeg_mem_src(&st.cinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&st.cinfo, TRUE);
  check_size(path, st.cinfo.image_width, st.cinfo.image_height, max_side);
  const bool cmyk = st.cinfo.jpeg_color_space == JCS_CMYK || st.cinfo.jpeg_color_space == JCS_YCCK;
  st.cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_EXT_BGR; // libjpeg-turbo turns gray into BGR too
  jpeg_start_decompress(&st.cinfo);
  out = image(static_cast<int>(st.cinfo.output_width), static_cast<int>(st.cinfo.output_height));
  st.row.resize(static_cast<std::size_t>(st.cinfo.output_width) * 4);
  while (st.cinfo.output_scanline < st.cinfo.output_height) {
    const int y = static_cast<int>(st.cinfo.output_scanline);
    JSAMPROW row = cmyk ? st.row.data() : out.at(0, y);
    jpeg_read_scanlines(&st.cinfo, &row, 1);
    if (!cmyk) continue;
    // Adobe's CMYK JPEGs store inverted inks (255 = no ink), others plain ones.
    const bool inverted = st.cinfo.saw_Adobe_marker;
    std::uint8_t* o = out.at(0, y);
    for (JDIMENSION x = 0; x < st.cinfo.output_width; ++x, o += 3) {
      const std::uint8_t* p = st.row.data() + x * 4;
      auto channel = [&](int ink) {
        const int v = inverted ? p[ink] : 255 - p[ink];
        const int k = inverted ? p[3] : 255 - p[3];
        return static_cast<std::uint8_t>((v * k + 127) / 255);
      };
      o[0] = channel(2), o[1] = channel(1), o[2] = channel(0);
    }
  }
  // No jpeg_finish_decompress: every scanline is read; a missing EOI after them is harmless.
  return true;
}

image read_jpeg(const std::string& path, const std::vector<std::uint8_t>& bytes, int max_side) {
  jpeg_state st;
  st.cinfo.err = jpeg_std_error(&st.err);
  st.err.error_exit = &jpeg_on_error;
  st.err.emit_message = &jpeg_on_message;
  st.err.output_message = &jpeg_output_nothing;
  image out;
  if (!decode_jpeg(st, bytes, out, path, max_side))
    fail(path, std::string(st.err.truncated ? "truncated JPEG: " : "bad JPEG: ") + st.err.message);
  return out;
}

// ---- writing ------------------------------------------------------------------------------

struct png_writer {
  png_structp png = nullptr;
  png_infop info = nullptr;
  char message[200] = {};
  std::vector<png_bytep> rows;
  ~png_writer() { png_destroy_write_struct(&png, info ? &info : nullptr); }
};

void png_on_write_error(png_structp png, png_const_charp msg) {
  auto* w = static_cast<png_writer*>(png_get_error_ptr(png));
  std::snprintf(w->message, sizeof w->message, "%s", msg);
  png_longjmp(png, 1);
}

bool encode_png(png_writer& w, std::FILE* f, const image& img) {
  if (setjmp(png_jmpbuf(w.png))) return false;
  png_init_io(w.png, f);
  png_set_IHDR(w.png, w.info, static_cast<png_uint_32>(img.width), static_cast<png_uint_32>(img.height), 8,
               PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(w.png, w.info);
  png_set_bgr(w.png);
  png_write_image(w.png, w.rows.data());
  png_write_end(w.png, nullptr);
  return true;
}

} // namespace

image read_image(const std::string& path, int max_side) {
  format kind = format::png;
  const std::vector<std::uint8_t> bytes = read_file(path, kind);
  return kind == format::png ? read_png(path, bytes, max_side) : read_jpeg(path, bytes, max_side);
}

void write_png(const std::string& path, const image& img) {
  if (img.empty() || img.bgr.size() != static_cast<std::size_t>(img.width) * img.height * 3)
    fail(path, "cannot write an empty or inconsistent image as PNG");
  errno = 0;
  file_ptr f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) fail(path, std::string("cannot create: ") + std::strerror(errno));
  png_writer w;
  w.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &w, &png_on_write_error, &png_on_warning);
  if (!w.png) fail(path, "cannot start libpng");
  w.info = png_create_info_struct(w.png);
  if (!w.info) fail(path, "cannot start libpng");
  w.rows.resize(static_cast<std::size_t>(img.height));
  for (int y = 0; y < img.height; ++y) w.rows[static_cast<std::size_t>(y)] = const_cast<png_bytep>(img.at(0, y));
  if (!encode_png(w, f.get(), img)) fail(path, std::string("cannot write PNG: ") + w.message);
  if (std::fclose(f.release()) != 0) fail(path, std::string("cannot write: ") + std::strerror(errno));
}

} // namespace troupe::ocr
