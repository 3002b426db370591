#include "kernels/vulkan/context.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <cstring>

#include <troupe/exception.hpp>

#include "kernels/device.hpp"
#include "kernels/vulkan/spirv_table.hpp"
#include "kernels/vulkan/vk_check.hpp"

namespace troupe::kernels::vulkan {

uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

std::shared_ptr<vk_instance> vk_instance::create(std::string& why) {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "troupe";
  app.pEngineName = "troupe";
  app.apiVersion = VK_API_VERSION_1_1;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  auto inst = std::shared_ptr<vk_instance>(new vk_instance());
  VkResult r = vkCreateInstance(&ci, nullptr, &inst->instance_);
  if (r != VK_SUCCESS) {
    inst->instance_ = VK_NULL_HANDLE;
    why = "vkCreateInstance failed with " + result_name(r);
    return nullptr;
  }
  return inst;
}

vk_instance::~vk_instance() {
  if (instance_) vkDestroyInstance(instance_, nullptr);
}

int gpu_context::compute_family(VkPhysicalDevice phys) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, nullptr);
  std::vector<VkQueueFamilyProperties> fams(n);
  vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, fams.data());
  int any = -1;
  for (uint32_t i = 0; i < n; ++i) {
    if (!(fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || fams[i].queueCount == 0) continue;
    if (!(fams[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) return static_cast<int>(i); // a dedicated compute queue
    if (any < 0) any = static_cast<int>(i);
  }
  return any;
}

device_facts gpu_context::describe(VkPhysicalDevice phys, uint32_t index) {
  device_facts f;
  f.index = index;
  VkPhysicalDeviceProperties base;
  vkGetPhysicalDeviceProperties(phys, &base);
  f.api_version = base.apiVersion;
  f.limits = base.limits;
  f.name = base.deviceName;
  if (f.name.find("llvmpipe") != std::string::npos) f.loop_limit = 65535;
  switch (base.deviceType) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: f.type = "discrete"; break;
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: f.type = "integrated"; break;
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: f.type = "virtual"; break;
  case VK_PHYSICAL_DEVICE_TYPE_CPU: f.type = "cpu"; break;
  default: f.type = "other";
  }
  f.driver_version = std::to_string(base.driverVersion);
  if (base.apiVersion >= VK_API_VERSION_1_1) {
    VkPhysicalDeviceSubgroupProperties sub{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceIDProperties ids{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
    sub.pNext = &ids;
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    p2.pNext = &sub;
    vkGetPhysicalDeviceProperties2(phys, &p2);
    f.subgroup_size = sub.subgroupSize;
    std::memcpy(f.uuid.data(), ids.deviceUUID, 16);
  }
  if (base.apiVersion >= VK_API_VERSION_1_2) {
    VkPhysicalDeviceShaderFloat16Int8Features f16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
    VkPhysicalDevice16BitStorageFeatures s16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    f16.pNext = &s16;
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &f16;
    vkGetPhysicalDeviceFeatures2(phys, &f2);
    f.fp16 = f16.shaderFloat16 && s16.storageBuffer16BitAccess;
    // The f16 variants bind r16f / rgba16f storage texel buffers.
    for (VkFormat fmt : {VK_FORMAT_R16_SFLOAT, VK_FORMAT_R16G16B16A16_SFLOAT}) {
      VkFormatProperties fp;
      vkGetPhysicalDeviceFormatProperties(phys, fmt, &fp);
      if (!(fp.bufferFeatures & VK_FORMAT_FEATURE_STORAGE_TEXEL_BUFFER_BIT)) f.fp16 = false;
    }
  }
  VkPhysicalDeviceFeatures feats;
  vkGetPhysicalDeviceFeatures(phys, &feats);
  f.int64 = feats.shaderInt64 == VK_TRUE;
  f.float64 = feats.shaderFloat64 == VK_TRUE;
  VkPhysicalDeviceMemoryProperties mem;
  vkGetPhysicalDeviceMemoryProperties(phys, &mem);
  for (uint32_t i = 0; i < mem.memoryHeapCount; ++i)
    if (mem.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) f.memory_bytes += mem.memoryHeaps[i].size;
  return f;
}

gpu_context::gpu_context(std::shared_ptr<vk_instance> inst, VkPhysicalDevice phys, uint32_t index)
    : instance_(std::move(inst)), phys_(phys), facts_(describe(phys, index)) {
  int fam = compute_family(phys);
  if (fam < 0) throw Exception("Vulkan: device '" + facts_.name + "' has no compute queue");
  queue_family_ = static_cast<uint32_t>(fam);
  {
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(phys, &props);
    cache_id_.vendor_id = props.vendorID;
    cache_id_.device_id = props.deviceID;
    std::copy(std::begin(props.pipelineCacheUUID), std::end(props.pipelineCacheUUID), cache_id_.uuid.begin());
  }
  {
    uint32_t n = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, nullptr);
    std::vector<VkQueueFamilyProperties> fams(n);
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &n, fams.data());
    timestamp_bits_ = facts_.limits.timestampComputeAndGraphics ? fams[queue_family_].timestampValidBits : 0;
  }
  float prio = 1.0f;
  VkDeviceQueueCreateInfo qi{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  qi.queueFamilyIndex = queue_family_;
  qi.queueCount = 1;
  qi.pQueuePriorities = &prio;
  VkDeviceCreateInfo di{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &qi;
  // The f16 shader variants need these two features switched on.
  VkPhysicalDeviceShaderFloat16Int8Features f16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDevice16BitStorageFeatures s16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  if (facts_.fp16) {
    f16.shaderFloat16 = VK_TRUE;
    s16.storageBuffer16BitAccess = VK_TRUE;
    f16.pNext = &s16;
    di.pNext = &f16;
  }
  // The "_i64" variants declare Int64, the "_f64" ones Float64.
  VkPhysicalDeviceFeatures enabled{};
  enabled.shaderInt64 = facts_.int64 ? VK_TRUE : VK_FALSE;
  enabled.shaderFloat64 = facts_.float64 ? VK_TRUE : VK_FALSE;
  di.pEnabledFeatures = &enabled;
  vk_check(vkCreateDevice(phys, &di, nullptr, &device_), "vkCreateDevice");
  try {
    vkGetDeviceQueue(device_, queue_family_, 0, &queue_);
    VkPipelineCacheCreateInfo pc{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    vk_check(vkCreatePipelineCache(device_, &pc, nullptr, &cache_), "vkCreatePipelineCache");
    for (const auto& blob : spirv_blobs()) {
      const std::string name = blob.name;
      const bool f16_variant = name.find("_f16") != std::string::npos;
      if (f16_variant && !facts_.fp16) continue; // they declare Float16 / 16-bit storage
      if (name.find("_i64") != std::string::npos && !facts_.int64) continue;
      if (name.find("_f64") != std::string::npos && !facts_.float64) continue;
      load_shader(name, blob.words, blob.count);
    }
    VkDeviceSize align = std::max<VkDeviceSize>(facts_.limits.minStorageBufferOffsetAlignment, 256);
    VkDeviceSize max_alloc = 1ull << 31; // maxMemoryAllocationSize is Vulkan 1.1 maintenance3
    {
      VkPhysicalDeviceMaintenance3Properties m3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
      VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
      p2.pNext = &m3;
      vkGetPhysicalDeviceProperties2(phys, &p2);
      if (m3.maxMemoryAllocationSize) max_alloc = m3.maxMemoryAllocationSize;
    }
    device_pool_ = std::make_shared<memory_pool>(device_, phys, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 64ull << 20,
                                                  align, max_alloc, "device memory of " + facts_.name);
    staging_pool_ = std::make_shared<memory_pool>(
        device_, phys, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
        VK_MEMORY_PROPERTY_HOST_CACHED_BIT, 16ull << 20, align, max_alloc, "staging memory of " + facts_.name);
  } catch (...) {
    release();
    throw;
  }
}

gpu_context::~gpu_context() { release(); }

void gpu_context::release() {
  if (!device_) return;
  vkDeviceWaitIdle(device_);
  device_pool_.reset(); // every region is gone by now: executables hold this context
  staging_pool_.reset();
  for (auto& [k, p] : pipelines_) vkDestroyPipeline(device_, p, nullptr);
  pipelines_.clear();
  for (auto& [n, l] : layouts_) {
    vkDestroyPipelineLayout(device_, l.second, nullptr);
    vkDestroyDescriptorSetLayout(device_, l.first, nullptr);
  }
  layouts_.clear();
  for (auto& [n, m] : modules_) vkDestroyShaderModule(device_, m, nullptr);
  modules_.clear();
  if (cache_) vkDestroyPipelineCache(device_, cache_, nullptr);
  cache_ = VK_NULL_HANDLE;
  vkDestroyDevice(device_, nullptr);
  device_ = VK_NULL_HANDLE;
}

void gpu_context::submit(VkCommandBuffer cb, VkFence fence) {
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  std::lock_guard lock(queue_mutex_);
  VkResult r = submit_hook_ ? submit_hook_(queue_, si, fence) : vkQueueSubmit(queue_, 1, &si, fence);
  if (r == VK_SUCCESS) return;
  std::string why = "Vulkan: vkQueueSubmit on '" + facts_.name + "' failed with " + result_name(r);
  if (r == VK_ERROR_DEVICE_LOST) why += " (the device was lost)";
  throw device_error(r == VK_ERROR_DEVICE_LOST ? failure_kind::device_lost : failure_kind::device_failure, why);
}

void gpu_context::set_submit_hook(submit_hook hook) {
  std::lock_guard lock(queue_mutex_);
  submit_hook_ = std::move(hook);
}

void gpu_context::wait_idle() {
  std::lock_guard lock(queue_mutex_);
  (void)vkQueueWaitIdle(queue_); // VK_ERROR_DEVICE_LOST: nothing left to wait for
}

VkShaderModule gpu_context::load_shader(const std::string& name, const uint32_t* words, std::size_t count) {
  auto fail = [&](const std::string& why) -> Exception {
    return Exception("Vulkan: shader '" + name + "' failed to load on '" + facts_.name + "': " + why);
  };
  // A driver may trust the words it is given: check what can be checked cheaply first.
  constexpr uint32_t spirv_magic = 0x07230203u;
  if (!words || count < 5) throw fail(std::to_string(count) + " words is shorter than a SPIR-V header");
  if (words[0] != spirv_magic) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", words[0]);
    throw fail(std::string("not SPIR-V (magic number ") + buf + ")");
  }
  for (std::size_t at = 5; at < count;) {
    uint32_t len = words[at] >> 16;
    if (len == 0 || at + len > count)
      throw fail("instruction at word " + std::to_string(at) + " has length " + std::to_string(len) + " (module of " +
                 std::to_string(count) + " words): truncated or corrupt");
    at += len;
  }
  VkShaderModuleCreateInfo si{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  si.codeSize = count * sizeof(uint32_t);
  si.pCode = words;
  VkShaderModule m = VK_NULL_HANDLE;
  VkResult r = vkCreateShaderModule(device_, &si, nullptr, &m);
  if (r != VK_SUCCESS) throw fail("vkCreateShaderModule returned " + result_name(r));
  std::lock_guard lock(pipeline_mutex_);
  if (auto it = modules_.find(name); it != modules_.end()) vkDestroyShaderModule(device_, it->second, nullptr);
  modules_[name] = m;
  return m;
}

namespace {
std::pair<VkDescriptorSetLayout, VkPipelineLayout> make_layout(VkDevice dev, uint32_t bindings, uint32_t texel_mask) {
  std::vector<VkDescriptorSetLayoutBinding> b(bindings);
  for (uint32_t i = 0; i < bindings; ++i) {
    b[i].binding = i;
    b[i].descriptorType = (texel_mask >> i) & 1u ? VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    b[i].descriptorCount = 1;
    b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  li.bindingCount = bindings;
  li.pBindings = b.data();
  std::pair<VkDescriptorSetLayout, VkPipelineLayout> r{VK_NULL_HANDLE, VK_NULL_HANDLE};
  vk_check(vkCreateDescriptorSetLayout(dev, &li, nullptr, &r.first), "vkCreateDescriptorSetLayout");
  VkPipelineLayoutCreateInfo pi{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pi.setLayoutCount = 1;
  pi.pSetLayouts = &r.first;
  VkResult res = vkCreatePipelineLayout(dev, &pi, nullptr, &r.second);
  if (res != VK_SUCCESS) {
    vkDestroyDescriptorSetLayout(dev, r.first, nullptr);
    throw_vk_error(res, "vkCreatePipelineLayout");
  }
  return r;
}
} // namespace

VkDescriptorSetLayout gpu_context::set_layout(uint32_t bindings, uint32_t texel_mask) {
  std::lock_guard lock(pipeline_mutex_);
  uint64_t key = bindings | uint64_t(texel_mask) << 32;
  auto it = layouts_.find(key);
  if (it == layouts_.end()) it = layouts_.emplace(key, make_layout(device_, bindings, texel_mask)).first;
  return it->second.first;
}

VkPipelineLayout gpu_context::pipeline_layout(uint32_t bindings, uint32_t texel_mask) {
  set_layout(bindings, texel_mask);
  std::lock_guard lock(pipeline_mutex_);
  return layouts_.at(bindings | uint64_t(texel_mask) << 32).second;
}

bool gpu_context::has_shader(const std::string& shader) const {
  std::lock_guard lock(pipeline_mutex_);
  return modules_.count(shader) != 0;
}

VkPipeline gpu_context::pipeline(const std::string& shader, uint32_t bindings, const spec_map& spec, uint32_t texel_mask) {
  std::string key = shader;
  key.push_back('/');
  key.append(std::to_string(bindings));
  if (texel_mask) {
    key.push_back('t');
    key.append(std::to_string(texel_mask));
  }
  for (auto& [id, w] : spec) {
    char buf[32];
    std::snprintf(buf, sizeof buf, ":%u=%u", id, w);
    key.append(buf);
  }
  VkPipelineLayout layout = pipeline_layout(bindings, texel_mask);
  std::lock_guard lock(pipeline_mutex_);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second;
  auto mod = modules_.find(shader);
  if (mod == modules_.end()) throw Exception("Vulkan: no embedded shader named '" + shader + "'");
  std::vector<VkSpecializationMapEntry> entries;
  std::vector<uint32_t> data;
  for (auto& [id, w] : spec) {
    entries.push_back({id, static_cast<uint32_t>(data.size() * 4), 4});
    data.push_back(w);
  }
  VkSpecializationInfo si{static_cast<uint32_t>(entries.size()), entries.data(), data.size() * 4, data.data()};
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = mod->second;
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = &si;
  ci.layout = layout;
  VkPipeline p = VK_NULL_HANDLE;
  VkResult r = vkCreateComputePipelines(device_, cache_, 1, &ci, nullptr, &p);
  if (r != VK_SUCCESS)
    throw Exception("Vulkan: vkCreateComputePipelines for shader '" + shader + "' failed with " + result_name(r));
  pipelines_[key] = p;
  return p;
}

std::size_t gpu_context::pipeline_count() const {
  std::lock_guard lock(pipeline_mutex_);
  return pipelines_.size();
}

bool gpu_context::load_pipeline_cache(const std::string& dir) {
  std::lock_guard lock(pipeline_mutex_);
  if (auto it = cache_loaded_.find(dir); it != cache_loaded_.end()) return it->second;
  bool& loaded = cache_loaded_[dir];
  std::string why;
  auto blob = read_cache_file(cache_file_path(dir, cache_id_), cache_id_, why);
  if (!blob) return loaded = false;
  VkPipelineCacheCreateInfo pc{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  pc.initialDataSize = blob->size();
  pc.pInitialData = blob->data();
  VkPipelineCache from_file = VK_NULL_HANDLE;
  if (vkCreatePipelineCache(device_, &pc, nullptr, &from_file) != VK_SUCCESS) return loaded = false;
  // Only a blob with pipelines past Vulkan's header saves work (lavapipe of Mesa 22.3 writes the
  // header alone): that is what LOADED_FROM_CACHE reports.
  uint32_t header_size = 0;
  std::memcpy(&header_size, blob->data(), sizeof header_size);
  loaded = vkMergePipelineCaches(device_, cache_, 1, &from_file) == VK_SUCCESS && blob->size() > header_size;
  vkDestroyPipelineCache(device_, from_file, nullptr);
  return loaded;
}

void gpu_context::save_pipeline_cache(const std::string& dir) {
  std::lock_guard lock(pipeline_mutex_);
  auto [at, fresh] = cache_saved_at_.try_emplace(dir, 0);
  if (!fresh && at->second == pipelines_.size()) return;
  std::size_t size = 0;
  vk_check(vkGetPipelineCacheData(device_, cache_, &size, nullptr), "vkGetPipelineCacheData");
  std::vector<uint8_t> blob(size);
  vk_check(vkGetPipelineCacheData(device_, cache_, &size, blob.data()), "vkGetPipelineCacheData");
  blob.resize(size);
  write_cache_file(cache_file_path(dir, cache_id_), blob);
  at->second = pipelines_.size();
}

} // namespace troupe::kernels::vulkan
