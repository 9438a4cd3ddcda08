#version 450
// Workgroup scope, one 128 x 128 accumulator, A and B (both row-major) loaded with KHR
// loads straight from the storage buffers, K steps of 32; 256 invocations.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 256) in;
layout(push_constant) uniform P { uint M, N, K; } p;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer BC { float c[]; };
void main() {
    uint row0 = gl_WorkGroupID.y * 128, col0 = gl_WorkGroupID.x * 128;
    coopmat<float, gl_ScopeWorkgroup, 128, 128, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeWorkgroup, 128, 128, gl_MatrixUseAccumulator>(0.0);
    for (uint k = 0; k < p.K; k += 32) {
        coopmat<float16_t, gl_ScopeWorkgroup, 128, 32, gl_MatrixUseA> ma;
        coopmat<float16_t, gl_ScopeWorkgroup, 32, 128, gl_MatrixUseB> mb;
        coopMatLoad(ma, a, row0 * p.K + k, p.K, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(mb, b, k * p.N + col0, p.N, gl_CooperativeMatrixLayoutRowMajor);
        acc = coopMatMulAdd(ma, mb, acc);
    }
    coopMatStore(acc, c, row0 * p.N + col0, p.N, gl_CooperativeMatrixLayoutRowMajor);
}
