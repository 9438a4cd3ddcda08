#version 450
// Pointee types that differ from the component type (uvec4 arrays holding float16 data; Stride
// counts uvec4 elements) in StorageBuffer, Workgroup and PhysicalStorageBuffer memory; two
// subgroups per workgroup, each on its own 16 x 16 tile (32 uvec4 of float16).
//   in (SB uvec4, stride p.s_in uvec4 per row) -> shared uvec4 (row major, 2 per row)
//   shared read back column major -> p.dst (PSB float16, row major, 16 per row): the transpose
//   p.src (PSB uvec4, stride p.s_in) -> o (SB float16, row major 16): a copy
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 64) in;
layout(buffer_reference, std430, buffer_reference_align = 16) buffer V4 { uvec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer H { float16_t h[]; };
layout(push_constant) uniform P { V4 src; H dst; uint s_in; } p;
layout(set = 0, binding = 0) readonly buffer BI { uvec4 q[]; };
layout(set = 0, binding = 1) writeonly buffer BO { float16_t o[]; };
shared uvec4 sh[64];
void main() {
    uint sg = gl_SubgroupID;
    uint tile = gl_WorkGroupID.x * 2 + sg;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m, t, c;
    coopMatLoad(m, q, tile * 16 * p.s_in, p.s_in, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(m, sh, sg * 32, 2, gl_CooperativeMatrixLayoutRowMajor);
    barrier();
    coopMatLoad(t, sh, sg * 32, 2, gl_CooperativeMatrixLayoutColumnMajor);
    coopMatStore(t, p.dst.h, tile * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(c, p.src.v, tile * 16 * p.s_in, p.s_in, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(c, o, tile * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
}
