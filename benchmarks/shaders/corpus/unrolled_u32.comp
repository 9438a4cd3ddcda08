#version 450
// C (M x N, f16) = A x B, unrolled with four named accumulators: A column-major (stored K x M:
// each column of A contiguous) loaded straight from its buffer; B (K x N, f16, row-major) read as
// uint (two halves) and staged through shared memory declared as uint; the f32 accumulators
// converted to f16 before the store. 64 x 64 tiles per workgroup of 4 subgroups (spec constant 0:
// 4 x the subgroup size), each a 32 x 32 quarter; K steps of 16.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x_id = 0) in;
layout(push_constant) uniform P { uint M, N, K; } p;
layout(set = 0, binding = 0) readonly buffer BA { float16_t at[]; };
layout(set = 0, binding = 1) readonly buffer BB { uint b[]; };
layout(set = 0, binding = 2) writeonly buffer BC { float16_t c[]; };
const uint BN = 64, BK = 16, ROW2 = BN / 2;      // a row of the staged B: ROW2 uints
shared uint sb[BK * ROW2];
#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define OUT coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define MA coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define MB coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
void main() {
    uint row0 = gl_WorkGroupID.y * 64, col0 = gl_WorkGroupID.x * BN;
    uint sr = (gl_SubgroupID / 2) * 32, sc = (gl_SubgroupID % 2) * 32;
    ACC c00 = ACC(0.0), c01 = ACC(0.0), c10 = ACC(0.0), c11 = ACC(0.0);
    for (uint k = 0; k < p.K; k += BK) {
        for (uint e = gl_LocalInvocationIndex; e < BK * ROW2; e += gl_WorkGroupSize.x)
            sb[e] = b[((k + e / ROW2) * p.N + col0) / 2 + e % ROW2];
        barrier();
        MA a0, a1;
        MB b0, b1;
        coopMatLoad(a0, at, k * p.M + row0 + sr, p.M, gl_CooperativeMatrixLayoutColumnMajor);
        coopMatLoad(a1, at, k * p.M + row0 + sr + 16, p.M, gl_CooperativeMatrixLayoutColumnMajor);
        coopMatLoad(b0, sb, sc / 2, ROW2, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(b1, sb, (sc + 16) / 2, ROW2, gl_CooperativeMatrixLayoutRowMajor);
        c00 = coopMatMulAdd(a0, b0, c00);
        c01 = coopMatMulAdd(a0, b1, c01);
        c10 = coopMatMulAdd(a1, b0, c10);
        c11 = coopMatMulAdd(a1, b1, c11);
        barrier();
    }
    uint o = (row0 + sr) * p.N + col0 + sc;
    coopMatStore(OUT(c00), c, o, p.N, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(OUT(c01), c, o + 16, p.N, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(OUT(c10), c, o + 16 * p.N, p.N, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(OUT(c11), c, o + 16 * p.N + 16, p.N, gl_CooperativeMatrixLayoutRowMajor);
}
