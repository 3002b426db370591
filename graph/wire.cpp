/// The wire format (docs/internals.md, "Wire format"). Layout, all little-endian:
///   graph blob:  "troupeIR" u32 version | i64 opset | str source | u32 n, value* | u32 n, op*
///                | u32 n, i32 input id* | u32 n, i32 output id*
///   tensor blob: "troupeTS" u32 version | tensor
///   str:    u32 length, bytes
///   shape:  u8 rank_known | u32 rank, i64 dim* | u32 n, str symbol*
///   tensor: i32 element type | u32 rank, i64 dim* | u64 byte count, bytes
///           (a string tensor's bytes: str per element, row-major)
///   value:  str name | i32 element type | shape | u8 has constant | tensor?
///   op:     str type | str domain | str name | u32 n, i32 input* | u32 n, i32 output*
///           | u32 n, (str key, u8 kind, payload)* | u32 n, (str key, str value)*
///   a value's "has constant" byte is a set of flags: 1 has a constant, 2 is a sequence
///   a subgraph attribute's payload is a graph blob's body (opset on), without magic and version
///   (version 2; at most max_graph_depth deep)
/// Floats travel as their bit patterns, so NaN payloads and -0 survive.
#include "graph/wire.hpp"

#include <troupe/exception.hpp>

#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>

#include "graph/byte_io.hpp"

namespace troupe::graph {

namespace {

constexpr char graph_magic[8] = {'t', 'r', 'o', 'u', 'p', 'e', 'I', 'R'};
constexpr char tensor_magic[8] = {'t', 'r', 'o', 'u', 'p', 'e', 'T', 'S'};

/// Attribute kinds on the wire: fixed numbers, not the variant's index, so that reordering
/// AttributeValue cannot silently change the meaning of a blob.
enum class attr_kind : uint8_t { i64 = 0, f32 = 1, string = 2, ints = 3, floats = 4, strings = 5, tensor = 6, graph = 7 };
static_assert(std::variant_size_v<AttributeValue> == 8,
              "a new attribute kind needs a wire tag here and a new wire_format_version");

/// Subgraphs nest (a Loop in an If in a Loop); a forged blob nesting deeper would recurse
/// the decoder's stack away.
constexpr int max_graph_depth = 32;
/// Bytes each item of a list takes at least on the wire: a count larger than the bytes left
/// can hold is refused before anything is allocated for it.
constexpr std::size_t min_str = 4, min_shape = 1 + 4 + 4, min_tensor = 4 + 4 + 8;
constexpr std::size_t min_value = min_str + 4 + min_shape + 1;
constexpr std::size_t min_op = 3 * min_str + 4 + 4 + 4 + 4;
constexpr std::size_t min_attr = min_str + 1 + 4;

bool known_type(int32_t t) {
  return (t >= 0 && t <= 13) || t == 16; // element_type's values (ONNX's TensorProto.DataType)
}

/// A name from a blob as it may appear in a message: short and printable.
std::string quoted(std::string_view s) {
  constexpr std::size_t keep = 64;
  std::string r = "'";
  for (std::size_t i = 0; i < s.size() && i < keep; ++i) r += (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
  if (s.size() > keep) r += "...";
  return r + "'";
}

// ---- Encoding ----

class writer : public byte_writer {
public:
  void ids(const std::vector<ValueId>& v, std::string_view of) {
    count(v.size(), of);
    for (auto id : v) i32(id);
  }
  void shape(const PartialShape& s) {
    u8(s.rank_known ? 1 : 0);
    count(s.dims.size(), "shape rank");
    for (auto d : s.dims) i64(d);
    count(s.symbols.size(), "shape symbols");
    for (const auto& sym : s.symbols) str(sym);
  }
  void tensor(const Tensor& t, std::string_view where) {
    if (t.empty()) { // no type, no shape, no bytes
      i32(static_cast<int32_t>(element_type::undefined));
      u32(0);
      u64(0);
      return;
    }
    const bool strings = t.get_element_type() == element_type::string;
    if (!strings && element_size(t.get_element_type()) == 0)
      throw Exception("encode: " + std::string(where) + ": a tensor of element type " +
                      to_string(t.get_element_type()) + " has no fixed-size bytes to send");
    i32(static_cast<int32_t>(t.get_element_type()));
    count(t.get_shape().size(), "tensor rank");
    for (auto d : t.get_shape()) i64(d);
    if (strings) {
      const auto* s = t.data<std::string>();
      std::size_t bytes = 0;
      for (int64_t i = 0; i < t.get_size(); ++i) bytes += 4 + s[i].size();
      u64(bytes);
      for (int64_t i = 0; i < t.get_size(); ++i) str(s[i]);
      return;
    }
    const std::size_t bytes = t.get_byte_size();
    u64(bytes);
    if (bytes) out.append(static_cast<const char*>(t.data()), bytes);
  }
  void attr(const AttributeValue& a, std::string_view where) {
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, int64_t>) {
            u8(static_cast<uint8_t>(attr_kind::i64));
            i64(v);
          } else if constexpr (std::is_same_v<T, float>) {
            u8(static_cast<uint8_t>(attr_kind::f32));
            f32(v);
          } else if constexpr (std::is_same_v<T, std::string>) {
            u8(static_cast<uint8_t>(attr_kind::string));
            str(v);
          } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            u8(static_cast<uint8_t>(attr_kind::ints));
            count(v.size(), "attribute ints");
            for (auto x : v) i64(x);
          } else if constexpr (std::is_same_v<T, std::vector<float>>) {
            u8(static_cast<uint8_t>(attr_kind::floats));
            count(v.size(), "attribute floats");
            for (auto x : v) f32(x);
          } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            u8(static_cast<uint8_t>(attr_kind::strings));
            count(v.size(), "attribute strings");
            for (const auto& x : v) str(x);
          } else if constexpr (std::is_same_v<T, Tensor>) {
            u8(static_cast<uint8_t>(attr_kind::tensor));
            tensor(v, where);
          } else {
            static_assert(std::is_same_v<T, std::shared_ptr<const Graph>>);
            if (!v) throw Exception("encode: " + std::string(where) + ": the subgraph is null");
            u8(static_cast<uint8_t>(attr_kind::graph));
            graph(*v);
          }
        },
        a);
  }
  void graph(const Graph& g) {
    i64(g.opset);
    str(g.source);
    count(g.values.size(), "values");
    for (const auto& v : g.values) {
      str(v.name);
      i32(static_cast<int32_t>(v.type));
      shape(v.shape);
      u8((v.constant ? 1 : 0) | (v.sequence ? 2 : 0));
      if (v.constant) tensor(*v.constant, "the constant of value " + quoted(v.name));
    }
    count(g.ops.size(), "ops");
    for (const auto& op : g.ops) {
      str(op.type);
      str(op.domain);
      str(op.name);
      ids(op.inputs, "op inputs");
      ids(op.outputs, "op outputs");
      count(op.attrs.size(), "attributes");
      for (const auto& [k, a] : op.attrs) {
        str(k);
        attr(a, describe(op) + " attribute " + quoted(k));
      }
      count(op.rt_info.size(), "rt_info entries");
      for (const auto& [k, v] : op.rt_info) {
        str(k);
        str(v);
      }
    }
    ids(g.inputs, "graph inputs");
    ids(g.outputs, "graph outputs");
  }
};

std::size_t constant_bytes(const Graph& g) {
  std::size_t n = 0;
  for (const auto& v : g.values)
    if (v.constant) n += v.constant->get_byte_size();
  return n;
}

// ---- Decoding ----

class reader : public byte_reader {
public:
  using byte_reader::byte_reader;

  element_type type() {
    const int32_t t = i32();
    if (!known_type(t)) fail("unknown element type " + std::to_string(t));
    return static_cast<element_type>(t);
  }
  /// A value id: a value of the graph, or no_value where an omitted one is allowed.
  ValueId id(std::size_t n_values, bool omittable, std::string_view of) {
    const int32_t v = i32();
    if (v == no_value && omittable) return v;
    if (v < 0 || static_cast<std::size_t>(v) >= n_values)
      fail(std::string(of) + " is value id " + std::to_string(v) + ", the graph has " + std::to_string(n_values) +
           " values");
    return v;
  }
  std::vector<ValueId> ids(std::size_t n_values, bool omittable, std::string_view of) {
    const uint32_t n = count(4, of);
    std::vector<ValueId> r;
    r.reserve(n);
    for (uint32_t i = 0; i < n; ++i) r.push_back(id(n_values, omittable, std::string(of) + " #" + std::to_string(i)));
    return r;
  }

  PartialShape shape() {
    PartialShape s;
    s.rank_known = flag("rank_known");
    const uint32_t rank = count(8, "dims");
    if (!s.rank_known && rank) fail("a shape of unknown rank with " + std::to_string(rank) + " dims");
    s.dims.reserve(rank);
    uint64_t product = 1; // of the static dims: code multiplying them must not overflow
    for (uint32_t i = 0; i < rank; ++i) {
      const int64_t d = i64();
      if (d > max_dim) fail("dim " + std::to_string(i) + " is " + std::to_string(d));
      if (d > 1) product = checked_product(product, static_cast<uint64_t>(d), "the shape's static dims");
      s.dims.push_back(d);
    }
    const uint32_t n = count(min_str, "symbols");
    if (n > rank) fail(std::to_string(n) + " dim symbols for " + std::to_string(rank) + " dims");
    s.symbols.reserve(n);
    for (uint32_t i = 0; i < n; ++i) s.symbols.push_back(str());
    return s;
  }

  Tensor tensor() {
    const element_type t = type();
    const uint32_t rank = count(8, "dims");
    Shape shape;
    shape.reserve(rank);
    uint64_t elements = 1, nonzero = 1;
    for (uint32_t i = 0; i < rank; ++i) {
      const int64_t d = i64();
      if (d < 0 || d > max_dim) fail("tensor dim " + std::to_string(i) + " is " + std::to_string(d));
      if (d > 1) nonzero = checked_product(nonzero, static_cast<uint64_t>(d), "the tensor's dims");
      elements = d == 0 ? 0 : elements * static_cast<uint64_t>(d); // <= nonzero: no overflow
      shape.push_back(d);
    }
    const uint64_t bytes = u64();
    if (t == element_type::undefined) { // an empty Tensor
      if (rank || bytes) fail("a tensor without element type has a shape or bytes");
      return {};
    }
    if (t == element_type::string) return strings(std::move(shape), elements, bytes);
    const std::size_t size = element_size(t);
    if (size == 0) fail("a tensor of element type " + to_string(t) + " cannot travel as bytes");
    const uint64_t expected = checked_product(elements, size, "the tensor's byte count");
    if (bytes != expected)
      fail("a tensor " + to_string(t) + to_string(shape) + " of " + std::to_string(bytes) + " bytes, its shape needs " +
           std::to_string(expected));
    if (bytes > left()) fail("a tensor of " + std::to_string(bytes) + " bytes, " + std::to_string(left()) + " left");
    const char* data = take(static_cast<std::size_t>(bytes));
    Tensor r(t, std::move(shape));
    if (bytes) std::memcpy(r.data(), data, static_cast<std::size_t>(bytes));
    return r;
  }

  /// A string tensor's elements, each a str, filling exactly `bytes`.
  Tensor strings(Shape shape, uint64_t elements, uint64_t bytes) {
    if (bytes > left()) fail("a tensor of " + std::to_string(bytes) + " bytes, " + std::to_string(left()) + " left");
    if (elements > bytes / min_str)
      fail("a string tensor of " + std::to_string(elements) + " elements in " + std::to_string(bytes) + " bytes");
    const std::size_t end = offset() + static_cast<std::size_t>(bytes);
    Tensor r(element_type::string, std::move(shape));
    auto* s = r.data<std::string>();
    for (uint64_t i = 0; i < elements; ++i) {
      s[i] = str();
      if (offset() > end) fail("string element " + std::to_string(i) + " runs past the tensor's " + std::to_string(bytes) + " bytes");
    }
    if (offset() != end) fail("a string tensor's elements end before its " + std::to_string(bytes) + " bytes do");
    return r;
  }

  void header(const char (&magic)[8], std::string_view kind) {
    if (bytes().size() < sizeof magic || std::memcmp(bytes().data(), magic, sizeof magic) != 0)
      fail("not a troupe " + std::string(kind) + " blob (no magic '" + std::string(magic, sizeof magic) + "')");
    take(sizeof magic);
    const uint32_t v = u32();
    if (v != wire_format_version)
      fail("wire format version " + std::to_string(v) + ", this troupe reads version " +
           std::to_string(wire_format_version));
  }
private:
  uint64_t checked_product(uint64_t a, uint64_t b, std::string_view of) const {
    if (b && a > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / b) fail(std::string(of) + " overflow");
    return a * b;
  }
};

using part = byte_part;

Graph read_graph(reader& r, int depth);

AttributeValue read_attr(reader& r, int depth) {
  const uint8_t kind = r.u8();
  switch (static_cast<attr_kind>(kind)) {
  case attr_kind::i64: return r.i64();
  case attr_kind::f32: return r.f32();
  case attr_kind::string: return r.str();
  case attr_kind::ints: {
    const uint32_t n = r.count(8, "ints");
    std::vector<int64_t> v;
    v.reserve(n);
    for (uint32_t i = 0; i < n; ++i) v.push_back(r.i64());
    return v;
  }
  case attr_kind::floats: {
    const uint32_t n = r.count(4, "floats");
    std::vector<float> v;
    v.reserve(n);
    for (uint32_t i = 0; i < n; ++i) v.push_back(r.f32());
    return v;
  }
  case attr_kind::strings: {
    const uint32_t n = r.count(min_str, "strings");
    std::vector<std::string> v;
    v.reserve(n);
    for (uint32_t i = 0; i < n; ++i) v.push_back(r.str());
    return v;
  }
  case attr_kind::tensor: return r.tensor();
  case attr_kind::graph:
    if (depth >= max_graph_depth) r.fail("subgraphs nest deeper than " + std::to_string(max_graph_depth));
    return std::make_shared<const Graph>(read_graph(r, depth + 1));
  }
  r.fail("unknown attribute kind " + std::to_string(kind));
}

Op read_op(reader& r, std::size_t index, std::size_t n_values, int depth) {
  part p(r, "op #" + std::to_string(index));
  Op op;
  op.type = r.str();
  op.domain = r.str();
  op.name = r.str();
  p.rename("op #" + std::to_string(index) + " " + quoted(op.name) + " (" + quoted(op.type) + ")");
  op.inputs = r.ids(n_values, true, "input");
  op.outputs = r.ids(n_values, true, "output");
  const uint32_t n_attrs = r.count(min_attr, "attributes");
  for (uint32_t i = 0; i < n_attrs; ++i) {
    part a(r, "attribute #" + std::to_string(i));
    std::string key = r.str();
    a.rename("attribute " + quoted(key));
    if (op.attrs.count(key)) r.fail("appears twice");
    op.attrs.emplace(std::move(key), read_attr(r, depth));
  }
  const uint32_t n_rt = r.count(2 * min_str, "rt_info entries");
  for (uint32_t i = 0; i < n_rt; ++i) {
    part a(r, "rt_info #" + std::to_string(i));
    std::string key = r.str();
    a.rename("rt_info " + quoted(key));
    if (op.rt_info.count(key)) r.fail("appears twice");
    op.rt_info.emplace(std::move(key), r.str());
  }
  return op;
}

/// Every value has one source, before its readers: a graph input, a constant or one op's output
/// (a subgraph's outer values are among its inputs). Ids in range do not make a graph: an op
/// that writes a graph input, or reads what a later op writes, hung the CPU's compile.
void check_dataflow(reader& r, const Graph& g) {
  part p(r, "dataflow");
  const auto name = [&](ValueId v) { return quoted(g.values[static_cast<std::size_t>(v)].name); };
  std::vector<char> defined(g.values.size(), 0);
  for (std::size_t v = 0; v < g.values.size(); ++v) defined[v] = g.values[v].constant.has_value();
  for (ValueId v : g.inputs) {
    if (defined[static_cast<std::size_t>(v)]) r.fail("graph input " + name(v) + " is a constant or listed twice");
    defined[static_cast<std::size_t>(v)] = 1;
  }
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    const auto& op = g.ops[i];
    for (ValueId v : op.inputs)
      if (v != no_value && !defined[static_cast<std::size_t>(v)])
        r.fail("op #" + std::to_string(i) + " " + quoted(op.name) + " reads value " + name(v) +
               " before anything produces it (a later op, or none)");
    for (ValueId v : op.outputs) {
      if (v == no_value) continue;
      if (defined[static_cast<std::size_t>(v)])
        r.fail("op #" + std::to_string(i) + " " + quoted(op.name) + " writes value " + name(v) +
               ", which is a graph input, a constant or an earlier op's output");
      defined[static_cast<std::size_t>(v)] = 1;
    }
  }
  for (ValueId v : g.outputs)
    if (!defined[static_cast<std::size_t>(v)]) r.fail("graph output " + name(v) + " is never produced");
}

Graph read_graph(reader& r, int depth) {
  Graph g;
  {
    part p(r, "opset and source");
    g.opset = r.i64();
    g.source = r.str();
  }
  const uint32_t n_values = r.count(min_value, "values");
  g.values.reserve(n_values);
  for (uint32_t i = 0; i < n_values; ++i) {
    part p(r, "value #" + std::to_string(i));
    Value v;
    v.name = r.str();
    p.rename("value #" + std::to_string(i) + " " + quoted(v.name));
    v.type = r.type();
    v.shape = r.shape();
    const uint8_t flags = r.u8();
    if (flags > 2)
      r.fail("flags are " + std::to_string(flags) + ", not 0 (a tensor), 1 (a constant) or 2 (a sequence)");
    v.sequence = flags == 2;
    if (flags == 1) {
      part c(r, "constant");
      v.constant = r.tensor();
    }
    g.values.push_back(std::move(v));
  }
  const uint32_t n_ops = r.count(min_op, "ops");
  g.ops.reserve(n_ops);
  for (uint32_t i = 0; i < n_ops; ++i) g.ops.push_back(read_op(r, i, n_values, depth));
  {
    part p(r, "graph inputs");
    g.inputs = r.ids(n_values, false, "input");
  }
  {
    part p(r, "graph outputs");
    g.outputs = r.ids(n_values, false, "output");
  }
  check_dataflow(r, g);
  return g;
}

} // namespace

std::string encode_graph(const Graph& g) {
  writer w;
  w.out.reserve(constant_bytes(g) + 64 * (g.values.size() + g.ops.size()) + 64);
  w.out.append(graph_magic, sizeof graph_magic);
  w.u32(wire_format_version);
  w.graph(g);
  return std::move(w.out);
}

Graph decode_graph(std::string_view bytes, const std::string& what) {
  reader r(bytes, what);
  r.header(graph_magic, "graph");
  Graph g = read_graph(r, 0);
  r.end("graph");
  return g;
}

std::string encode_tensor(const Tensor& t) {
  writer w;
  w.out.reserve(sizeof tensor_magic + 4 + min_tensor + 8 * t.get_shape().size() + (t.empty() ? 0 : t.get_byte_size()));
  w.out.append(tensor_magic, sizeof tensor_magic);
  w.u32(wire_format_version);
  w.tensor(t, "tensor");
  return std::move(w.out);
}

Tensor decode_tensor(std::string_view bytes, const std::string& what) {
  reader r(bytes, what);
  r.header(tensor_magic, "tensor");
  part p(r, "tensor");
  Tensor t = r.tensor();
  r.end("tensor");
  return t;
}

uint64_t content_hash(std::string_view bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  return h;
}

} // namespace troupe::graph
