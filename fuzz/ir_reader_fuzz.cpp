/// libFuzzer target for the OpenVINO IR reader: any bytes must give a Graph or a
/// troupe::Exception. The input is the .xml text, a NUL byte, then the .bin weights (no NUL:
/// all of it is text and there are no weights). Seeds: scripts/fuzz.sh ir.
#include <troupe/exception.hpp>

#include "graph/ir_xml.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto* nul = static_cast<const uint8_t*>(std::memchr(data, 0, size));
  const std::size_t text = nul ? static_cast<std::size_t>(nul - data) : size;
  const std::string xml(reinterpret_cast<const char*>(data), text);
  const uint8_t* weights = nul ? nul + 1 : nullptr;
  const std::size_t weights_size = nul ? size - text - 1 : 0;
  try {
    troupe::graph::read_ir_memory(xml, weights, weights_size, "fuzz input");
  } catch (const troupe::Exception&) {
  }
  return 0;
}
