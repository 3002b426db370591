#include "tools/tensor_io.hpp"

#include <cmath>
#include <cstring>
#include <map>

#include "tools/args.hpp"

namespace troupe::cli {

std::vector<Tensor> make_inputs(const CompiledModel& cm, const std::vector<std::string>& file_specs) {
  auto ports = cm.inputs();
  std::map<std::string, std::string> files;
  for (const auto& spec : file_specs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) throw usage_error("-i needs NAME=FILE, got '" + spec + "'");
    auto name = spec.substr(0, eq);
    bool known = false;
    for (const auto& p : ports) known = known || p.get_any_name() == name;
    if (!known) {
      std::string all;
      for (const auto& p : ports) all += (all.empty() ? "'" : ", '") + p.get_any_name() + "'";
      throw Exception("-i: the model has no input '" + name + "'; its inputs: " + all);
    }
    files[name] = spec.substr(eq + 1);
  }
  seeded_generator gen;
  std::vector<Tensor> r;
  for (const auto& p : ports) {
    Tensor t(p.get_element_type(), concrete_shape(p));
    auto it = files.find(p.get_any_name());
    if (it != files.end()) {
      auto bytes = read_file(it->second);
      if (bytes.size() != t.get_byte_size())
        throw Exception("input '" + p.get_any_name() + "' from '" + it->second + "': expected " +
                        std::to_string(t.get_byte_size()) + " bytes (" + to_string(t.get_shape()) + " " +
                        to_string(t.get_element_type()) + "), got " + std::to_string(bytes.size()) + " bytes");
      std::memcpy(t.data(), bytes.data(), bytes.size());
    } else {
      gen.fill(t);
    }
    r.push_back(std::move(t));
  }
  return r;
}

std::vector<float> to_floats(const Tensor& t) {
  const int64_t n = t.get_size();
  std::vector<float> r(static_cast<std::size_t>(n));
  auto conv = [&](auto* p) {
    for (int64_t i = 0; i < n; ++i) r[static_cast<std::size_t>(i)] = static_cast<float>(p[i]);
  };
  switch (t.get_element_type()) {
  case element_type::f32: conv(t.data<float>()); break;
  case element_type::f64: conv(t.data<double>()); break;
  case element_type::i64: conv(t.data<int64_t>()); break;
  case element_type::i32: conv(t.data<int32_t>()); break;
  case element_type::i16: conv(t.data<int16_t>()); break;
  case element_type::i8: conv(t.data<int8_t>()); break;
  case element_type::u8: conv(t.data<uint8_t>()); break;
  case element_type::boolean: conv(t.data<uint8_t>()); break;
  case element_type::u16: conv(t.data<uint16_t>()); break;
  case element_type::u32: conv(t.data<uint32_t>()); break;
  case element_type::u64: conv(t.data<uint64_t>()); break;
  case element_type::bf16: {
    auto* p = t.data<uint16_t>();
    for (int64_t i = 0; i < n; ++i) {
      uint32_t bits = static_cast<uint32_t>(p[i]) << 16;
      std::memcpy(&r[static_cast<std::size_t>(i)], &bits, 4);
    }
    break;
  }
  case element_type::f16: {
    auto* p = t.data<uint16_t>();
    for (int64_t i = 0; i < n; ++i) {
      uint32_t h = p[i], sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
      float v;
      if (e == 0) v = std::ldexp(static_cast<float>(m), -24);
      else if (e == 31) v = m ? NAN : INFINITY;
      else v = std::ldexp(static_cast<float>(m | 0x400), static_cast<int>(e) - 25);
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      bits |= sign;
      std::memcpy(&r[static_cast<std::size_t>(i)], &bits, 4);
    }
    break;
  }
  default: throw Exception("cannot convert element type " + to_string(t.get_element_type()) + " to float32");
  }
  return r;
}

std::string json_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\') { r += '\\'; r += c; }
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      r += buf;
    } else r += c;
  }
  return r;
}

} // namespace troupe::cli
