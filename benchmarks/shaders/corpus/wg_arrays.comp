#version 450
// C (M x N, f32) = A x B with workgroup-scope matrices and KHR loads, in arrays indexed by loops:
// a 128 x 128 tile per workgroup of 256 invocations as acc[2][2] of 64 x 64, from ma[2] (64 x 32)
// and mb[2] (32 x 64) per K step of 32. A column-major (stored K x M) loaded straight from its
// buffer; B (K x N, f16, row-major) staged through shared memory declared as float16_t.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 256) in;
layout(push_constant) uniform P { uint M, N, K; } p;
layout(set = 0, binding = 0) readonly buffer BA { float16_t at[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer BC { float c[]; };
const uint BN = 128, BK = 32;
shared float16_t sb[BK * BN];
#define ACC coopmat<float, gl_ScopeWorkgroup, 64, 64, gl_MatrixUseAccumulator>
void main() {
    uint row0 = gl_WorkGroupID.y * 128, col0 = gl_WorkGroupID.x * BN;
    ACC acc[2][2];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            acc[i][j] = ACC(0.0);
    for (uint k = 0; k < p.K; k += BK) {
        for (uint e = gl_LocalInvocationIndex; e < BK * BN; e += gl_WorkGroupSize.x)
            sb[e] = b[(k + e / BN) * p.N + col0 + e % BN];
        barrier();
        coopmat<float16_t, gl_ScopeWorkgroup, 64, BK, gl_MatrixUseA> ma[2];
        coopmat<float16_t, gl_ScopeWorkgroup, BK, 64, gl_MatrixUseB> mb[2];
        for (int i = 0; i < 2; i++)
            coopMatLoad(ma[i], at, k * p.M + row0 + i * 64, p.M, gl_CooperativeMatrixLayoutColumnMajor);
        for (int j = 0; j < 2; j++)
            coopMatLoad(mb[j], sb, j * 64, BN, gl_CooperativeMatrixLayoutRowMajor);
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++)
                acc[i][j] = coopMatMulAdd(ma[i], mb[j], acc[i][j]);
        barrier();
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            coopMatStore(acc[i][j], c, (row0 + i * 64) * p.N + col0 + j * 64, p.N,
                         gl_CooperativeMatrixLayoutRowMajor);
}
