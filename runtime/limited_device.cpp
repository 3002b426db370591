#include "runtime/limited_device.hpp"

#include "runtime/device_string.hpp"

#include <cstdlib>
#include <sstream>

#include <troupe/exception.hpp>

namespace troupe {

namespace {

class limited_device final : public kernels::device {
public:
  limited_device(std::shared_ptr<kernels::device> inner, std::set<std::string> excluded)
      : inner_(std::move(inner)), excluded_(std::move(excluded)) {}
  std::string name() const override { return inner_->name(); }
  std::map<std::string, std::string> info() const override { return inner_->info(); }
  kernels::support query(const graph::Graph& g, const graph::Op& op) const override {
    if (auto no = excluded(op); !no.reason.empty()) return no;
    return inner_->query(g, op);
  }
  kernels::support query_pending(const graph::Graph& g, const graph::Op& op) const override {
    if (auto no = excluded(op); !no.reason.empty()) return no;
    return inner_->query_pending(g, op);
  }
  std::unique_ptr<kernels::executable> compile(const graph::Graph& g, const kernels::compile_config& cfg) const override {
    return inner_->compile(g, cfg);
  }

private:
  /// A refusal when EXCLUDED_OPS names the op's type; an empty reason otherwise.
  kernels::support excluded(const graph::Op& op) const {
    if (excluded_.count(op.type)) return {false, "op type " + op.type + " is excluded by EXCLUDED_OPS"};
    // An activation fused into its producer is still that op type's work.
    if (auto act = op.attr_string("activation", ""); excluded_.count(act))
      return {false, "op type " + act + " (fused into " + op.type + ") is excluded by EXCLUDED_OPS"};
    return {};
  }

  std::shared_ptr<kernels::device> inner_;
  std::set<std::string> excluded_;
};

std::set<std::string> split_types(const std::string& list) {
  std::set<std::string> r;
  std::stringstream in(list);
  for (std::string t; std::getline(in, t, ',');) {
    auto b = t.find_first_not_of(' '), e = t.find_last_not_of(' ');
    if (b != std::string::npos) r.insert(t.substr(b, e - b + 1));
  }
  return r;
}

} // namespace

std::shared_ptr<kernels::device> limit_ops(std::shared_ptr<kernels::device> inner, std::set<std::string> excluded) {
  if (excluded.empty()) return inner;
  return std::make_shared<limited_device>(std::move(inner), std::move(excluded));
}

std::set<std::string> excluded_ops(const std::string& device, const std::string* property_value) {
  if (property_value) return split_types(*property_value);
  const char* env = std::getenv("TROUPE_EXCLUDED_OPS");
  if (!env || !*env) return {};
  std::stringstream in(env);
  for (std::string entry; std::getline(in, entry, ';');) {
    if (entry.find_first_not_of(' ') == std::string::npos) continue;
    auto colon = entry.find(':');
    if (colon == std::string::npos)
      throw Exception("TROUPE_EXCLUDED_OPS='" + std::string(env) + "': entry '" + entry +
                      "' is not DEVICE:OpType,OpType (entries separated by ';')");
    std::string dev = entry.substr(0, colon);
    dev.erase(0, dev.find_first_not_of(' '));
    dev.erase(dev.find_last_not_of(' ') + 1);
    if (canonical_device_name(dev) == device) return split_types(entry.substr(colon + 1));
  }
  return {};
}

} // namespace troupe
