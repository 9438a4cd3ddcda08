#version 450
// D = silu(A x B + bias) with the bias and the activation applied by per-element operations
// (OpCooperativeMatrixPerElementOpNV): the function reads bias[column] from a storage buffer.
// A (M x K, f16, row-major) loaded straight from its buffer, B (K x N, f16, row-major) staged
// through shared memory declared as float16_t; accumulators and operands in arrays indexed by
// loops. 64 x 64 tiles per workgroup of 4 subgroups (spec constant 0: 4 x the subgroup size),
// each a 32 x 32 quarter; K steps of 32.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x_id = 0) in;
layout(push_constant) uniform P { uint M, N, K; } p;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 2) readonly buffer BBias { float bias[]; };
layout(set = 0, binding = 3) writeonly buffer BD { float d[]; };
const uint BN = 64, BK = 32;
shared float16_t sb[BK * BN];
#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

float bias_silu(const in uint row, const in uint col, const in float x, const in uint col0) {
    float y = x + bias[col0 + col];
    return y / (1.0 + exp(-y));
}

void main() {
    uint row0 = gl_WorkGroupID.y * 64, col0 = gl_WorkGroupID.x * BN;
    uint sr = (gl_SubgroupID / 2) * 32, sc = (gl_SubgroupID % 2) * 32;
    ACC acc[2][2];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            acc[i][j] = ACC(0.0);
    for (uint k = 0; k < p.K; k += BK) {
        for (uint e = gl_LocalInvocationIndex; e < BK * BN; e += gl_WorkGroupSize.x)
            sb[e] = b[(k + e / BN) * p.N + col0 + e % BN];
        barrier();
        for (uint kk = 0; kk < BK; kk += 16) {
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma[2];
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb[2];
            for (int i = 0; i < 2; i++)
                coopMatLoad(ma[i], a, (row0 + sr + i * 16) * p.K + k + kk, p.K, gl_CooperativeMatrixLayoutRowMajor);
            for (int j = 0; j < 2; j++)
                coopMatLoad(mb[j], sb, kk * BN + sc + j * 16, BN, gl_CooperativeMatrixLayoutRowMajor);
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2; j++)
                    acc[i][j] = coopMatMulAdd(ma[i], mb[j], acc[i][j]);
        }
        barrier();
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            ACC r;
            coopMatPerElementNV(r, acc[i][j], bias_silu, col0 + sc + j * 16);
            coopMatStore(r, d, (row0 + sr + i * 16) * p.N + col0 + sc + j * 16, p.N,
                         gl_CooperativeMatrixLayoutRowMajor);
        }
}
