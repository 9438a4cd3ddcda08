/* portability: what the driver does where a shader breaks a rule the hardware does not enforce,
 * and robust buffer access.
 *
 *   portability SHADER_DIR OUT_DIR
 *
 * tensor_rules.spv (tests/shaders/portability) twice with a Pointer 4 bytes past 16-byte
 * alignment and an Undefined-clamped slice past the tensor: the dispatches succeed and the
 * messenger hears each rule once (tests/test_portability.py reads its "debug warning" lines and
 * compares tensor_*.bin with the Python API's results). Then, on a device with
 * robustBufferAccess and robustBufferAccess2, robust_access.spv reading, writing and adding past
 * its bindings: once with the device's robustness (robust_*.bin), once in a pipeline whose
 * VkPipelineRobustnessCreateInfoEXT disables it (the device is lost: a line "a lost device
 * follows" comes first).
 */
#include "vkutil.h"

typedef struct {
    VkPipeline pipe;
    VkPipelineLayout layout;
    VkDescriptorSetLayout set_layout;
    VkDescriptorSet set;
    const void *push;
    uint32_t push_size, groups;
} Dispatch;

static void record(VkCommandBuffer cb, void *user) {
    Dispatch *d = user;
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, d->pipe);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, d->layout, 0, 1, &d->set, 0, NULL);
    vkCmdPushConstants(cb, d->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, d->push_size, d->push);
    vkCmdDispatch(cb, d->groups, 1, 1);
}

/* A pipeline of `shader` over `n` storage buffers (set 0, bindings 0..n-1) with push constants,
 * its descriptor set written with `bufs`; `next` is chained to the pipeline's create info. */
static Dispatch make_dispatch(VkDevice dev, const char *dir, const char *shader, Buf *bufs, uint32_t n,
                              uint32_t push_size, const void *next, VkDescriptorPool pool) {
    Dispatch d = {0};
    d.set_layout = storage_set_layout(dev, n);
    VkDescriptorSetLayout sl = d.set_layout;
    VkPushConstantRange pr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size};
    VkPipelineLayoutCreateInfo plci = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    plci.setLayoutCount = 1;
    plci.pSetLayouts = &sl;
    plci.pushConstantRangeCount = 1;
    plci.pPushConstantRanges = &pr;
    VKCHECK(vkCreatePipelineLayout(dev, &plci, NULL, &d.layout));
    VkComputePipelineCreateInfo cpi = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cpi.pNext = next;
    cpi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cpi.stage.module = load_shader(dev, dir, shader);
    cpi.stage.pName = "main";
    cpi.layout = d.layout;
    VKCHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpi, NULL, &d.pipe));
    vkDestroyShaderModule(dev, cpi.stage.module, NULL);
    VkDescriptorSetAllocateInfo dai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    dai.descriptorPool = pool;
    dai.descriptorSetCount = 1;
    dai.pSetLayouts = &sl;
    VKCHECK(vkAllocateDescriptorSets(dev, &dai, &d.set));
    VkDescriptorBufferInfo dbi[8];
    VkWriteDescriptorSet w[8];
    for (uint32_t i = 0; i < n; i++) {
        dbi[i] = (VkDescriptorBufferInfo){bufs[i].buffer, 0, VK_WHOLE_SIZE};
        memset(&w[i], 0, sizeof w[i]);
        w[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        w[i].dstSet = d.set;
        w[i].dstBinding = i;
        w[i].descriptorCount = 1;
        w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        w[i].pBufferInfo = &dbi[i];
    }
    vkUpdateDescriptorSets(dev, n, w, 0, NULL);
    return d;
}

static void free_dispatch(VkDevice dev, Dispatch *d) {
    vkDestroyPipeline(dev, d->pipe, NULL);
    vkDestroyPipelineLayout(dev, d->layout, NULL);
    vkDestroyDescriptorSetLayout(dev, d->set_layout, NULL);
}

static void free_all(VkDevice dev, Buf *b, int n, VkDescriptorPool dpool, VkCommandPool cpool) {
    for (int i = 0; i < n; i++) free_buffer(dev, &b[i]);
    vkDestroyDescriptorPool(dev, dpool, NULL);
    vkDestroyCommandPool(dev, cpool, NULL);
    vkDestroyDevice(dev, NULL);
}

static VkDescriptorPool make_pool(VkDevice dev) {
    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 16};
    VkDescriptorPoolCreateInfo dpci = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpci.maxSets = 4;
    dpci.poolSizeCount = 1;
    dpci.pPoolSizes = &ps;
    VkDescriptorPool pool;
    VKCHECK(vkCreateDescriptorPool(dev, &dpci, NULL, &pool));
    return pool;
}

static VkCommandPool make_command_pool(VkDevice dev) {
    VkCommandPoolCreateInfo cpci = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpci.queueFamilyIndex = 0;
    VkCommandPool pool;
    VKCHECK(vkCreateCommandPool(dev, &cpci, NULL, &pool));
    return pool;
}

#define SENTINEL 0x7FC0DEADu

static void tensor_rules(VkPhysicalDevice pd, const char *dir, const char *out) {
    VkPhysicalDeviceCooperativeMatrix2FeaturesNV c2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
    c2.cooperativeMatrixTensorAddressing = VK_TRUE;
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR c1 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
    c1.pNext = &c2;
    c1.cooperativeMatrix = VK_TRUE;
    const char *exts[] = {"VK_KHR_cooperative_matrix", "VK_NV_cooperative_matrix2", NULL};
    VkDevice dev = make_device(pd, exts, &c1);
    VkQueue queue;
    vkGetDeviceQueue(dev, 0, 0, &queue);
    /* R x C = 32 x 32 and 512 more elements, every one distinct (x[i] = i + 1) */
    uint32_t nx = 32 * 32 + 512;
    uint32_t sizes[5] = {nx * 4, 256 * 4, (256 + 16) * 4, 256 * 4, nx * 4};
    Buf b[5];
    for (int i = 0; i < 5; i++) b[i] = make_buffer(pd, dev, sizes[i], 0);
    for (uint32_t i = 0; i < nx; i++) ((float *)b[0].map)[i] = (float)(i + 1);
    for (uint32_t i = 0; i < sizes[2] / 4; i++) ((uint32_t *)b[2].map)[i] = SENTINEL;
    for (uint32_t i = 0; i < nx; i++) ((uint32_t *)b[4].map)[i] = SENTINEL;
    VkDescriptorPool dpool = make_pool(dev);
    VkCommandPool cpool = make_command_pool(dev);
    uint32_t push[6] = {32, 32, 1, 1, 24, 24};     /* R, C, poff, soff, roff, coff */
    Dispatch d = make_dispatch(dev, dir, "tensor_rules.spv", b, 5, sizeof push, NULL, dpool);
    d.push = push;
    d.push_size = sizeof push;
    d.groups = 1;
    for (int run = 0; run < 2; run++) {        /* the second run reports nothing new */
        printf("tensor_rules run %d\n", run);
        fflush(stdout);
        VkResult r = run_once(dev, queue, cpool, record, &d);
        check(r == VK_SUCCESS, run ? "tensor_rules_again" : "tensor_rules", "result %d", (int)r);
    }
    const char *names[5] = {"tensor_x.bin", "tensor_y.bin", "tensor_z.bin", "tensor_u.bin", "tensor_v.bin"};
    for (int i = 0; i < 5; i++) write_file(out, names[i], b[i].map, sizes[i]);
    free_dispatch(dev, &d);
    free_all(dev, b, 5, dpool, cpool);
}

static void robust(VkPhysicalDevice pd, const char *dir, const char *out) {
    VkPhysicalDevicePipelineRobustnessFeaturesEXT pr = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_ROBUSTNESS_FEATURES_EXT};
    pr.pipelineRobustness = VK_TRUE;
    VkPhysicalDeviceRobustness2FeaturesEXT r2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ROBUSTNESS_2_FEATURES_EXT};
    r2.pNext = &pr;
    r2.robustBufferAccess2 = VK_TRUE;
    const char *exts[] = {"VK_EXT_robustness2", "VK_EXT_pipeline_robustness", NULL};
    VkDevice dev = make_device_robust(pd, exts, &r2, 1);
    VkQueue queue;
    vkGetDeviceQueue(dev, 0, 0, &queue);
    Buf b[4];
    uint32_t sizes[4] = {64 * 4, 64 * 4, 64 * 4, 128 * 4};
    for (int i = 0; i < 4; i++) b[i] = make_buffer(pd, dev, sizes[i], 0);
    VkDescriptorPool dpool = make_pool(dev);
    VkCommandPool cpool = make_command_pool(dev);
    uint32_t first = 32;            /* invocations 32..63 reach past the 64-element bindings */
    const char *names[4] = {"robust_x.bin", "robust_w.bin", "robust_a.bin", "robust_o.bin"};
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < 64; i++) {
            ((uint32_t *)b[0].map)[i] = i + 1;
            ((uint32_t *)b[1].map)[i] = SENTINEL;
            ((uint32_t *)b[2].map)[i] = 0;
        }
        VkPipelineRobustnessCreateInfoEXT off = {VK_STRUCTURE_TYPE_PIPELINE_ROBUSTNESS_CREATE_INFO_EXT};
        off.storageBuffers = VK_PIPELINE_ROBUSTNESS_BUFFER_BEHAVIOR_DISABLED_EXT;
        off.uniformBuffers = VK_PIPELINE_ROBUSTNESS_BUFFER_BEHAVIOR_DISABLED_EXT;
        Dispatch d = make_dispatch(dev, dir, "robust_access.spv", b, 4, sizeof first, pass ? &off : NULL, dpool);
        d.push = &first;
        d.push_size = sizeof first;
        d.groups = 2;
        if (pass == 1) {
            /* the layer sees the lost submission's fence and command buffer as still in use */
            printf("a lost device follows\n");
            fflush(stdout);
        }
        VkResult r = run_once(dev, queue, cpool, record, &d);
        if (pass == 0) {
            check(r == VK_SUCCESS, "robust_access", "result %d", (int)r);
            for (int i = 0; i < 4; i++) write_file(out, names[i], b[i].map, sizes[i]);
        } else {
            check(r == VK_ERROR_DEVICE_LOST, "robust_access_disabled", "result %d", (int)r);
        }
        free_dispatch(dev, &d);
    }
    free_all(dev, b, 4, dpool, cpool);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: portability SHADER_DIR OUT_DIR\n");
        return 2;
    }
    VkDebugUtilsMessengerEXT messenger;
    VkInstance inst = make_instance(&messenger);
    VkPhysicalDevice pd = first_physical_device(inst);
    tensor_rules(pd, argv[1], argv[2]);
    robust(pd, argv[1], argv[2]);
    PFN_vkDestroyDebugUtilsMessengerEXT destroy =
        (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(inst, "vkDestroyDebugUtilsMessengerEXT");
    destroy(inst, messenger, NULL);
    vkDestroyInstance(inst, NULL);
    return g_failures ? 1 : 0;
}
