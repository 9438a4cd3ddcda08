"""What a physical device says about itself: identity, extensions, features, properties, limits
and the cooperative matrix / vector tables, from a jitcoop device profile.

Two sources. The engine decides the core features (what jitcoop runs: 8/16/64-bit types,
storage access, buffer device addresses, the memory model, subgroup operations...) for every
profile alike. The profile decides the rest: its subgroup sizes and workgroup limits, its
cooperative matrix tables, and, for the profiles measured on real drivers (nvidia: an H100
with driver 580; lavapipe: Mesa 26.1), the identity, extensions and cooperative feature bits
recorded in jitcoop/devices/data/props-*.txt. Profiles without a recording (generic, shuffled:
everything the spec allows; amd-rdna3, qualcomm: models) get tables made from their rules.

Everything here is plain data (dicts of field name -> value), so it can be checked without
the C side; `physical.py` writes it into the application's structures.
"""
from __future__ import annotations

import functools
import hashlib
import os
import re
from importlib import resources

from .. import __version__
from . import extensions
from ..devices.coopvec_table import coopvec_properties

API_VERSION = (1 << 22) | (3 << 12)                 # Vulkan 1.3


def driver_version(vendor: int) -> int:
    """jitcoop's version (0.1.0) as tools decode it: NVIDIA's 10.8.8.6-bit layout for a device with
    NVIDIA's vendor ID, VK_MAKE_VERSION's 10.10.12 otherwise."""
    major, minor, patch = (int(x) for x in __version__.split(".")[:3])
    if vendor == 0x10DE:
        return (major << 22) | (minor << 14) | (patch << 6)
    return (major << 22) | (minor << 12) | patch

# Vulkan enum values used in the tables (vulkan_core.h)
COMPONENT = {"f16": 0, "f32": 1, "f64": 2, "s8": 3, "s16": 4, "s32": 5, "s64": 6, "u8": 7, "u16": 8,
             "u32": 9, "u64": 10, "bf16": 1000141000, "s8packed": 1000491000, "u8packed": 1000491001,
             "e4m3": 1000491002, "e5m2": 1000491003}
SCOPE_WORKGROUP, SCOPE_SUBGROUP = 2, 3
STAGE_COMPUTE = 0x20
DEVICE_TYPE = {"integrated": 1, "discrete": 2, "virtual": 3, "cpu": 4}
# VK_DRIVER_ID_NVIDIA_PROPRIETARY, QUALCOMM_PROPRIETARY, MESA_RADV, MESA_LLVMPIPE (no value names
# jitcoop: a CPU device that models no vendor says it is a CPU driver, as lavapipe does)
DRIVER_ID = {"nvidia": 4, "qualcomm": 8, "radv": 3, "llvmpipe": 13}
VENDOR_KHRONOS = 0x10000       # a device that models no vendor

# Profiles recorded on a real driver, and how the others present themselves.
_RECORDED = {"nvidia": "props-h100.txt", "lavapipe": "props-lavapipe-26.1.txt"}
_MODELS = {
    # name: (device name, vendorID, deviceID, type, driverID, shared memory bytes)
    "generic": ("jitcoop generic CPU device", VENDOR_KHRONOS, 0, "cpu", "llvmpipe", 65536),
    "shuffled": ("jitcoop shuffled-layout CPU device", VENDOR_KHRONOS, 1, "cpu", "llvmpipe", 65536),
    "amd-rdna3": ("AMD Radeon RDNA3 (jitcoop model)", 0x1002, 0x744c, "discrete", "radv", 65536),
    "qualcomm": ("Qualcomm Adreno-like (jitcoop model)", 0x5143, 0, "integrated", "qualcomm", 32768),
}


@functools.lru_cache(maxsize=None)
def recorded(profile_name: str) -> dict:
    """The recorded driver's facts (empty for a model): device, vendor, device id, type, shared
    memory, extensions, and the cooperative feature and property lines as {key: int}."""
    fname = _RECORDED.get(profile_name)
    if fname is None:
        return {}
    text = resources.files("jitcoop.devices").joinpath("data", fname).read_text()
    out = {"extensions": re.findall(r"^  (VK_\w+) rev \d+", text, re.M)}
    m = re.search(r"^device: (.*?)\s+vendor (0x[0-9a-f]+) device (0x[0-9a-f]+) type (\d+)", text, re.M)
    out.update(device=m.group(1), vendor=int(m.group(2), 16), device_id=int(m.group(3), 16),
               type=int(m.group(4)))
    out["shared_memory"] = int(re.search(r"maxComputeSharedMemorySize (\d+)", text).group(1))
    for key, prefix in (("coopmat2", "NV coopmat2 features:"), ("coopmat2_props", "NV coopmat2 props:"),
                        ("coopvec", "NV coopvec features:"), ("bfloat16", "bfloat16 features:")):
        m = re.search(rf"^{re.escape(prefix)}(.*)$", text, re.M)
        if m:
            words = m.group(1).replace(";", " ").replace("props:", " ").split()
            out[key] = {k: int(v, 0) for k, v in zip(words[::2], words[1::2])}
    return out


def identity(profile) -> dict:
    rec = recorded(profile.name)
    if rec:
        name = f"{rec['device']} (jitcoop {profile.name} profile)"
        vendor, device_id, dtype, shared = rec["vendor"], rec["device_id"], rec["type"], rec["shared_memory"]
        driver = "nvidia" if profile.name == "nvidia" else "llvmpipe"
    else:
        name, vendor, device_id, t, driver, shared = _MODELS[profile.name]
        dtype = DEVICE_TYPE[t]
    return {"deviceName": name, "vendorID": vendor, "deviceID": device_id, "deviceType": dtype,
            "driverID": DRIVER_ID[driver], "shared_memory": shared}


# -- extensions ------------------------------------------------------------------------------------

def _has_coopmat2(profile) -> bool:
    rec = recorded(profile.name)
    if rec:
        return "VK_NV_cooperative_matrix2" in rec["extensions"]
    return profile.coopmat is None          # generic and shuffled: every size, so every feature


def _everything(profile) -> bool:
    return profile.coopmat is None


def device_extensions(profile, hidden=()) -> list:
    """The device extensions a profile's physical device offers, in a stable order, less those
    hidden (JITCOOP_ICD_HIDE: an application's paths for devices without them)."""
    rec = recorded(profile.name)
    want = {
        "VK_KHR_cooperative_matrix": True,
        "VK_NV_cooperative_matrix2": _has_coopmat2(profile),
        "VK_NV_cooperative_matrix_decode_vector": _everything(profile),
        "VK_NV_cooperative_vector": coopvec_properties(profile.name) is not None or _everything(profile),
        "VK_KHR_shader_bfloat16": "VK_KHR_shader_bfloat16" in rec.get("extensions", ()) or _everything(profile)
        or any(p.A == "bf16" for p in profile.coopmat or ()),
        "VK_EXT_shader_float8": _everything(profile),
        "VK_EXT_shader_replicated_composites": "VK_EXT_shader_replicated_composites" in rec.get("extensions", ())
        or not rec,
        "VK_QCOM_cooperative_matrix_conversion": profile.name == "qualcomm" or _everything(profile),
        "VK_EXT_shader_long_vector": _everything(profile),
    }
    return [e for e in list(extensions.DEVICE) + [e for e in extensions.PROFILE_DEVICE if want[e]]
            if e not in hidden]


# -- features --------------------------------------------------------------------------------------

# What the engine runs, on every profile (VkBool32 members by name; every feature structure
# that carries a member of this name reports it).
ENGINE_FEATURES = {
    # VkPhysicalDeviceFeatures
    "shaderFloat64", "shaderInt64", "shaderInt16",
    # 1.1
    "storageBuffer16BitAccess", "uniformAndStorageBuffer16BitAccess", "storagePushConstant16",
    "variablePointersStorageBuffer", "variablePointers",
    # 1.2
    "storageBuffer8BitAccess", "uniformAndStorageBuffer8BitAccess", "storagePushConstant8",
    "shaderBufferInt64Atomics", "shaderSharedInt64Atomics", "shaderFloat16", "shaderInt8",
    "uniformBufferStandardLayout", "shaderSubgroupExtendedTypes", "hostQueryReset", "timelineSemaphore",
    "bufferDeviceAddress", "vulkanMemoryModel", "vulkanMemoryModelDeviceScope",
    "vulkanMemoryModelAvailabilityVisibilityChains", "scalarBlockLayout", "subgroupBroadcastDynamicId",
    # 1.3
    "pipelineCreationCacheControl", "privateData", "subgroupSizeControl", "computeFullSubgroups",
    "synchronization2", "maintenance4", "shaderIntegerDotProduct",
    # extensions
    "maintenance5", "shaderBufferFloat32Atomics", "shaderBufferFloat32AtomicAdd", "shaderBufferFloat64Atomics",
    "shaderBufferFloat64AtomicAdd", "shaderSharedFloat32Atomics", "shaderSharedFloat32AtomicAdd",
    "shaderSharedFloat64Atomics", "shaderSharedFloat64AtomicAdd",
    "workgroupMemoryExplicitLayout", "workgroupMemoryExplicitLayoutScalarBlockLayout",
    "workgroupMemoryExplicitLayout8BitAccess", "workgroupMemoryExplicitLayout16BitAccess",
}
ENGINE_FEATURES |= {
    # robust buffer access: out-of-bounds accesses through bindings read zeros and write nothing
    # (robustBufferAccess2's rules, which satisfy robustBufferAccess's), per pipeline through
    # VK_EXT_pipeline_robustness; without it an out-of-bounds access loses the device
    "robustBufferAccess", "robustBufferAccess2", "pipelineRobustness",
}
# Not offered: images and everything graphics, descriptor arrays, null descriptors. Integer dot products are offered, none of
# them "accelerated" (the properties' flags: they run as scalar multiplies and adds).


def features(profile, hidden=()) -> dict:
    """Every VkBool32 feature the profile's device supports -> True (absent names are False);
    the features of hidden extensions are absent."""
    f = dict.fromkeys(ENGINE_FEATURES, True)
    exts = set(device_extensions(profile, hidden))
    if "VK_EXT_robustness2" not in exts:
        f.pop("robustBufferAccess2")
    if "VK_EXT_pipeline_robustness" not in exts:
        f.pop("pipelineRobustness")
    rec = recorded(profile.name)
    if "VK_KHR_cooperative_matrix" in exts:
        f["cooperativeMatrix"] = True
    if "VK_NV_cooperative_matrix2" in exts:
        c2 = rec.get("coopmat2")
        names = {"workgroupScope": "cooperativeMatrixWorkgroupScope",
                 "flexibleDimensions": "cooperativeMatrixFlexibleDimensions",
                 "reductions": "cooperativeMatrixReductions", "conversions": "cooperativeMatrixConversions",
                 "perElementOps": "cooperativeMatrixPerElementOperations",
                 "tensorAddressing": "cooperativeMatrixTensorAddressing",
                 "blockLoads": "cooperativeMatrixBlockLoads"}
        for k, n in names.items():
            f[n] = bool(c2[k]) if c2 else True
        if profile.workgroup_scope_max == 0:
            f["cooperativeMatrixWorkgroupScope"] = False
    if "VK_NV_cooperative_matrix_decode_vector" in exts:
        f["cooperativeMatrixDecodeVector"] = True
    if "VK_NV_cooperative_vector" in exts:
        cv = rec.get("coopvec")
        f["cooperativeVector"] = True
        f["cooperativeVectorTraining"] = bool(cv["training"]) if cv else True
    if "VK_KHR_shader_bfloat16" in exts:
        bf = rec.get("bfloat16")
        f["shaderBFloat16Type"] = True
        f["shaderBFloat16DotProduct"] = bool(bf["dot"]) if bf else True
        f["shaderBFloat16CooperativeMatrix"] = bool(bf["coopmat"]) if bf else \
            profile.coopmat is None or any(p.A == "bf16" for p in profile.coopmat)
    if "VK_EXT_shader_float8" in exts:
        f["shaderFloat8"] = f["shaderFloat8CooperativeMatrix"] = True
    if "VK_EXT_shader_replicated_composites" in exts:
        f["shaderReplicatedComposites"] = True
    if "VK_QCOM_cooperative_matrix_conversion" in exts:
        f["cooperativeMatrixConversion"] = True
    if "VK_EXT_shader_long_vector" in exts:
        f["longVector"] = True
    return f


# -- properties ------------------------------------------------------------------------------------

def _uuid(*parts) -> list:
    return list(hashlib.md5("/".join(map(str, parts)).encode()).digest())


def host_memory_bytes() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return 16 << 30


SUBGROUP_OPS = 0xFF          # basic, vote, arithmetic, ballot, shuffle, shuffle relative, clustered, quad
MAX_PUSH_CONSTANTS = 256
MIN_ALIGNMENT = 256          # memory requirements' alignment: covers tensor (16) and coopvec (64) needs


def limits(profile) -> dict:
    ident = identity(profile)
    big = 0xFFFFFFFF
    return {
        "maxImageDimension1D": 0, "maxImageDimension2D": 0, "maxImageDimension3D": 0,
        "maxImageDimensionCube": 0, "maxImageArrayLayers": 0, "maxTexelBufferElements": 0,
        "maxUniformBufferRange": 65536, "maxStorageBufferRange": big, "maxPushConstantsSize": MAX_PUSH_CONSTANTS,
        "maxMemoryAllocationCount": 1 << 20, "maxSamplerAllocationCount": 0, "bufferImageGranularity": 1,
        "sparseAddressSpaceSize": 0, "maxBoundDescriptorSets": 32,
        "maxPerStageDescriptorSamplers": 0, "maxPerStageDescriptorUniformBuffers": 1 << 20,
        "maxPerStageDescriptorStorageBuffers": 1 << 20, "maxPerStageDescriptorSampledImages": 0,
        "maxPerStageDescriptorStorageImages": 0, "maxPerStageDescriptorInputAttachments": 0,
        "maxPerStageResources": 1 << 20, "maxDescriptorSetSamplers": 0,
        "maxDescriptorSetUniformBuffers": 1 << 20, "maxDescriptorSetUniformBuffersDynamic": 32,
        "maxDescriptorSetStorageBuffers": 1 << 20, "maxDescriptorSetStorageBuffersDynamic": 32,
        "maxComputeSharedMemorySize": ident["shared_memory"],
        "maxComputeWorkGroupCount": [0x7FFFFFFF, 65535, 65535],
        "maxComputeWorkGroupInvocations": profile.max_workgroup_invocations,
        "maxComputeWorkGroupSize": [profile.max_workgroup_invocations, profile.max_workgroup_invocations, 64],
        "subPixelPrecisionBits": 0, "subTexelPrecisionBits": 0, "mipmapPrecisionBits": 0,
        "maxDrawIndexedIndexValue": 0, "maxDrawIndirectCount": 1,
        "maxSamplerLodBias": 0.0, "maxSamplerAnisotropy": 1.0,
        "minMemoryMapAlignment": 64, "minTexelBufferOffsetAlignment": 16,
        "minUniformBufferOffsetAlignment": 64, "minStorageBufferOffsetAlignment": 16,
        "timestampComputeAndGraphics": 1, "timestampPeriod": 1.0,
        "discreteQueuePriorities": 2, "optimalBufferCopyOffsetAlignment": 1,
        "optimalBufferCopyRowPitchAlignment": 1, "nonCoherentAtomSize": 64,
    }


def properties(profile) -> dict:
    """The fields of every property structure (VkPhysicalDeviceProperties and its pNext chain),
    by member name."""
    ident = identity(profile)
    rec = recorded(profile.name)
    heap = host_memory_bytes()
    sg = profile.subgroup_size
    uuid_key = (__version__, profile.name, sg)
    p = {
        "apiVersion": API_VERSION, "driverVersion": driver_version(ident["vendorID"]), "vendorID": ident["vendorID"],
        "deviceID": ident["deviceID"], "deviceType": ident["deviceType"], "deviceName": ident["deviceName"],
        "pipelineCacheUUID": _uuid("cache", *uuid_key), "deviceUUID": _uuid("device", *uuid_key),
        "driverUUID": _uuid("driver", __version__), "deviceLUID": [0] * 8, "deviceNodeMask": 0,
        "deviceLUIDValid": 0,
        # subgroups
        "subgroupSize": sg, "supportedStages": STAGE_COMPUTE, "supportedOperations": SUBGROUP_OPS,
        "quadOperationsInAllStages": 0, "subgroupSupportedStages": STAGE_COMPUTE,
        "subgroupSupportedOperations": SUBGROUP_OPS, "subgroupQuadOperationsInAllStages": 0,
        "minSubgroupSize": min(profile.subgroup_sizes), "maxSubgroupSize": max(profile.subgroup_sizes),
        "maxComputeWorkgroupSubgroups": profile.max_workgroup_invocations // min(profile.subgroup_sizes),
        "requiredSubgroupSizeStages": STAGE_COMPUTE,
        # 1.1
        "pointClippingBehavior": 0, "maxMultiviewViewCount": 0, "maxMultiviewInstanceIndex": 0,
        "protectedNoFault": 0, "maxPerSetDescriptors": 1 << 20, "maxMemoryAllocationSize": heap,
        # 1.2 / driver properties
        "driverID": ident["driverID"], "driverName": "jitcoop",
        "driverInfo": f"jitcoop {__version__} ({profile.name} profile on the CPU)",
        "conformanceVersion": [0, 0, 0, 0],
        "denormBehaviorIndependence": 1, "roundingModeIndependence": 1,       # VK_SHADER_FLOAT_CONTROLS_INDEPENDENCE_ALL
        "shaderSignedZeroInfNanPreserveFloat16": 1, "shaderSignedZeroInfNanPreserveFloat32": 1,
        "shaderSignedZeroInfNanPreserveFloat64": 1, "shaderDenormPreserveFloat16": 1,
        "shaderDenormPreserveFloat32": 1, "shaderDenormPreserveFloat64": 1,
        "shaderRoundingModeRTEFloat16": 1, "shaderRoundingModeRTEFloat32": 1, "shaderRoundingModeRTEFloat64": 1,
        "maxTimelineSemaphoreValueDifference": (1 << 63) - 1, "framebufferIntegerColorSampleCounts": 0,
        # descriptor indexing's update-after-bind limits (no update-after-bind here: the plain limits;
        # validation layers check pipeline layouts against them whatever the layouts' flags)
        "maxUpdateAfterBindDescriptorsInAllPools": 1 << 20,
        "maxPerStageDescriptorUpdateAfterBindUniformBuffers": 1 << 20,
        "maxPerStageDescriptorUpdateAfterBindStorageBuffers": 1 << 20,
        "maxPerStageUpdateAfterBindResources": 1 << 20,
        "maxDescriptorSetUpdateAfterBindUniformBuffers": 1 << 20,
        "maxDescriptorSetUpdateAfterBindUniformBuffersDynamic": 32,
        "maxDescriptorSetUpdateAfterBindStorageBuffers": 1 << 20,
        "maxDescriptorSetUpdateAfterBindStorageBuffersDynamic": 32,
        # 1.3
        "maxInlineUniformBlockSize": 0, "maxBufferSize": heap,
        "integerDotProduct8BitUnsignedAccelerated": 0,
        # maintenance5
        "earlyFragmentMultisampleCoverageAfterSampleCounting": 0,
        "earlyFragmentSampleMaskTestBeforeSampleCounting": 0, "depthStencilSwizzleOneSupport": 0,
        "polygonModePointSize": 0, "nonStrictSinglePixelWideLinesUseParallelogram": 0,
        "nonStrictWideLinesUseParallelogram": 0,
        # pipeline robustness: without robustBufferAccess out-of-bounds accesses are errors
        # (device lost), never clamped
        "defaultRobustnessStorageBuffers": 1, "defaultRobustnessUniformBuffers": 1,   # ..._DISABLED
        "defaultRobustnessVertexInputs": 1, "defaultRobustnessImages": 1,
        # robustness2: bounds are checked to the byte
        "robustStorageBufferAccessSizeAlignment": 1, "robustUniformBufferAccessSizeAlignment": 1,
        # push descriptors
        "maxPushDescriptors": 32,
        # cooperative matrices and vectors
        "cooperativeMatrixSupportedStages": STAGE_COMPUTE,
        "cooperativeMatrixWorkgroupScopeMaxWorkgroupSize": profile.workgroup_scope_max,
        "cooperativeMatrixFlexibleDimensionsMaxDimension": profile.flexible_max_dimension,
        "cooperativeMatrixWorkgroupScopeReservedSharedMemory": 0,
        "cooperativeVectorSupportedStages": STAGE_COMPUTE,
        "cooperativeVectorTrainingFloat16Accumulation": 1, "cooperativeVectorTrainingFloat32Accumulation": 1,
        "maxCooperativeVectorComponents": 512,
        "maxVectorComponents": 1 << 16,
    }
    c2 = rec.get("coopmat2_props")
    if c2:
        p["cooperativeMatrixWorkgroupScopeMaxWorkgroupSize"] = c2["workgroupScopeMaxWorkgroupSize"]
        p["cooperativeMatrixFlexibleDimensionsMaxDimension"] = c2["flexibleDimensionsMaxDimension"]
        p["cooperativeMatrixWorkgroupScopeReservedSharedMemory"] = c2["workgroupScopeReservedSharedMemory"]
    cv = rec.get("coopvec")
    if cv:
        p["cooperativeVectorTrainingFloat16Accumulation"] = cv["trainingF16Acc"]
        p["cooperativeVectorTrainingFloat32Accumulation"] = cv["trainingF32Acc"]
        p["maxCooperativeVectorComponents"] = cv["maxComponents"]
    return p


# -- cooperative tables ----------------------------------------------------------------------------

# The combinations offered by profiles that accept every type (generic, shuffled): the spec's
# required ones first, then the other types jitcoop runs. (A, B, C, Result, K)
_EVERY_COMBO = [("f16", "f16", "f16", "f16", 16), ("f16", "f16", "f32", "f32", 16),
                ("u8", "u8", "u32", "u32", 32), ("s8", "s8", "s32", "s32", 32),
                ("u8", "s8", "s32", "s32", 32), ("s8", "u8", "s32", "s32", 32),
                ("bf16", "bf16", "f32", "f32", 16), ("bf16", "bf16", "bf16", "bf16", 16),
                ("e4m3", "e4m3", "f32", "f32", 32), ("e5m2", "e5m2", "f32", "f32", 32),
                ("e4m3", "e4m3", "f16", "f16", 32), ("f32", "f32", "f32", "f32", 8),
                ("f64", "f64", "f64", "f64", 4)]


def coopmat_table(profile) -> list:
    """VkCooperativeMatrixPropertiesKHR rows: (M, N, K, A, B, C, Result, saturating, scope)."""
    if profile.coopmat is not None:
        return [(p.M, p.N, p.K, p.A, p.B, p.C, p.R, p.saturating, p.scope) for p in profile.coopmat]
    rows = []
    for a, b, c, r, k in _EVERY_COMBO:
        for m, n in ((16, 16), (16, 8), (8, 8)):
            rows.append((m, n, k, a, b, c, r, False, SCOPE_SUBGROUP))
    return rows


def flexible_table(profile) -> list:
    """VkCooperativeMatrixFlexibleDimensionsPropertiesNV rows:
    (Mg, Ng, Kg, A, B, C, Result, saturating, scope, workgroupInvocations)."""
    if "VK_NV_cooperative_matrix2" not in device_extensions(profile):
        return []
    if profile.flexible is not None:
        return [(p.M, p.N, p.K, p.A, p.B, p.C, p.R, p.saturating, p.scope, p.wg_invocations)
                for p in profile.flexible]
    rows = [(16, 16, k, a, b, c, r, False, SCOPE_SUBGROUP, 0) for a, b, c, r, k in _EVERY_COMBO]
    w = profile.subgroup_size * 2
    while w <= min(profile.workgroup_scope_max, 256):
        rows += [(16, 16, k, a, b, c, r, False, SCOPE_WORKGROUP, w) for a, b, c, r, k in _EVERY_COMBO]
        w *= 2
    return rows


# (input, inputInterpretation, matrixInterpretation, biasInterpretation, result, transpose) offered by
# profiles that accept every combination: the six the extension requires, then float32 and more.
_EVERY_COOPVEC = [("f16", "f16", "f16", "f16", "f16", True), ("u32", "s8packed", "s8", "s32", "s32", False),
                  ("s8", "s8", "s8", "s32", "s32", False), ("f32", "s8", "s8", "s32", "s32", False),
                  ("f16", "e4m3", "e4m3", "f16", "f16", False), ("f16", "e5m2", "e5m2", "f16", "f16", False),
                  ("f32", "f32", "f32", "f32", "f32", True), ("f32", "f16", "f16", "f16", "f32", True),
                  ("u8", "u8", "u8", "s32", "s32", False), ("u32", "u8packed", "u8", "s32", "s32", False)]


def coopvec_table(profile) -> list:
    if "VK_NV_cooperative_vector" not in device_extensions(profile):
        return []
    rows = coopvec_properties(profile.name)
    return list(rows) if rows is not None else list(_EVERY_COOPVEC)

