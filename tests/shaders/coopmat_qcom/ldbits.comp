#version 450
// A row-major float16 load (OpCooperativeMatrixLoadKHR into the generic profile's striped
// layout, 64-wide subgroups) read back packed: invocation i's eight uint32 words are row i of
// the 64 x 16 tile, so y repeats x bit for bit, signalling NaNs and their payloads included.
// With COLUMN_MAJOR the tile is read column-major (the transposing load: element (r, c) at
// c * 64 + r), so y holds x transposed per tile.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_QCOM_cooperative_matrix_conversion : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer BX { float16_t x[]; };
layout(set = 0, binding = 1) writeonly buffer BY { uint y[]; };
void main() {
    uint tile = gl_WorkGroupID.x;
    coopmat<float16_t, gl_ScopeSubgroup, 64, 16, gl_MatrixUseA> m;
#ifdef COLUMN_MAJOR
    coopMatLoad(m, x, tile * 1024, 64, gl_CooperativeMatrixLayoutColumnMajor);
#else
    coopMatLoad(m, x, tile * 1024, 16, gl_CooperativeMatrixLayoutRowMajor);
#endif
    uint w[8];
    coopmatToVectorQCOM(m, w);
    for (uint i = 0; i < 8; i++)
        y[(tile * 64 + gl_SubgroupInvocationID) * 8 + i] = w[i];
}
