/// ocr_render OUT.png FONT_FILE PIXELS DEGREES LINE...: known text in a real font, for the OCR
/// benchmark (scripts/ocr_bench.sh) and for trying troupe_ocr by hand. FONT_FILE is a file
/// name under /usr/share/fonts (DejaVuSans.ttf, wqy-microhei.ttc).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "tests/ocr/text_render.hpp"

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s OUT.png FONT_FILE PIXELS DEGREES LINE...\n", argv[0]);
    return 2;
  }
  try {
    namespace t = troupe::ocr::tests;
    const t::font f(t::find_font(argv[2], "fonts-dejavu-core or fonts-wqy-microhei"), std::atoi(argv[3]));
    troupe::ocr::image img = t::render_lines(f, std::vector<std::string>(argv + 5, argv + argc));
    if (const double degrees = std::atof(argv[4]); degrees != 0) img = t::rotate_image(img, degrees).pixels;
    troupe::ocr::write_png(argv[1], img);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ocr_render: %s\n", e.what());
    return 1;
  }
}
