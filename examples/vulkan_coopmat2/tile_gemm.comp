#version 460
// C = A x B with VK_NV_cooperative_matrix2 tensor addressing: one subgroup per 16 x 16 tile of C.
// A (M x K) and B (K x N) are float16, C is float32, all row major and tightly packed; M, N and K
// are specialization constants 0, 1 and 2. The tensor layouts know each matrix's dimensions, so
// a tile is a slice of one, and the parts of edge tiles outside a matrix read as zero (Constant
// clamp) or are not stored.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(constant_id = 0) const uint M = 64;
layout(constant_id = 1) const uint N = 64;
layout(constant_id = 2) const uint K = 64;
layout(std430, set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(std430, set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(std430, set = 0, binding = 2) writeonly buffer BC { float c[]; };
void main() {
    uint row = gl_WorkGroupID.y * 16, col = gl_WorkGroupID.x * 16;
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> la =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lb =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lc =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    la = setTensorLayoutDimensionNV(la, M, K);
    lb = setTensorLayoutDimensionNV(lb, K, N);
    lc = setTensorLayoutDimensionNV(lc, M, N);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    for (uint k = 0; k < K; k += 16) {
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ma;
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
        coopMatLoadTensorNV(ma, a, 0, sliceTensorLayoutNV(la, row, 16, k, 16));
        coopMatLoadTensorNV(mb, b, 0, sliceTensorLayoutNV(lb, k, 16, col, 16));
        acc = coopMatMulAdd(ma, mb, acc);
    }
    coopMatStoreTensorNV(acc, c, 0, sliceTensorLayoutNV(lc, row, 16, col, 16));
}
