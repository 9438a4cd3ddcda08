#version 450
// D = alpha * A x B + beta * C, written the other common way: accumulators and operand matrices
// in arrays indexed by loops; A (M x K, f16, row-major) read as uvec4 (8 halves) and staged
// through shared memory declared as uvec4; B column-major (stored N x K: each column of B
// contiguous) loaded straight from its buffer; an epilogue that loads C. 64 x 64 tiles per
// workgroup of 4 subgroups (spec constant 0: 4 x the subgroup size), each a 32 x 32 quarter as
// 2 x 2 accumulators of 16 x 16; K steps of 32.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x_id = 0) in;
layout(push_constant) uniform P { uint M, N, K; float alpha, beta; } p;
layout(set = 0, binding = 0) readonly buffer BA { uvec4 a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t bt[]; };
layout(set = 0, binding = 2) readonly buffer BC { float c[]; };
layout(set = 0, binding = 3) writeonly buffer BD { float d[]; };
const uint BM = 64, BK = 32, ROW4 = BK / 8;      // a row of the staged A: ROW4 uvec4s
shared uvec4 sa[BM * ROW4];
#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
void main() {
    uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * 64;
    uint sr = (gl_SubgroupID / 2) * 32, sc = (gl_SubgroupID % 2) * 32;
    ACC acc[2][2];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            acc[i][j] = ACC(0.0);
    for (uint k = 0; k < p.K; k += BK) {
        for (uint e = gl_LocalInvocationIndex; e < BM * ROW4; e += gl_WorkGroupSize.x)
            sa[e] = a[((row0 + e / ROW4) * p.K + k) / 8 + e % ROW4];
        barrier();
        for (uint kk = 0; kk < BK; kk += 16) {
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma[2];
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb[2];
            for (int i = 0; i < 2; i++)
                coopMatLoad(ma[i], sa, (sr + i * 16) * ROW4 + kk / 8, ROW4, gl_CooperativeMatrixLayoutRowMajor);
            for (int j = 0; j < 2; j++)
                coopMatLoad(mb[j], bt, (col0 + sc + j * 16) * p.K + k + kk, p.K, gl_CooperativeMatrixLayoutColumnMajor);
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2; j++)
                    acc[i][j] = coopMatMulAdd(ma[i], mb[j], acc[i][j]);
        }
        barrier();
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            uint o = (row0 + sr + i * 16) * p.N + col0 + sc + j * 16;
            ACC cm;
            coopMatLoad(cm, c, o, p.N, gl_CooperativeMatrixLayoutRowMajor);
            ACC r = p.alpha * acc[i][j] + p.beta * cm;
            coopMatStore(r, d, o, p.N, gl_CooperativeMatrixLayoutRowMajor);
        }
}
