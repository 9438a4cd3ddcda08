/* devinfo: what each physical device says, one fact a line, for tests/test_icd.py to check
 * against the device profiles: identity, subgroup sizes, limits, extensions, the cooperative
 * feature bits, the VkCooperativeMatrixPropertiesKHR, flexible-dimension and cooperative
 * vector tables (vulkaninfo prints none of these tables).
 *
 *   device I KEY VALUE...
 */
#include "vkutil.h"

static int has_ext(VkExtensionProperties *e, uint32_t n, const char *name) {
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(e[i].extensionName, name)) return 1;
    return 0;
}

int main(void) {
    VkDebugUtilsMessengerEXT messenger;
    VkInstance inst = make_instance(&messenger);
    uint32_t npd = 0;
    VKCHECK(vkEnumeratePhysicalDevices(inst, &npd, NULL));
    VkPhysicalDevice *pds = calloc(npd, sizeof *pds);
    VKCHECK(vkEnumeratePhysicalDevices(inst, &npd, pds));
    printf("devices %u\n", npd);
    for (uint32_t d = 0; d < npd; d++) {
        VkPhysicalDevice pd = pds[d];
        VkPhysicalDeviceCooperativeMatrix2PropertiesNV c2p = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_PROPERTIES_NV};
        VkPhysicalDeviceCooperativeVectorPropertiesNV cvp = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_VECTOR_PROPERTIES_NV};
        VkPhysicalDeviceCooperativeMatrixPropertiesKHR cmp = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_PROPERTIES_KHR};
        VkPhysicalDeviceVulkan13Properties p13 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES};
        VkPhysicalDeviceVulkan12Properties p12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
        VkPhysicalDeviceVulkan11Properties p11 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
        VkPhysicalDeviceProperties2 p2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
        uint32_t ne = 0;
        VKCHECK(vkEnumerateDeviceExtensionProperties(pd, NULL, &ne, NULL));
        VkExtensionProperties *ext = calloc(ne ? ne : 1, sizeof *ext);
        VKCHECK(vkEnumerateDeviceExtensionProperties(pd, NULL, &ne, ext));
        int coopmat = has_ext(ext, ne, "VK_KHR_cooperative_matrix");
        int coopmat2 = has_ext(ext, ne, "VK_NV_cooperative_matrix2");
        int coopvec = has_ext(ext, ne, "VK_NV_cooperative_vector");
        /* only structures of offered extensions go in the chain */
        void **tail = &p2.pNext;
        *tail = &p11; tail = &p11.pNext;
        *tail = &p12; tail = &p12.pNext;
        *tail = &p13; tail = &p13.pNext;
        if (coopmat) { *tail = &cmp; tail = &cmp.pNext; }
        if (coopmat2) { *tail = &c2p; tail = &c2p.pNext; }
        if (coopvec) { *tail = &cvp; tail = &cvp.pNext; }
        vkGetPhysicalDeviceProperties2(pd, &p2);
        VkPhysicalDeviceProperties *p = &p2.properties;
        printf("device %u name %s\n", d, p->deviceName);
        printf("device %u vendor %u\n", d, p->vendorID);
        printf("device %u deviceID %u\n", d, p->deviceID);
        printf("device %u type %u\n", d, (unsigned)p->deviceType);
        printf("device %u driverID %u\n", d, (unsigned)p12.driverID);
        printf("device %u driverName %s\n", d, p12.driverName);
        printf("device %u api %u.%u\n", d, VK_API_VERSION_MAJOR(p->apiVersion), VK_API_VERSION_MINOR(p->apiVersion));
        printf("device %u subgroupSize %u\n", d, p11.subgroupSize);
        printf("device %u minSubgroupSize %u\n", d, p13.minSubgroupSize);
        printf("device %u maxSubgroupSize %u\n", d, p13.maxSubgroupSize);
        printf("device %u maxComputeWorkGroupInvocations %u\n", d, p->limits.maxComputeWorkGroupInvocations);
        printf("device %u maxComputeSharedMemorySize %u\n", d, p->limits.maxComputeSharedMemorySize);
        printf("device %u maxPushConstantsSize %u\n", d, p->limits.maxPushConstantsSize);
        printf("device %u timestampPeriod %g\n", d, p->limits.timestampPeriod);
        printf("device %u cacheUUID", d);
        for (uint32_t i = 0; i < VK_UUID_SIZE; i++) printf(" %u", p->pipelineCacheUUID[i]);
        printf("\n");
        for (uint32_t i = 0; i < ne; i++)
            printf("device %u extension %s %u\n", d, ext[i].extensionName, ext[i].specVersion);
        if (coopmat) printf("device %u coopmatStages %u\n", d, cmp.cooperativeMatrixSupportedStages);
        if (coopmat2)
            printf("device %u coopmat2 %u %u %u\n", d, c2p.cooperativeMatrixWorkgroupScopeMaxWorkgroupSize,
                   c2p.cooperativeMatrixFlexibleDimensionsMaxDimension,
                   c2p.cooperativeMatrixWorkgroupScopeReservedSharedMemory);
        if (coopvec)
            printf("device %u coopvecProps %u %u %u %u\n", d, cvp.cooperativeVectorSupportedStages,
                   cvp.cooperativeVectorTrainingFloat16Accumulation, cvp.cooperativeVectorTrainingFloat32Accumulation,
                   cvp.maxCooperativeVectorComponents);

        /* features */
        VkPhysicalDeviceCooperativeMatrixFeaturesKHR cmf = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR};
        VkPhysicalDeviceCooperativeMatrix2FeaturesNV c2f = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV};
        VkPhysicalDeviceCooperativeVectorFeaturesNV cvf = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_VECTOR_FEATURES_NV};
        VkPhysicalDeviceVulkan12Features f12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
        VkPhysicalDeviceFeatures2 f2 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
        tail = &f2.pNext;
        *tail = &f12; tail = &f12.pNext;
        if (coopmat) { *tail = &cmf; tail = &cmf.pNext; }
        if (coopmat2) { *tail = &c2f; tail = &c2f.pNext; }
        if (coopvec) { *tail = &cvf; tail = &cvf.pNext; }
        vkGetPhysicalDeviceFeatures2(pd, &f2);
        printf("device %u feature shaderFloat16 %u\n", d, f12.shaderFloat16);
        printf("device %u feature bufferDeviceAddress %u\n", d, f12.bufferDeviceAddress);
        printf("device %u feature robustBufferAccess %u\n", d, f2.features.robustBufferAccess);
        if (coopmat) printf("device %u feature cooperativeMatrix %u\n", d, cmf.cooperativeMatrix);
        if (coopmat2) {
            printf("device %u feature cooperativeMatrixWorkgroupScope %u\n", d, c2f.cooperativeMatrixWorkgroupScope);
            printf("device %u feature cooperativeMatrixFlexibleDimensions %u\n", d, c2f.cooperativeMatrixFlexibleDimensions);
            printf("device %u feature cooperativeMatrixReductions %u\n", d, c2f.cooperativeMatrixReductions);
            printf("device %u feature cooperativeMatrixConversions %u\n", d, c2f.cooperativeMatrixConversions);
            printf("device %u feature cooperativeMatrixPerElementOperations %u\n", d,
                   c2f.cooperativeMatrixPerElementOperations);
            printf("device %u feature cooperativeMatrixTensorAddressing %u\n", d, c2f.cooperativeMatrixTensorAddressing);
            printf("device %u feature cooperativeMatrixBlockLoads %u\n", d, c2f.cooperativeMatrixBlockLoads);
        }
        if (coopvec) {
            printf("device %u feature cooperativeVector %u\n", d, cvf.cooperativeVector);
            printf("device %u feature cooperativeVectorTraining %u\n", d, cvf.cooperativeVectorTraining);
        }

        /* the tables */
        PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR get_cm = (PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR)
            vkGetInstanceProcAddr(inst, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR");
        PFN_vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV get_flex =
            (PFN_vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV)vkGetInstanceProcAddr(
                inst, "vkGetPhysicalDeviceCooperativeMatrixFlexibleDimensionsPropertiesNV");
        PFN_vkGetPhysicalDeviceCooperativeVectorPropertiesNV get_cv = (PFN_vkGetPhysicalDeviceCooperativeVectorPropertiesNV)
            vkGetInstanceProcAddr(inst, "vkGetPhysicalDeviceCooperativeVectorPropertiesNV");
        uint32_t n = 0;
        if (coopmat && get_cm) {
            VKCHECK(get_cm(pd, &n, NULL));
            VkCooperativeMatrixPropertiesKHR *t = calloc(n ? n : 1, sizeof *t);
            for (uint32_t i = 0; i < n; i++) t[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_KHR;
            VKCHECK(get_cm(pd, &n, t));
            for (uint32_t i = 0; i < n; i++)
                printf("device %u coopmat %u %u %u %u %u %u %u %u %u\n", d, t[i].MSize, t[i].NSize, t[i].KSize,
                       t[i].AType, t[i].BType, t[i].CType, t[i].ResultType, t[i].saturatingAccumulation, t[i].scope);
            /* a short array: VK_INCOMPLETE and the count it could write */
            if (n > 1) {
                uint32_t m = 1;
                VkResult r = get_cm(pd, &m, t);
                printf("device %u coopmatShort %d %u\n", d, (int)r, m);
            }
            free(t);
        }
        if (coopmat2 && get_flex) {
            VKCHECK(get_flex(pd, &n, NULL));
            VkCooperativeMatrixFlexibleDimensionsPropertiesNV *t = calloc(n ? n : 1, sizeof *t);
            for (uint32_t i = 0; i < n; i++) t[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_FLEXIBLE_DIMENSIONS_PROPERTIES_NV;
            VKCHECK(get_flex(pd, &n, t));
            for (uint32_t i = 0; i < n; i++)
                printf("device %u flexible %u %u %u %u %u %u %u %u %u %u\n", d, t[i].MGranularity, t[i].NGranularity,
                       t[i].KGranularity, t[i].AType, t[i].BType, t[i].CType, t[i].ResultType,
                       t[i].saturatingAccumulation, t[i].scope, t[i].workgroupInvocations);
            free(t);
        }
        if (coopvec && get_cv) {
            VKCHECK(get_cv(pd, &n, NULL));
            VkCooperativeVectorPropertiesNV *t = calloc(n ? n : 1, sizeof *t);
            for (uint32_t i = 0; i < n; i++) t[i].sType = VK_STRUCTURE_TYPE_COOPERATIVE_VECTOR_PROPERTIES_NV;
            VKCHECK(get_cv(pd, &n, t));
            for (uint32_t i = 0; i < n; i++)
                printf("device %u coopvec %u %u %u %u %u %u\n", d, t[i].inputType, t[i].inputInterpretation,
                       t[i].matrixInterpretation, t[i].biasInterpretation, t[i].resultType, t[i].transpose);
            free(t);
        }
        free(ext);
    }
    PFN_vkDestroyDebugUtilsMessengerEXT destroy =
        (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(inst, "vkDestroyDebugUtilsMessengerEXT");
    destroy(inst, messenger, NULL);
    vkDestroyInstance(inst, NULL);
    free(pds);
    return 0;
}
