#version 460
// VK_KHR_cooperative_matrix: D = A x B + C for one 16 x 16 x 16 tile per subgroup (float16 A
// and B, float32 C and D, all row major and tightly packed): a shape every profile's table has.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(std430, set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(std430, set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(std430, set = 0, binding = 2) readonly buffer BC { float c[]; };
layout(std430, set = 0, binding = 3) writeonly buffer BD { float d[]; };
void main() {
    uint t = gl_WorkGroupID.x * 256;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> mc;
    coopMatLoad(ma, a, t, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, b, t, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mc, c, t, 16, gl_CooperativeMatrixLayoutRowMajor);
    mc = coopMatMulAdd(ma, mb, mc);
    coopMatStore(mc, d, t, 16, gl_CooperativeMatrixLayoutRowMajor);
}
