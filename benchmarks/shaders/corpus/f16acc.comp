#version 450
// plain_16 with float16 accumulators: C (M x N, f16) = A (M x K, f16) x B (K x N, f16), every
// K step's MulAdd rounding the accumulator to float16 (as shaders that keep half the registers do).
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
layout(push_constant) uniform P { uint M, N, K; } p;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer BC { float16_t c[]; };
void main() {
    uint row0 = gl_WorkGroupID.y * 2 * T, col0 = gl_WorkGroupID.x * 2 * T;
    coopmat<float16_t, gl_ScopeSubgroup, T, T, gl_MatrixUseAccumulator> acc[2][2];
    for (uint i = 0; i < 2; i++)
        for (uint j = 0; j < 2; j++)
            acc[i][j] = coopmat<float16_t, gl_ScopeSubgroup, T, T, gl_MatrixUseAccumulator>(float16_t(0.0));
    for (uint k = 0; k < p.K; k += T) {
        coopmat<float16_t, gl_ScopeSubgroup, T, T, gl_MatrixUseA> ma[2];
        coopmat<float16_t, gl_ScopeSubgroup, T, T, gl_MatrixUseB> mb[2];
        for (uint i = 0; i < 2; i++)
            coopMatLoad(ma[i], a, (row0 + i * T) * p.K + k, p.K, gl_CooperativeMatrixLayoutRowMajor);
        for (uint j = 0; j < 2; j++)
            coopMatLoad(mb[j], b, k * p.N + col0 + j * T, p.N, gl_CooperativeMatrixLayoutRowMajor);
        for (uint i = 0; i < 2; i++)
            for (uint j = 0; j < 2; j++)
                acc[i][j] = coopMatMulAdd(ma[i], mb[j], acc[i][j]);
    }
    for (uint i = 0; i < 2; i++)
        for (uint j = 0; j < 2; j++)
            coopMatStore(acc[i][j], c, (row0 + i * T) * p.N + col0 + j * T, p.N,
                         gl_CooperativeMatrixLayoutRowMajor);
}
