#version 450
// Accumulators in a struct beside scalar and vector members (`struct Tile { uint base; MC c[2][2];
// float scale; uvec2 step; }`), for analysis/sroa.py: every access names one whole member, so each
// becomes a variable of its own; tests/test_passes.py checks them (the same results as
// struct.comp: the scale is 1 and the step (1, 2), but only from the members).
//   t.c[i][j] = (i + 2j) + sum over k < 2 of A[i][k] x B[k][j]
//   out: t.c[0][0], t.c[0][1], t.c[1][0], t.c[1][1]
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
struct Tile { uint base; MC c[2][2]; float scale; uvec2 step; };

void main() {
    Tile t;
    t.base = 0u;
    t.scale = 1.0;
    t.step = uvec2(1u, 2u);
    for (uint i = 0u; i < 2u; i++)
        for (uint j = 0u; j < 2u; j++)
            t.c[i][j] = MC(float(i + t.step.y * j));
    for (uint k = 0u; k < 2u; k++) {
        MA ma[2]; MB mb[2];
        for (uint i = 0u; i < 2u; i++)
            coopMatLoad(ma[i], a, t.base + (2u * i + k) * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
        for (uint j = 0u; j < 2u; j++)
            coopMatLoad(mb[j], b, t.base + (2u * k + j) * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
        for (uint i = 0u; i < 2u; i++)
            for (uint j = 0u; j < 2u; j++)
                t.c[i][j] = coopMatMulAdd(ma[i], mb[j], t.c[i][j]);
        t.base += 0u * t.step.x;
    }
    for (uint i = 0u; i < 2u; i++)
        for (uint j = 0u; j < 2u; j++) {
            MC r = t.c[i][j] * t.scale;
            coopMatStore(r, c, (2u * i + j) * 256u, 16, gl_CooperativeMatrixLayoutRowMajor);
        }
}
