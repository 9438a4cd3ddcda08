"""The Vulkan extensions the driver implements (pure data: the library's build reads it too).

Every device offers the `DEVICE` extensions; a device profile adds those of `PROFILE_DEVICE`
whose condition holds for it (`jitcoop.icd.properties` decides, from the profile's tables).
Versions are the extensions' own spec versions and come from the vendored header at build time.
"""

INSTANCE = ("VK_EXT_debug_utils", "VK_KHR_get_physical_device_properties2")

# Core 1.1-1.3 functionality under its extension names (for applications written against 1.0 or
# 1.1), plus the small extensions a compute application asks for.
DEVICE = (
    "VK_KHR_16bit_storage", "VK_KHR_8bit_storage", "VK_KHR_bind_memory2", "VK_KHR_buffer_device_address",
    "VK_KHR_copy_commands2", "VK_KHR_dedicated_allocation", "VK_KHR_descriptor_update_template",
    "VK_KHR_driver_properties", "VK_KHR_get_memory_requirements2", "VK_KHR_maintenance1",
    "VK_KHR_maintenance3", "VK_KHR_maintenance4", "VK_KHR_maintenance5", "VK_KHR_push_descriptor",
    "VK_KHR_shader_atomic_int64", "VK_KHR_shader_float16_int8", "VK_KHR_shader_float_controls",
    "VK_KHR_shader_integer_dot_product",
    "VK_KHR_shader_non_semantic_info", "VK_KHR_shader_subgroup_extended_types", "VK_KHR_spirv_1_4",
    "VK_KHR_storage_buffer_storage_class", "VK_KHR_synchronization2", "VK_KHR_timeline_semaphore",
    "VK_KHR_uniform_buffer_standard_layout", "VK_KHR_variable_pointers", "VK_KHR_vulkan_memory_model",
    "VK_KHR_workgroup_memory_explicit_layout", "VK_EXT_host_query_reset",
    "VK_EXT_memory_budget",
    "VK_EXT_pipeline_creation_cache_control", "VK_EXT_pipeline_robustness", "VK_EXT_scalar_block_layout",
    "VK_EXT_shader_atomic_float", "VK_EXT_subgroup_size_control", "VK_EXT_robustness2",
)

# Offered where the profile has the feature (see properties.device_extensions).
PROFILE_DEVICE = (
    "VK_KHR_cooperative_matrix", "VK_NV_cooperative_matrix2", "VK_NV_cooperative_matrix_decode_vector",
    "VK_NV_cooperative_vector", "VK_KHR_shader_bfloat16", "VK_EXT_shader_float8",
    "VK_EXT_shader_replicated_composites", "VK_QCOM_cooperative_matrix_conversion",
    "VK_EXT_shader_long_vector",
)

# The core versions whose commands and structures the library declares. The driver reports
# Vulkan 1.3; 1.4's structures are declared only where a 1.3 extension aliases them.
CORE = ("VK_VERSION_1_0", "VK_VERSION_1_1", "VK_VERSION_1_2", "VK_VERSION_1_3")

SECTIONS = CORE + INSTANCE + DEVICE + PROFILE_DEVICE
