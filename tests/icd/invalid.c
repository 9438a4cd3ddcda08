/* invalid: calls with arguments the application got wrong, or asking for what the driver does
 * not have: each must return an error code (with a message to the messenger where it helps),
 * never crash. Run without the validation layer, which would stop most of them first.
 */
#include "vkutil.h"

int main(void) {
    VkDebugUtilsMessengerEXT messenger;
    VkInstance inst = make_instance(&messenger);
    VkPhysicalDevice pd = first_physical_device(inst);
    float prio = 1.0f;
    VkDeviceQueueCreateInfo q = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    q.queueCount = 1;
    q.pQueuePriorities = &prio;
    VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &q;
    VkDevice bad;

    const char *unknown = "VK_KHR_ray_tracing_pipeline";
    dci.enabledExtensionCount = 1;
    dci.ppEnabledExtensionNames = &unknown;
    VkResult r = vkCreateDevice(pd, &dci, NULL, &bad);
    check(r == VK_ERROR_EXTENSION_NOT_PRESENT, "unknown_extension", "vkCreateDevice %d", (int)r);
    dci.enabledExtensionCount = 0;

    VkPhysicalDeviceFeatures graphics = {0};
    graphics.geometryShader = VK_TRUE;
    dci.pEnabledFeatures = &graphics;
    g_errors[0] = 0;
    r = vkCreateDevice(pd, &dci, NULL, &bad);
    check(r == VK_ERROR_FEATURE_NOT_PRESENT && strstr(g_errors, "geometryShader"), "unsupported_feature",
          "vkCreateDevice %d: %s", (int)r, g_errors);
    dci.pEnabledFeatures = NULL;

    q.queueCount = 64;
    r = vkCreateDevice(pd, &dci, NULL, &bad);
    check(r < 0, "too_many_queues", "vkCreateDevice %d", (int)r);
    q.queueCount = 1;

    VkDevice dev = make_device(pd, NULL, NULL);

    VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = 1ull << 60;
    VkDeviceMemory mem;
    r = vkAllocateMemory(dev, &mai, NULL, &mem);
    check(r == VK_ERROR_OUT_OF_DEVICE_MEMORY, "huge_allocation", "vkAllocateMemory %d", (int)r);

    mai.allocationSize = 4096;
    mai.memoryTypeIndex = 0;                      /* device-local only: not mappable */
    VKCHECK(vkAllocateMemory(dev, &mai, NULL, &mem));
    void *p = NULL;
    r = vkMapMemory(dev, mem, 0, VK_WHOLE_SIZE, 0, &p);
    check(r == VK_ERROR_MEMORY_MAP_FAILED, "map_device_local", "vkMapMemory %d", (int)r);

    r = vkBindBufferMemory(dev, (VkBuffer)(uintptr_t)0xdead0000, mem, 0);
    check(r < 0, "bogus_buffer_handle", "vkBindBufferMemory %d", (int)r);
    vkDestroyBuffer(dev, (VkBuffer)(uintptr_t)0xdead0000, NULL);
    check(1, "destroy_bogus_handle", "returned");

    VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = 8192;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    VkBuffer buf;
    VKCHECK(vkCreateBuffer(dev, &bci, NULL, &buf));
    r = vkBindBufferMemory(dev, buf, mem, 0);
    check(r < 0, "buffer_larger_than_memory", "vkBindBufferMemory %d", (int)r);

    VkShaderModuleCreateInfo smi = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    uint32_t junk[2] = {0x07230203, 0};
    smi.codeSize = 6;
    smi.pCode = junk;
    VkShaderModule sm;
    r = vkCreateShaderModule(dev, &smi, NULL, &sm);
    check(r < 0, "short_spirv", "vkCreateShaderModule %d", (int)r);

    VkDescriptorSetLayoutBinding b = {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL};
    VkDescriptorSetLayoutCreateInfo lci = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    lci.bindingCount = 1;
    lci.pBindings = &b;
    VkDescriptorSetLayout sl;
    VKCHECK(vkCreateDescriptorSetLayout(dev, &lci, NULL, &sl));
    VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
    VkDescriptorPoolCreateInfo pci = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pci.maxSets = 1;
    pci.poolSizeCount = 1;
    pci.pPoolSizes = &ps;
    VkDescriptorPool pool;
    VKCHECK(vkCreateDescriptorPool(dev, &pci, NULL, &pool));
    VkDescriptorSetLayout two[2] = {sl, sl};
    VkDescriptorSetAllocateInfo dai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    dai.descriptorPool = pool;
    dai.descriptorSetCount = 2;
    dai.pSetLayouts = two;
    VkDescriptorSet sets[2];
    r = vkAllocateDescriptorSets(dev, &dai, sets);
    check(r == VK_ERROR_OUT_OF_POOL_MEMORY, "pool_exhausted", "vkAllocateDescriptorSets %d", (int)r);

    b.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
    VkDescriptorSetLayout il;
    r = vkCreateDescriptorSetLayout(dev, &lci, NULL, &il);
    check(r < 0, "image_descriptor", "vkCreateDescriptorSetLayout %d", (int)r);

    VkImageCreateInfo ici = {VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    ici.imageType = VK_IMAGE_TYPE_2D;
    ici.format = VK_FORMAT_R8G8B8A8_UNORM;
    ici.extent.width = ici.extent.height = ici.extent.depth = 1;
    ici.mipLevels = ici.arrayLayers = 1;
    ici.samples = VK_SAMPLE_COUNT_1_BIT;
    ici.usage = VK_IMAGE_USAGE_STORAGE_BIT;
    VkImage img;
    g_errors[0] = 0;
    r = vkCreateImage(dev, &ici, NULL, &img);
    check(r < 0 && strstr(g_errors, "vkCreateImage"), "images_unsupported", "vkCreateImage %d: %s", (int)r,
          g_errors);

    VkQueryPoolCreateInfo qci = {VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qci.queryType = VK_QUERY_TYPE_OCCLUSION;
    qci.queryCount = 1;
    VkQueryPool qp;
    r = vkCreateQueryPool(dev, &qci, NULL, &qp);
    check(r < 0, "occlusion_queries", "vkCreateQueryPool %d", (int)r);

    vkDestroyDescriptorPool(dev, pool, NULL);
    vkDestroyDescriptorSetLayout(dev, sl, NULL);
    vkDestroyBuffer(dev, buf, NULL);
    vkFreeMemory(dev, mem, NULL);
    vkDestroyDevice(dev, NULL);
    PFN_vkDestroyDebugUtilsMessengerEXT destroy =
        (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(inst, "vkDestroyDebugUtilsMessengerEXT");
    destroy(inst, messenger, NULL);
    vkDestroyInstance(inst, NULL);
    printf("done %d failures\n", g_failures);
    return g_failures ? 1 : 0;
}
