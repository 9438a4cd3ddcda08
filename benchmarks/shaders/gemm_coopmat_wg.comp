#version 450
// C = A x B with workgroup-scope cooperative matrices (SPV_NV_cooperative_matrix2's scope on the
// KHR instructions; no tensor loads): one 128x128 float32 accumulator per workgroup of 256
// invocations, K steps of 32 with fp16 A (128x32) and B (32x128) loaded from the storage
// buffers directly.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 256) in;
layout(push_constant) uniform P { uint M, N, K; } p;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer BC { float c[]; };
#define CM_ACC coopmat<float, gl_ScopeWorkgroup, 128, 128, gl_MatrixUseAccumulator>
#define CM_A coopmat<float16_t, gl_ScopeWorkgroup, 128, 32, gl_MatrixUseA>
#define CM_B coopmat<float16_t, gl_ScopeWorkgroup, 32, 128, gl_MatrixUseB>
void main() {
    uint row0 = gl_WorkGroupID.y * 128, col0 = gl_WorkGroupID.x * 128;
    CM_ACC acc = CM_ACC(0.0);
    for (uint k = 0; k < p.K; k += 32) {
        CM_A ma;
        CM_B mb;
        coopMatLoad(ma, a, row0 * p.K + k, p.K, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(mb, b, k * p.N + col0, p.N, gl_CooperativeMatrixLayoutRowMajor);
        acc = coopMatMulAdd(ma, mb, acc);
    }
    coopMatStore(acc, c, row0 * p.N + col0, p.N, gl_CooperativeMatrixLayoutRowMajor);
}
