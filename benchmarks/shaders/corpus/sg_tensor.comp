#version 460
// C (M x N, f32) = A (M x K, f16) x B (K x N, f16) at subgroup scope with coopmat2 tensor loads:
// one subgroup per workgroup (spec constant 0: the subgroup size) computes a 32 x 32 tile as
// acc[2][2] of 16 x 16 from ma[2] and mb[2], K steps of 16, every operand a slice of a tensor
// layout (clamped to the matrix's bounds), the result stored through a tensor layout too.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
layout(push_constant) uniform P { uint M, N, K; } p;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer BC { float c[]; };
#define LAYOUT tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV>
void main() {
    uint row0 = gl_WorkGroupID.y * 32, col0 = gl_WorkGroupID.x * 32;
    LAYOUT tA = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tA = setTensorLayoutDimensionNV(tA, p.M, p.K);
    LAYOUT tB = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tB = setTensorLayoutDimensionNV(tB, p.K, p.N);
    LAYOUT tC = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tC = setTensorLayoutDimensionNV(tC, p.M, p.N);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[2][2];
    for (uint i = 0; i < 2; i++)
        for (uint j = 0; j < 2; j++)
            acc[i][j] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    for (uint k = 0; k < p.K; k += 16) {
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma[2];
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb[2];
        for (uint i = 0; i < 2; i++)
            coopMatLoadTensorNV(ma[i], a, 0, sliceTensorLayoutNV(tA, row0 + i * 16, 16, k, 16));
        for (uint j = 0; j < 2; j++)
            coopMatLoadTensorNV(mb[j], b, 0, sliceTensorLayoutNV(tB, k, 16, col0 + j * 16, 16));
        for (uint i = 0; i < 2; i++)
            for (uint j = 0; j < 2; j++)
                acc[i][j] = coopMatMulAdd(ma[i], mb[j], acc[i][j]);
    }
    for (uint i = 0; i < 2; i++)
        for (uint j = 0; j < 2; j++)
            coopMatStoreTensorNV(acc[i][j], c, 0, sliceTensorLayoutNV(tC, row0 + i * 16, 16, col0 + j * 16, 16));
}
