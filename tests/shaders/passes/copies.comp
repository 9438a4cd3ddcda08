#version 450
// Whole arrays of matrices copied, as helper functions and initializers make them, for the
// flat function's passes (jitcoop/analysis/sroa.py split_copies); tests/test_passes.py checks them.
//   acc[i][j] = (i + 2j) + sum over k < 2 of A[i][k] x B[k][j]   kstep(acc, k): an inout array
//                                                                 parameter (copied in and out)
//   saved = acc after the first K step (a copy the second step must not change)
//   init  = {1, 2} as an initializer list (OpCompositeConstruct), then init[1] += A[0][0] x B[0][0]
//   out: acc[0][0], acc[0][1], acc[1][0], acc[1][1], saved[0][0], saved[1][1], init[0], init[1]
//   (through storeall(r, base): an `in` array parameter, copied in)
// A tiles (16 x 16 f16, row-major) A[i][k] at (2i + k) * 256 in a; B[k][j] at (2k + j) * 256 in b.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(binding = 0) readonly buffer BA { float16_t a[]; };
layout(binding = 1) readonly buffer BB { float16_t b[]; };
layout(binding = 2) writeonly buffer BC { float c[]; };
#define MA coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define MB coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define MC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

void kstep(inout MC acc[2][2], uint k) {
    MA ma[2]; MB mb[2];
    for (uint i = 0u; i < 2u; i++)
        coopMatLoad(ma[i], a, (2u * i + k) * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
    for (uint j = 0u; j < 2u; j++)
        coopMatLoad(mb[j], b, (2u * k + j) * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
    for (uint i = 0u; i < 2u; i++)
        for (uint j = 0u; j < 2u; j++)
            acc[i][j] = coopMatMulAdd(ma[i], mb[j], acc[i][j]);
}

void storeall(MC r[2][2], uint base) {
    for (uint i = 0u; i < 2u; i++)
        for (uint j = 0u; j < 2u; j++)
            coopMatStore(r[i][j], c, base + (2u * i + j) * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
}

void main() {
    MC acc[2][2];
    for (uint i = 0u; i < 2u; i++)
        for (uint j = 0u; j < 2u; j++)
            acc[i][j] = MC(float(i + 2u * j));
    kstep(acc, 0u);
    MC saved[2][2] = acc;
    kstep(acc, 1u);
    storeall(acc, 0u);
    coopMatStore(saved[0][0], c, 4u * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(saved[1][1], c, 5u * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
    MC init[2] = { MC(1.0), MC(2.0) };
    MA a0; MB b0;
    coopMatLoad(a0, a, 0u, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b0, b, 0u, 16, gl_CooperativeMatrixLayoutRowMajor);
    init[1] = coopMatMulAdd(a0, b0, init[1]);
    coopMatStore(init[0], c, 6u * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(init[1], c, 7u * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
}
