#version 450
// A subgroup GEMM keeping its accumulators in a struct (`struct Tile { ACC c[2][2]; }`): one
// subgroup per workgroup (spec constant 0: the subgroup size), a 32 x 32 tile of 16 x 16 x 16
// MulAdds, A and B row-major loaded straight from the storage buffers.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
layout(push_constant) uniform P { uint M, N, K; } p;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer BC { float c[]; };
#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
struct Tile { ACC c[2][2]; };
void main() {
    uint row0 = gl_WorkGroupID.y * 32, col0 = gl_WorkGroupID.x * 32;
    Tile t;
    for (uint i = 0; i < 2; i++) for (uint j = 0; j < 2; j++) t.c[i][j] = ACC(0.0);
    for (uint k = 0; k < p.K; k += 16) {
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma[2];
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb[2];
        for (uint i = 0; i < 2; i++)
            coopMatLoad(ma[i], a, (row0 + i * 16) * p.K + k, p.K, gl_CooperativeMatrixLayoutRowMajor);
        for (uint j = 0; j < 2; j++)
            coopMatLoad(mb[j], b, k * p.N + col0 + j * 16, p.N, gl_CooperativeMatrixLayoutRowMajor);
        for (uint i = 0; i < 2; i++) for (uint j = 0; j < 2; j++)
            t.c[i][j] = coopMatMulAdd(ma[i], mb[j], t.c[i][j]);
    }
    for (uint i = 0; i < 2; i++) for (uint j = 0; j < 2; j++)
        coopMatStore(t.c[i][j], c, (row0 + i * 16) * p.N + col0 + j * 16, p.N, gl_CooperativeMatrixLayoutRowMajor);
}
