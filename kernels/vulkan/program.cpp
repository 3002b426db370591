#include "kernels/vulkan/program.hpp"

#include <chrono>
#include <cstring>
#include <functional>
#include <set>

#include <troupe/exception.hpp>

#include <troupe/float16.hpp>
#include "kernels/output_pool.hpp"
#include "kernels/vulkan/lowering.hpp"
#include "kernels/vulkan/vk_check.hpp"

namespace troupe::kernels::vulkan {

namespace {

constexpr uint64_t fence_timeout_ns = 120ull * 1000 * 1000 * 1000;

struct dispatch_rec {
  int op = 0;
  std::string shader;
  VkPipeline pipeline = VK_NULL_HANDLE;
  uint32_t bindings = 0;
  uint32_t texel_mask = 0; ///< bindings that are storage texel buffers
  std::vector<buffer_ref> args;
  uint32_t written = 1; ///< the last `written` args are the shader's outputs
  uint32_t gx = 1, gy = 1, gz = 1;
};

struct op_row {
  std::string name, type, exec_type;
  bool optimized_out = true;
};

/// The immutable, shareable part of a compiled subgraph.
struct program {
  std::shared_ptr<gpu_context> ctx;
  std::string device_name;
  graph::Graph g;
  std::vector<int> root;                 ///< per value: the value whose buffer it uses; -1 = none (constant/unused)
  std::vector<VkDeviceSize> bytes;       ///< per value (meaningful for roots)
  std::vector<region_ptr> constants;
  std::vector<dispatch_rec> dispatches;
  std::vector<op_row> rows;
  bool profiling = false;
  /// Host blocks of outputs the caller let go, for the next run's (every byte is copied in):
  /// the compiled model's (compile_config::output_blocks), shared by the clones.
  std::shared_ptr<output_pool> host_outputs;
  bool loaded_from_cache = false; ///< CACHE_DIR held a pipeline cache for this device
  bool f16 = false; ///< float tensors and constants stored as float16 (INFERENCE_PRECISION_HINT=f16)
  bool f16_math = false; ///< and the Conv/MatMul/Gemm loops computing in float16 (their _f16math variants)
  /// Bytes of one element of a value of type `t` on the device.
  std::size_t stored_size(element_type t) const { return f16 && t == element_type::f32 ? 2 : element_size(t); }
  bool narrowed(const graph::Value& v) const { return f16 && v.type == element_type::f32; }
  /// Per status tag - 1: the error a shader's report stands for ("{index}" to fill in).
  std::vector<std::string> reports;
};

/// Status words per run: tag, index low word, index high word, spare.
constexpr VkDeviceSize status_bytes = 16;

/// Whole 32-bit words: shaders read and write u8, i8, bool and f16 tensors a word at a time.
VkDeviceSize value_bytes(const program& p, const graph::Value& v) {
  return (static_cast<VkDeviceSize>(shape_size(v.shape.to_shape())) * p.stored_size(v.type) + 3) / 4 * 4;
}

/// f32 <-> f16 at the model boundary and for uploaded constants.
void narrow_copy(void* dst, const float* src, std::size_t n) {
  auto* d = static_cast<uint16_t*>(dst);
  for (std::size_t i = 0; i < n; ++i) d[i] = float_to_half_bits(src[i]);
}
void widen_copy(float* dst, const void* src, std::size_t n) {
  const auto* s = static_cast<const uint16_t*>(src);
  for (std::size_t i = 0; i < n; ++i) dst[i] = half_bits_to_float(s[i]);
}

/// RAII bundle of a command pool + buffer + fence.
struct command_set {
  VkDevice dev;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  command_set(gpu_context& ctx) : dev(ctx.device()) {
    VkCommandPoolCreateInfo pi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pi.queueFamilyIndex = ctx.queue_family();
    vk_check(vkCreateCommandPool(dev, &pi, nullptr, &pool), "vkCreateCommandPool");
    try {
      VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
      ai.commandPool = pool;
      ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
      ai.commandBufferCount = 1;
      vk_check(vkAllocateCommandBuffers(dev, &ai, &cb), "vkAllocateCommandBuffers");
      VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
      vk_check(vkCreateFence(dev, &fi, nullptr, &fence), "vkCreateFence");
    } catch (...) {
      release();
      throw;
    }
  }
  ~command_set() { release(); }
  void release() {
    if (fence) vkDestroyFence(dev, fence, nullptr);
    if (pool) vkDestroyCommandPool(dev, pool, nullptr);
    fence = VK_NULL_HANDLE;
    pool = VK_NULL_HANDLE;
  }
  /// After a failed submit or wait: lets anything submitted finish, then unsignals the fence.
  void recover(gpu_context& ctx) {
    ctx.wait_idle();
    (void)vkResetFences(dev, 1, &fence); // fails only when the device is lost: the next submit says so
  }
  void wait(const std::string& who) {
    VkResult r = vkWaitForFences(dev, 1, &fence, VK_TRUE, fence_timeout_ns);
    if (r == VK_TIMEOUT)
      throw device_error(failure_kind::device_failure, "Vulkan: " + who + ": the device did not finish within 120 s");
    vk_check(r, "vkWaitForFences");
    vk_check(vkResetFences(dev, 1, &fence), "vkResetFences");
  }
};

void barrier(VkCommandBuffer cb, VkPipelineStageFlags src, VkAccessFlags src_access, VkPipelineStageFlags dst,
             VkAccessFlags dst_access) {
  VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  mb.srcAccessMask = src_access;
  mb.dstAccessMask = dst_access;
  vkCmdPipelineBarrier(cb, src, dst, 0, 1, &mb, 0, nullptr, 0, nullptr);
}

/// A constant waiting for its upload (float16 on the device when `narrow`).
struct upload {
  region_ptr dst;
  std::vector<float> data;
  bool narrow = false;
};

/// Lowers one op at a time into the program.
class builder final : public op_builder {
public:
  builder(program& p, std::vector<upload>& uploads)
      : p_(p), uploads_(uploads) {}
  void set_op(int index) { op_index_ = index; }
  const graph::Graph& graph() const override { return p_.g; }
  const graph::Op& op() const override { return p_.g.ops[static_cast<std::size_t>(op_index_)]; }

  buffer_ref value(graph::ValueId v, std::size_t i) override {
    if (v == graph::no_value) throw Exception(graph::describe(op()) + ": input " + std::to_string(i) + " is omitted");
    if (!p_.g.is_constant(v)) return {buffer_ref::kind::value, v};
    auto it = const_of_value_.find(v);
    if (it != const_of_value_.end()) return {buffer_ref::kind::constant, it->second};
    const Tensor& t = *p_.g.value(v).constant;
    if (t.get_element_type() == element_type::string)
      throw Exception(graph::describe(op()) + ": constant input '" + p_.g.value(v).name + "' holds strings");
    // Raw bytes in whole words (u8 tables, int64 indices as two words each).
    std::vector<float> data((t.get_byte_size() + 3) / 4, 0.0f);
    if (t.get_byte_size()) std::memcpy(data.data(), t.data(), t.get_byte_size());
    // Only float constants are narrowed in f16 mode; other 32-bit words are bound as they are.
    auto ref = add_constant(std::move(data), t.get_element_type() == element_type::f32);
    const_of_value_[v] = ref.id;
    return ref;
  }
  buffer_ref output(std::size_t i) override { return {buffer_ref::kind::value, op().outputs.at(i)}; }
  buffer_ref constant(std::vector<float> data) override { return add_constant(std::move(data), true); }
  buffer_ref add_constant(std::vector<float> data, bool is_float) {
    const bool narrow = p_.f16 && is_float;
    auto r = p_.ctx->device_memory().allocate(std::max<VkDeviceSize>(data.size() * (narrow ? 2 : 4), 4));
    p_.constants.push_back(r);
    uploads_.push_back({r, std::move(data), narrow});
    return {buffer_ref::kind::constant, static_cast<int>(p_.constants.size() - 1)};
  }
  void dispatch(const std::string& shader, spec_map spec, std::vector<buffer_ref> args, uint64_t invocations,
                uint32_t slices, uint32_t written) override {
    dispatch_rec d;
    d.op = op_index_;
    d.written = std::max<uint32_t>(1, std::min<uint32_t>(written, static_cast<uint32_t>(args.size())));
    d.shader = shader;
    // The copy and trilu_words shaders move words of any type: only float tensors are narrowed.
    const bool words = shader == "copy" || shader == "trilu_words" || shader == "gather_words";
    if (p_.f16 && (!words || p_.narrowed(p_.g.value(op().outputs.at(0))))) {
      d.shader += p_.f16_math && p_.ctx->has_shader(shader + "_f16math") ? "_f16math" : "_f16";
    }
    d.bindings = static_cast<uint32_t>(args.size());
    for (std::size_t a = 0; a < args.size(); ++a)
      if (args[a].texel) d.texel_mask |= 1u << a;
    d.args = std::move(args);
    const auto& limits = p_.ctx->facts().limits;
    uint64_t groups = std::max<uint64_t>(1, (invocations + 63) / 64);
    uint64_t maxx = limits.maxComputeWorkGroupCount[0];
    d.gx = static_cast<uint32_t>(std::min(groups, maxx));
    d.gy = static_cast<uint32_t>((groups + d.gx - 1) / d.gx);
    if (d.gy > limits.maxComputeWorkGroupCount[1])
      throw Exception(graph::describe(op()) + ": " + std::to_string(invocations) + " invocations are more than one dispatch takes on " +
                      p_.device_name);
    // Slices past maxComputeWorkGroupCount[2]: one dispatch per run of them, each with its
    // first slice (SLICE_BASE, spec 59 in shaders/common.glsl).
    const uint32_t maxz = std::max<uint32_t>(1, limits.maxComputeWorkGroupCount[2]);
    const std::string name = d.shader;
    for (uint32_t base = 0; base == 0 || base < slices; base += maxz) {
      dispatch_rec part = d;
      part.gz = slices == 0 ? 0 : std::min(maxz, slices - base); // none: an empty batch
      if (base) spec[59] = base;
      part.pipeline = p_.ctx->pipeline(part.shader, part.bindings, spec, part.texel_mask);
      p_.dispatches.push_back(std::move(part));
    }
    auto& row = p_.rows[static_cast<std::size_t>(op_index_)];
    row.optimized_out = false;
    if (row.exec_type.find(name) == std::string::npos) row.exec_type += (row.exec_type.empty() ? "vulkan:" : "+") + name;
  }
  void alias_output() override {
    auto in = op().inputs.at(0), out = op().outputs.at(0);
    p_.root[static_cast<std::size_t>(out)] = p_.root[static_cast<std::size_t>(in)];
  }
  std::pair<buffer_ref, uint32_t> status(std::string text) override {
    p_.reports.push_back(std::move(text));
    return {buffer_ref{buffer_ref::kind::status, 0}, static_cast<uint32_t>(p_.reports.size())};
  }

private:
  program& p_;
  std::vector<upload>& uploads_;
  int op_index_ = 0;
  std::map<graph::ValueId, int> const_of_value_;
};

class vk_executable final : public executable {
public:
  explicit vk_executable(std::shared_ptr<const program> p) : p_(std::move(p)), cmd_(*p_->ctx) {
    try {
      build();
    } catch (...) {
      release();
      throw;
    }
  }
  ~vk_executable() override { release(); }

  void run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) override;
  std::vector<op_profile> profile() const override { return profile_; }
  std::unique_ptr<executable> clone() const override { return std::make_unique<vk_executable>(p_); }
  bool loaded_from_cache() const override { return p_->loaded_from_cache; }

private:
  void build();
  void record();
  void release() {
    VkDevice dev = p_->ctx->device();
    for (auto v : views_) vkDestroyBufferView(dev, v, nullptr);
    views_.clear();
    if (qpool_) vkDestroyQueryPool(dev, qpool_, nullptr);
    if (dpool_) vkDestroyDescriptorPool(dev, dpool_, nullptr);
    qpool_ = VK_NULL_HANDLE;
    dpool_ = VK_NULL_HANDLE;
  }
  const region& buffer_of(const buffer_ref& r) const {
    if (r.k == buffer_ref::kind::constant) return *p_->constants[static_cast<std::size_t>(r.id)];
    if (r.k == buffer_ref::kind::status) return *status_;
    int root = p_->root[static_cast<std::size_t>(r.id)];
    return *values_.at(static_cast<std::size_t>(root));
  }

  std::shared_ptr<const program> p_; // first: the context outlives everything below
  std::vector<region_ptr> values_;   ///< per value id (roots only)
  std::vector<region_ptr> staging_in_, staging_out_;
  region_ptr status_; ///< host-visible status words, when a shader reports bad input
  command_set cmd_;
  VkDescriptorPool dpool_ = VK_NULL_HANDLE;
  VkQueryPool qpool_ = VK_NULL_HANDLE;
  std::vector<VkDescriptorSet> sets_;
  std::vector<VkBufferView> views_; ///< texel views of texel-buffer bindings
  std::vector<op_profile> profile_;
};

void vk_executable::build() {
  auto& ctx = *p_->ctx;
  const auto& g = p_->g;
  values_.resize(g.values.size());
  for (std::size_t v = 0; v < g.values.size(); ++v)
    if (p_->root[v] == static_cast<int>(v)) values_[v] = ctx.device_memory().allocate(p_->bytes[v]);
  for (auto v : g.inputs) staging_in_.push_back(ctx.staging_memory().allocate(p_->bytes[static_cast<std::size_t>(v)]));
  if (!p_->reports.empty()) status_ = ctx.staging_memory().allocate(status_bytes);
  for (auto v : g.outputs)
    staging_out_.push_back(p_->root[static_cast<std::size_t>(v)] >= 0
                               ? ctx.staging_memory().allocate(p_->bytes[static_cast<std::size_t>(v)])
                               : nullptr);
  uint32_t total_bindings = 0, total_texels = 0;
  for (auto& d : p_->dispatches) {
    total_bindings += d.bindings;
    for (auto& a : d.args) total_texels += a.texel ? 1 : 0;
  }
  if (!p_->dispatches.empty()) {
    VkDescriptorPoolSize ps[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max(1u, total_bindings - total_texels)},
                                  {VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER, std::max(1u, total_texels)}};
    VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pi.maxSets = static_cast<uint32_t>(p_->dispatches.size());
    pi.poolSizeCount = 2;
    pi.pPoolSizes = ps;
    vk_check(vkCreateDescriptorPool(ctx.device(), &pi, nullptr, &dpool_), "vkCreateDescriptorPool");
    std::vector<VkDescriptorSetLayout> layouts;
    for (auto& d : p_->dispatches) layouts.push_back(ctx.set_layout(d.bindings, d.texel_mask));
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = dpool_;
    ai.descriptorSetCount = static_cast<uint32_t>(layouts.size());
    ai.pSetLayouts = layouts.data();
    sets_.resize(layouts.size());
    vk_check(vkAllocateDescriptorSets(ctx.device(), &ai, sets_.data()), "vkAllocateDescriptorSets");
    std::vector<VkDescriptorBufferInfo> infos(total_bindings);
    std::vector<VkWriteDescriptorSet> writes(total_bindings);
    views_.reserve(total_texels);
    std::size_t k = 0;
    for (std::size_t i = 0; i < p_->dispatches.size(); ++i)
      for (uint32_t b = 0; b < p_->dispatches[i].bindings; ++b, ++k) {
        const buffer_ref& arg = p_->dispatches[i].args[b];
        const region& r = buffer_of(arg);
        infos[k] = {r.buffer, r.offset, r.size};
        writes[k] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        writes[k].dstSet = sets_[i];
        writes[k].dstBinding = b;
        writes[k].descriptorCount = 1;
        writes[k].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[k].pBufferInfo = &infos[k];
        if (arg.texel) {
          // The pool rounds regions up to >= 256 bytes, so a range rounded up to whole texels
          // stays inside this region; the shaders ignore the padding floats.
          VkDeviceSize texel = (arg.words ? 4 : p_->stored_size(element_type::f32)) * arg.texel;
          VkBufferViewCreateInfo vi{VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
          vi.buffer = r.buffer;
          if (arg.words) vi.format = arg.texel == 4 ? VK_FORMAT_R32G32B32A32_UINT : VK_FORMAT_R32_UINT;
          else if (p_->f16) vi.format = arg.texel == 4 ? VK_FORMAT_R16G16B16A16_SFLOAT : VK_FORMAT_R16_SFLOAT;
          else vi.format = arg.texel == 4 ? VK_FORMAT_R32G32B32A32_SFLOAT : VK_FORMAT_R32_SFLOAT;
          vi.offset = r.offset;
          vi.range = (std::max<VkDeviceSize>(r.size, 1) + texel - 1) / texel * texel;
          if (vi.range / texel > ctx.facts().limits.maxTexelBufferElements)
            throw Exception(graph::describe(g.ops[static_cast<std::size_t>(p_->dispatches[i].op)]) + ": binding " +
                            std::to_string(b) + " has more texels than " + p_->device_name + " allows in a texel buffer");
          VkBufferView view = VK_NULL_HANDLE;
          vk_check(vkCreateBufferView(ctx.device(), &vi, nullptr, &view), "vkCreateBufferView");
          views_.push_back(view);
          writes[k].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER;
          writes[k].pBufferInfo = nullptr;
          writes[k].pTexelBufferView = &views_.back();
        }
      }
    vkUpdateDescriptorSets(ctx.device(), total_bindings, writes.data(), 0, nullptr);
  }
  if (p_->profiling && ctx.timestamps()) {
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = static_cast<uint32_t>(p_->dispatches.size() + 3);
    vk_check(vkCreateQueryPool(ctx.device(), &qi, nullptr, &qpool_), "vkCreateQueryPool");
  }
  record();
}

void vk_executable::record() {
  const auto& g = p_->g;
  VkCommandBuffer cb = cmd_.cb;
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  vk_check(vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
  uint32_t q = 0;
  auto stamp = [&] {
    if (qpool_) vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qpool_, q++);
  };
  if (qpool_) vkCmdResetQueryPool(cb, qpool_, 0, static_cast<uint32_t>(p_->dispatches.size() + 3));
  stamp();
  if (status_) vkCmdFillBuffer(cb, status_->buffer, status_->offset, status_bytes, 0);
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const region& dst = *values_[static_cast<std::size_t>(g.inputs[i])];
    VkBufferCopy c{staging_in_[i]->offset, dst.offset, p_->bytes[static_cast<std::size_t>(g.inputs[i])]};
    if (c.size) vkCmdCopyBuffer(cb, staging_in_[i]->buffer, dst.buffer, 1, &c);
  }
  barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
  stamp();
  std::set<int> dirty; // roots written since the last barrier
  for (std::size_t i = 0; i < p_->dispatches.size(); ++i) {
    const auto& d = p_->dispatches[i];
    bool need = qpool_ != VK_NULL_HANDLE && i > 0; // profiling times each dispatch on its own
    std::vector<int> writes;
    for (std::size_t a = 0; a < d.args.size(); ++a) {
      if (d.args[a].k != buffer_ref::kind::value) continue;
      int root = p_->root[static_cast<std::size_t>(d.args[a].id)];
      if (dirty.count(root)) need = true;
    }
    // The last `written` bindings are the shader's outputs.
    for (std::size_t a = d.args.size() - d.written; a < d.args.size(); ++a)
      if (d.args[a].k == buffer_ref::kind::value) writes.push_back(p_->root[static_cast<std::size_t>(d.args[a].id)]);
    if (need) {
      barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
              VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
      dirty.clear();
    }
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, d.pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p_->ctx->pipeline_layout(d.bindings, d.texel_mask), 0, 1, &sets_[i], 0,
                            nullptr);
    vkCmdDispatch(cb, d.gx, d.gy, d.gz);
    for (int w : writes) dirty.insert(w);
    stamp();
  }
  barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
          VK_ACCESS_TRANSFER_READ_BIT);
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    if (!staging_out_[i]) continue;
    const region& src = *values_[static_cast<std::size_t>(p_->root[static_cast<std::size_t>(g.outputs[i])])];
    VkBufferCopy c{src.offset, staging_out_[i]->offset, p_->bytes[static_cast<std::size_t>(g.outputs[i])]};
    if (c.size) vkCmdCopyBuffer(cb, src.buffer, staging_out_[i]->buffer, 1, &c);
  }
  // The status words are written by shaders and read by the host.
  barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
          VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  stamp();
  vk_check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
}

void vk_executable::run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) {
  const auto& g = p_->g;
  using clock = std::chrono::steady_clock;
  if (inputs.size() != g.inputs.size())
    throw Exception(p_->device_name + ": expected " + std::to_string(g.inputs.size()) + " inputs, got " +
                    std::to_string(inputs.size()));
  auto t0 = clock::now();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const auto& v = g.value(g.inputs[i]);
    if (inputs[i].get_element_type() != v.type || inputs[i].get_shape() != v.shape.to_shape())
      throw Exception(p_->device_name + ": input '" + v.name + "' must be " + to_string(v.type) + " " +
                      v.shape.to_string() + ", got " + to_string(inputs[i].get_element_type()) + " " +
                      to_string(inputs[i].get_shape()));
    if (p_->narrowed(v)) narrow_copy(staging_in_[i]->mapped, inputs[i].data<float>(), static_cast<std::size_t>(inputs[i].get_size()));
    else if (inputs[i].get_byte_size()) std::memcpy(staging_in_[i]->mapped, inputs[i].data(), inputs[i].get_byte_size());
  }
  auto t1 = clock::now();
  try {
    p_->ctx->submit(cmd_.cb, cmd_.fence);
    cmd_.wait(p_->device_name);
  } catch (const Exception& e) {
    // The request fails; the command buffer stays recorded, and the fence must be unsignaled
    // and unused again so that the next request can submit (a hook or driver may have
    // submitted and still reported an error).
    cmd_.recover(*p_->ctx);
    const auto* de = dynamic_cast<const device_error*>(&e);
    throw device_error(de ? de->kind() : failure_kind::device_failure,
                       p_->device_name + ": the request failed: " + e.what());
  }
  auto t2 = clock::now();
  if (status_) {
    const auto* words = static_cast<const uint32_t*>(status_->mapped);
    if (words[0] != 0 && words[0] <= p_->reports.size()) {
      const int64_t index = static_cast<int64_t>((uint64_t(words[2]) << 32) | words[1]);
      std::string text = p_->reports[words[0] - 1];
      if (auto at = text.find("{index}"); at != std::string::npos) text.replace(at, 7, std::to_string(index));
      throw device_error(failure_kind::bad_input, p_->device_name + ": " + text);
    }
  }
  outputs.clear();
  for (std::size_t i = 0; i < g.outputs.size(); ++i) {
    const auto& v = g.value(g.outputs[i]);
    if (v.constant) {
      outputs.push_back(v.constant->clone());
      continue;
    }
    Tensor t = p_->host_outputs->tensor(v.type, v.shape.to_shape());
    if (p_->narrowed(v)) widen_copy(t.data<float>(), staging_out_[i]->mapped, static_cast<std::size_t>(t.get_size()));
    else if (t.get_byte_size()) std::memcpy(t.data(), staging_out_[i]->mapped, t.get_byte_size());
    outputs.push_back(std::move(t));
  }
  auto t3 = clock::now();
  if (!p_->profiling) return;
  auto us = [](auto a, auto b) { return std::chrono::duration<double, std::micro>(b - a).count(); };
  std::vector<double> gpu(p_->dispatches.size() + 3, 0.0);
  if (qpool_) {
    std::vector<uint64_t> ts(p_->dispatches.size() + 3);
    vk_check(vkGetQueryPoolResults(p_->ctx->device(), qpool_, 0, static_cast<uint32_t>(ts.size()), ts.size() * 8,
                                   ts.data(), 8, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
             "vkGetQueryPoolResults");
    double period = p_->ctx->facts().limits.timestampPeriod / 1000.0;
    for (std::size_t i = 0; i + 1 < ts.size(); ++i) gpu[i] = double(ts[i + 1] - ts[i]) * period;
  }
  profile_.clear();
  op_profile up;
  up.node_name = "upload";
  up.node_type = "Upload";
  up.exec_type = "vulkan:staging";
  up.real_time_us = us(t0, t1) + gpu[0];
  profile_.push_back(up);
  std::vector<double> per_op(g.ops.size(), 0.0);
  for (std::size_t i = 0; i < p_->dispatches.size(); ++i)
    per_op[static_cast<std::size_t>(p_->dispatches[i].op)] += qpool_ ? gpu[i + 1] : 0.0;
  for (std::size_t o = 0; o < g.ops.size(); ++o) {
    const auto& row = p_->rows[o];
    op_profile r;
    r.node_name = row.name;
    r.node_type = row.type;
    r.exec_type = row.optimized_out ? "alias" : row.exec_type;
    r.state = row.optimized_out ? op_profile::status::optimized_out : op_profile::status::executed;
    r.real_time_us = per_op[o];
    profile_.push_back(r);
  }
  op_profile down;
  down.node_name = "download";
  down.node_type = "Download";
  down.exec_type = "vulkan:staging";
  down.real_time_us = us(t2, t3) + gpu[p_->dispatches.size() + 1];
  profile_.push_back(down);
  (void)t2;
}

} // namespace

support check_sizes(const graph::Graph& g, const graph::Op& op, uint64_t max_range, const std::string& device_name,
                    std::size_t float_bytes) {
  auto bytes_of = [&](graph::ValueId v) -> uint64_t {
    const auto& val = g.value(v);
    std::size_t e = val.type == element_type::f32 ? float_bytes : element_size(val.type);
    if (val.constant) return static_cast<uint64_t>(val.constant->get_size()) * e;
    if (!val.shape.rank_known || !val.shape.is_static()) return 0;
    return static_cast<uint64_t>(shape_size(val.shape.to_shape())) * e;
  };
  auto check = [&](graph::ValueId v, const char* what) -> std::string {
    if (v == graph::no_value) return "";
    auto n = bytes_of(v);
    if (n <= max_range) return "";
    return graph::describe(op) + ": " + what + " '" + g.value(v).name + "' of " + std::to_string(n) +
           " bytes is larger than " + device_name + "'s largest storage buffer (" + std::to_string(max_range) + " bytes)";
  };
  for (auto v : op.inputs)
    if (auto why = check(v, "input"); !why.empty()) return {false, why};
  for (auto v : op.outputs)
    if (auto why = check(v, "output"); !why.empty()) return {false, why};
  return {true, ""};
}

void run_once(gpu_context& ctx, const std::function<void(VkCommandBuffer)>& fill) {
  command_set c(ctx);
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk_check(vkBeginCommandBuffer(c.cb, &bi), "vkBeginCommandBuffer");
  fill(c.cb);
  vk_check(vkEndCommandBuffer(c.cb), "vkEndCommandBuffer");
  ctx.submit(c.cb, c.fence);
  c.wait("upload");
}

std::unique_ptr<executable> compile_program(std::shared_ptr<gpu_context> ctx, const graph::Graph& g,
                                            const compile_config& cfg, const std::string& device_name) {
  auto p = std::make_shared<program>();
  p->ctx = ctx;
  p->device_name = device_name;
  p->g = g;
  p->profiling = cfg.profiling;
  p->host_outputs = program_output_pool(cfg, g.outputs.size());
  if (cfg.inference_precision == element_type::f16) {
    if (!ctx->facts().fp16)
      throw Exception("bad value 'f16' for property INFERENCE_PRECISION_HINT of device " + device_name + " ('" +
                      ctx->facts().name + "'): it lacks shaderFloat16 / storageBuffer16BitAccess / 16-bit texel "
                      "buffers; allowed: f32");
    p->f16 = true;
    p->f16_math = cfg.f16_arithmetic;
  } else if (cfg.inference_precision != element_type::f32) {
    throw Exception("bad value '" + to_string(cfg.inference_precision) + "' for property INFERENCE_PRECISION_HINT of device " +
                    device_name + "; allowed: f32" + (ctx->facts().fp16 ? ", f16" : ""));
  }
  const VkDeviceSize max_range = ctx->facts().limits.maxStorageBufferRange;
  p->root.assign(g.values.size(), -1);
  p->bytes.assign(g.values.size(), 0);
  // Check every op and every tensor before anything is allocated.
  for (const auto& op : g.ops) {
    auto s = query_op(g, op);
    if (s.supported) s = check_sizes(g, op, max_range, device_name, p->stored_size(element_type::f32));
    if (s.supported) s = check_loops(g, op, ctx->facts().loop_limit, device_name);
    if (!s.supported) throw Exception(device_name + ": " + s.reason);
  }
  for (std::size_t v = 0; v < g.values.size(); ++v) {
    const auto& val = g.values[v];
    if (val.constant) {
      auto bytes = static_cast<VkDeviceSize>(val.constant->get_size()) * p->stored_size(val.type);
      if (bytes > max_range)
        throw Exception(device_name + ": constant '" + val.name + "' of " + std::to_string(bytes) +
                        " bytes exceeds the device's largest storage buffer (" + std::to_string(max_range) + " bytes)");
      continue;
    }
    if (!val.shape.rank_known || !val.shape.is_static()) continue;
    p->bytes[v] = value_bytes(*p, val);
    if (p->bytes[v] > max_range)
      throw Exception(device_name + ": tensor '" + val.name + "' of " + std::to_string(p->bytes[v]) +
                      " bytes exceeds the device's largest storage buffer (" + std::to_string(max_range) + " bytes)");
  }
  for (auto v : g.inputs) {
    if (!g.value(v).shape.is_static()) throw Exception(device_name + ": input '" + g.value(v).name + "' is not static");
    p->root[static_cast<std::size_t>(v)] = v;
  }
  for (const auto& op : g.ops)
    for (auto v : op.outputs)
      if (v != graph::no_value) p->root[static_cast<std::size_t>(v)] = v;
  for (const auto& op : g.ops) p->rows.push_back({op.name, op.type, "", true});

  // The pipelines are created while lowering: a cache file read first saves the driver's work.
  if (!cfg.cache_dir.empty()) p->loaded_from_cache = ctx->load_pipeline_cache(cfg.cache_dir);
  std::vector<upload> uploads;
  builder b(*p, uploads);
  for (std::size_t i = 0; i < g.ops.size(); ++i) {
    b.set_op(static_cast<int>(i));
    op_rules().at(g.ops[i].type).lower(b);
  }
  if (!cfg.cache_dir.empty()) ctx->save_pipeline_cache(cfg.cache_dir);
  // Constants (weights, folded BatchNorm, reordered filters): uploaded once, through staging.
  if (!uploads.empty()) {
    std::vector<region_ptr> staging;
    for (auto& [dst, data, narrow] : uploads) {
      auto s = ctx->staging_memory().allocate(std::max<VkDeviceSize>(data.size() * (narrow ? 2 : 4), 4));
      if (narrow) narrow_copy(s->mapped, data.data(), data.size());
      else if (!data.empty()) std::memcpy(s->mapped, data.data(), data.size() * 4);
      staging.push_back(s);
    }
    run_once(*ctx, [&](VkCommandBuffer cb) {
      for (std::size_t i = 0; i < uploads.size(); ++i) {
        VkBufferCopy c{staging[i]->offset, uploads[i].dst->offset, staging[i]->size};
        vkCmdCopyBuffer(cb, staging[i]->buffer, uploads[i].dst->buffer, 1, &c);
      }
      barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
              VK_ACCESS_SHADER_READ_BIT);
    });
  }
  return std::make_unique<vk_executable>(p);
}

} // namespace troupe::kernels::vulkan
