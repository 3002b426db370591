#include "tools/npy_io.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include <troupe/exception.hpp>

#include "tools/element_convert.hpp"
#include "tools/file_io.hpp"

namespace troupe::cli {

namespace {

constexpr char magic[] = "\x93NUMPY";
constexpr std::size_t magic_size = 6;

struct dtype_entry {
  const char* descr;
  element_type type;
};
constexpr dtype_entry dtypes[] = {
    {"f4", element_type::f32}, {"f8", element_type::f64}, {"f2", element_type::f16}, {"i1", element_type::i8},
    {"i2", element_type::i16}, {"i4", element_type::i32}, {"i8", element_type::i64}, {"u1", element_type::u8},
    {"u2", element_type::u16}, {"u4", element_type::u32}, {"u8", element_type::u64}, {"b1", element_type::boolean}};

[[noreturn]] void bad(const std::string& path, const std::string& why) {
  throw Exception("cannot read .npy file '" + path + "': " + why);
}

/// The text of `key`'s value in the header dict: "'<f4'", "False", "(2, 8)".
std::string header_value(const std::string& path, const std::string& header, const std::string& key) {
  auto k = header.find("'" + key + "'");
  if (k == std::string::npos) bad(path, "its header has no '" + key + "': " + header);
  auto colon = header.find(':', k);
  if (colon == std::string::npos) bad(path, "malformed header: " + header);
  auto v = header.find_first_not_of(' ', colon + 1);
  if (v == std::string::npos) bad(path, "malformed header: " + header);
  std::size_t end;
  if (header[v] == '(') end = header.find(')', v) + 1;
  else if (header[v] == '\'' || header[v] == '"') end = header.find(header[v], v + 1) + 1;
  else end = header.find_first_of(",}", v);
  if (end == std::string::npos || end == 0) bad(path, "malformed header: " + header);
  return header.substr(v, end - v);
}

} // namespace

std::string npy_dtype(element_type t) {
  if (t == element_type::bf16) return "<f4";
  for (const auto& d : dtypes)
    if (d.type == t) return std::string(element_size(t) == 1 ? "|" : "<") + d.descr;
  throw Exception("no .npy dtype for element type " + to_string(t));
}

bool is_npy_path(const std::string& path) {
  if (path.size() < 4) return false;
  auto ext = path.substr(path.size() - 4);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".npy";
}

void write_npy(const std::string& path, const Tensor& t) {
  const Tensor data = t.get_element_type() == element_type::bf16 ? convert(t, element_type::f32) : t;
  std::string shape = "(";
  for (std::size_t i = 0; i < data.get_shape().size(); ++i)
    shape += std::to_string(data.get_shape()[i]) + (data.get_shape().size() == 1 ? "," : i + 1 < data.get_shape().size() ? ", " : "");
  shape += ")";
  std::string header = "{'descr': '" + npy_dtype(data.get_element_type()) + "', 'fortran_order': False, 'shape': " +
                       shape + ", }";
  // Magic, version and length take 10 bytes; the header pads with spaces to a multiple of 64
  // and ends in '\n', as NumPy writes it.
  const std::size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string out(magic, magic_size);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(static_cast<const char*>(data.data()), data.get_byte_size());
  write_file(path, out);
}

namespace {

/// A dimension of the header's shape: at most 18 digits (it fits an int64_t).
int64_t dimension(const std::string& path, const std::string& digits) {
  if (digits.size() > 18) bad(path, "dimension " + digits + " is too large");
  return std::stoll(digits);
}

} // namespace

Tensor read_npy(const std::string& path) { return parse_npy(read_file(path), path); }

Tensor parse_npy(const std::string& bytes, const std::string& path) {
  if (bytes.size() < 10 || bytes.compare(0, magic_size, std::string(magic, magic_size)) != 0)
    bad(path, "it does not start with the .npy magic \\x93NUMPY");
  const auto major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) bad(path, "truncated header");
    header_len = 0;
    for (int i = 3; i >= 0; --i) header_len = header_len << 8 | static_cast<unsigned char>(bytes[8 + static_cast<std::size_t>(i)]);
    offset = 12;
  } else {
    bad(path, "unknown format version " + std::to_string(major));
  }
  if (offset + header_len > bytes.size()) bad(path, "truncated header");
  const std::string header = bytes.substr(offset, header_len);

  auto descr = header_value(path, header, "descr");
  if (descr.size() < 3) bad(path, "unknown dtype " + descr);
  descr = descr.substr(1, descr.size() - 2);
  element_type type = element_type::undefined;
  const char order = descr.empty() ? '?' : descr[0];
  for (const auto& d : dtypes)
    if (descr.substr(1) == d.descr) type = d.type;
  if (type == element_type::undefined)
    bad(path, "dtype '" + descr + "' is not supported (f2/f4/f8, i1-i8, u1-u8, b1)");
  if (order == '>' && element_size(type) > 1) bad(path, "dtype '" + descr + "' is big-endian; save it little-endian");
  if (order != '<' && order != '|' && order != '=' && order != '>') bad(path, "unknown dtype '" + descr + "'");

  if (header_value(path, header, "fortran_order") != "False")
    bad(path, "it is in Fortran order; save it with numpy.ascontiguousarray");

  const auto shape_text = header_value(path, header, "shape");
  if (shape_text.size() < 2 || shape_text.front() != '(' || shape_text.back() != ')')
    bad(path, "malformed shape '" + shape_text + "' (a tuple was expected)");
  Shape shape;
  std::string cur;
  for (char c : shape_text.substr(1, shape_text.size() - 2)) {
    if (std::isdigit(static_cast<unsigned char>(c))) cur += c;
    else if (c == ',' || c == ' ') {
      if (!cur.empty()) shape.push_back(dimension(path, cur));
      cur.clear();
    } else if (c != 'L') {
      bad(path, "malformed shape " + shape_text);
    }
  }
  if (!cur.empty()) shape.push_back(dimension(path, cur));

  // The bytes the shape needs, checked against the file before anything is allocated (a shape
  // whose product overflows must not wrap around to the file's size).
  const std::size_t data_size = bytes.size() - offset - header_len;
  // Dimensions whose product does not fit int64_t are refused even beside a 0 (shape_size,
  // which every later step uses, multiplies them in order).
  int64_t elements = 1;
  for (auto d : shape)
    if (d != 0 && __builtin_mul_overflow(elements, d, &elements))
      bad(path, "shape " + shape_text + " has more than 2^63 elements");
  uint64_t need = element_size(type);
  for (auto d : shape)
    if (__builtin_mul_overflow(need, static_cast<uint64_t>(d), &need)) need = UINT64_MAX;
  if (need != data_size)
    bad(path, "shape " + to_string(shape) + " " + descr + " needs " + (need == UINT64_MAX ? "more than 2^64" : std::to_string(need)) +
                  " bytes of data, the file holds " + std::to_string(data_size));
  Tensor t(type, shape);
  std::memcpy(t.data(), bytes.data() + offset + header_len, data_size);
  return t;
}

} // namespace troupe::cli
