#version 450
// Workgroup-scope D = A x B + C (SPV_NV_cooperative_matrix2 scope): one 64x64x32 MulAdd per
// workgroup of WG invocations, loaded and stored row-major with the given strides.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
const uint M = 64, N = 64, K = 32;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 2) buffer BC { float c[]; };
void main() {
    coopmat<float16_t, gl_ScopeWorkgroup, M, K, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeWorkgroup, K, N, gl_MatrixUseB> mb;
    coopmat<float, gl_ScopeWorkgroup, M, N, gl_MatrixUseAccumulator> mc;
    uint t = gl_WorkGroupID.x;
    coopMatLoad(ma, a, t * M * K, K, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, b, t * K * N, N, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mc, c, t * M * N, N, gl_CooperativeMatrixLayoutRowMajor);
    mc = coopMatMulAdd(ma, mb, mc);
    for (int i = 0; i < mc.length(); i++) mc[i] = mc[i] * 2.0;
    coopMatStore(mc, c, t * M * N, N, gl_CooperativeMatrixLayoutRowMajor);
}
