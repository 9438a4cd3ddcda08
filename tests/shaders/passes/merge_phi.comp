#version 450
// A matrix copied in a branch of a counted loop, for analysis/matrices.py's phi coalescing:
// unrolled, the copy is a merge phi (keep = the old keep, or acc) whose value acc is used
// after it (the next trip's MulAdd); acc and the phi must not share rows.
//   acc = 1 + A0 x B0 + A1 x B1;  keep = acc after the first trip = 1 + A0 x B0
// A tiles (16 x 16 f16, row-major) A[k] at k * 256 in a, B[k] at k * 256 in b.
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
void main() {
    MC acc = MC(1.0), keep = MC(0.0);
    for (uint k = 0u; k < 2u; k++) {
        MA x; MB y;
        coopMatLoad(x, a, k * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(y, b, k * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
        acc = coopMatMulAdd(x, y, acc);
        if (k == 0u)
            keep = acc;
    }
    coopMatStore(acc, c, 0u, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(keep, c, 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
}
