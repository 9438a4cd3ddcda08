/* Small Vulkan helpers shared by the driver's C test programs (the .c files beside this one).
 *
 * A test program prints one line per check, "ok NAME ..." or "FAIL NAME: why", and every
 * message a VK_EXT_debug_utils messenger hears as "debug SEVERITY: MESSAGE" (the Python tests
 * read both). Built against the Khronos headers the driver ships (jitcoop/icd/include) and
 * linked with the system's Vulkan loader (-lvulkan).
 */
#ifndef JITCOOP_VKUTIL_H
#define JITCOOP_VKUTIL_H

#include <vulkan/vulkan.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_failures;

static inline void check(int ok, const char *name, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf(ok ? "ok %s " : "FAIL %s: ", name);
    vprintf(fmt, ap);
    printf("\n");
    fflush(stdout);
    va_end(ap);
    if (!ok) g_failures++;
}

#define VKCHECK(call)                                                                  \
    do {                                                                               \
        VkResult r_ = (call);                                                          \
        if (r_ != VK_SUCCESS) {                                                        \
            printf("FAIL setup: %s returned %d (line %d)\n", #call, (int)r_, __LINE__); \
            exit(2);                                                                   \
        }                                                                              \
    } while (0)

/* Every message the messenger hears goes to stdout; errors are also collected in g_errors
 * (cleared by the checks that look for one). */
static char g_errors[16384];

static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                 VkDebugUtilsMessageTypeFlagsEXT types,
                                                 const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
    (void)types;
    (void)user;
    const char *s = severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT     ? "error"
                    : severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT ? "warning"
                                                                                  : "info";
    printf("debug %s: %.600s\n", s, data->pMessage);    /* layers' messages list pages of structures */
    fflush(stdout);
    size_t used = strlen(g_errors);
    if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT && used + 2 < sizeof g_errors)
        snprintf(g_errors + used, sizeof g_errors - used, "%s\n", data->pMessage);
    return VK_FALSE;
}

static inline VkDebugUtilsMessengerCreateInfoEXT messenger_info(void) {
    VkDebugUtilsMessengerCreateInfoEXT m = {VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    m.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    m.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    m.pfnUserCallback = on_message;
    return m;
}

/* An instance with VK_EXT_debug_utils and a messenger for the whole of its life. */
static inline VkInstance make_instance(VkDebugUtilsMessengerEXT *messenger) {
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "jitcoop driver test";
    app.apiVersion = VK_API_VERSION_1_3;
    const char *ext = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkDebugUtilsMessengerCreateInfoEXT mi = messenger_info();
    VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pNext = &mi;
    ici.pApplicationInfo = &app;
    ici.enabledExtensionCount = 1;
    ici.ppEnabledExtensionNames = &ext;
    VkInstance inst;
    VKCHECK(vkCreateInstance(&ici, NULL, &inst));
    PFN_vkCreateDebugUtilsMessengerEXT create =
        (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(inst, "vkCreateDebugUtilsMessengerEXT");
    VKCHECK(create(inst, &mi, NULL, messenger));
    return inst;
}

static inline VkPhysicalDevice first_physical_device(VkInstance inst) {
    uint32_t n = 1;
    VkPhysicalDevice pd;
    VkResult r = vkEnumeratePhysicalDevices(inst, &n, &pd);
    if ((r != VK_SUCCESS && r != VK_INCOMPLETE) || n == 0) {
        printf("FAIL setup: no physical device\n");
        exit(2);
    }
    return pd;
}

/* A device with one compute queue, the core 1.1-1.3 features a compute application enables,
 * robustBufferAccess if `robust`, and the device extensions named (NULL-terminated); `next` is
 * chained to the create info. */
static inline VkDevice make_device_robust(VkPhysicalDevice pd, const char *const *exts, void *next, int robust) {
    VkPhysicalDeviceVulkan13Features f13 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    f13.pNext = next;
    f13.synchronization2 = VK_TRUE;
    f13.maintenance4 = VK_TRUE;
    f13.subgroupSizeControl = VK_TRUE;
    f13.computeFullSubgroups = VK_TRUE;
    VkPhysicalDeviceVulkan12Features f12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    f12.pNext = &f13;
    f12.shaderFloat16 = f12.shaderInt8 = f12.storageBuffer8BitAccess = VK_TRUE;
    f12.bufferDeviceAddress = f12.timelineSemaphore = f12.vulkanMemoryModel = VK_TRUE;
    f12.vulkanMemoryModelDeviceScope = f12.hostQueryReset = VK_TRUE;
    VkPhysicalDeviceVulkan11Features f11 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    f11.pNext = &f12;
    f11.storageBuffer16BitAccess = VK_TRUE;
    VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &f11;
    f2.features.shaderInt16 = f2.features.shaderInt64 = VK_TRUE;
    f2.features.robustBufferAccess = robust ? VK_TRUE : VK_FALSE;
    float prio = 1.0f;
    VkDeviceQueueCreateInfo q = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    q.queueFamilyIndex = 0;
    q.queueCount = 1;
    q.pQueuePriorities = &prio;
    uint32_t n = 0;
    while (exts && exts[n]) n++;
    VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = &f2;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &q;
    dci.enabledExtensionCount = n;
    dci.ppEnabledExtensionNames = exts;
    VkDevice dev;
    VKCHECK(vkCreateDevice(pd, &dci, NULL, &dev));
    return dev;
}

static inline VkDevice make_device(VkPhysicalDevice pd, const char *const *exts, void *next) {
    return make_device_robust(pd, exts, next, 0);
}

/* A descriptor set layout of n storage buffers, bindings 0..n-1 (n <= 16), for compute. */
static inline VkDescriptorSetLayout storage_set_layout(VkDevice dev, uint32_t n) {
    VkDescriptorSetLayoutBinding lb[16];
    for (uint32_t i = 0; i < n; i++) {
        memset(&lb[i], 0, sizeof lb[i]);
        lb[i].binding = i;
        lb[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        lb[i].descriptorCount = 1;
        lb[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo lci = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    lci.bindingCount = n;
    lci.pBindings = lb;
    VkDescriptorSetLayout sl;
    VKCHECK(vkCreateDescriptorSetLayout(dev, &lci, NULL, &sl));
    return sl;
}

/* A host-visible, coherent buffer with a device address, its memory and its mapping. */
typedef struct {
    VkBuffer buffer;
    VkDeviceMemory memory;
    void *map;
    VkDeviceSize size;
} Buf;

static inline int host_memory_type(VkPhysicalDevice pd, uint32_t bits) {
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (mp.memoryTypes[i].propertyFlags & want) == want) return (int)i;
    return -1;
}

static inline Buf make_buffer(VkPhysicalDevice pd, VkDevice dev, VkDeviceSize size, VkBufferUsageFlags usage) {
    Buf b = {0};
    b.size = size;
    VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = size;
    bci.usage = usage | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    VKCHECK(vkCreateBuffer(dev, &bci, NULL, &b.buffer));
    VkMemoryRequirements mr;
    vkGetBufferMemoryRequirements(dev, b.buffer, &mr);
    VkMemoryAllocateFlagsInfo fi = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    fi.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.pNext = &fi;
    mai.allocationSize = mr.size;
    mai.memoryTypeIndex = (uint32_t)host_memory_type(pd, mr.memoryTypeBits);
    VKCHECK(vkAllocateMemory(dev, &mai, NULL, &b.memory));
    VKCHECK(vkBindBufferMemory(dev, b.buffer, b.memory, 0));
    VKCHECK(vkMapMemory(dev, b.memory, 0, VK_WHOLE_SIZE, 0, &b.map));
    memset(b.map, 0, (size_t)size);
    return b;
}

static inline void free_buffer(VkDevice dev, Buf *b) {
    vkDestroyBuffer(dev, b->buffer, NULL);
    vkFreeMemory(dev, b->memory, NULL);
}

static inline void *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("FAIL setup: cannot open %s\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    void *p = malloc((size_t)n);
    if (fread(p, 1, (size_t)n, f) != (size_t)n) {
        printf("FAIL setup: cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
    *size = (size_t)n;
    return p;
}

static inline void write_file(const char *dir, const char *name, const void *data, size_t size) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size) {
        printf("FAIL setup: cannot write %s\n", path);
        exit(2);
    }
    fclose(f);
}

static inline VkShaderModule load_shader(VkDevice dev, const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t size;
    void *code = read_file(path, &size);
    VkShaderModuleCreateInfo ci = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    ci.codeSize = size;
    ci.pCode = code;
    VkShaderModule m;
    VKCHECK(vkCreateShaderModule(dev, &ci, NULL, &m));
    free(code);
    return m;
}

/* A command buffer recorded by `record`, submitted and waited for; returns the fence wait's result. */
static inline VkResult run_once(VkDevice dev, VkQueue queue, VkCommandPool pool,
                         void (*record)(VkCommandBuffer, void *), void *user) {
    VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cb;
    VKCHECK(vkAllocateCommandBuffers(dev, &ai, &cb));
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    VKCHECK(vkBeginCommandBuffer(cb, &bi));
    record(cb, user);
    VKCHECK(vkEndCommandBuffer(cb));
    VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    VKCHECK(vkCreateFence(dev, &fci, NULL, &fence));
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    VkResult r = vkQueueSubmit(queue, 1, &si, fence);
    if (r == VK_SUCCESS) r = vkWaitForFences(dev, 1, &fence, VK_TRUE, 600ull * 1000000000ull);
    vkDestroyFence(dev, fence, NULL);
    vkFreeCommandBuffers(dev, pool, 1, &cb);
    return r;
}

#endif
