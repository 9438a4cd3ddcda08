#version 450
// C = A x B with subgroup-scope KHR cooperative matrices: 64x64 tiles per workgroup of 128
// invocations (4 subgroups of 32, each a 32x32 quarter: 2 x 2 accumulators of 16x16), K steps
// of KSTEP, A staged through shared memory, B loaded from the storage buffer directly. Written
// unrolled, as production shaders are. ATYPE/ACC choose fp16 x fp16 -> fp32 or int8 -> int32.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 128) in;
layout(push_constant) uniform P { uint M, N, K; } p;
layout(set = 0, binding = 0) readonly buffer BA { ATYPE a[]; };
layout(set = 0, binding = 1) readonly buffer BB { ATYPE b[]; };
layout(set = 0, binding = 2) writeonly buffer BC { ACC c[]; };
shared ATYPE sa[64 * KSTEP];
#define CM_ACC coopmat<ACC, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define CM_A coopmat<ATYPE, gl_ScopeSubgroup, 16, KSTEP, gl_MatrixUseA>
#define CM_B coopmat<ATYPE, gl_ScopeSubgroup, KSTEP, 16, gl_MatrixUseB>
void main() {
    uint row0 = gl_WorkGroupID.y * 64, col0 = gl_WorkGroupID.x * 64;
    uint sr = (gl_SubgroupID / 2) * 32, sc = (gl_SubgroupID % 2) * 32;
    CM_ACC c00 = CM_ACC(0), c01 = CM_ACC(0), c10 = CM_ACC(0), c11 = CM_ACC(0);
    for (uint k = 0; k < p.K; k += KSTEP) {
        for (uint e = gl_LocalInvocationIndex; e < 64 * KSTEP; e += 128)
            sa[e] = a[(row0 + e / KSTEP) * p.K + k + e % KSTEP];
        barrier();
        CM_A a0, a1;
        CM_B b0, b1;
        coopMatLoad(a0, sa, sr * KSTEP, KSTEP, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(a1, sa, (sr + 16) * KSTEP, KSTEP, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(b0, b, k * p.N + col0 + sc, p.N, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(b1, b, k * p.N + col0 + sc + 16, p.N, gl_CooperativeMatrixLayoutRowMajor);
        c00 = coopMatMulAdd(a0, b0, c00);
        c01 = coopMatMulAdd(a0, b1, c01);
        c10 = coopMatMulAdd(a1, b0, c10);
        c11 = coopMatMulAdd(a1, b1, c11);
        barrier();
    }
    uint o = (row0 + sr) * p.N + col0 + sc;
    coopMatStore(c00, c, o, p.N, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(c01, c, o + 16, p.N, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(c10, c, o + 16 * p.N, p.N, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(c11, c, o + 16 * p.N + 16, p.N, gl_CooperativeMatrixLayoutRowMajor);
}
