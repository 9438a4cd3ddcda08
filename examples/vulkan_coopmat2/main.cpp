// A Vulkan compute application with a VK_NV_cooperative_matrix2 shader, as it would run on a GPU:
// it creates a device with the extension's features, uploads two float16 matrices, dispatches
// tile_gemm.spv (C = A x B on 16 x 16 tiles through tensor layouts), reads C back and compares it
// with a CPU product. Nothing in it knows about jitcoop: on a machine without such a GPU, run it
// on jitcoop's Vulkan driver:
//
//     c++ -std=c++17 -O2 -I"$(jitcoop icd --include)" main.cpp -o tile_gemm -lvulkan
//     VK_DRIVER_FILES="$(jitcoop icd --path)" ./tile_gemm tile_gemm.spv 70 50 40
//
// Arguments: the shader, then M N K (default 64 64 64). Exit status 0 when C matches.
#include <vulkan/vulkan.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

void check(VkResult r, const char *what) {
    if (r != VK_SUCCESS) throw std::runtime_error(std::string(what) + " failed: VkResult " + std::to_string(r));
}

// float <-> IEEE half, round to nearest even (the inputs here are exact in half anyway)
uint16_t to_half(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xFFu, man = x & 0x7FFFFFu;
    if (exp == 0xFF) return uint16_t(sign | 0x7C00u | (man ? 0x200u : 0u));
    int e = int(exp) - 127 + 15;
    if (e >= 31) return uint16_t(sign | 0x7C00u);
    if (e <= 0) {                                        // subnormal or zero
        if (e < -10) return uint16_t(sign);
        man |= 0x800000u;
        uint32_t shift = uint32_t(14 - e), half = man >> shift, rest = man & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rest > mid || (rest == mid && (half & 1))) half++;
        return uint16_t(sign | half);
    }
    uint32_t half = sign | (uint32_t(e) << 10) | (man >> 13), rest = man & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1))) half++;
    return uint16_t(half);
}

float from_half(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu;
    float v = exp == 0 ? std::ldexp(float(man), -24) : exp == 31 ? (man ? NAN : INFINITY)
                                                                  : std::ldexp(float(man | 0x400u), int(exp) - 25);
    return sign ? -v : v;
}

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT, VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT *data, void *) {
    std::fprintf(stderr, "vulkan: %s\n", data->pMessage);
    return VK_FALSE;
}

struct Buffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    void *data = nullptr;
};

Buffer make_buffer(VkPhysicalDevice pd, VkDevice dev, VkDeviceSize size) {
    Buffer b;
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = size;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    check(vkCreateBuffer(dev, &bci, nullptr, &b.buffer), "vkCreateBuffer");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev, b.buffer, &req);
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = UINT32_MAX;
    for (uint32_t i = 0; i < mp.memoryTypeCount && type == UINT32_MAX; i++)
        if ((req.memoryTypeBits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) type = i;
    if (type == UINT32_MAX) throw std::runtime_error("no host-visible, coherent memory type");
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = type;
    check(vkAllocateMemory(dev, &mai, nullptr, &b.memory), "vkAllocateMemory");
    check(vkBindBufferMemory(dev, b.buffer, b.memory, 0), "vkBindBufferMemory");
    check(vkMapMemory(dev, b.memory, 0, VK_WHOLE_SIZE, 0, &b.data), "vkMapMemory");
    return b;
}

bool has_extension(VkPhysicalDevice pd, const char *name) {
    uint32_t n = 0;
    vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
    std::vector<VkExtensionProperties> ext(n);
    vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, ext.data());
    for (const auto &e : ext)
        if (std::strcmp(e.extensionName, name) == 0) return true;
    return false;
}

int run(const char *spv_path, uint32_t M, uint32_t N, uint32_t K) {
    std::ifstream file(spv_path, std::ios::binary);
    if (!file) throw std::runtime_error(std::string("cannot read ") + spv_path);
    std::vector<char> code((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());

    // instance, with a messenger: a driver's errors (jitcoop names the failing instruction) show up
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "tile_gemm";
    app.apiVersion = VK_API_VERSION_1_3;
    const char *inst_ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkDebugUtilsMessengerCreateInfoEXT mci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
    mci.pfnUserCallback = on_message;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pNext = &mci;
    ici.pApplicationInfo = &app;
    ici.enabledExtensionCount = 1;
    ici.ppEnabledExtensionNames = &inst_ext;
    VkInstance instance;
    check(vkCreateInstance(&ici, nullptr, &instance), "vkCreateInstance");

    // a physical device with coopmat2 tensor addressing
    uint32_t count = 0;
    vkEnumeratePhysicalDevices(instance, &count, nullptr);
    std::vector<VkPhysicalDevice> pds(count);
    vkEnumeratePhysicalDevices(instance, &count, pds.data());
    VkPhysicalDevice pd = VK_NULL_HANDLE;
    for (VkPhysicalDevice p : pds) {
        if (!has_extension(p, VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME)) continue;
        VkPhysicalDeviceCooperativeMatrix2FeaturesNV f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
        VkPhysicalDeviceFeatures2 f{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &f2};
        vkGetPhysicalDeviceFeatures2(p, &f);
        if (f2.cooperativeMatrixTensorAddressing) {
            pd = p;
            break;
        }
    }
    if (pd == VK_NULL_HANDLE) throw std::runtime_error("no device offers VK_NV_cooperative_matrix2 tensor addressing");
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pd, &props);
    std::printf("device: %s\n", props.deviceName);

    // a device with the features the shader uses
    VkPhysicalDeviceCooperativeMatrix2FeaturesNV cm2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
    cm2.cooperativeMatrixTensorAddressing = VK_TRUE;
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR cm{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR, &cm2};
    cm.cooperativeMatrix = VK_TRUE;
    VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &cm};
    v12.shaderFloat16 = VK_TRUE;
    v12.vulkanMemoryModel = VK_TRUE;
    VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &v12};
    v11.storageBuffer16BitAccess = VK_TRUE;
    const char *dev_ext[] = {VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME, VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME};
    float priority = 1.0f;
    VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = 0;                 // a compute queue family; checked next
    qci.queueCount = 1;
    qci.pQueuePriorities = &priority;
    uint32_t nfam = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nfam, nullptr);
    std::vector<VkQueueFamilyProperties> fams(nfam);
    vkGetPhysicalDeviceQueueFamilyProperties(pd, &nfam, fams.data());
    while (qci.queueFamilyIndex < nfam && !(fams[qci.queueFamilyIndex].queueFlags & VK_QUEUE_COMPUTE_BIT))
        qci.queueFamilyIndex++;
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &v11};
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    dci.enabledExtensionCount = 2;
    dci.ppEnabledExtensionNames = dev_ext;
    VkDevice dev;
    check(vkCreateDevice(pd, &dci, nullptr, &dev), "vkCreateDevice");
    VkQueue queue;
    vkGetDeviceQueue(dev, qci.queueFamilyIndex, 0, &queue);

    // A and B: multiples of 1/8 between -2 and 2, exact in float16; C from the shader
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> dist(-16, 16);
    Buffer a = make_buffer(pd, dev, VkDeviceSize(M) * K * 2), b = make_buffer(pd, dev, VkDeviceSize(K) * N * 2),
           c = make_buffer(pd, dev, VkDeviceSize(M) * N * 4);
    auto *ha = static_cast<uint16_t *>(a.data), *hb = static_cast<uint16_t *>(b.data);
    for (size_t i = 0; i < size_t(M) * K; i++) ha[i] = to_half(float(dist(rng)) / 8);
    for (size_t i = 0; i < size_t(K) * N; i++) hb[i] = to_half(float(dist(rng)) / 8);
    std::memset(c.data, 0, size_t(M) * N * 4);

    // descriptors, the pipeline (M, N, K as specialization constants), one dispatch
    VkDescriptorSetLayoutBinding lb[3] = {};
    for (uint32_t i = 0; i < 3; i++) lb[i] = {i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr};
    VkDescriptorSetLayoutCreateInfo lci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    lci.bindingCount = 3;
    lci.pBindings = lb;
    VkDescriptorSetLayout set_layout;
    check(vkCreateDescriptorSetLayout(dev, &lci, nullptr, &set_layout), "vkCreateDescriptorSetLayout");
    VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    plci.setLayoutCount = 1;
    plci.pSetLayouts = &set_layout;
    VkPipelineLayout layout;
    check(vkCreatePipelineLayout(dev, &plci, nullptr, &layout), "vkCreatePipelineLayout");
    VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smci.codeSize = code.size();
    smci.pCode = reinterpret_cast<const uint32_t *>(code.data());
    VkShaderModule module;
    check(vkCreateShaderModule(dev, &smci, nullptr, &module), "vkCreateShaderModule");
    const uint32_t sizes[3] = {M, N, K};
    const VkSpecializationMapEntry entries[3] = {{0, 0, 4}, {1, 4, 4}, {2, 8, 4}};
    VkSpecializationInfo spec{3, entries, sizeof sizes, sizes};
    VkComputePipelineCreateInfo cpci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cpci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, nullptr, 0, VK_SHADER_STAGE_COMPUTE_BIT, module,
                  "main", &spec};
    cpci.layout = layout;
    VkPipeline pipeline;
    check(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpci, nullptr, &pipeline), "vkCreateComputePipelines");
    VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 3};
    VkDescriptorPoolCreateInfo dpci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpci.maxSets = 1;
    dpci.poolSizeCount = 1;
    dpci.pPoolSizes = &ps;
    VkDescriptorPool pool;
    check(vkCreateDescriptorPool(dev, &dpci, nullptr, &pool), "vkCreateDescriptorPool");
    VkDescriptorSetAllocateInfo dsai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    dsai.descriptorPool = pool;
    dsai.descriptorSetCount = 1;
    dsai.pSetLayouts = &set_layout;
    VkDescriptorSet set;
    check(vkAllocateDescriptorSets(dev, &dsai, &set), "vkAllocateDescriptorSets");
    VkDescriptorBufferInfo infos[3] = {{a.buffer, 0, VK_WHOLE_SIZE}, {b.buffer, 0, VK_WHOLE_SIZE}, {c.buffer, 0, VK_WHOLE_SIZE}};
    VkWriteDescriptorSet writes[3] = {};
    for (uint32_t i = 0; i < 3; i++) {
        writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        writes[i].dstSet = set;
        writes[i].dstBinding = i;
        writes[i].descriptorCount = 1;
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[i].pBufferInfo = &infos[i];
    }
    vkUpdateDescriptorSets(dev, 3, writes, 0, nullptr);

    VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpi.queueFamilyIndex = qci.queueFamilyIndex;
    VkCommandPool cmd_pool;
    check(vkCreateCommandPool(dev, &cpi, nullptr, &cmd_pool), "vkCreateCommandPool");
    VkCommandBufferAllocateInfo cbai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cbai.commandPool = cmd_pool;
    cbai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cbai.commandBufferCount = 1;
    VkCommandBuffer cmd;
    check(vkAllocateCommandBuffers(dev, &cbai, &cmd), "vkAllocateCommandBuffers");
    VkCommandBufferBeginInfo cbbi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    cbbi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    check(vkBeginCommandBuffer(cmd, &cbbi), "vkBeginCommandBuffer");
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, nullptr);
    vkCmdDispatch(cmd, (N + 15) / 16, (M + 15) / 16, 1);
    VkMemoryBarrier barrier{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    barrier.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    barrier.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0,
                         nullptr, 0, nullptr);
    check(vkEndCommandBuffer(cmd), "vkEndCommandBuffer");
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    check(vkCreateFence(dev, &fci, nullptr, &fence), "vkCreateFence");
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cmd;
    check(vkQueueSubmit(queue, 1, &si, fence), "vkQueueSubmit");
    check(vkWaitForFences(dev, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");

    // compare with the product on the CPU (double sums: exact for these inputs)
    const float *hc = static_cast<const float *>(c.data);
    double worst = 0;
    for (uint32_t i = 0; i < M; i++)
        for (uint32_t j = 0; j < N; j++) {
            double s = 0;
            for (uint32_t k = 0; k < K; k++) s += double(from_half(ha[i * K + k])) * from_half(hb[k * N + j]);
            worst = std::fmax(worst, std::fabs(s - hc[i * N + j]));
        }
    std::printf("C = A x B, %u x %u x %u: largest difference from the CPU product %g\n", M, N, K, worst);

    vkDestroyFence(dev, fence, nullptr);
    vkDestroyCommandPool(dev, cmd_pool, nullptr);
    vkDestroyDescriptorPool(dev, pool, nullptr);
    vkDestroyPipeline(dev, pipeline, nullptr);
    vkDestroyShaderModule(dev, module, nullptr);
    vkDestroyPipelineLayout(dev, layout, nullptr);
    vkDestroyDescriptorSetLayout(dev, set_layout, nullptr);
    for (Buffer *buf : {&a, &b, &c}) {
        vkDestroyBuffer(dev, buf->buffer, nullptr);
        vkFreeMemory(dev, buf->memory, nullptr);
    }
    vkDestroyDevice(dev, nullptr);
    vkDestroyInstance(instance, nullptr);
    // products of eighths are multiples of 1/64 up to 4 in size: float32 sums of them are exact
    // while below 2^24 / 64, so any correct device gives the CPU's numbers exactly
    return worst == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char **argv) {
    try {
        const char *spv = argc > 1 ? argv[1] : "tile_gemm.spv";
        uint32_t M = argc > 2 ? uint32_t(std::stoul(argv[2])) : 64, N = argc > 3 ? uint32_t(std::stoul(argv[3])) : 64,
                 K = argc > 4 ? uint32_t(std::stoul(argv[4])) : 64;
        int rc = run(spv, M, N, K);
        std::printf("%s\n", rc == 0 ? "OK" : "MISMATCH");
        return rc;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "tile_gemm: %s\n", e.what());
        return 2;
    }
}
