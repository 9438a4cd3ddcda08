/* coopvec: VK_NV_cooperative_vector's matrix conversion, on the host and in a command buffer,
 * and a dispatch that uses the converted matrix (coopvec_optimal.spv).
 *
 *   coopvec SHADER_DIR OUT_DIR
 *
 * Writes coopvec_src.bin (the 8 x 8 float32 row-major matrix), coopvec_matrix.bin (it converted
 * to float16 InferencingOptimal, with the float16 bias after it: the shader's buffer),
 * coopvec_x.bin (32 invocations x 8 float16 inputs) and coopvec_r.bin (the results), for
 * tests/test_icd.py to compare with jitcoop's Python API and numpy.
 */
#include "vkutil.h"

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: coopvec SHADER_DIR OUT_DIR\n");
        return 2;
    }
    const char *shaders = argv[1], *out = argv[2];
    VkDebugUtilsMessengerEXT messenger;
    VkInstance inst = make_instance(&messenger);
    VkPhysicalDevice pd = first_physical_device(inst);
    VkPhysicalDeviceCooperativeVectorFeaturesNV cv = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_VECTOR_FEATURES_NV};
    cv.cooperativeVector = VK_TRUE;
    const char *exts[] = {"VK_NV_cooperative_vector", NULL};
    VkDevice dev = make_device(pd, exts, &cv);
    VkQueue queue;
    vkGetDeviceQueue(dev, 0, 0, &queue);
    PFN_vkConvertCooperativeVectorMatrixNV convert =
        (PFN_vkConvertCooperativeVectorMatrixNV)vkGetDeviceProcAddr(dev, "vkConvertCooperativeVectorMatrixNV");
    PFN_vkCmdConvertCooperativeVectorMatrixNV cmd_convert =
        (PFN_vkCmdConvertCooperativeVectorMatrixNV)vkGetDeviceProcAddr(dev, "vkCmdConvertCooperativeVectorMatrixNV");
    check(convert && cmd_convert, "coopvec_commands", "vkGetDeviceProcAddr gave %p and %p", (void *)convert,
          (void *)cmd_convert);
    if (!convert || !cmd_convert) return 1;

    /* the host conversion: a size query, then the conversion */
    float src[64];
    for (int i = 0; i < 64; i++) src[i] = (float)((i * 7) % 19 - 9) * 0.25f;
    write_file(out, "coopvec_src.bin", src, sizeof src);
    size_t need = 0;
    VkConvertCooperativeVectorMatrixInfoNV ci = {VK_STRUCTURE_TYPE_CONVERT_COOPERATIVE_VECTOR_MATRIX_INFO_NV};
    ci.srcSize = sizeof src;
    ci.srcData.hostAddress = src;
    ci.pDstSize = &need;
    ci.srcComponentType = VK_COMPONENT_TYPE_FLOAT32_KHR;
    ci.dstComponentType = VK_COMPONENT_TYPE_FLOAT16_KHR;
    ci.numRows = 8;
    ci.numColumns = 8;
    ci.srcLayout = VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_ROW_MAJOR_NV;
    ci.srcStride = 32;
    ci.dstLayout = VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_INFERENCING_OPTIMAL_NV;
    VkResult qr = convert(dev, &ci);
    unsigned char small[16];
    size_t small_size = sizeof small;
    ci.pDstSize = &small_size;
    ci.dstData.hostAddress = small;
    VkResult ir = convert(dev, &ci);
    unsigned char *host = calloc(need ? need : 1, 1);
    size_t got = need;
    ci.pDstSize = &got;
    ci.dstData.hostAddress = host;
    VkResult cr = convert(dev, &ci);
    check(qr == VK_SUCCESS && need == 512 && ir == VK_INCOMPLETE && cr == VK_SUCCESS && got == need, "coopvec_convert",
          "size query %d: %zu bytes; too small a destination %d; conversion %d, %zu bytes", (int)qr, need, (int)ir,
          (int)cr, got);

    /* the same conversion in a command buffer, between device addresses */
    Buf bsrc = make_buffer(pd, dev, 256, 0), bdst = make_buffer(pd, dev, 512 + 16, 0);
    memcpy(bsrc.map, src, sizeof src);
    VkBufferDeviceAddressInfo ai = {VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    ai.buffer = bsrc.buffer;
    VkConvertCooperativeVectorMatrixInfoNV di = ci;
    size_t dsize = need;
    di.pDstSize = &dsize;
    di.srcData.deviceAddress = vkGetBufferDeviceAddress(dev, &ai);
    ai.buffer = bdst.buffer;
    di.dstData.deviceAddress = vkGetBufferDeviceAddress(dev, &ai);
    VkCommandPoolCreateInfo pci = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    VkCommandPool pool;
    VKCHECK(vkCreateCommandPool(dev, &pci, NULL, &pool));
    VkCommandBufferAllocateInfo cai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    cai.commandPool = pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    VkCommandBuffer cb;
    VKCHECK(vkAllocateCommandBuffers(dev, &cai, &cb));
    VkCommandBufferBeginInfo bi = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VKCHECK(vkBeginCommandBuffer(cb, &bi));
    cmd_convert(cb, 1, &di);
    VKCHECK(vkEndCommandBuffer(cb));
    VkSubmitInfo si = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    VKCHECK(vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE));
    VKCHECK(vkQueueWaitIdle(queue));
    check(!memcmp(bdst.map, host, need), "coopvec_device_convert", "the same bytes as the host conversion: %s",
          memcmp(bdst.map, host, need) ? "no" : "yes");

    /* the converted matrix and a float16 bias feed coopvec_optimal.spv */
    uint16_t bias[8] = {0x3C00, 0xBC00, 0x3800, 0x0000, 0x4000, 0xB800, 0x3400, 0x4200};   /* 1 -1 .5 0 2 -.5 .25 3 */
    memcpy((char *)bdst.map + 512, bias, sizeof bias);
    write_file(out, "coopvec_matrix.bin", bdst.map, 512 + 16);
    Buf x = make_buffer(pd, dev, 32 * 16, 0), r = make_buffer(pd, dev, 32 * 16, 0);
    for (int i = 0; i < 32 * 8; i++) {
        /* float16 of small integers / 4: exact */
        int v = (i * 5) % 13 - 6;
        float f = (float)v * 0.25f;
        union { float f; uint32_t u; } b = {f};
        uint32_t s = (b.u >> 16) & 0x8000, e = (b.u >> 23) & 0xFF, m = b.u & 0x7FFFFF;
        ((uint16_t *)x.map)[i] = v == 0 ? 0 : (uint16_t)(s | ((e - 112) << 10) | (m >> 13));
    }
    write_file(out, "coopvec_x.bin", x.map, 32 * 16);
    VkDescriptorSetLayout sl = storage_set_layout(dev, 3);
    VkPipelineLayoutCreateInfo plci = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    plci.setLayoutCount = 1;
    plci.pSetLayouts = &sl;
    VkPipelineLayout layout;
    VKCHECK(vkCreatePipelineLayout(dev, &plci, NULL, &layout));
    VkComputePipelineCreateInfo cpi = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cpi.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    cpi.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cpi.stage.module = load_shader(dev, shaders, "coopvec_optimal.spv");
    cpi.stage.pName = "main";
    cpi.layout = layout;
    VkPipeline pipe;
    VKCHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpi, NULL, &pipe));
    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 3};
    VkDescriptorPoolCreateInfo dpci = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpci.maxSets = 1;
    dpci.poolSizeCount = 1;
    dpci.pPoolSizes = &ps;
    VkDescriptorPool dpool;
    VKCHECK(vkCreateDescriptorPool(dev, &dpci, NULL, &dpool));
    VkDescriptorSetAllocateInfo dai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    dai.descriptorPool = dpool;
    dai.descriptorSetCount = 1;
    dai.pSetLayouts = &sl;
    VkDescriptorSet ds;
    VKCHECK(vkAllocateDescriptorSets(dev, &dai, &ds));
    VkDescriptorBufferInfo dbi[3] = {{x.buffer, 0, VK_WHOLE_SIZE}, {bdst.buffer, 0, VK_WHOLE_SIZE}, {r.buffer, 0, VK_WHOLE_SIZE}};
    VkWriteDescriptorSet w[3];
    for (uint32_t i = 0; i < 3; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
        w[i].dstSet = ds;
        w[i].dstBinding = i;
        w[i].descriptorCount = 1;
        w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        w[i].pBufferInfo = &dbi[i];
    }
    vkUpdateDescriptorSets(dev, 3, w, 0, NULL);
    VKCHECK(vkResetCommandPool(dev, pool, 0));
    VKCHECK(vkBeginCommandBuffer(cb, &bi));
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &ds, 0, NULL);
    vkCmdDispatch(cb, 1, 1, 1);
    VKCHECK(vkEndCommandBuffer(cb));
    VKCHECK(vkQueueSubmit(queue, 1, &si, VK_NULL_HANDLE));
    VkResult wr = vkQueueWaitIdle(queue);
    check(wr == VK_SUCCESS, "coopvec_dispatch", "result %d", (int)wr);
    write_file(out, "coopvec_r.bin", r.map, 32 * 16);

    vkDestroyPipeline(dev, pipe, NULL);
    vkDestroyShaderModule(dev, cpi.stage.module, NULL);
    vkDestroyDescriptorPool(dev, dpool, NULL);
    vkDestroyPipelineLayout(dev, layout, NULL);
    vkDestroyDescriptorSetLayout(dev, sl, NULL);
    vkDestroyCommandPool(dev, pool, NULL);
    free_buffer(dev, &bsrc);
    free_buffer(dev, &bdst);
    free_buffer(dev, &x);
    free_buffer(dev, &r);
    free(host);
    vkDestroyDevice(dev, NULL);
    PFN_vkDestroyDebugUtilsMessengerEXT destroy =
        (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(inst, "vkDestroyDebugUtilsMessengerEXT");
    destroy(inst, messenger, NULL);
    vkDestroyInstance(inst, NULL);
    printf("done %d failures\n", g_failures);
    return g_failures ? 1 : 0;
}
