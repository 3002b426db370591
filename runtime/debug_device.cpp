#include "runtime/debug_device.hpp"

#include "runtime/device_string.hpp"

#include <atomic>
#include <cstdlib>
#include <optional>
#include <sstream>

#include <troupe/exception.hpp>

namespace troupe {

namespace {

/// Runs `inner`, failing every `every`th run of this compiled model (its clones count together).
class failing_executable final : public kernels::executable {
public:
  failing_executable(std::unique_ptr<kernels::executable> inner, std::shared_ptr<std::atomic<uint64_t>> runs,
                     int64_t every, std::string device)
      : inner_(std::move(inner)), runs_(std::move(runs)), every_(every), device_(std::move(device)) {}
  void run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) override {
    if (const uint64_t n = ++*runs_; n % static_cast<uint64_t>(every_) == 0)
      throw kernels::device_error(kernels::failure_kind::device_failure, device_ + ": a failure injected by FAIL_EVERY " +
                                                                    std::to_string(every_) + " (run " + std::to_string(n) + ")");
    inner_->run(inputs, outputs);
  }
  std::vector<kernels::op_profile> profile() const override { return inner_->profile(); }
  std::unique_ptr<kernels::executable> clone() const override {
    return std::make_unique<failing_executable>(inner_->clone(), runs_, every_, device_);
  }
  bool loaded_from_cache() const override { return inner_->loaded_from_cache(); }

private:
  std::unique_ptr<kernels::executable> inner_;
  std::shared_ptr<std::atomic<uint64_t>> runs_;
  int64_t every_;
  std::string device_;
};

class switched_device final : public kernels::device {
public:
  switched_device(std::shared_ptr<kernels::device> inner, std::set<std::string> excluded, int64_t fail_every)
      : inner_(std::move(inner)), excluded_(std::move(excluded)), fail_every_(fail_every) {}
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
    auto exe = inner_->compile(g, cfg);
    if (fail_every_ <= 0) return exe;
    return std::make_unique<failing_executable>(std::move(exe), std::make_shared<std::atomic<uint64_t>>(0), fail_every_,
                                                inner_->name());
  }
  std::shared_ptr<kernels::device_presence> presence() const override { return inner_->presence(); }

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
  int64_t fail_every_;
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

/// The value after "DEVICE:" of the entry of `device` in environment variable `var`
/// ("GPU:Conv,Resize;CPU:Softmax"), or nullopt; `form` says what an entry looks like.
std::optional<std::string> env_entry(const char* var, const std::string& device, const char* form) {
  const char* env = std::getenv(var);
  if (!env || !*env) return std::nullopt;
  std::stringstream in(env);
  for (std::string entry; std::getline(in, entry, ';');) {
    if (entry.find_first_not_of(' ') == std::string::npos) continue;
    auto colon = entry.find(':');
    if (colon == std::string::npos)
      throw Exception(std::string(var) + "='" + env + "': entry '" + entry + "' is not " + form +
                      " (entries separated by ';')");
    std::string dev = entry.substr(0, colon);
    dev.erase(0, dev.find_first_not_of(' '));
    dev.erase(dev.find_last_not_of(' ') + 1);
    if (canonical_device_name(dev) == device) return entry.substr(colon + 1);
  }
  return std::nullopt;
}

} // namespace

std::shared_ptr<kernels::device> debug_device(std::shared_ptr<kernels::device> inner, std::set<std::string> excluded,
                                              int64_t fail_every) {
  if (excluded.empty() && fail_every <= 0) return inner;
  return std::make_shared<switched_device>(std::move(inner), std::move(excluded), fail_every);
}

std::set<std::string> excluded_ops(const std::string& device, const std::string* property_value) {
  if (property_value) return split_types(*property_value);
  const auto v = env_entry("TROUPE_EXCLUDED_OPS", device, "DEVICE:OpType,OpType");
  return v ? split_types(*v) : std::set<std::string>{};
}

int64_t fail_every(const std::string& device, const int64_t* property_value) {
  if (property_value) return *property_value;
  const auto v = env_entry("TROUPE_FAIL_EVERY", device, "DEVICE:N");
  if (!v) return 0;
  std::size_t used = 0;
  long long n = -1;
  try {
    n = std::stoll(*v, &used);
  } catch (const std::exception&) {
  }
  if (n < 0 || used != v->size())
    throw Exception("TROUPE_FAIL_EVERY: '" + *v + "' for " + device + " is not an integer >= 0");
  return n;
}

} // namespace troupe
