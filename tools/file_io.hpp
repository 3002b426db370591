#pragma once
/// Whole-file reads and writes whose errors name the file.
#include <cstddef>
#include <string>

namespace troupe::cli {

void write_file(const std::string& path, const void* data, std::size_t size);
void write_file(const std::string& path, const std::string& text);
std::string read_file(const std::string& path);
/// Creates the folder (and its parents); `flag` names the flag that asked for it.
void make_folder(const std::string& path, const std::string& flag);

} // namespace troupe::cli
