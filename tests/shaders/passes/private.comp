#version 450
// Matrices and tile coordinates as global (Private) variables, used by helper functions without
// parameters, for analysis/private.py (Private variables no callback reaches made locals) and
// the passes after it; tests/test_passes.py checks them.
//   acc[i][j] = (i + 2j) + alpha * 0 + sum over k < 2 of A[i][k] x B[k][j]   (alpha a global
//   with an initializer, 2.0, read after the helpers ran)
//   keep = acc after the first K step (a local copy of the global array)
//   out: acc[0][0], acc[0][1], acc[1][0], acc[1][1], each times alpha; keep[1][1]
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
MC acc[2][2];
MA ma[2];
MB mb[2];
uint kstep;
float alpha = 2.0;

void load_tiles() {
    for (uint i = 0u; i < 2u; i++)
        coopMatLoad(ma[i], a, (2u * i + kstep) * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
    for (uint j = 0u; j < 2u; j++)
        coopMatLoad(mb[j], b, (2u * kstep + j) * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
}

void mma() {
    for (uint i = 0u; i < 2u; i++)
        for (uint j = 0u; j < 2u; j++)
            acc[i][j] = coopMatMulAdd(ma[i], mb[j], acc[i][j]);
}

void main() {
    for (uint i = 0u; i < 2u; i++)
        for (uint j = 0u; j < 2u; j++)
            acc[i][j] = MC(float(i + 2u * j));
    MC keep[2][2];
    for (kstep = 0u; kstep < 2u; kstep++) {
        load_tiles();
        mma();
        if (kstep == 0u)
            keep = acc;
    }
    coopMatStore(keep[1][1], c, 4u * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
    for (uint i = 0u; i < 2u; i++)
        for (uint j = 0u; j < 2u; j++) {
            MC r = acc[i][j] * alpha;
            coopMatStore(r, c, (2u * i + j) * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
        }
}
