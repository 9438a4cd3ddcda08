#version 450
// Loops around cooperative matrix instructions as hand-written shaders have them, for the flat
// function's passes (jitcoop/analysis: ssa, unroll, sroa); tests/test_passes.py checks them.
//   acc0 = sum over k < 3 of A[k] x B[k]                          counted loops: unrolled, arrays split
//   acc1 = sum over k < n of A2[k % 3] x B2[(k + 2) % 3]       a trip count from a push constant: a loop
//   acc2 = 2 + sum over k < 3, k != n of A3[k] x B3[k]            `continue` taken by a lane-uniform test
//   acc3 = sum over k < 3 until k == n of A4[k] x B4[k]            a `break`: a loop
// A (16 x 16 f16, row-major) tiles 0..2 in a, B (column-major) tiles 0..2 in b.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(push_constant) uniform P { uint n; } p;
layout(binding = 0) readonly buffer BA { float16_t a[]; };
layout(binding = 1) readonly buffer BB { float16_t b[]; };
layout(binding = 2) writeonly buffer BC { float c[]; };
#define MA coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define MB coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define MC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
void main() {
    MA ma[3]; MB mb[3]; MC acc[2];
    for (int i = 0; i < 3; i++)                    // a signed counter
        coopMatLoad(ma[i], a, i * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    for (uint j = 0u; j < 6u; j += 2u)             // a step of 2
        coopMatLoad(mb[j / 2u], b, j * 128u, 16, gl_CooperativeMatrixLayoutColumnMajor);
    for (uint i = 0u; i < 2u; i++)
        acc[i] = MC(float(2u * i));
    for (uint k = 0u; k < 3u; k++)
        acc[0] = coopMatMulAdd(ma[k], mb[k], acc[0]);
    coopMatStore(acc[0], c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);

    MA a2[3]; MB b2[3]; MC acc1 = MC(0.0);
    for (uint i = 0u; i < 3u; i++) {
        coopMatLoad(a2[i], a, i * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(b2[i], b, i * 256u, 16, gl_CooperativeMatrixLayoutColumnMajor);
    }
    for (uint k = 0u; k < p.n; k++)
        acc1 = coopMatMulAdd(a2[k % 3u], b2[(k + 2u) % 3u], acc1);
    coopMatStore(acc1, c, 256, 16, gl_CooperativeMatrixLayoutRowMajor);

    MC acc2 = acc[1];
    for (uint k = 0u; k < 3u; k++) {
        if (k == p.n)
            continue;
        MA x; MB y;
        coopMatLoad(x, a, k * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(y, b, k * 256u, 16, gl_CooperativeMatrixLayoutColumnMajor);
        acc2 = coopMatMulAdd(x, y, acc2);
    }
    coopMatStore(acc2, c, 512, 16, gl_CooperativeMatrixLayoutRowMajor);

    MC acc3 = MC(0.0);
    for (uint k = 0u; k < 3u; k++) {
        if (k == p.n)
            break;
        MA x; MB y;
        coopMatLoad(x, a, k * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(y, b, k * 256u, 16, gl_CooperativeMatrixLayoutColumnMajor);
        acc3 = coopMatMulAdd(x, y, acc3);
    }
    coopMatStore(acc3, c, 768, 16, gl_CooperativeMatrixLayoutRowMajor);
}
