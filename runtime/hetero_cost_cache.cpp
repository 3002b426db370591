#include "runtime/hetero_cost_cache.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <string_view>

#include <troupe/exception.hpp>
#include <troupe/version.hpp>

#include "graph/byte_io.hpp"
#include "graph/wire.hpp"
#include "runtime/hetero.hpp"
#include "runtime/cache_files.hpp"

namespace troupe {

namespace {

constexpr std::string_view magic = "troupe-hetero-costs\n";
constexpr uint32_t format_version = 2;
constexpr std::string_view suffix = ".hetero_costs";

void put(graph::byte_writer& w, const graph::transfer_cost& t) {
  w.put(t.latency_us);
  w.put(t.us_per_byte);
}
graph::transfer_cost get_transfer(graph::byte_reader& r) {
  graph::transfer_cost t;
  t.latency_us = r.get<double>();
  t.us_per_byte = r.get<double>();
  if (!(t.latency_us >= 0 && std::isfinite(t.latency_us) && t.us_per_byte >= 0 && std::isfinite(t.us_per_byte)))
    r.fail("a crossing of " + std::to_string(t.latency_us) + " us + " + std::to_string(t.us_per_byte) + " us per byte");
  return t;
}

std::string encode(const std::array<uint64_t, 2>& key, const graph::Graph& g, const kept_costs& kept) {
  const auto& c = kept.costs;
  graph::byte_writer w;
  w.out.append(magic);
  w.u32(format_version);
  w.str(version());
  w.u64(key[0]);
  w.u64(key[1]);
  w.count(c.devices.size(), "devices");
  for (const auto& d : c.devices) w.str(d);
  w.count(g.ops.size(), "ops");
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    w.str(g.ops[i].name);
    for (double us : c.op_us[i]) w.put(us);
  }
  for (const auto& row : c.transfer)
    for (const auto& t : row) put(w, t);
  for (const auto& t : c.from_host) put(w, t);
  for (const auto& t : c.to_host) put(w, t);
  w.put(kept.split_us);
  w.put(kept.simple_us);
  w.u64(hash128(w.out)[0]);
  return std::move(w.out);
}

/// A time or rate as it may be: finite and not negative (+infinity too where `never` may be).
bool valid(double v, bool never_allowed = false) {
  return (v >= 0 && std::isfinite(v)) || (never_allowed && v == std::numeric_limits<double>::infinity());
}

kept_costs decode(std::string_view bytes, const std::string& what, const std::array<uint64_t, 2>& key,
                  const graph::Graph& g, const std::vector<std::string>& devices) {
  graph::byte_reader r(bytes, what);
  if (bytes.substr(0, magic.size()) != magic) r.fail("not a troupe HETERO calibration (no 'troupe-hetero-costs' header)");
  // The checksum first: nothing of a damaged file is read, nor sized by its counts.
  if (bytes.size() < magic.size() + 8) r.fail("truncated");
  {
    uint64_t sum;
    std::memcpy(&sum, bytes.data() + bytes.size() - 8, 8);
    if (hash128(bytes.substr(0, bytes.size() - 8))[0] != sum) r.fail("checksum mismatch (the file is damaged)");
  }
  r.take(magic.size());
  if (auto v = r.u32(); v != format_version)
    r.fail("format version " + std::to_string(v) + ", this troupe reads version " + std::to_string(format_version));
  if (auto v = r.str(); v != version()) r.fail("written by troupe " + v + ", this is " + version());
  if (r.u64() != key[0] || r.u64() != key[1]) r.fail("holds another model or devices");
  kept_costs kept;
  auto& c = kept.costs;
  const std::size_t n = r.count(4, "devices");
  if (n != devices.size()) r.fail(std::to_string(n) + " devices, the list has " + std::to_string(devices.size()));
  for (std::size_t d = 0; d < n; ++d) {
    c.devices.push_back(r.str());
    if (c.devices.back() != devices[d]) r.fail("device #" + std::to_string(d) + " is " + c.devices.back() + ", not " + devices[d]);
  }
  const std::size_t ops = r.count(4, "ops");
  if (ops != g.ops.size()) r.fail(std::to_string(ops) + " ops, the model has " + std::to_string(g.ops.size()));
  c.op_us.assign(ops, std::vector<double>(n));
  for (std::size_t i = 0; i < ops; ++i) {
    graph::byte_part p(r, "op #" + std::to_string(i));
    if (auto name = r.str(); name != g.ops[i].name) r.fail("is '" + name + "', the model's is '" + g.ops[i].name + "'");
    for (auto& us : c.op_us[i]) {
      us = r.get<double>();
      if (!valid(us, true)) r.fail("a time of " + std::to_string(us) + " us");
    }
  }
  c.transfer.assign(n, std::vector<graph::transfer_cost>(n));
  for (auto& row : c.transfer)
    for (auto& t : row) t = get_transfer(r);
  for (std::size_t d = 0; d < n; ++d) c.from_host.push_back(get_transfer(r));
  for (std::size_t d = 0; d < n; ++d) c.to_host.push_back(get_transfer(r));
  kept.split_us = r.get<double>();
  kept.simple_us = r.get<double>();
  for (double v : {kept.split_us, kept.simple_us})
    if (!std::isnan(v) && !valid(v)) r.fail("a measured request of " + std::to_string(v) + " us");
  r.u64(); // the checksum, checked above
  r.end("calibration");
  graph::check_costs(g, c);
  return kept;
}

} // namespace

std::array<uint64_t, 2> hetero_costs_key(const graph::Graph& g, const std::vector<hetero_member>& members,
                                         const std::vector<std::vector<bool>>& can_run) {
  const auto m = hash128(graph::encode_graph(g));
  std::string what = std::string(version()) + '\n' + members.front().config.hint + '\n';
  for (const auto& row : can_run) {
    for (bool b : row) what += b ? '1' : '0';
    what += ';';
  }
  for (const auto& mem : members) {
    const auto info = mem.dev->info();
    auto it = info.find("FULL_DEVICE_NAME");
    what += mem.name + '\n' + (it == info.end() ? "" : it->second) + '\n' + compile_settings(mem.config.compile) +
            ";threads=" + std::to_string(mem.config.compile.num_threads) +
            ";streams=" + std::to_string(mem.config.compile.streams) + '\n';
  }
  what.append(reinterpret_cast<const char*>(m.data()), sizeof m);
  return hash128(what);
}

std::optional<kept_costs> load_hetero_costs(const std::string& dir, const std::array<uint64_t, 2>& key,
                                            const graph::Graph& g, const std::vector<std::string>& devices) {
  const auto path = cache_entry_path(dir, key, suffix);
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt; // not kept yet
  const std::string bytes = graph::read_all(f);
  try {
    return decode(bytes, "CACHE_DIR entry " + path.string(), key, g, devices);
  } catch (const std::exception& e) {
    library_warning(std::string(e.what()) + "; calibrating again");
  }
  return std::nullopt;
}

void store_hetero_costs(const std::string& dir, const std::array<uint64_t, 2>& key, const graph::Graph& g,
                        const kept_costs& kept) {
  try {
    write_file_atomically(cache_entry_path(dir, key, suffix), encode(key, g, kept));
  } catch (const std::exception& e) {
    library_warning("CACHE_DIR " + dir + ": the HETERO calibration was not kept (" + e.what() + ")");
  }
}

} // namespace troupe
