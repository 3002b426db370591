/// libFuzzer target for the ONNX reader: any bytes must give a Graph or a troupe::Exception.
#include <troupe/exception.hpp>

#include "graph/onnx_reader.hpp"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  try {
    troupe::graph::read_onnx_bytes(data, size, "fuzz input");
  } catch (const troupe::Exception&) {
  }
  return 0;
}
