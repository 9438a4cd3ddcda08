"""Capabilities a module may declare and still run here."""
SUPPORTED_CAPABILITIES = {
    "Shader", "Matrix", "Float16", "Float64", "Int8", "Int16", "Int64", "Int64Atomics",
    "StorageBuffer8BitAccess", "UniformAndStorageBuffer8BitAccess", "StoragePushConstant8",
    "StorageBuffer16BitAccess", "UniformAndStorageBuffer16BitAccess", "StoragePushConstant16",
    "StorageUniform16", "StorageUniformBufferBlock16", "StorageInputOutput16",
    "GroupNonUniform", "GroupNonUniformVote", "GroupNonUniformArithmetic", "GroupNonUniformBallot",
    "GroupNonUniformShuffle", "GroupNonUniformShuffleRelative", "GroupNonUniformClustered",
    "GroupNonUniformQuad", "PhysicalStorageBufferAddresses", "VariablePointers",
    "VariablePointersStorageBuffer", "VulkanMemoryModel", "VulkanMemoryModelDeviceScope",
    "AtomicFloat32AddEXT", "AtomicFloat64AddEXT", "AtomicFloat32MinMaxEXT", "AtomicFloat64MinMaxEXT",
    "AtomicFloat16AddEXT", "Linkage", "Addresses", "DenormPreserve", "DenormFlushToZero",
    "SignedZeroInfNanPreserve", "RoundingModeRTE", "RoundingModeRTZ", "WorkgroupMemoryExplicitLayoutKHR",
    "WorkgroupMemoryExplicitLayout8BitAccessKHR", "WorkgroupMemoryExplicitLayout16BitAccessKHR",
    "ShaderNonUniform", "RuntimeDescriptorArray", "DemoteToHelperInvocation",
    "BFloat16TypeKHR", "Float8EXT", "SubgroupBallotKHR", "SubgroupVoteKHR",
    "CooperativeVectorNV", "CooperativeVectorTrainingNV", "ReplicatedCompositesEXT",
    "CooperativeMatrixKHR", "BFloat16CooperativeMatrixKHR", "Float8CooperativeMatrixEXT",
    "CooperativeMatrixWorkgroupScopeNV", "CooperativeMatrixFlexibleDimensionsNV",
    "CooperativeMatrixConversionQCOM",
    # SPV_NV_cooperative_matrix2, SPV_NV_tensor_addressing, SPV_NV_cooperative_matrix_decode_vector
    # (the newest grammar renames two of them ...EXT; both spellings are accepted)
    "CooperativeMatrixReductionsNV", "CooperativeMatrixReductionsEXT",
    "CooperativeMatrixConversionsNV", "CooperativeMatrixConversionsEXT",
    "CooperativeMatrixPerElementOperationsNV", "CooperativeMatrixPerElementOperationsEXT",
    "CooperativeMatrixTensorAddressingNV", "CooperativeMatrixBlockLoadsNV", "TensorAddressingNV",
    "CooperativeMatrixDecodeVectorNV", "LongVectorEXT",
    # SPV_KHR_integer_dot_product (the newest grammar drops the KHR suffixes; both are accepted)
    "DotProduct", "DotProductInputAll", "DotProductInput4x8Bit", "DotProductInput4x8BitPacked",
    "DotProductKHR", "DotProductInputAllKHR", "DotProductInput4x8BitKHR", "DotProductInput4x8BitPackedKHR",
}
