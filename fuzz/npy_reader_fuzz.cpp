/// The .npy reader of `troupe run` / `troupe bench -i`: any bytes give a tensor or a
/// troupe::Exception naming the file, never a crash, a hang or an allocation the file's size
/// does not justify.
#include <cstddef>
#include <cstdint>
#include <string>

#include <troupe/exception.hpp>

#include "tools/npy_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  try {
    const auto t = troupe::cli::parse_npy(std::string(reinterpret_cast<const char*>(data), size), "fuzz.npy");
    if (t.get_byte_size() > size) __builtin_trap(); // a tensor larger than its file
  } catch (const troupe::Exception&) {
  }
  return 0;
}
