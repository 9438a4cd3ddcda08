/* vkrun: run SPIR-V compute shaders through Vulkan from a text manifest, writing back the buffers.
 *
 *   vkrun [-o OUTDIR] [-q] MANIFEST...
 *
 * One Vulkan instance and device for all manifests; each case creates (or reuses) its pipeline,
 * uploads its buffers, dispatches once and writes the buffers back. Needs only libvulkan.so.1
 * (dlopen'd at run time) and the Vulkan headers at build time (tools/vkrun/build.sh).
 *
 * Manifest (one directive a line, '#' starts a comment, paths relative to the manifest's folder;
 * output paths relative to OUTDIR, default the manifest's folder):
 *
 *   case NAME                  starts a case (ends at the next 'case' or end of file)
 *   spv PATH                   SPIR-V module
 *   entry NAME                 entry point (default main)
 *   spec ID VALUE              specialization constant (32-bit; decimal or 0x hex), repeatable
 *   groups X [Y [Z]]           workgroup counts
 *   push PATH                  push-constant bytes (a multiple of 4 bytes)
 *   subgroup N                 required subgroup size (VK_EXT_subgroup_size_control, core 1.3)
 *   fullsubgroups              VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT
 *   repeat N                   after the first dispatch, N more of the same command buffer, timed
 *                              one by one (the buffers are written back after the last one)
 *   bind BINDING SIZE IN OUT   set-0 storage buffer: SIZE bytes (0: the size of IN), filled from
 *                              IN ('-': zeros), written to OUT after the dispatch ('-': not written)
 *
 * Output: the device, driver and enabled features first, then one line per case:
 *   "case NAME: ok  dispatch X.XXX ms  (pipeline Y.Y ms)" or "case NAME: FAILED <what> <VkResult>";
 *   with 'repeat N' the ok line goes on "  repeat N best B.BBB ms median D.DDD ms" (the first
 *   dispatch, X, is left out of these: drivers compile and start threads on first use).
 * Exit status: 0 if every case ran, 1 if some case failed, 2 on a setup error (no device...).
 */
#define _POSIX_C_SOURCE 200809L
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- structures newer than the headers this may be built with ------------------------------ */
#define ST(x) ((VkStructureType)(x))
#define ST_COOPMAT_KHR_FEATURES ST(1000506000)          /* VK_KHR_cooperative_matrix */
#define ST_COOPMAT2_NV_FEATURES ST(1000593000)          /* VK_NV_cooperative_matrix2 */
#define ST_COOPVEC_NV_FEATURES ST(1000491000)           /* VK_NV_cooperative_vector */
#define ST_BFLOAT16_KHR_FEATURES ST(1000141000)         /* VK_KHR_shader_bfloat16 */
#define ST_FLOAT8_EXT_FEATURES ST(1000567000)           /* VK_EXT_shader_float8 */
#define ST_REPLICATED_EXT_FEATURES ST(1000564000)       /* VK_EXT_shader_replicated_composites */
#define ST_DECODE_VECTOR_NV_FEATURES ST(1000689000)     /* VK_NV_cooperative_matrix_decode_vector */
#define ST_LONG_VECTOR_EXT_FEATURES ST(1000635000)      /* VK_EXT_shader_long_vector */
#define ST_ROBUSTNESS2_EXT_FEATURES ST(1000286000)      /* VK_EXT_robustness2 */
#define ST_REQUIRED_SUBGROUP_SIZE ST(1000225001)        /* core 1.3 */

/* An extension's feature structure: sType, pNext and VkBool32 members. Queried from the driver
 * and passed back unchanged to vkCreateDevice, so every feature the driver reports is enabled;
 * room for more members than any of these has (the driver writes only its own). */
typedef struct {
    VkStructureType sType;
    void *pNext;
    VkBool32 b[32];
} FeatureStruct;

typedef struct {
    const char *ext;     /* device extension that provides it */
    VkStructureType st;  /* 0: the extension has no feature structure */
    const char *names;   /* space-separated member names, for the report */
    int present;
    FeatureStruct f;
} OptionalExt;

static OptionalExt g_exts[] = {
    {"VK_KHR_cooperative_matrix", ST_COOPMAT_KHR_FEATURES,
     "cooperativeMatrix cooperativeMatrixRobustBufferAccess", 0, {0}},
    {"VK_NV_cooperative_matrix2", ST_COOPMAT2_NV_FEATURES,
     "cooperativeMatrixWorkgroupScope cooperativeMatrixFlexibleDimensions cooperativeMatrixReductions "
     "cooperativeMatrixConversions cooperativeMatrixPerElementOperations cooperativeMatrixTensorAddressing "
     "cooperativeMatrixBlockLoads", 0, {0}},
    {"VK_NV_cooperative_vector", ST_COOPVEC_NV_FEATURES, "cooperativeVector cooperativeVectorTraining", 0, {0}},
    {"VK_KHR_shader_bfloat16", ST_BFLOAT16_KHR_FEATURES,
     "shaderBFloat16Type shaderBFloat16DotProduct shaderBFloat16CooperativeMatrix", 0, {0}},
    {"VK_EXT_shader_float8", ST_FLOAT8_EXT_FEATURES, "shaderFloat8 shaderFloat8CooperativeMatrix", 0, {0}},
    {"VK_EXT_shader_replicated_composites", ST_REPLICATED_EXT_FEATURES, "shaderReplicatedComposites", 0, {0}},
    {"VK_NV_cooperative_matrix_decode_vector", ST_DECODE_VECTOR_NV_FEATURES, "cooperativeMatrixDecodeVector", 0, {0}},
    {"VK_EXT_shader_long_vector", ST_LONG_VECTOR_EXT_FEATURES, "longVector", 0, {0}},
    {"VK_KHR_shader_integer_dot_product", (VkStructureType)0, "", 0, {0}}, /* core in 1.3 */
    {"VK_NV_cooperative_matrix", (VkStructureType)0, "", 0, {0}},
    /* enabled only with VKRUN_ROBUST=2 (its features are cleared otherwise) */
    {"VK_EXT_robustness2", ST_ROBUSTNESS2_EXT_FEATURES, "robustBufferAccess2 robustImageAccess2 nullDescriptor",
     0, {0}},
};
#define N_EXTS (sizeof g_exts / sizeof g_exts[0])

/* ---- function pointers ----------------------------------------------------------------------- */
static PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr_;
#define FNS(X) \
    X(vkCreateInstance) X(vkEnumerateInstanceVersion)
#define IFNS(X) \
    X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties2) X(vkGetPhysicalDeviceFeatures2) \
    X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkGetPhysicalDeviceMemoryProperties) \
    X(vkEnumerateDeviceExtensionProperties) X(vkCreateDevice) X(vkGetDeviceProcAddr) X(vkDestroyInstance)
#define DFNS(X) \
    X(vkGetDeviceQueue) X(vkCreateBuffer) X(vkDestroyBuffer) X(vkGetBufferMemoryRequirements) \
    X(vkAllocateMemory) X(vkFreeMemory) X(vkBindBufferMemory) X(vkMapMemory) X(vkUnmapMemory) \
    X(vkCreateShaderModule) X(vkDestroyShaderModule) X(vkCreateDescriptorSetLayout) \
    X(vkDestroyDescriptorSetLayout) X(vkCreatePipelineLayout) X(vkDestroyPipelineLayout) \
    X(vkCreateComputePipelines) X(vkDestroyPipeline) X(vkCreateDescriptorPool) \
    X(vkDestroyDescriptorPool) X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets) \
    X(vkCreateCommandPool) X(vkDestroyCommandPool) X(vkAllocateCommandBuffers) \
    X(vkBeginCommandBuffer) X(vkEndCommandBuffer) X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets) \
    X(vkCmdPushConstants) X(vkCmdDispatch) X(vkCmdPipelineBarrier) X(vkQueueSubmit) \
    X(vkCreateFence) X(vkDestroyFence) X(vkWaitForFences) X(vkResetFences) X(vkResetCommandBuffer) \
    X(vkDeviceWaitIdle) X(vkDestroyDevice) X(vkInvalidateMappedMemoryRanges) X(vkFlushMappedMemoryRanges)
#define DECL(f) static PFN_##f f;
FNS(DECL)
IFNS(DECL)
DFNS(DECL)

/* ---- errors ---------------------------------------------------------------------------------- */
static const char *vkr_name(VkResult r) {
    switch ((int)r) {
#define R(x) case x: return #x;
    R(VK_SUCCESS) R(VK_NOT_READY) R(VK_TIMEOUT) R(VK_EVENT_SET) R(VK_EVENT_RESET) R(VK_INCOMPLETE)
    R(VK_ERROR_OUT_OF_HOST_MEMORY) R(VK_ERROR_OUT_OF_DEVICE_MEMORY) R(VK_ERROR_INITIALIZATION_FAILED)
    R(VK_ERROR_DEVICE_LOST) R(VK_ERROR_MEMORY_MAP_FAILED) R(VK_ERROR_LAYER_NOT_PRESENT)
    R(VK_ERROR_EXTENSION_NOT_PRESENT) R(VK_ERROR_FEATURE_NOT_PRESENT) R(VK_ERROR_INCOMPATIBLE_DRIVER)
    R(VK_ERROR_TOO_MANY_OBJECTS) R(VK_ERROR_FORMAT_NOT_SUPPORTED) R(VK_ERROR_FRAGMENTED_POOL)
    R(VK_ERROR_UNKNOWN) R(VK_ERROR_OUT_OF_POOL_MEMORY) R(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    R(VK_ERROR_FRAGMENTATION) R(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS) R(VK_PIPELINE_COMPILE_REQUIRED)
    R(VK_ERROR_INVALID_SHADER_NV)
#undef R
    case 1000268000: return "VK_THREAD_IDLE_KHR";
    default: return "VkResult(unknown)";
    }
}

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "vkrun: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

#define CHECK_SETUP(call)                                                              \
    do {                                                                               \
        VkResult r_ = (call);                                                          \
        if (r_ != VK_SUCCESS) die("%s failed: %s (%d)", #call, vkr_name(r_), (int)r_); \
    } while (0)

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- files ----------------------------------------------------------------------------------- */
static void *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) != 0) { fclose(f); return NULL; }
    long n = ftell(f);
    if (n < 0) { fclose(f); return NULL; }
    rewind(f);
    void *p = malloc(n ? (size_t)n : 1);
    if (!p || fread(p, 1, (size_t)n, f) != (size_t)n) { free(p); fclose(f); return NULL; }
    fclose(f);
    *size = (size_t)n;
    return p;
}

static int write_file(const char *path, const void *data, size_t size) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(data, 1, size, f);
    int bad = fclose(f) != 0 || w != size;
    return bad ? -1 : 0;
}

static void join(char *out, size_t cap, const char *dir, const char *path) {
    if (path[0] == '/' || !dir[0]) snprintf(out, cap, "%s", path);
    else snprintf(out, cap, "%s/%s", dir, path);
}

/* ---- manifest -------------------------------------------------------------------------------- */
#define MAX_SPEC 64
#define MAX_REPEAT 1000
#define MAX_BIND 16
#define PATHLEN 1024

typedef struct {
    uint32_t binding;
    size_t size;
    char in[PATHLEN], out[PATHLEN]; /* "" for none */
} Bind;

typedef struct {
    char name[256];
    char spv[PATHLEN];
    char entry[128];
    uint32_t spec_id[MAX_SPEC], spec_val[MAX_SPEC];
    int nspec;
    uint32_t groups[3];
    char push[PATHLEN];
    uint32_t subgroup;
    int full_subgroups;
    uint32_t repeat;
    Bind bind[MAX_BIND];
    int nbind;
    int line;
} Case;

static int parse_u32(const char *s, uint32_t *v) {
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 0);
    if (errno || *end || x > 0xFFFFFFFFull) {
        long long y = strtoll(s, &end, 0);     /* negative values: two's complement */
        if (errno || *end || y < -2147483648LL || y > 0xFFFFFFFFLL) return -1;
        x = (unsigned long long)(uint32_t)(int32_t)y;
    }
    *v = (uint32_t)x;
    return 0;
}

/* ---- Vulkan state ---------------------------------------------------------------------------- */
static VkInstance g_inst;
static VkPhysicalDevice g_pd;
static VkDevice g_dev;
static VkQueue g_queue;
static uint32_t g_qfam;
static VkPhysicalDeviceMemoryProperties g_memprops;
static VkCommandPool g_pool;
static VkCommandBuffer g_cmd;
static VkFence g_fence;
static int g_quiet;
static uint64_t g_fence_timeout_ns = 30ull * 1000000000ull;

typedef struct {
    char key[PATHLEN + 1024];
    VkShaderModule module;
    VkDescriptorSetLayout dsl;
    VkPipelineLayout layout;
    VkPipeline pipeline;
    VkResult err;          /* a pipeline that failed: remembered */
    char what[PATHLEN + 64];
} PipeEntry;
#define MAX_PIPES 256
static PipeEntry g_pipes[MAX_PIPES];
static int g_npipes;

static void setup(void) {
    void *lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("libvulkan.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) die("cannot load libvulkan.so.1: %s", dlerror());
    vkGetInstanceProcAddr_ = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
    if (!vkGetInstanceProcAddr_) die("libvulkan has no vkGetInstanceProcAddr");
#define LOAD0(f) f = (PFN_##f)vkGetInstanceProcAddr_(NULL, #f);
    FNS(LOAD0)
    if (!vkCreateInstance) die("vkGetInstanceProcAddr(NULL, vkCreateInstance) returned NULL");
    uint32_t loader_version = VK_API_VERSION_1_0;
    if (vkEnumerateInstanceVersion) vkEnumerateInstanceVersion(&loader_version);
    printf("loader: Vulkan %u.%u.%u\n", VK_API_VERSION_MAJOR(loader_version),
           VK_API_VERSION_MINOR(loader_version), VK_API_VERSION_PATCH(loader_version));

    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "vkrun";
    app.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    CHECK_SETUP(vkCreateInstance(&ici, NULL, &g_inst));
#define LOADI(f) f = (PFN_##f)vkGetInstanceProcAddr_(g_inst, #f); \
    if (!f) die("no instance function %s", #f);
    IFNS(LOADI)

    uint32_t n = 0;
    CHECK_SETUP(vkEnumeratePhysicalDevices(g_inst, &n, NULL));
    if (n == 0) die("no Vulkan physical device (is the NVIDIA ICD visible? try VK_DRIVER_FILES)");
    VkPhysicalDevice pds[16];
    if (n > 16) n = 16;
    CHECK_SETUP(vkEnumeratePhysicalDevices(g_inst, &n, pds));
    /* prefer a discrete GPU */
    g_pd = pds[0];
    for (uint32_t i = 0; i < n; i++) {
        VkPhysicalDeviceProperties2 p = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
        vkGetPhysicalDeviceProperties2(pds[i], &p);
        if (p.properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU) { g_pd = pds[i]; break; }
    }

    VkPhysicalDeviceVulkan12Properties p12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
    VkPhysicalDeviceVulkan13Properties p13 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES};
    VkPhysicalDeviceVulkan11Properties p11 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
    p11.pNext = &p12;
    p12.pNext = &p13;
    VkPhysicalDeviceProperties2 props = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    props.pNext = &p11;
    vkGetPhysicalDeviceProperties2(g_pd, &props);
    VkPhysicalDeviceProperties *pp = &props.properties;
    uint32_t dv = pp->driverVersion;
    printf("device: %s  vendor 0x%04x device 0x%04x  api %u.%u.%u\n", pp->deviceName, pp->vendorID,
           pp->deviceID, VK_API_VERSION_MAJOR(pp->apiVersion), VK_API_VERSION_MINOR(pp->apiVersion),
           VK_API_VERSION_PATCH(pp->apiVersion));
    if (pp->vendorID == 0x10de)
        printf("driver: %s %s (nvidia %u.%u.%u)  raw 0x%08x\n", p12.driverName, p12.driverInfo,
               (dv >> 22) & 0x3ff, (dv >> 14) & 0xff, (dv >> 6) & 0xff, dv);
    else
        printf("driver: %s %s  raw 0x%08x\n", p12.driverName, p12.driverInfo, dv);
    printf("subgroup: size %u (min %u max %u)\n", p11.subgroupSize, p13.minSubgroupSize, p13.maxSubgroupSize);
    if (pp->apiVersion < VK_API_VERSION_1_3)
        printf("warning: the device reports Vulkan %u.%u; the test shaders need 1.3\n",
               VK_API_VERSION_MAJOR(pp->apiVersion), VK_API_VERSION_MINOR(pp->apiVersion));

    /* device extensions */
    uint32_t next = 0;
    CHECK_SETUP(vkEnumerateDeviceExtensionProperties(g_pd, NULL, &next, NULL));
    VkExtensionProperties *eprops = calloc(next ? next : 1, sizeof *eprops);
    CHECK_SETUP(vkEnumerateDeviceExtensionProperties(g_pd, NULL, &next, eprops));
    const char *enabled[N_EXTS];
    uint32_t nenabled = 0;
    for (size_t i = 0; i < N_EXTS; i++) {
        for (uint32_t j = 0; j < next; j++)
            if (!strcmp(eprops[j].extensionName, g_exts[i].ext)) {
                g_exts[i].present = 1;
                enabled[nenabled++] = g_exts[i].ext;
            }
        printf("extension %-40s %s\n", g_exts[i].ext, g_exts[i].present ? "enabled" : "ABSENT");
    }
    free(eprops);

    /* features: core 1.1/1.2/1.3 and the extensions' structures, as the driver reports them */
    VkPhysicalDeviceVulkan11Features f11 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceVulkan12Features f12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    VkPhysicalDeviceVulkan13Features f13 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &f11;
    f11.pNext = &f12;
    f12.pNext = &f13;
    void **tail = &f13.pNext;
    for (size_t i = 0; i < N_EXTS; i++) {
        if (!g_exts[i].present || !g_exts[i].st) continue;
        memset(&g_exts[i].f, 0, sizeof g_exts[i].f);
        g_exts[i].f.sType = g_exts[i].st;
        *tail = &g_exts[i].f;
        tail = &g_exts[i].f.pNext;
    }
    vkGetPhysicalDeviceFeatures2(g_pd, &f2);
    /* robust buffer access changes how out-of-bounds accesses behave and can slow or refuse
     * cooperative matrix code: keep it off, as a production application would, unless
     * VKRUN_ROBUST asks for it (1: robustBufferAccess, 2: robustBufferAccess2 as well) */
    const char *robust = getenv("VKRUN_ROBUST");
    int robust_level = robust ? atoi(robust) : 0;
    if (robust_level < 1) f2.features.robustBufferAccess = VK_FALSE;
    f13.robustImageAccess = VK_FALSE;
    for (size_t i = 0; i < N_EXTS; i++)
        if (g_exts[i].present && g_exts[i].st == ST_ROBUSTNESS2_EXT_FEATURES) {
            memset(g_exts[i].f.b, 0, sizeof g_exts[i].f.b);
            if (robust_level >= 2) g_exts[i].f.b[0] = VK_TRUE;
        }
    printf("robustBufferAccess %u\n", f2.features.robustBufferAccess);
    printf("features: shaderFloat16 %u shaderInt8 %u shaderInt16 %u shaderInt64 %u sb8 %u sb16 %u "
           "bda %u vmm %u vmmDevice %u sgsc %u fullSg %u maint4 %u intDot %u\n",
           f12.shaderFloat16, f12.shaderInt8, f2.features.shaderInt16, f2.features.shaderInt64,
           f12.storageBuffer8BitAccess, f11.storageBuffer16BitAccess, f12.bufferDeviceAddress,
           f12.vulkanMemoryModel, f12.vulkanMemoryModelDeviceScope, f13.subgroupSizeControl,
           f13.computeFullSubgroups, f13.maintenance4, f13.shaderIntegerDotProduct);
    for (size_t i = 0; i < N_EXTS; i++) {
        if (!g_exts[i].present || !g_exts[i].st) continue;
        printf("features %s:", g_exts[i].ext);
        char names[512];
        snprintf(names, sizeof names, "%s", g_exts[i].names);
        int k = 0;
        for (char *tok = strtok(names, " "); tok && k < 32; tok = strtok(NULL, " "), k++)
            printf(" %s %u", tok, g_exts[i].f.b[k]);
        printf("\n");
    }

    /* a queue family with compute */
    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(g_pd, &nq, NULL);
    VkQueueFamilyProperties qf[32];
    if (nq > 32) nq = 32;
    vkGetPhysicalDeviceQueueFamilyProperties(g_pd, &nq, qf);
    g_qfam = UINT32_MAX;
    for (uint32_t i = 0; i < nq; i++)
        if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) { g_qfam = i; break; }
    if (g_qfam == UINT32_MAX) die("no compute queue family");
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = g_qfam;
    qci.queueCount = 1;
    qci.pQueuePriorities = &prio;
    VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = &f2;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    dci.enabledExtensionCount = nenabled;
    dci.ppEnabledExtensionNames = enabled;
    CHECK_SETUP(vkCreateDevice(g_pd, &dci, NULL, &g_dev));
#define LOADD(f) f = (PFN_##f)vkGetDeviceProcAddr(g_dev, #f); \
    if (!f) die("no device function %s", #f);
    DFNS(LOADD)
    vkGetDeviceQueue(g_dev, g_qfam, 0, &g_queue);
    vkGetPhysicalDeviceMemoryProperties(g_pd, &g_memprops);

    VkCommandPoolCreateInfo cpi = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    cpi.queueFamilyIndex = g_qfam;
    CHECK_SETUP(vkCreateCommandPool(g_dev, &cpi, NULL, &g_pool));
    VkCommandBufferAllocateInfo cai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = g_pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    CHECK_SETUP(vkAllocateCommandBuffers(g_dev, &cai, &g_cmd));
    VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    CHECK_SETUP(vkCreateFence(g_dev, &fci, NULL, &g_fence));
    fflush(stdout);
}

static int find_memory_type(uint32_t bits, VkMemoryPropertyFlags want) {
    for (uint32_t i = 0; i < g_memprops.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (g_memprops.memoryTypes[i].propertyFlags & want) == want) return (int)i;
    return -1;
}

/* ---- one case -------------------------------------------------------------------------------- */
#define FAIL(what, r)                                                                           \
    do {                                                                                        \
        printf("case %s: FAILED %s: %s (%d)\n", c->name, what, vkr_name(r), (int)(r));          \
        rc = 1;                                                                                 \
        goto done;                                                                              \
    } while (0)
#define FAILMSG(...)                        \
    do {                                    \
        printf("case %s: FAILED ", c->name); \
        printf(__VA_ARGS__);                \
        printf("\n");                       \
        rc = 1;                             \
        goto done;                          \
    } while (0)

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* returns 0 ok, 1 case failure, 2 device lost (stop) */
static int run_case(const Case *c, const char *mdir, const char *odir) {
    int rc = 0;
    char path[PATHLEN * 2];
    VkBuffer bufs[MAX_BIND] = {0};
    VkDeviceMemory mems[MAX_BIND] = {0};
    void *maps[MAX_BIND] = {0};
    size_t sizes[MAX_BIND] = {0};
    void *push = NULL, *code = NULL;
    size_t push_size = 0, code_size = 0;
    VkDescriptorPool dpool = VK_NULL_HANDLE;
    PipeEntry *pe = NULL;
    double t_pipe = 0;
    double times[MAX_REPEAT];

    if (!c->spv[0]) FAILMSG("no 'spv' line (line %d)", c->line);
    if (c->push[0]) {
        join(path, sizeof path, mdir, c->push);
        push = read_file(path, &push_size);
        if (!push) FAILMSG("cannot read push file %s", path);
        if (push_size % 4 || push_size > 256) FAILMSG("push constants of %zu bytes", push_size);
    }

    /* pipeline, cached by module, entry, specialization, subgroup options, bindings, push size */
    char key[sizeof g_pipes[0].key];
    int kl = snprintf(key, sizeof key, "%s|%s|%u|%d|%zu|", c->spv, c->entry, c->subgroup,
                      c->full_subgroups, push_size);
    for (int i = 0; i < c->nspec && kl < (int)sizeof key - 40; i++)
        kl += snprintf(key + kl, sizeof key - kl, "s%u=%u,", c->spec_id[i], c->spec_val[i]);
    for (int i = 0; i < c->nbind && kl < (int)sizeof key - 20; i++)
        kl += snprintf(key + kl, sizeof key - kl, "b%u,", c->bind[i].binding);
    for (int i = 0; i < g_npipes; i++)
        if (!strcmp(g_pipes[i].key, key)) { pe = &g_pipes[i]; break; }
    if (!pe) {
        if (g_npipes == MAX_PIPES) FAILMSG("too many distinct pipelines");
        pe = &g_pipes[g_npipes++];
        memset(pe, 0, sizeof *pe);
        snprintf(pe->key, sizeof pe->key, "%s", key);
        double t0 = now_ms();
        join(path, sizeof path, mdir, c->spv);
        code = read_file(path, &code_size);
        if (!code || code_size % 4 || code_size < 20) {
            pe->err = VK_ERROR_INITIALIZATION_FAILED;
            snprintf(pe->what, sizeof pe->what, "cannot read SPIR-V %s", c->spv);
        }
        VkResult r = VK_SUCCESS;
        if (!pe->err) {
            VkShaderModuleCreateInfo smi = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
            smi.codeSize = code_size;
            smi.pCode = code;
            r = vkCreateShaderModule(g_dev, &smi, NULL, &pe->module);
            if (r) { pe->err = r; snprintf(pe->what, sizeof pe->what, "vkCreateShaderModule"); }
        }
        if (!pe->err) {
            VkDescriptorSetLayoutBinding lb[MAX_BIND];
            for (int i = 0; i < c->nbind; i++) {
                memset(&lb[i], 0, sizeof lb[i]);
                lb[i].binding = c->bind[i].binding;
                lb[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
                lb[i].descriptorCount = 1;
                lb[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
            }
            VkDescriptorSetLayoutCreateInfo dli = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
            dli.bindingCount = (uint32_t)c->nbind;
            dli.pBindings = lb;
            r = vkCreateDescriptorSetLayout(g_dev, &dli, NULL, &pe->dsl);
            if (r) { pe->err = r; snprintf(pe->what, sizeof pe->what, "vkCreateDescriptorSetLayout"); }
        }
        if (!pe->err) {
            VkPushConstantRange pcr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, (uint32_t)push_size};
            VkPipelineLayoutCreateInfo pli = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
            pli.setLayoutCount = 1;
            pli.pSetLayouts = &pe->dsl;
            pli.pushConstantRangeCount = push_size ? 1 : 0;
            pli.pPushConstantRanges = &pcr;
            r = vkCreatePipelineLayout(g_dev, &pli, NULL, &pe->layout);
            if (r) { pe->err = r; snprintf(pe->what, sizeof pe->what, "vkCreatePipelineLayout"); }
        }
        if (!pe->err) {
            VkSpecializationMapEntry sme[MAX_SPEC];
            for (int i = 0; i < c->nspec; i++) {
                sme[i].constantID = c->spec_id[i];
                sme[i].offset = (uint32_t)(4 * i);
                sme[i].size = 4;
            }
            VkSpecializationInfo si = {(uint32_t)c->nspec, sme, 4 * (size_t)c->nspec, c->spec_val};
            VkPipelineShaderStageRequiredSubgroupSizeCreateInfo rss = {ST_REQUIRED_SUBGROUP_SIZE};
            rss.requiredSubgroupSize = c->subgroup;
            VkComputePipelineCreateInfo cpi = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
            cpi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
            cpi.stage.pNext = c->subgroup ? &rss : NULL;
            cpi.stage.flags = c->full_subgroups ? VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT : 0;
            cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
            cpi.stage.module = pe->module;
            cpi.stage.pName = c->entry;
            cpi.stage.pSpecializationInfo = c->nspec ? &si : NULL;
            cpi.layout = pe->layout;
            r = vkCreateComputePipelines(g_dev, VK_NULL_HANDLE, 1, &cpi, NULL, &pe->pipeline);
            if (r) { pe->err = r; snprintf(pe->what, sizeof pe->what, "vkCreateComputePipelines"); }
        }
        t_pipe = now_ms() - t0;
    }
    if (pe->err) FAIL(pe->what, pe->err);

    /* buffers: host-visible, coherent, with device addresses (decode functions get pointers) */
    for (int i = 0; i < c->nbind; i++) {
        const Bind *b = &c->bind[i];
        void *data = NULL;
        size_t dsize = 0;
        if (b->in[0]) {
            join(path, sizeof path, mdir, b->in);
            data = read_file(path, &dsize);
            if (!data) FAILMSG("cannot read %s", path);
        }
        size_t size = b->size ? b->size : dsize;
        if (dsize > size) { free(data); FAILMSG("binding %u: input %zu bytes > size %zu", b->binding, dsize, size); }
        sizes[i] = size;
        VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
        bci.size = size < 16 ? 16 : (size + 15) & ~(size_t)15;
        bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
                    VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
        bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
        VkResult r = vkCreateBuffer(g_dev, &bci, NULL, &bufs[i]);
        if (r) { free(data); FAIL("vkCreateBuffer", r); }
        VkMemoryRequirements mr;
        vkGetBufferMemoryRequirements(g_dev, bufs[i], &mr);
        int mt = find_memory_type(mr.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                         VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
        if (mt < 0) { free(data); FAILMSG("no host-visible coherent memory type"); }
        VkMemoryAllocateFlagsInfo mafi = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
        mafi.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
        VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        mai.pNext = &mafi;
        mai.allocationSize = mr.size;
        mai.memoryTypeIndex = (uint32_t)mt;
        r = vkAllocateMemory(g_dev, &mai, NULL, &mems[i]);
        if (r) { free(data); FAIL("vkAllocateMemory", r); }
        r = vkBindBufferMemory(g_dev, bufs[i], mems[i], 0);
        if (r) { free(data); FAIL("vkBindBufferMemory", r); }
        r = vkMapMemory(g_dev, mems[i], 0, VK_WHOLE_SIZE, 0, &maps[i]);
        if (r) { free(data); FAIL("vkMapMemory", r); }
        memset(maps[i], 0, (size_t)mr.size);
        if (data) memcpy(maps[i], data, dsize);
        free(data);
    }

    /* descriptors */
    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, c->nbind ? (uint32_t)c->nbind : 1};
    VkDescriptorPoolCreateInfo dpi = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpi.maxSets = 1;
    dpi.poolSizeCount = 1;
    dpi.pPoolSizes = &ps;
    VkResult r = vkCreateDescriptorPool(g_dev, &dpi, NULL, &dpool);
    if (r) FAIL("vkCreateDescriptorPool", r);
    VkDescriptorSetAllocateInfo dai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    dai.descriptorPool = dpool;
    dai.descriptorSetCount = 1;
    dai.pSetLayouts = &pe->dsl;
    VkDescriptorSet set;
    r = vkAllocateDescriptorSets(g_dev, &dai, &set);
    if (r) FAIL("vkAllocateDescriptorSets", r);
    VkDescriptorBufferInfo dbi[MAX_BIND];
    VkWriteDescriptorSet wds[MAX_BIND];
    for (int i = 0; i < c->nbind; i++) {
        dbi[i].buffer = bufs[i];
        dbi[i].offset = 0;
        dbi[i].range = VK_WHOLE_SIZE;
        memset(&wds[i], 0, sizeof wds[i]);
        wds[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        wds[i].dstSet = set;
        wds[i].dstBinding = c->bind[i].binding;
        wds[i].descriptorCount = 1;
        wds[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        wds[i].pBufferInfo = &dbi[i];
    }
    if (c->nbind) vkUpdateDescriptorSets(g_dev, (uint32_t)c->nbind, wds, 0, NULL);

    /* record, submit, wait */
    r = vkResetCommandBuffer(g_cmd, 0);
    if (r) FAIL("vkResetCommandBuffer", r);
    VkCommandBufferBeginInfo cbi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    cbi.flags = c->repeat ? 0 : VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    r = vkBeginCommandBuffer(g_cmd, &cbi);
    if (r) FAIL("vkBeginCommandBuffer", r);
    vkCmdBindPipeline(g_cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pe->pipeline);
    vkCmdBindDescriptorSets(g_cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pe->layout, 0, 1, &set, 0, NULL);
    if (push_size) vkCmdPushConstants(g_cmd, pe->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, (uint32_t)push_size, push);
    vkCmdDispatch(g_cmd, c->groups[0], c->groups[1], c->groups[2]);
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(g_cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb,
                         0, NULL, 0, NULL);
    r = vkEndCommandBuffer(g_cmd);
    if (r) FAIL("vkEndCommandBuffer", r);
    VkSubmitInfo sub = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    sub.commandBufferCount = 1;
    sub.pCommandBuffers = &g_cmd;
    double t_disp = 0;
    for (uint32_t run = 0; run <= c->repeat; run++) {
        r = vkResetFences(g_dev, 1, &g_fence);
        if (r) FAIL("vkResetFences", r);
        double t0 = now_ms();
        r = vkQueueSubmit(g_queue, 1, &sub, g_fence);
        if (r) { rc = r == VK_ERROR_DEVICE_LOST ? 2 : 1; printf("case %s: FAILED vkQueueSubmit: %s\n", c->name, vkr_name(r)); goto done; }
        r = vkWaitForFences(g_dev, 1, &g_fence, VK_TRUE, g_fence_timeout_ns);
        double t = now_ms() - t0;
        if (r) {
            printf("case %s: FAILED vkWaitForFences: %s (%d)\n", c->name, vkr_name(r), (int)r);
            rc = 2;   /* a hung or lost device: nothing after this can be trusted */
            goto done;
        }
        if (run == 0) t_disp = t;
        else times[run - 1] = t;
    }

    for (int i = 0; i < c->nbind; i++) {
        if (!c->bind[i].out[0]) continue;
        join(path, sizeof path, odir, c->bind[i].out);
        if (write_file(path, maps[i], sizes[i])) FAILMSG("cannot write %s", path);
    }
    printf("case %s: ok  dispatch %.3f ms", c->name, t_disp);
    if (t_pipe > 0) printf("  (pipeline %.1f ms)", t_pipe);
    if (c->repeat) {
        qsort(times, c->repeat, sizeof *times, cmp_double);
        printf("  repeat %u best %.3f ms median %.3f ms", c->repeat, times[0], times[c->repeat / 2]);
    }
    printf("\n");

done:
    if (dpool) vkDestroyDescriptorPool(g_dev, dpool, NULL);
    for (int i = 0; i < c->nbind; i++) {
        if (maps[i]) vkUnmapMemory(g_dev, mems[i]);
        if (bufs[i]) vkDestroyBuffer(g_dev, bufs[i], NULL);
        if (mems[i]) vkFreeMemory(g_dev, mems[i], NULL);
    }
    free(push);
    free(code);
    fflush(stdout);
    return rc;
}

/* ---- main ------------------------------------------------------------------------------------ */
static int run_manifest(const char *mpath, const char *outdir, int *failed, int *ran) {
    FILE *f = fopen(mpath, "r");
    if (!f) die("cannot open manifest %s: %s", mpath, strerror(errno));
    char mdir[PATHLEN];
    snprintf(mdir, sizeof mdir, "%s", mpath);
    char *slash = strrchr(mdir, '/');
    if (slash) *slash = 0;
    else snprintf(mdir, sizeof mdir, ".");
    const char *odir = outdir ? outdir : mdir;

    static Case c;
    int have = 0, lineno = 0, stop = 0;
    char line[4 * PATHLEN];
    for (;;) {
        char *got = fgets(line, sizeof line, f);
        lineno++;
        char *tok[8] = {0};
        int nt = 0;
        if (got) {
            char *hash = strchr(line, '#');
            if (hash) *hash = 0;
            for (char *t = strtok(line, " \t\r\n"); t && nt < 8; t = strtok(NULL, " \t\r\n")) tok[nt++] = t;
            if (nt == 0) continue;
        }
        if (!got || !strcmp(tok[0], "case")) {
            if (have) {
                int r = run_case(&c, mdir, odir);
                (*ran)++;
                if (r) (*failed)++;
                if (r == 2) { stop = 1; break; }
            }
            if (!got) break;
            if (nt != 2) die("%s:%d: case NAME", mpath, lineno);
            memset(&c, 0, sizeof c);
            snprintf(c.name, sizeof c.name, "%s", tok[1]);
            snprintf(c.entry, sizeof c.entry, "main");
            c.groups[0] = c.groups[1] = c.groups[2] = 1;
            c.line = lineno;
            have = 1;
            continue;
        }
        if (!have) die("%s:%d: '%s' before the first 'case'", mpath, lineno, tok[0]);
        if (!strcmp(tok[0], "spv") && nt == 2) snprintf(c.spv, sizeof c.spv, "%s", tok[1]);
        else if (!strcmp(tok[0], "entry") && nt == 2) snprintf(c.entry, sizeof c.entry, "%s", tok[1]);
        else if (!strcmp(tok[0], "push") && nt == 2) snprintf(c.push, sizeof c.push, "%s", tok[1]);
        else if (!strcmp(tok[0], "fullsubgroups") && nt == 1) c.full_subgroups = 1;
        else if (!strcmp(tok[0], "repeat") && nt == 2) {
            if (parse_u32(tok[1], &c.repeat) || c.repeat > MAX_REPEAT)
                die("%s:%d: repeat N (at most %d)", mpath, lineno, MAX_REPEAT);
        }
        else if (!strcmp(tok[0], "subgroup") && nt == 2) {
            if (parse_u32(tok[1], &c.subgroup)) die("%s:%d: bad subgroup size", mpath, lineno);
        } else if (!strcmp(tok[0], "spec") && nt == 3) {
            if (c.nspec == MAX_SPEC) die("%s:%d: too many spec constants", mpath, lineno);
            if (parse_u32(tok[1], &c.spec_id[c.nspec]) || parse_u32(tok[2], &c.spec_val[c.nspec]))
                die("%s:%d: spec ID VALUE", mpath, lineno);
            c.nspec++;
        } else if (!strcmp(tok[0], "groups") && nt >= 2 && nt <= 4) {
            for (int i = 1; i < nt; i++)
                if (parse_u32(tok[i], &c.groups[i - 1])) die("%s:%d: bad group count", mpath, lineno);
        } else if (!strcmp(tok[0], "bind") && nt == 5) {
            if (c.nbind == MAX_BIND) die("%s:%d: too many bindings", mpath, lineno);
            Bind *b = &c.bind[c.nbind];
            uint32_t sz;
            if (parse_u32(tok[1], &b->binding) || parse_u32(tok[2], &sz))
                die("%s:%d: bind BINDING SIZE IN OUT", mpath, lineno);
            for (int i = 0; i < c.nbind; i++)
                if (c.bind[i].binding == b->binding) die("%s:%d: binding %u twice", mpath, lineno, b->binding);
            b->size = sz;
            snprintf(b->in, sizeof b->in, "%s", strcmp(tok[3], "-") ? tok[3] : "");
            snprintf(b->out, sizeof b->out, "%s", strcmp(tok[4], "-") ? tok[4] : "");
            if (!b->in[0] && !b->size) die("%s:%d: a binding with no input needs a size", mpath, lineno);
            c.nbind++;
        } else
            die("%s:%d: cannot read '%s' (%d words)", mpath, lineno, tok[0], nt);
    }
    fclose(f);
    return stop;
}

int main(int argc, char **argv) {
    const char *outdir = NULL;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) outdir = argv[++i];
        else if (!strcmp(argv[i], "-q")) g_quiet = 1;
        else if (!strcmp(argv[i], "-t") && i + 1 < argc) g_fence_timeout_ns = (uint64_t)(atof(argv[++i]) * 1e9);
        else die("usage: vkrun [-o OUTDIR] [-t FENCE_TIMEOUT_S] MANIFEST...");
    }
    if (i == argc) die("usage: vkrun [-o OUTDIR] [-t FENCE_TIMEOUT_S] MANIFEST...");
    setup();
    int failed = 0, ran = 0, stop = 0;
    double t0 = now_ms();
    for (; i < argc && !stop; i++) stop = run_manifest(argv[i], outdir, &failed, &ran);
    printf("vkrun: %d cases, %d failed, %.1f s%s\n", ran, failed, (now_ms() - t0) / 1e3,
           stop ? " (stopped: the device hung or was lost)" : "");
    fflush(stdout);
    if (stop) _exit(2);   /* a hung device: tearing it down can block for minutes */
    {
        for (int k = 0; k < g_npipes; k++) {
            if (g_pipes[k].pipeline) vkDestroyPipeline(g_dev, g_pipes[k].pipeline, NULL);
            if (g_pipes[k].layout) vkDestroyPipelineLayout(g_dev, g_pipes[k].layout, NULL);
            if (g_pipes[k].dsl) vkDestroyDescriptorSetLayout(g_dev, g_pipes[k].dsl, NULL);
            if (g_pipes[k].module) vkDestroyShaderModule(g_dev, g_pipes[k].module, NULL);
        }
        vkDestroyFence(g_dev, g_fence, NULL);
        vkDestroyCommandPool(g_dev, g_pool, NULL);
        vkDestroyDevice(g_dev, NULL);
        vkDestroyInstance(g_inst, NULL);
    }
    return stop ? 2 : failed ? 1 : 0;
}
