#include "tools/file_io.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <troupe/exception.hpp>

namespace troupe::cli {

void write_file(const std::string& path, const void* data, std::size_t size) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Exception("cannot write '" + path + "': " + std::strerror(errno));
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!f) throw Exception("error writing '" + path + "'");
}

void write_file(const std::string& path, const std::string& text) { write_file(path, text.data(), text.size()); }

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw Exception("cannot read '" + path + "': it is a folder");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Exception("cannot read '" + path + "': " + std::strerror(errno));
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void make_folder(const std::string& path, const std::string& flag) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw Exception(flag + ": cannot create folder '" + path + "': " + ec.message());
}

} // namespace troupe::cli
