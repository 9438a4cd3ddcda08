/* api: the compute subset of Vulkan 1.3 through the loader, one check a line (vkutil.h).
 *
 *   api SHADER_DIR OUT_DIR
 *
 * Checks that need a reference the C side cannot compute (a shader's results, a cooperative
 * vector matrix conversion) write their bytes to OUT_DIR for tests/test_icd.py; the rest compare
 * with values worked out here. The device is lost on purpose last (an out-of-bounds store).
 */
#define _POSIX_C_SOURCE 200809L
#include "vkutil.h"

#include <time.h>

static const char *g_shaders, *g_out;
static VkInstance g_inst;
static VkPhysicalDevice g_pd;
static VkDevice g_dev;
static VkQueue g_queue;
static VkCommandPool g_pool;

#define FENCE_TIMEOUT (600ull * 1000000000ull)

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static VkCommandPool make_pool(VkDevice dev) {
    VkCommandPoolCreateInfo ci = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    ci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    VkCommandPool pool;
    VKCHECK(vkCreateCommandPool(dev, &ci, NULL, &pool));
    return pool;
}

static VkCommandBuffer begin(VkCommandBufferLevel level) {
    VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = g_pool;
    ai.level = level;
    ai.commandBufferCount = 1;
    VkCommandBuffer cb;
    VKCHECK(vkAllocateCommandBuffers(g_dev, &ai, &cb));
    VkCommandBufferInheritanceInfo inh = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    bi.pInheritanceInfo = level == VK_COMMAND_BUFFER_LEVEL_SECONDARY ? &inh : NULL;
    VKCHECK(vkBeginCommandBuffer(cb, &bi));
    return cb;
}

/* End, submit alone with a new fence; returns the submit's result. */
static VkResult submit_alone(VkCommandBuffer cb, VkFence *fence) {
    VKCHECK(vkEndCommandBuffer(cb));
    VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VKCHECK(vkCreateFence(g_dev, &fci, NULL, fence));
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    return vkQueueSubmit(g_queue, 1, &si, *fence);
}

/* End, submit alone, wait; returns the wait's result. */
static VkResult finish(VkCommandBuffer cb) {
    VkFence fence;
    VkResult r = submit_alone(cb, &fence);
    if (r == VK_SUCCESS) r = vkWaitForFences(g_dev, 1, &fence, VK_TRUE, FENCE_TIMEOUT);
    vkDestroyFence(g_dev, fence, NULL);
    vkFreeCommandBuffers(g_dev, g_pool, 1, &cb);
    return r;
}

static VkDescriptorSetLayout set_layout(uint32_t n, const VkDescriptorType *types, VkDescriptorSetLayoutCreateFlags flags) {
    VkDescriptorSetLayoutBinding b[4];
    for (uint32_t i = 0; i < n; i++) {
        memset(&b[i], 0, sizeof b[i]);
        b[i].binding = i;
        b[i].descriptorType = types[i];
        b[i].descriptorCount = 1;
        b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo ci = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    ci.flags = flags;
    ci.bindingCount = n;
    ci.pBindings = b;
    VkDescriptorSetLayout l;
    VKCHECK(vkCreateDescriptorSetLayout(g_dev, &ci, NULL, &l));
    return l;
}

static VkPipelineLayout pipeline_layout(uint32_t nsets, const VkDescriptorSetLayout *sets, uint32_t push) {
    VkPushConstantRange pr = {VK_SHADER_STAGE_COMPUTE_BIT, 0, push};
    VkPipelineLayoutCreateInfo ci = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    ci.setLayoutCount = nsets;
    ci.pSetLayouts = sets;
    ci.pushConstantRangeCount = push ? 1 : 0;
    ci.pPushConstantRanges = &pr;
    VkPipelineLayout l;
    VKCHECK(vkCreatePipelineLayout(g_dev, &ci, NULL, &l));
    return l;
}

static VkResult pipeline(VkShaderModule m, VkPipelineLayout layout, const VkSpecializationInfo *spec,
                         VkPipelineCreateFlags flags, VkPipelineCache cache, VkPipeline *out) {
    VkComputePipelineCreateInfo ci = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    ci.flags = flags;
    ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = m;
    ci.stage.pName = "main";
    ci.stage.pSpecializationInfo = spec;
    ci.layout = layout;
    return vkCreateComputePipelines(g_dev, cache, 1, &ci, NULL, out);
}

static void write_buffer(const char *name, Buf *b) { write_file(g_out, name, b->map, (size_t)b->size); }

/* -- plumbing.spv: two sets, a dynamic uniform offset, spec and push constants ----------------- */

#define N_PLUMB 1000
static struct {
    VkShaderModule module;
    VkDescriptorSetLayout set0, set1;
    VkPipelineLayout layout;
    VkPipeline pipeline;
    Buf x, y, u;
    float y0[N_PLUMB];
} P;

static VkSpecializationInfo plumbing_spec(float *scale_and_size) {
    /* SCALE (id 0, float), the workgroup width (id 1) and an id the shader does not declare */
    static VkSpecializationMapEntry e[3] = {{0, 0, 4}, {1, 4, 4}, {7, 0, 4}};
    VkSpecializationInfo si = {3, e, 8, scale_and_size};
    return si;
}

static void check_plumbing(void) {
    P.module = load_shader(g_dev, g_shaders, "plumbing.spv");
    VkDescriptorType t0[2] = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER};
    VkDescriptorType t1[1] = {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC};
    P.set0 = set_layout(2, t0, 0);
    P.set1 = set_layout(1, t1, 0);
    VkDescriptorSetLayout sets[2] = {P.set0, P.set1};
    P.layout = pipeline_layout(2, sets, 8);
    union { float f; uint32_t u; } spec[2];
    spec[0].f = 0.5f;
    spec[1].u = 64;
    VkSpecializationInfo si = plumbing_spec(&spec[0].f);
    VKCHECK(pipeline(P.module, P.layout, &si, 0, VK_NULL_HANDLE, &P.pipeline));

    P.x = make_buffer(g_pd, g_dev, N_PLUMB * 4, 0);
    P.y = make_buffer(g_pd, g_dev, N_PLUMB * 4, 0);
    P.u = make_buffer(g_pd, g_dev, 512, VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT);
    for (int i = 0; i < N_PLUMB; i++) {
        ((float *)P.x.map)[i] = (float)(i % 37) - 11.25f;
        ((float *)P.y.map)[i] = P.y0[i] = (float)(i % 5) * 0.125f;
    }
    ((float *)P.u.map)[0] = 3.0f;
    ((float *)P.u.map)[64] = 5.0f;           /* byte 256: the dynamic offset picks this one */
    write_buffer("plumbing_x.bin", &P.x);
    write_buffer("plumbing_y0.bin", &P.y);
    write_buffer("plumbing_u.bin", &P.u);

    VkDescriptorPoolSize ps[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2}, {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC, 1}};
    VkDescriptorPoolCreateInfo pci = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pci.maxSets = 2;
    pci.poolSizeCount = 2;
    pci.pPoolSizes = ps;
    VkDescriptorPool dpool;
    VKCHECK(vkCreateDescriptorPool(g_dev, &pci, NULL, &dpool));
    VkDescriptorSetAllocateInfo dai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    dai.descriptorPool = dpool;
    dai.descriptorSetCount = 2;
    dai.pSetLayouts = sets;
    VkDescriptorSet ds[2];
    VKCHECK(vkAllocateDescriptorSets(g_dev, &dai, ds));
    VkDescriptorBufferInfo bx = {P.x.buffer, 0, VK_WHOLE_SIZE}, by = {P.y.buffer, 0, N_PLUMB * 4},
                           bu = {P.u.buffer, 0, 16};
    VkWriteDescriptorSet w[3];
    memset(w, 0, sizeof w);
    for (int i = 0; i < 3; i++) {
        w[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        w[i].descriptorCount = 1;
    }
    w[0].dstSet = ds[0]; w[0].dstBinding = 0; w[0].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER; w[0].pBufferInfo = &bx;
    w[1].dstSet = ds[0]; w[1].dstBinding = 1; w[1].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER; w[1].pBufferInfo = &by;
    w[2].dstSet = ds[1]; w[2].dstBinding = 0; w[2].descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC; w[2].pBufferInfo = &bu;
    vkUpdateDescriptorSets(g_dev, 3, w, 0, NULL);

    VkCommandBuffer cb = begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, P.pipeline);
    uint32_t dyn = 256;
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, P.layout, 0, 2, ds, 1, &dyn);
    struct { uint32_t n; float b; } push = {N_PLUMB, 1.5f};
    vkCmdPushConstants(cb, P.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 8, &push);
    vkCmdDispatch(cb, (N_PLUMB + 63) / 64, 1, 1);
    VkResult r = finish(cb);
    check(r == VK_SUCCESS, "plumbing_dispatch", "result %d", (int)r);
    write_buffer("plumbing_y.bin", &P.y);
    vkDestroyDescriptorPool(g_dev, dpool, NULL);
}

/* The same dispatch with set 0 pushed (VK_KHR_push_descriptor) and set 1 written by an update
 * template (a plain uniform buffer at offset 256): the same bytes. */
static void check_push_descriptors(void) {
    VkDescriptorType t0[2] = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER};
    VkDescriptorType t1[1] = {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER};
    VkDescriptorSetLayout sets[2] = {set_layout(2, t0, VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR),
                                     set_layout(1, t1, 0)};
    VkPipelineLayout layout = pipeline_layout(2, sets, 8);
    union { float f; uint32_t u; } spec[2];
    spec[0].f = 0.5f;
    spec[1].u = 64;
    VkSpecializationInfo si = plumbing_spec(&spec[0].f);
    VkPipeline pipe;
    VKCHECK(pipeline(P.module, layout, &si, 0, VK_NULL_HANDLE, &pipe));
    Buf y = make_buffer(g_pd, g_dev, N_PLUMB * 4, 0);
    memcpy(y.map, P.y0, sizeof P.y0);

    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 1};
    VkDescriptorPoolCreateInfo pci = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pci.maxSets = 1;
    pci.poolSizeCount = 1;
    pci.pPoolSizes = &ps;
    VkDescriptorPool dpool;
    VKCHECK(vkCreateDescriptorPool(g_dev, &pci, NULL, &dpool));
    VkDescriptorSetAllocateInfo dai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    dai.descriptorPool = dpool;
    dai.descriptorSetCount = 1;
    dai.pSetLayouts = &sets[1];
    VkDescriptorSet ds1;
    VKCHECK(vkAllocateDescriptorSets(g_dev, &dai, &ds1));
    struct { uint64_t pad; VkDescriptorBufferInfo info; } data = {0, {P.u.buffer, 256, 16}};
    VkDescriptorUpdateTemplateEntry te = {0, 0, 1, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 8, 0};
    VkDescriptorUpdateTemplateCreateInfo tci = {VK_STRUCTURE_TYPE_DESCRIPTOR_UPDATE_TEMPLATE_CREATE_INFO};
    tci.descriptorUpdateEntryCount = 1;
    tci.pDescriptorUpdateEntries = &te;
    tci.templateType = VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_DESCRIPTOR_SET;
    tci.descriptorSetLayout = sets[1];
    VkDescriptorUpdateTemplate tmpl;
    VKCHECK(vkCreateDescriptorUpdateTemplate(g_dev, &tci, NULL, &tmpl));
    vkUpdateDescriptorSetWithTemplate(g_dev, ds1, tmpl, &data);

    PFN_vkCmdPushDescriptorSetKHR push_set =
        (PFN_vkCmdPushDescriptorSetKHR)vkGetDeviceProcAddr(g_dev, "vkCmdPushDescriptorSetKHR");
    VkCommandBuffer cb = begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    VkDescriptorBufferInfo bx = {P.x.buffer, 0, VK_WHOLE_SIZE}, by = {y.buffer, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet w[2];
    memset(w, 0, sizeof w);
    for (int i = 0; i < 2; i++) {
        w[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        w[i].dstBinding = (uint32_t)i;
        w[i].descriptorCount = 1;
        w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    }
    w[0].pBufferInfo = &bx;
    w[1].pBufferInfo = &by;
    push_set(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 2, w);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 1, 1, &ds1, 0, NULL);
    struct { uint32_t n; float b; } push = {N_PLUMB, 1.5f};
    vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 8, &push);
    vkCmdDispatch(cb, (N_PLUMB + 63) / 64, 1, 1);
    VkResult r = finish(cb);
    check(r == VK_SUCCESS && !memcmp(y.map, P.y.map, N_PLUMB * 4), "push_descriptors_and_template",
          "result %d, the same bytes as the descriptor sets' dispatch: %s", (int)r,
          memcmp(y.map, P.y.map, N_PLUMB * 4) ? "no" : "yes");
    vkDestroyDescriptorUpdateTemplate(g_dev, tmpl, NULL);
    vkDestroyDescriptorPool(g_dev, dpool, NULL);
    vkDestroyPipeline(g_dev, pipe, NULL);
    vkDestroyPipelineLayout(g_dev, layout, NULL);
    vkDestroyDescriptorSetLayout(g_dev, sets[0], NULL);
    vkDestroyDescriptorSetLayout(g_dev, sets[1], NULL);
    free_buffer(g_dev, &y);
}

/* -- transfers -------------------------------------------------------------------------------- */

static void check_copies(void) {
    Buf a = make_buffer(g_pd, g_dev, 256, 0), b = make_buffer(g_pd, g_dev, 256, 0);
    VkCommandBuffer cb = begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    vkCmdFillBuffer(cb, a.buffer, 0, VK_WHOLE_SIZE, 0x01020304u);
    uint32_t words[4] = {10, 11, 12, 13};
    vkCmdUpdateBuffer(cb, a.buffer, 32, sizeof words, words);
    VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    VkBufferCopy region = {32, 64, 16};
    vkCmdCopyBuffer(cb, a.buffer, b.buffer, 1, &region);
    VkBufferCopy2 r2 = {VK_STRUCTURE_TYPE_BUFFER_COPY_2};
    r2.srcOffset = 0;
    r2.dstOffset = 128;
    r2.size = 8;
    VkCopyBufferInfo2 ci2 = {VK_STRUCTURE_TYPE_COPY_BUFFER_INFO_2};
    ci2.srcBuffer = a.buffer;
    ci2.dstBuffer = b.buffer;
    ci2.regionCount = 1;
    ci2.pRegions = &r2;
    VkMemoryBarrier2 mb2 = {VK_STRUCTURE_TYPE_MEMORY_BARRIER_2};
    mb2.srcStageMask = mb2.dstStageMask = VK_PIPELINE_STAGE_2_COPY_BIT;
    mb2.srcAccessMask = VK_ACCESS_2_TRANSFER_WRITE_BIT;
    mb2.dstAccessMask = VK_ACCESS_2_TRANSFER_READ_BIT;
    VkDependencyInfo dep = {VK_STRUCTURE_TYPE_DEPENDENCY_INFO};
    dep.memoryBarrierCount = 1;
    dep.pMemoryBarriers = &mb2;
    vkCmdPipelineBarrier2(cb, &dep);
    vkCmdCopyBuffer2(cb, &ci2);
    VkResult r = finish(cb);
    uint32_t *pa = a.map, *pb = b.map;
    int ok = r == VK_SUCCESS && pa[0] == 0x01020304u && pa[63] == 0x01020304u && pa[8] == 10 && pa[11] == 13 &&
             pb[16] == 10 && pb[19] == 13 && pb[15] == 0 && pb[20] == 0 && pb[32] == 0x01020304u &&
             pb[33] == 0x01020304u && pb[34] == 0;
    check(ok, "copies", "fill, update, copy, copy2: a[0]=%#x a[8]=%u b[16]=%u b[32]=%#x b[34]=%u", pa[0], pa[8],
          pb[16], pb[32], pb[34]);
    /* a submission of copies alone that waits for nothing runs in vkQueueSubmit: its fence is
       signalled, and the bytes are there, when the call returns */
    cb = begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    vkCmdFillBuffer(cb, b.buffer, 0, 64, 0xA5A5A5A5u);
    VkFence fence;
    VkResult sr = submit_alone(cb, &fence);
    uint32_t first = pb[0], last = pb[15];
    VkResult now = vkWaitForFences(g_dev, 1, &fence, VK_TRUE, 0);
    check(sr == VK_SUCCESS && now == VK_SUCCESS && first == 0xA5A5A5A5u && last == 0xA5A5A5A5u, "copies_in_submit",
          "submit %d, fence at once %d, b[0]=%#x b[15]=%#x", (int)sr, (int)now, first, last);
    VKCHECK(vkQueueWaitIdle(g_queue));
    vkDestroyFence(g_dev, fence, NULL);
    vkFreeCommandBuffers(g_dev, g_pool, 1, &cb);
    free_buffer(g_dev, &a);
    free_buffer(g_dev, &b);
}

/* -- dispatch base and indirect (ids.spv: 4 x 2 invocations per workgroup) ----------------------- */

static void check_ids(void) {
    VkShaderModule m = load_shader(g_dev, g_shaders, "ids.spv");
    VkDescriptorType t = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    VkDescriptorSetLayout sl = set_layout(1, &t, VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR);
    VkPipelineLayout layout = pipeline_layout(1, &sl, 4);
    VkPipeline pipe;
    VKCHECK(pipeline(m, layout, NULL, VK_PIPELINE_CREATE_DISPATCH_BASE_BIT, VK_NULL_HANDLE, &pipe));
    PFN_vkCmdPushDescriptorSetKHR push_set =
        (PFN_vkCmdPushDescriptorSetKHR)vkGetDeviceProcAddr(g_dev, "vkCmdPushDescriptorSetKHR");
    uint32_t width = 16;
    Buf out = make_buffer(g_pd, g_dev, 16 * 8 * 16, 0);            /* 16 x 8 uvec4 */
    Buf ind = make_buffer(g_pd, g_dev, 32, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT);
    uint32_t groups[3] = {3, 2, 1};
    memcpy((char *)ind.map + 16, groups, sizeof groups);
    for (int pass = 0; pass < 2; pass++) {
        memset(out.map, 0, (size_t)out.size);
        VkCommandBuffer cb = begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY);
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
        VkDescriptorBufferInfo bi = {out.buffer, 0, VK_WHOLE_SIZE};
        VkWriteDescriptorSet w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        w.descriptorCount = 1;
        w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        w.pBufferInfo = &bi;
        push_set(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &w);
        vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &width);
        if (pass == 0) vkCmdDispatchBase(cb, 1, 2, 0, 2, 1, 1);
        else vkCmdDispatchIndirect(cb, ind.buffer, 16);
        VkResult r = finish(cb);
        check(r == VK_SUCCESS, pass ? "dispatch_indirect" : "dispatch_base", "result %d", (int)r);
        write_buffer(pass ? "ids_indirect.bin" : "ids_base.bin", &out);
    }
    vkDestroyPipeline(g_dev, pipe, NULL);
    vkDestroyPipelineLayout(g_dev, layout, NULL);
    vkDestroyDescriptorSetLayout(g_dev, sl, NULL);
    vkDestroyShaderModule(g_dev, m, NULL);
    free_buffer(g_dev, &out);
    free_buffer(g_dev, &ind);
}

/* -- buffer device addresses (bda.spv) -------------------------------------------------------- */

static void check_bda(void) {
    VkShaderModule m = load_shader(g_dev, g_shaders, "bda.spv");
    VkPipelineLayout layout = pipeline_layout(0, NULL, 24);
    VkPipeline pipe;
    VKCHECK(pipeline(m, layout, NULL, 0, VK_NULL_HANDLE, &pipe));
    Buf src = make_buffer(g_pd, g_dev, 100 * 4, 0), dst = make_buffer(g_pd, g_dev, 4096, 0);
    for (int i = 0; i < 100; i++) ((float *)src.map)[i] = (float)i * 0.75f;
    VkBufferDeviceAddressInfo ai = {VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    ai.buffer = src.buffer;
    struct { VkDeviceAddress src, dst; uint32_t n; } push;
    push.src = vkGetBufferDeviceAddress(g_dev, &ai);
    ai.buffer = dst.buffer;
    push.dst = vkGetBufferDeviceAddress(g_dev, &ai) + 1024;     /* a pointer into the middle of a buffer */
    push.n = 100;
    VkCommandBuffer cb = begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 20, &push);
    vkCmdDispatch(cb, 4, 1, 1);
    VkResult r = finish(cb);
    int ok = r == VK_SUCCESS && push.src != 0 && push.src % 256 == 0;
    for (int i = 0; i < 100; i++) ok &= ((float *)dst.map)[256 + i] == (float)i * 1.5f;
    ok &= ((float *)dst.map)[255] == 0.0f && ((float *)dst.map)[356] == 0.0f;
    check(ok, "buffer_device_address", "result %d, dst[99] = %g", (int)r, ((float *)dst.map)[256 + 99]);
    vkDestroyPipeline(g_dev, pipe, NULL);
    vkDestroyPipelineLayout(g_dev, layout, NULL);
    vkDestroyShaderModule(g_dev, m, NULL);
    free_buffer(g_dev, &src);
    free_buffer(g_dev, &dst);
}

/* -- fences, semaphores, events ---------------------------------------------------------------- */

static VkCommandBuffer fill_cb(Buf *b, VkDeviceSize offset, uint32_t value) {
    VkCommandBuffer cb = begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    vkCmdFillBuffer(cb, b->buffer, offset, 4, value);
    VKCHECK(vkEndCommandBuffer(cb));
    return cb;
}

static void check_sync(void) {
    Buf b = make_buffer(g_pd, g_dev, 64, 0);
    uint32_t *v = b.map;
    VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    fci.flags = VK_FENCE_CREATE_SIGNALED_BIT;
    VkFence fence;
    VKCHECK(vkCreateFence(g_dev, &fci, NULL, &fence));
    VkResult s0 = vkGetFenceStatus(g_dev, fence);
    vkResetFences(g_dev, 1, &fence);
    VkResult s1 = vkGetFenceStatus(g_dev, fence);
    VkResult w0 = vkWaitForFences(g_dev, 1, &fence, VK_TRUE, 0);
    check(s0 == VK_SUCCESS && s1 == VK_NOT_READY && w0 == VK_TIMEOUT, "fences",
          "created signalled %d, reset %d, wait 0 ns %d", (int)s0, (int)s1, (int)w0);

    /* timeline: the queue waits for value 2, which the host signals after the submit */
    VkSemaphoreTypeCreateInfo tci = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    tci.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo sci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    sci.pNext = &tci;
    VkSemaphore tl;
    VKCHECK(vkCreateSemaphore(g_dev, &sci, NULL, &tl));
    VkCommandBuffer cb = fill_cb(&b, 0, 7);
    VkSemaphoreSubmitInfo wait_i = {VK_STRUCTURE_TYPE_SEMAPHORE_SUBMIT_INFO};
    wait_i.semaphore = tl;
    wait_i.value = 2;
    wait_i.stageMask = VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT;
    VkSemaphoreSubmitInfo sig_i = wait_i;
    sig_i.value = 3;
    VkCommandBufferSubmitInfo cbi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_SUBMIT_INFO};
    cbi.commandBuffer = cb;
    VkSubmitInfo2 s2 = {VK_STRUCTURE_TYPE_SUBMIT_INFO_2};
    s2.waitSemaphoreInfoCount = 1;
    s2.pWaitSemaphoreInfos = &wait_i;
    s2.commandBufferInfoCount = 1;
    s2.pCommandBufferInfos = &cbi;
    s2.signalSemaphoreInfoCount = 1;
    s2.pSignalSemaphoreInfos = &sig_i;
    VKCHECK(vkQueueSubmit2(g_queue, 1, &s2, VK_NULL_HANDLE));
    sleep_ms(100);
    uint32_t before = v[0];
    VkSemaphoreSignalInfo si = {VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    si.semaphore = tl;
    si.value = 1;
    VKCHECK(vkSignalSemaphore(g_dev, &si));
    sleep_ms(100);
    uint32_t at1 = v[0];
    si.value = 2;
    VKCHECK(vkSignalSemaphore(g_dev, &si));
    uint64_t want = 3;
    VkSemaphoreWaitInfo wi = {VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wi.semaphoreCount = 1;
    wi.pSemaphores = &tl;
    wi.pValues = &want;
    VkResult wr = vkWaitSemaphores(g_dev, &wi, FENCE_TIMEOUT);
    uint64_t value = 0;
    vkGetSemaphoreCounterValue(g_dev, tl, &value);
    check(before == 0 && at1 == 0 && wr == VK_SUCCESS && v[0] == 7 && value == 3, "timeline_semaphore",
          "before any signal %u, after 1: %u, after 2: wait %d, value %u, counter %llu", before, at1, (int)wr, v[0],
          (unsigned long long)value);

    /* binary semaphore between two submits, the second with a fence */
    VkSemaphoreCreateInfo bci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    VkSemaphore bs;
    VKCHECK(vkCreateSemaphore(g_dev, &bci, NULL, &bs));
    VkCommandBuffer c1 = fill_cb(&b, 4, 1), c2 = fill_cb(&b, 8, 2);
    VkSubmitInfo a = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    a.commandBufferCount = 1;
    a.pCommandBuffers = &c1;
    a.signalSemaphoreCount = 1;
    a.pSignalSemaphores = &bs;
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkSubmitInfo c = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    c.waitSemaphoreCount = 1;
    c.pWaitSemaphores = &bs;
    c.pWaitDstStageMask = &stage;
    c.commandBufferCount = 1;
    c.pCommandBuffers = &c2;
    VKCHECK(vkQueueSubmit(g_queue, 1, &a, VK_NULL_HANDLE));
    VKCHECK(vkQueueSubmit(g_queue, 1, &c, fence));
    VkResult fr = vkWaitForFences(g_dev, 1, &fence, VK_TRUE, FENCE_TIMEOUT);
    check(fr == VK_SUCCESS && v[1] == 1 && v[2] == 2, "binary_semaphore", "wait %d, values %u %u", (int)fr, v[1], v[2]);

    /* events: a command buffer waits for the host to set one; another command sets a second */
    VkEventCreateInfo eci = {VK_STRUCTURE_TYPE_EVENT_CREATE_INFO};
    VkEvent ev, ev2;
    VKCHECK(vkCreateEvent(g_dev, &eci, NULL, &ev));
    VKCHECK(vkCreateEvent(g_dev, &eci, NULL, &ev2));
    VkCommandBuffer ce = begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    vkCmdWaitEvents(ce, 1, &ev, VK_PIPELINE_STAGE_HOST_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, NULL, 0, NULL, 0, NULL);
    vkCmdFillBuffer(ce, b.buffer, 12, 4, 9);
    vkCmdSetEvent(ce, ev2, VK_PIPELINE_STAGE_TRANSFER_BIT);
    VKCHECK(vkEndCommandBuffer(ce));
    vkResetFences(g_dev, 1, &fence);
    VkSubmitInfo e = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    e.commandBufferCount = 1;
    e.pCommandBuffers = &ce;
    VKCHECK(vkQueueSubmit(g_queue, 1, &e, fence));
    /* the submission waits for the host's vkSetEvent: 100 ms of polling its fence. A poll of a
       fence that submitted work will signal waits for it up to 1 ms, so that an application
       spinning on the status leaves the host's cores to the work: about 100 polls, where polls
       that return at once make tens of thousands */
    double t0 = now_ms();
    int polls = 0;
    VkResult waiting;
    do {
        waiting = vkGetFenceStatus(g_dev, fence);
        polls++;
    } while (waiting == VK_NOT_READY && now_ms() - t0 < 100);
    check(waiting == VK_NOT_READY && polls >= 5 && polls <= 200, "fence_poll",
          "fence %d after %d polls in %.0f ms", (int)waiting, polls, now_ms() - t0);
    VkResult ev2_before = vkGetEventStatus(g_dev, ev2);
    VKCHECK(vkSetEvent(g_dev, ev));
    VkResult er = vkWaitForFences(g_dev, 1, &fence, VK_TRUE, FENCE_TIMEOUT);
    VkResult ev2_after = vkGetEventStatus(g_dev, ev2);
    check(waiting == VK_NOT_READY && ev2_before == VK_EVENT_RESET && er == VK_SUCCESS && v[3] == 9 &&
              ev2_after == VK_EVENT_SET,
          "events", "before vkSetEvent: fence %d, event %d; after: fence %d, value %u, event %d", (int)waiting,
          (int)ev2_before, (int)er, v[3], (int)ev2_after);
    VKCHECK(vkQueueWaitIdle(g_queue));
    VkCommandBuffer all[4] = {cb, c1, c2, ce};
    vkFreeCommandBuffers(g_dev, g_pool, 4, all);
    vkDestroyEvent(g_dev, ev, NULL);
    vkDestroyEvent(g_dev, ev2, NULL);
    vkDestroySemaphore(g_dev, tl, NULL);
    vkDestroySemaphore(g_dev, bs, NULL);
    vkDestroyFence(g_dev, fence, NULL);
    free_buffer(g_dev, &b);
}

/* -- timestamps, secondary command buffers -------------------------------------------------------- */

static void check_timestamps(void) {
    VkQueryPoolCreateInfo qci = {VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qci.queryCount = 2;
    VkQueryPool qp;
    VKCHECK(vkCreateQueryPool(g_dev, &qci, NULL, &qp));
    Buf b = make_buffer(g_pd, g_dev, 64, 0);
    VkCommandBuffer cb = begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    vkCmdResetQueryPool(cb, qp, 0, 2);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp, 0);
    vkCmdFillBuffer(cb, b.buffer, 32, 32, 5);
    vkCmdWriteTimestamp2(cb, VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, qp, 1);
    vkCmdCopyQueryPoolResults(cb, qp, 0, 2, b.buffer, 0, 16, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
    VkResult r = finish(cb);
    uint64_t res[4] = {0};
    VkResult qr = vkGetQueryPoolResults(g_dev, qp, 0, 2, sizeof res, res, 16,
                                        VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT | VK_QUERY_RESULT_WITH_AVAILABILITY_BIT);
    uint64_t *copied = b.map;
    check(r == VK_SUCCESS && qr == VK_SUCCESS && res[0] > 0 && res[2] >= res[0] && res[1] == 1 && res[3] == 1 &&
              !memcmp(copied, res, sizeof res),
          "timestamps", "t0 %llu t1 %llu (+%llu ns), available %llu %llu, copied to a buffer alike: %s",
          (unsigned long long)res[0], (unsigned long long)res[2], (unsigned long long)(res[2] - res[0]),
          (unsigned long long)res[1], (unsigned long long)res[3], memcmp(copied, res, sizeof res) ? "no" : "yes");
    vkResetQueryPool(g_dev, qp, 0, 2);
    VkResult nr = vkGetQueryPoolResults(g_dev, qp, 0, 2, sizeof res, res, 16, VK_QUERY_RESULT_64_BIT);
    check(nr == VK_NOT_READY, "timestamps_reset", "results after a host reset: %d", (int)nr);
    vkDestroyQueryPool(g_dev, qp, NULL);
    free_buffer(g_dev, &b);
}

static void check_secondary(void) {
    Buf b = make_buffer(g_pd, g_dev, 64, 0);
    VkCommandBuffer sec = begin(VK_COMMAND_BUFFER_LEVEL_SECONDARY);
    vkCmdFillBuffer(sec, b.buffer, 0, 16, 42);
    VKCHECK(vkEndCommandBuffer(sec));
    VkCommandBuffer cb = begin(VK_COMMAND_BUFFER_LEVEL_PRIMARY);
    vkCmdFillBuffer(cb, b.buffer, 16, 16, 41);
    vkCmdExecuteCommands(cb, 1, &sec);
    VkResult r = finish(cb);
    uint32_t *v = b.map;
    check(r == VK_SUCCESS && v[0] == 42 && v[3] == 42 && v[4] == 41 && v[8] == 0, "secondary_command_buffer",
          "values %u %u %u", v[0], v[4], v[8]);
    vkFreeCommandBuffers(g_dev, g_pool, 1, &sec);
    free_buffer(g_dev, &b);
}

/* -- pipeline caches and many pipelines --------------------------------------------------------- */

static void check_pipelines(void) {
    VkPipelineCacheCreateInfo cci = {VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    VkPipelineCache cache;
    VKCHECK(vkCreatePipelineCache(g_dev, &cci, NULL, &cache));
    union { float f; uint32_t u; } spec[2];
    spec[0].f = 2.0f;
    spec[1].u = 64;
    VkSpecializationInfo si = plumbing_spec(&spec[0].f);
    VkPipeline one;
    VKCHECK(pipeline(P.module, P.layout, &si, 0, cache, &one));
    size_t size = 0;
    VKCHECK(vkGetPipelineCacheData(g_dev, cache, &size, NULL));
    uint32_t header[8] = {0};
    size_t got = sizeof header;
    VkResult r = vkGetPipelineCacheData(g_dev, cache, &got, header);
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(g_pd, &props);
    check(size == 32 && r == VK_SUCCESS && header[0] == 32 && header[1] == VK_PIPELINE_CACHE_HEADER_VERSION_ONE &&
              header[2] == props.vendorID && header[3] == props.deviceID &&
              !memcmp(&header[4], props.pipelineCacheUUID, VK_UUID_SIZE),
          "pipeline_cache", "data %zu bytes, header size %u version %u vendor %#x device %#x", size, header[0], header[1],
          header[2], header[3]);
    vkDestroyPipeline(g_dev, one, NULL);

    /* hundreds of pipelines up front: created without compiling anything */
    enum { MANY = 300 };
    VkComputePipelineCreateInfo ci[MANY];
    float scales[MANY][2];
    VkSpecializationInfo sis[MANY];
    for (int i = 0; i < MANY; i++) {
        scales[i][0] = 1.0f + (float)i;
        memcpy(&scales[i][1], &spec[1].u, 4);
        sis[i] = plumbing_spec(scales[i]);
        memset(&ci[i], 0, sizeof ci[i]);
        ci[i].sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
        ci[i].stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
        ci[i].stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        ci[i].stage.module = P.module;
        ci[i].stage.pName = "main";
        ci[i].stage.pSpecializationInfo = &sis[i];
        ci[i].layout = P.layout;
    }
    static VkPipeline pipes[MANY];
    double t0 = now_ms();
    VkResult mr = vkCreateComputePipelines(g_dev, cache, MANY, ci, NULL, pipes);
    double t = now_ms() - t0;
    int all = 1;
    for (int i = 0; i < MANY; i++) all &= pipes[i] != VK_NULL_HANDLE;
    check(mr == VK_SUCCESS && all, "many_pipelines", "%d pipelines in %.1f ms", MANY, t);
    for (int i = 0; i < MANY; i++) vkDestroyPipeline(g_dev, pipes[i], NULL);
    vkDestroyPipelineCache(g_dev, cache, NULL);
}

/* -- what the driver cannot run ------------------------------------------------------------------ */

static void check_unsupported_shader(void) {
    VkShaderModule m = load_shader(g_dev, g_shaders, "unsupported.spv");
    VkDescriptorType t = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    VkDescriptorSetLayout sl = set_layout(1, &t, 0);
    VkPipelineLayout layout = pipeline_layout(1, &sl, 0);
    g_errors[0] = 0;
    VkPipeline pipe = (VkPipeline)(uintptr_t)0x1;
    VkResult r = pipeline(m, layout, NULL, 0, VK_NULL_HANDLE, &pipe);
    check(r < 0 && pipe == VK_NULL_HANDLE && strstr(g_errors, "Image") && strstr(g_errors, "OpVariable"),
          "unsupported_shader", "vkCreateComputePipelines %d; message: %s", (int)r, g_errors);
    vkDestroyPipelineLayout(g_dev, layout, NULL);
    vkDestroyDescriptorSetLayout(g_dev, sl, NULL);
    vkDestroyShaderModule(g_dev, m, NULL);
}

/* An out-of-bounds store on a device of its own: VK_ERROR_DEVICE_LOST and a message naming the
 * instruction, workgroup and lane; the device refuses further work. Last: the program exits
 * without tearing down the lost device (its fence never signals, so the validation layer would
 * call every destroy a use of a busy object). */
static void check_device_lost(void) {
    const char *exts[] = {"VK_KHR_push_descriptor", NULL};
    VkDevice dev = make_device(g_pd, exts, NULL);
    VkQueue queue;
    vkGetDeviceQueue(dev, 0, 0, &queue);
    VkDevice saved = g_dev;
    g_dev = dev;
    g_pool = make_pool(dev);
    VkShaderModule m = load_shader(dev, g_shaders, "oob.spv");
    VkDescriptorType t = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    VkDescriptorSetLayout sl = set_layout(1, &t, VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR);
    VkPipelineLayout layout = pipeline_layout(1, &sl, 4);
    VkPipeline pipe;
    VKCHECK(pipeline(m, layout, NULL, 0, VK_NULL_HANDLE, &pipe));
    g_dev = saved;
    Buf y = make_buffer(g_pd, dev, 256, 0);
    VkCommandBufferAllocateInfo ai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = g_pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cb;
    VKCHECK(vkAllocateCommandBuffers(dev, &ai, &cb));
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VKCHECK(vkBeginCommandBuffer(cb, &bi));
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    VkDescriptorBufferInfo dbi = {y.buffer, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = &dbi;
    ((PFN_vkCmdPushDescriptorSetKHR)vkGetDeviceProcAddr(dev, "vkCmdPushDescriptorSetKHR"))(
        cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &w);
    uint32_t off = 1u << 20;
    vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &off);
    vkCmdDispatch(cb, 1, 1, 1);
    VKCHECK(vkEndCommandBuffer(cb));
    VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    VKCHECK(vkCreateFence(dev, &fci, NULL, &fence));
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    g_errors[0] = 0;
    VkResult sr = vkQueueSubmit(queue, 1, &si, fence);
    VkResult r = vkWaitForFences(dev, 1, &fence, VK_TRUE, FENCE_TIMEOUT);
    check(sr == VK_SUCCESS && r == VK_ERROR_DEVICE_LOST && strstr(g_errors, "OpStore") &&
              strstr(g_errors, "out-of-bounds") && strstr(g_errors, "workgroup (0, 0, 0)") &&
              strstr(g_errors, "lane 0"),
          "device_lost", "submit %d, fence wait %d; message: %s", (int)sr, (int)r, g_errors);
    VkSubmitInfo empty = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    VkResult again = vkQueueSubmit(queue, 1, &empty, VK_NULL_HANDLE);
    VkResult idle = vkDeviceWaitIdle(dev);
    VkResult status = vkGetFenceStatus(dev, fence);
    check(again == VK_ERROR_DEVICE_LOST && idle == VK_ERROR_DEVICE_LOST && status == VK_ERROR_DEVICE_LOST,
          "device_lost_stays", "a later submit %d, wait idle %d, fence status %d", (int)again, (int)idle, (int)status);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: api SHADER_DIR OUT_DIR\n");
        return 2;
    }
    g_shaders = argv[1];
    g_out = argv[2];
    VkDebugUtilsMessengerEXT messenger;
    g_inst = make_instance(&messenger);
    g_pd = first_physical_device(g_inst);
    const char *exts[] = {"VK_KHR_push_descriptor", NULL};
    g_dev = make_device(g_pd, exts, NULL);
    vkGetDeviceQueue(g_dev, 0, 0, &g_queue);
    g_pool = make_pool(g_dev);

    check_plumbing();
    check_push_descriptors();
    check_copies();
    check_ids();
    check_bda();
    check_sync();
    check_timestamps();
    check_secondary();
    check_pipelines();
    check_unsupported_shader();

    vkDestroyPipeline(g_dev, P.pipeline, NULL);
    vkDestroyPipelineLayout(g_dev, P.layout, NULL);
    vkDestroyDescriptorSetLayout(g_dev, P.set0, NULL);
    vkDestroyDescriptorSetLayout(g_dev, P.set1, NULL);
    vkDestroyShaderModule(g_dev, P.module, NULL);
    free_buffer(g_dev, &P.x);
    free_buffer(g_dev, &P.y);
    free_buffer(g_dev, &P.u);
    vkDestroyCommandPool(g_dev, g_pool, NULL);
    vkDestroyDevice(g_dev, NULL);

    check_device_lost();
    printf("done %d failures\n", g_failures);
    fflush(stdout);
    return g_failures ? 1 : 0;
}
