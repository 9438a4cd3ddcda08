/* faults: how the driver fails, one mode a run (tests/test_icd_faults.py sets the driver's
 * settings, JITCOOP_ICD_FAULTS among them, and reads the lines this prints; vkutil.h).
 *
 *   faults alloc SHADER_DIR       allocations past the heap: VK_ERROR_OUT_OF_DEVICE_MEMORY, and the
 *                                 application goes on (frees, allocates again, dispatches); the
 *                                 heap's budget and usage (VK_EXT_memory_budget) meanwhile
 *   faults dispatch SHADER_DIR [secondary]
 *                                 one dispatch of ids.spv on a first device and then on a second
 *                                 (recorded in a secondary command buffer with "secondary"): each
 *                                 device's results ("device A: pipeline R submit R wait R buffer
 *                                 untouched|correct|changed later submit R") for the test to judge
 *   faults threads SHADER_DIR     command buffers recorded on several threads from their own
 *                                 pools, submitted to one queue under a mutex, with
 *                                 vkQueueWaitIdle from another thread; results against the CPU
 *   faults exit SHADER_DIR HOW    spin.spv (never ends) submitted, then: "exit" calls exit(7)
 *                                 with the work in flight; "wait" prints "in flight" and sleeps
 *                                 (the test sends a signal); "done" runs a dispatch to its end
 *                                 and exits without vkDeviceWaitIdle or any destroy
 *
 * ids.spv (local size 4 x 2) writes v[gy * width + gx] = (workgroup id, gx + 1000 gy) for the
 * global invocation (gx, gy): the reference is computed here.
 */
#define _POSIX_C_SOURCE 200809L
#include "vkutil.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#define FENCE_TIMEOUT (600ull * 1000000000ull)
#define PATTERN 0xA5A5A5A5u

static const char *g_shaders;
static VkPhysicalDevice g_pd;

typedef struct {
    VkDevice dev;
    VkQueue queue;
    VkDescriptorSetLayout set;
    VkPipelineLayout layout;
    PFN_vkCmdPushDescriptorSetKHR push_set;
} Dev;

static Dev new_device(void) {
    Dev d;
    const char *exts[] = {"VK_KHR_push_descriptor", NULL};
    d.dev = make_device(g_pd, exts, NULL);
    vkGetDeviceQueue(d.dev, 0, 0, &d.queue);
    VkDescriptorSetLayoutBinding b = {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL};
    VkDescriptorSetLayoutCreateInfo sci = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    sci.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
    sci.bindingCount = 1;
    sci.pBindings = &b;
    VKCHECK(vkCreateDescriptorSetLayout(d.dev, &sci, NULL, &d.set));
    VkPushConstantRange pr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 4};
    VkPipelineLayoutCreateInfo lci = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    lci.setLayoutCount = 1;
    lci.pSetLayouts = &d.set;
    lci.pushConstantRangeCount = 1;
    lci.pPushConstantRanges = &pr;
    VKCHECK(vkCreatePipelineLayout(d.dev, &lci, NULL, &d.layout));
    d.push_set = (PFN_vkCmdPushDescriptorSetKHR)vkGetDeviceProcAddr(d.dev, "vkCmdPushDescriptorSetKHR");
    return d;
}

static VkResult new_pipeline(Dev *d, const char *shader, VkPipeline *out) {
    VkShaderModule m = load_shader(d->dev, g_shaders, shader);
    VkComputePipelineCreateInfo ci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = m;
    ci.stage.pName = "main";
    ci.layout = d->layout;
    VkResult r = vkCreateComputePipelines(d->dev, VK_NULL_HANDLE, 1, &ci, NULL, out);
    vkDestroyShaderModule(d->dev, m, NULL);
    return r;
}

static VkCommandPool new_pool(VkDevice dev) {
    VkCommandPoolCreateInfo ci = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    ci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    VkCommandPool pool;
    VKCHECK(vkCreateCommandPool(dev, &ci, NULL, &pool));
    return pool;
}

static VkCommandBuffer begin(Dev *d, VkCommandPool pool, VkCommandBufferLevel level) {
    VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.level = level;
    ai.commandBufferCount = 1;
    VkCommandBuffer cb;
    VKCHECK(vkAllocateCommandBuffers(d->dev, &ai, &cb));
    VkCommandBufferInheritanceInfo inh = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.pInheritanceInfo = level == VK_COMMAND_BUFFER_LEVEL_SECONDARY ? &inh : NULL;
    VKCHECK(vkBeginCommandBuffer(cb, &bi));
    return cb;
}

/* A command buffer of `pool` that runs `pipe` over gx x gy workgroups into `out`, push constant
 * `push`; with `secondary`, a primary one that executes a secondary one that does. */
static VkCommandBuffer record_as(Dev *d, VkCommandPool pool, VkPipeline pipe, Buf *out, uint32_t push,
                                 uint32_t gx, uint32_t gy, int secondary) {
    VkCommandBuffer cb =
        begin(d, pool, secondary ? VK_COMMAND_BUFFER_LEVEL_SECONDARY : VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    VkDescriptorBufferInfo dbi = {out->buffer, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = &dbi;
    d->push_set(cb, VK_PIPELINE_BIND_POINT_COMPUTE, d->layout, 0, 1, &w);
    vkCmdPushConstants(cb, d->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &push);
    vkCmdDispatch(cb, gx, gy, 1);
    VKCHECK(vkEndCommandBuffer(cb));
    if (!secondary) return cb;
    VkCommandBuffer primary = begin(d, pool, VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    vkCmdExecuteCommands(primary, 1, &cb);
    VKCHECK(vkEndCommandBuffer(primary));
    return primary;
}

static VkCommandBuffer record(Dev *d, VkCommandPool pool, VkPipeline pipe, Buf *out, uint32_t push,
                              uint32_t gx, uint32_t gy) {
    return record_as(d, pool, pipe, out, push, gx, gy, 0);
}

static VkFence new_fence(VkDevice dev) {
    VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence f;
    VKCHECK(vkCreateFence(dev, &fci, NULL, &f));
    return f;
}

/* ids.spv's results over gx x gy workgroups with row width `width`: 1 if v holds them. */
static int ids_correct(const uint32_t *v, uint32_t width, uint32_t gx, uint32_t gy) {
    for (uint32_t y = 0; y < gy * 2; y++)
        for (uint32_t x = 0; x < gx * 4; x++) {
            const uint32_t *e = v + 4 * (y * width + x);
            if (e[0] != x / 4 || e[1] != y / 2 || e[2] != 0 || e[3] != x + 1000 * y) return 0;
        }
    return 1;
}

static int all_pattern(const uint32_t *v, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (v[i] != PATTERN) return 0;
    return 1;
}

/* -- alloc ------------------------------------------------------------------------------------- */

static VkResult allocate(VkDevice dev, VkDeviceSize size, VkDeviceMemory *m) {
    VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = size;
    mai.memoryTypeIndex = 0;
    *m = VK_NULL_HANDLE;
    return vkAllocateMemory(dev, &mai, NULL, m);
}

static void run_alloc(void) {
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(g_pd, &mp);
    VkDeviceSize heap = mp.memoryHeaps[0].size, part = heap / 3 + 1;
    printf("heap %llu\n", (unsigned long long)heap);
    Dev d = new_device();
    VkDeviceMemory m[4];
    /* with JITCOOP_ICD_FAULTS=alloc:1 the first fails; then two thirds and a bit fit, a third does not */
    VkResult r0 = allocate(d.dev, 4096, &m[0]);
    printf("alloc injected %d handle %s\n", (int)r0, m[0] == VK_NULL_HANDLE ? "null" : "set");
    VkResult r1 = allocate(d.dev, part, &m[1]);
    VkResult r2 = allocate(d.dev, part, &m[2]);
    VkResult r3 = allocate(d.dev, part, &m[3]);
    printf("alloc thirds %d %d %d handle %s\n", (int)r1, (int)r2, (int)r3, m[3] == VK_NULL_HANDLE ? "null" : "set");
    VkPhysicalDeviceMemoryBudgetPropertiesEXT budget = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
    VkPhysicalDeviceMemoryProperties2 mp2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2};
    mp2.pNext = &budget;
    vkGetPhysicalDeviceMemoryProperties2(g_pd, &mp2);
    printf("budget %llu usage %llu\n", (unsigned long long)budget.heapBudget[0],
           (unsigned long long)budget.heapUsage[0]);
    VkResult whole = allocate(d.dev, heap + 1, &m[3]);
    printf("alloc past heap %d\n", (int)whole);
    vkFreeMemory(d.dev, m[1], NULL);
    VkResult again = allocate(d.dev, part, &m[3]);
    printf("alloc after free %d\n", (int)again);
    /* the device goes on working: a dispatch into a small buffer */
    VkPipeline pipe;
    VKCHECK(new_pipeline(&d, "ids.spv", &pipe));
    Buf out = make_buffer(g_pd, d.dev, 4 * 4 * 4 * 2, 0);
    VkCommandPool pool = new_pool(d.dev);
    VkCommandBuffer cb = record(&d, pool, pipe, &out, 4, 1, 1);
    VkFence f = new_fence(d.dev);
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    VKCHECK(vkQueueSubmit(d.queue, 1, &si, f));
    VkResult w = vkWaitForFences(d.dev, 1, &f, VK_TRUE, FENCE_TIMEOUT);
    printf("dispatch after %d %s\n", (int)w, ids_correct(out.map, 4, 1, 1) ? "correct" : "wrong");
    vkDestroyFence(d.dev, f, NULL);
    vkDestroyCommandPool(d.dev, pool, NULL);
    free_buffer(d.dev, &out);
    vkFreeMemory(d.dev, m[2], NULL);
    vkFreeMemory(d.dev, m[3], NULL);
    vkDestroyPipeline(d.dev, pipe, NULL);
    vkDestroyPipelineLayout(d.dev, d.layout, NULL);
    vkDestroyDescriptorSetLayout(d.dev, d.set, NULL);
    vkDestroyDevice(d.dev, NULL);
}

/* -- dispatch ---------------------------------------------------------------------------------- */

#define GX 64
#define GY 32

/* One dispatch on a new device, reported; the device is left as it is (lost or not). */
static int g_secondary;      /* dispatch mode: the dispatch is recorded in a secondary command buffer */

static void dispatch_on_new_device(const char *label) {
    Dev d = new_device();
    VkPipeline pipe = VK_NULL_HANDLE;
    VkResult pr = new_pipeline(&d, "ids.spv", &pipe);
    uint32_t width = GX * 4;
    Buf out = make_buffer(g_pd, d.dev, (VkDeviceSize)width * GY * 2 * 16, 0);
    memset(out.map, 0xA5, (size_t)out.size);
    VkResult sr = VK_NOT_READY, wr = VK_NOT_READY;
    if (pr == VK_SUCCESS) {
        VkCommandPool pool = new_pool(d.dev);
        VkCommandBuffer cb = record_as(&d, pool, pipe, &out, width, GX, GY, g_secondary);
        VkFence f = new_fence(d.dev);
        VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
        si.commandBufferCount = 1;
        si.pCommandBuffers = &cb;
        sr = vkQueueSubmit(d.queue, 1, &si, f);
        wr = vkWaitForFences(d.dev, 1, &f, VK_TRUE, FENCE_TIMEOUT);
    }
    const uint32_t *v = out.map;
    const char *state = all_pattern(v, (size_t)out.size / 4) ? "untouched"
                        : ids_correct(v, width, GX, GY)      ? "correct"
                                                             : "changed";
    VkSubmitInfo empty = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    VkResult later = vkQueueSubmit(d.queue, 1, &empty, VK_NULL_HANDLE);
    printf("device %s: pipeline %d submit %d wait %d buffer %s later submit %d\n", label, (int)pr, (int)sr,
           (int)wr, state, (int)later);
    fflush(stdout);
}

/* -- threads ----------------------------------------------------------------------------------- */

#define NTHREADS 4
#define ROUNDS 20

static Dev g_d;
static VkPipeline g_pipe;
static pthread_mutex_t g_queue_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int g_done;

typedef struct {
    int index;
    int ok;
    char why[256];
} Work;

/* Each thread: its own pool and buffer, a grid of its own shape each round; records, submits
 * (the queue under the mutex: vkQueueSubmit's queue is externally synchronized), waits its fence,
 * checks against the CPU. */
static void *worker(void *arg) {
    Work *w = arg;
    VkCommandPool pool = new_pool(g_d.dev);
    VkFence f = new_fence(g_d.dev);
    w->ok = 1;
    for (int round = 0; round < ROUNDS && w->ok; round++) {
        uint32_t gx = 3 + (uint32_t)w->index * 5 + (uint32_t)round, gy = 2 + (uint32_t)round % 3;
        uint32_t width = gx * 4 + (uint32_t)w->index;
        Buf out = make_buffer(g_pd, g_d.dev, (VkDeviceSize)width * gy * 2 * 16, 0);
        VkCommandBuffer cb = record(&g_d, pool, g_pipe, &out, width, gx, gy);
        VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
        si.commandBufferCount = 1;
        si.pCommandBuffers = &cb;
        pthread_mutex_lock(&g_queue_lock);
        VkResult sr = vkQueueSubmit(g_d.queue, 1, &si, f);
        pthread_mutex_unlock(&g_queue_lock);
        VkResult wr = sr == VK_SUCCESS ? vkWaitForFences(g_d.dev, 1, &f, VK_TRUE, FENCE_TIMEOUT) : sr;
        if (wr != VK_SUCCESS || !ids_correct(out.map, width, gx, gy)) {
            w->ok = 0;
            snprintf(w->why, sizeof w->why, "round %d (%u x %u): submit %d wait %d", round, gx, gy, (int)sr, (int)wr);
        }
        VKCHECK(vkResetFences(g_d.dev, 1, &f));
        vkFreeCommandBuffers(g_d.dev, pool, 1, &cb);
        free_buffer(g_d.dev, &out);
    }
    vkDestroyFence(g_d.dev, f, NULL);
    vkDestroyCommandPool(g_d.dev, pool, NULL);
    return NULL;
}

static int g_idle_calls, g_idle_failures;

static void *idler(void *arg) {
    (void)arg;
    while (!g_done) {
        pthread_mutex_lock(&g_queue_lock);          /* vkQueueWaitIdle's queue: externally synchronized */
        VkResult r = vkQueueWaitIdle(g_d.queue);
        pthread_mutex_unlock(&g_queue_lock);
        g_idle_calls++;
        if (r != VK_SUCCESS) g_idle_failures++;
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void run_threads(void) {
    g_d = new_device();
    VKCHECK(new_pipeline(&g_d, "ids.spv", &g_pipe));
    pthread_t t[NTHREADS], idle;
    Work w[NTHREADS];
    pthread_create(&idle, NULL, idler, NULL);
    for (int i = 0; i < NTHREADS; i++) {
        w[i].index = i;
        w[i].why[0] = 0;
        pthread_create(&t[i], NULL, worker, &w[i]);
    }
    for (int i = 0; i < NTHREADS; i++) pthread_join(t[i], NULL);
    g_done = 1;
    pthread_join(idle, NULL);
    for (int i = 0; i < NTHREADS; i++)
        check(w[i].ok, "thread", "%d: %d rounds %s", i, ROUNDS, w[i].why);
    check(g_idle_calls > 0 && g_idle_failures == 0, "wait_idle", "%d calls, %d failed", g_idle_calls, g_idle_failures);
    VKCHECK(vkDeviceWaitIdle(g_d.dev));
    vkDestroyPipeline(g_d.dev, g_pipe, NULL);
    vkDestroyPipelineLayout(g_d.dev, g_d.layout, NULL);
    vkDestroyDescriptorSetLayout(g_d.dev, g_d.set, NULL);
    vkDestroyDevice(g_d.dev, NULL);
}

/* -- exit -------------------------------------------------------------------------------------- */

static int run_exit(const char *how) {
    Dev d = new_device();
    int done = strcmp(how, "done") == 0;
    VkPipeline pipe;
    VKCHECK(new_pipeline(&d, done ? "ids.spv" : "spin.spv", &pipe));
    Buf out = make_buffer(g_pd, d.dev, 4096, 0);
    VkCommandPool pool = new_pool(d.dev);
    /* spin.spv over 64 workgroups: every dispatch thread is busy when the process ends */
    VkCommandBuffer cb = record(&d, pool, pipe, &out, done ? 4 : 0, 1, done ? 1 : 64);
    VkFence f = new_fence(d.dev);
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    VKCHECK(vkQueueSubmit(d.queue, 1, &si, f));
    if (done) {
        VkResult r = vkWaitForFences(d.dev, 1, &f, VK_TRUE, FENCE_TIMEOUT);
        printf("done %d %s\n", (int)r, ids_correct(out.map, 4, 1, 1) ? "correct" : "wrong");
        fflush(stdout);
        return 7;                       /* main returns: exit() runs with the device alive */
    }
    /* the spinning shader is running once it has written v[0] */
    for (int i = 0; i < 6000 && ((volatile uint32_t *)out.map)[0] == 0; i++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    printf("in flight %u\n", ((volatile uint32_t *)out.map)[0] != 0);
    fflush(stdout);
    if (strcmp(how, "exit") == 0) exit(7);
    for (;;) pause();
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: faults MODE SHADER_DIR [HOW]\n");
        return 2;
    }
    g_shaders = argv[2];
    VkDebugUtilsMessengerEXT messenger;
    VkInstance inst = make_instance(&messenger);
    g_pd = first_physical_device(inst);
    const char *mode = argv[1];
    if (strcmp(mode, "alloc") == 0) {
        run_alloc();
    } else if (strcmp(mode, "dispatch") == 0) {
        g_secondary = argc == 4 && strcmp(argv[3], "secondary") == 0;
        dispatch_on_new_device("A");
        dispatch_on_new_device("B");
    } else if (strcmp(mode, "threads") == 0) {
        run_threads();
    } else if (strcmp(mode, "exit") == 0 && argc == 4) {
        return run_exit(argv[3]);
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    printf("done %d failures\n", g_failures);
    fflush(stdout);
    return g_failures ? 1 : 0;
}
