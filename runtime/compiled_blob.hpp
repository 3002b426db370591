#pragma once
/// What CompiledModel::export_model writes and Core::import_model reads: the optimized graph of
/// a model compiled for one device, and what it was compiled for.
///   "troupe-compiled\n" | u32 version | str troupe version | str device | str full device name
///   | str settings | str model name | str graph (graph/wire.hpp) | u64 checksum
/// (str: u32 length, bytes; little-endian; the checksum covers every byte before it). Reading
/// treats the bytes as hostile and says what is wrong; it never guesses.
#include <cstdint>
#include <string>
#include <string_view>

#include "graph/ir.hpp"

namespace troupe {

struct compiled_blob {
  std::string troupe_version;
  std::string device;      ///< canonical name: "CPU", "GPU.0"
  std::string device_name; ///< FULL_DEVICE_NAME: another machine's CPU or GPU is another device
  std::string settings;    ///< the compile settings the graph was made under ("precision=f32;...")
  std::string model_name;
  graph::Graph graph;      ///< optimized: constants folded, ops fused; compiles without passes
};

std::string encode_blob(const compiled_blob& b);
/// Throws troupe::Exception naming `what`, the part and the reason: not a compiled model,
/// another format version, truncated, checksum mismatch, a bad graph.
compiled_blob decode_blob(std::string_view bytes, const std::string& what);

} // namespace troupe
