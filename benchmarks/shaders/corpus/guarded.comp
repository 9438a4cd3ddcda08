#version 450
// A GEMM that guards every tile against the matrix edges, as library code does for sizes that
// are not tile multiples: acc[2][2] of 16x16, each load, MulAdd and store under an if on the
// tile's row and column; the K loop's trip count computed up front; C column-major (stored N x M).
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
layout(push_constant) uniform P { uint M, N, K; } p;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer BC { float c[]; };
void main() {
    uint row0 = gl_WorkGroupID.y * 32, col0 = gl_WorkGroupID.x * 32;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[2][2];
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            acc[i][j] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    uint steps = (p.K + 15) / 16;
    for (uint s = 0; s < steps; ++s) {
        uint k = s * 16;
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma[2];
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb[2];
        for (int i = 0; i < 2; ++i)
            if (row0 + i * 16 < p.M)
                coopMatLoad(ma[i], a, (row0 + i * 16) * p.K + k, p.K, gl_CooperativeMatrixLayoutRowMajor);
        for (int j = 0; j < 2; ++j)
            if (col0 + j * 16 < p.N)
                coopMatLoad(mb[j], b, k * p.N + col0 + j * 16, p.N, gl_CooperativeMatrixLayoutRowMajor);
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j)
                if (row0 + i * 16 < p.M && col0 + j * 16 < p.N)
                    acc[i][j] = coopMatMulAdd(ma[i], mb[j], acc[i][j]);
    }
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j)
            if (row0 + i * 16 < p.M && col0 + j * 16 < p.N)
                coopMatStore(acc[i][j], c, (col0 + j * 16) * p.M + row0 + i * 16, p.M,
                             gl_CooperativeMatrixLayoutColumnMajor);
}
