#version 450
// 4 subgroups (spec constant 0: 4 x the subgroup size), A and B both staged through float16_t shared memory, double-buffered
// (the next K tile is written while the MulAdds read this one); each subgroup a 32 x 32 quarter
// of a 64 x 64 tile, acc[2][2] of 16 x 16; K steps of 32.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x_id = 0) in;
layout(push_constant) uniform P { uint M, N, K; } p;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer BC { float c[]; };
const uint BM = 64, BN = 64, BK = 32;
shared float16_t sa[2][BM * BK];
shared float16_t sb[2][BK * BN];
#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
void stage(uint buf, uint k, uint row0, uint col0) {
    for (uint e = gl_LocalInvocationIndex; e < BM * BK; e += gl_WorkGroupSize.x)
        sa[buf][e] = a[(row0 + e / BK) * p.K + k + e % BK];
    for (uint e = gl_LocalInvocationIndex; e < BK * BN; e += gl_WorkGroupSize.x)
        sb[buf][e] = b[(k + e / BN) * p.N + col0 + e % BN];
}
void main() {
    uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
    uint sr = (gl_SubgroupID / 2) * 32, sc = (gl_SubgroupID % 2) * 32;
    ACC acc[2][2];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            acc[i][j] = ACC(0.0);
    stage(0, 0, row0, col0);
    barrier();
    uint cur = 0;
    for (uint k = 0; k < p.K; k += BK) {
        if (k + BK < p.K)
            stage(cur ^ 1, k + BK, row0, col0);
        for (uint kk = 0; kk < BK; kk += 16) {
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma[2];
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb[2];
            for (int i = 0; i < 2; i++)
                coopMatLoad(ma[i], sa[cur], (sr + i * 16) * BK + kk, BK, gl_CooperativeMatrixLayoutRowMajor);
            for (int j = 0; j < 2; j++)
                coopMatLoad(mb[j], sb[cur], kk * BN + sc + j * 16, BN, gl_CooperativeMatrixLayoutRowMajor);
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2; j++)
                    acc[i][j] = coopMatMulAdd(ma[i], mb[j], acc[i][j]);
        }
        barrier();
        cur ^= 1;
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            coopMatStore(acc[i][j], c, (row0 + sr + i * 16) * p.N + col0 + sc + j * 16, p.N,
                         gl_CooperativeMatrixLayoutRowMajor);
}
