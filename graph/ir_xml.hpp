#pragma once
/// OpenVINO IR (v10, v11: an .xml topology and a .bin of weights) <-> troupe's graph of ONNX
/// ops. The reader maps each IR op onto one or more of the ONNX ops the devices run; the writer
/// maps ONNX ops back onto IR ops of opsets 1-13 (docs/openvino-ir.md lists both directions).
#include <cstddef>
#include <string>

#include "graph/ir.hpp"

namespace troupe::graph {

/// `bin_path` empty: the .bin beside the .xml (same name, extension .bin).
Graph read_ir_file(const std::string& xml_path, const std::string& bin_path = "");
/// IR text and its weights from memory; `source` names them in error messages.
Graph read_ir_memory(const std::string& xml_text, const void* weights, std::size_t size, const std::string& source);

/// True for a path naming an IR topology (".xml", any case).
bool is_ir_path(const std::string& path);

/// Writes `g` as IR v11 to `xml_path` and `bin_path` (empty: beside it). An op with no IR
/// equivalent is an error naming it; nothing is written then.
void write_ir_file(const Graph& g, const std::string& model_name, const std::string& xml_path,
                   const std::string& bin_path = "");
/// The IR text and weights of `g` without touching the disk.
void write_ir(const Graph& g, const std::string& model_name, std::string& xml_text, std::string& weights);

} // namespace troupe::graph
