#version 450
// plain_16 in 8-bit floats: C (M x N, f32) = A (M x K, E4M3) x B (K x N, E4M3), row-major, loaded
// straight from the storage buffers; acc[2][2] of 16 x 16 from ma[2] (16 x 32) and mb[2] (32 x 16)
// in loops, K steps of 32.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_float_e4m3 : require
layout(local_size_x_id = 0) in;
layout(push_constant) uniform P { uint M, N, K; } p;
layout(set = 0, binding = 0) readonly buffer BA { floate4m3_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { floate4m3_t b[]; };
layout(set = 0, binding = 2) writeonly buffer BC { float c[]; };
void main() {
    uint row0 = gl_WorkGroupID.y * 32, col0 = gl_WorkGroupID.x * 32;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[2][2];
    for (uint i = 0; i < 2; i++)
        for (uint j = 0; j < 2; j++)
            acc[i][j] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    for (uint k = 0; k < p.K; k += 32) {
        coopmat<floate4m3_t, gl_ScopeSubgroup, 16, 32, gl_MatrixUseA> ma[2];
        coopmat<floate4m3_t, gl_ScopeSubgroup, 32, 16, gl_MatrixUseB> mb[2];
        for (uint i = 0; i < 2; i++)
            coopMatLoad(ma[i], a, (row0 + i * 16) * p.K + k, p.K, gl_CooperativeMatrixLayoutRowMajor);
        for (uint j = 0; j < 2; j++)
            coopMatLoad(mb[j], b, k * p.N + col0 + j * 16, p.N, gl_CooperativeMatrixLayoutRowMajor);
        for (uint i = 0; i < 2; i++)
            for (uint j = 0; j < 2; j++)
                acc[i][j] = coopMatMulAdd(ma[i], mb[j], acc[i][j]);
    }
    for (uint i = 0; i < 2; i++)
        for (uint j = 0; j < 2; j++)
            coopMatStore(acc[i][j], c, (row0 + i * 16) * p.N + col0 + j * 16, p.N,
                         gl_CooperativeMatrixLayoutRowMajor);
}
