#version 460
// C (M x N, f16) = A x B with workgroup-scope matrices and tensor loads (coopmat2): a 128 x 128
// f32 accumulator per workgroup of 256 invocations, K steps of 32; A (M x K, f16, row-major)
// through a tensor layout, B stored N x K (each column of B contiguous) read through a
// transposed tensor view; the accumulator converted to f16 and stored through a tensor layout.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 256) in;
layout(push_constant) uniform P { uint M, N, K; } p;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t bt[]; };
layout(set = 0, binding = 2) writeonly buffer BC { float16_t c[]; };
const uint BM = 128, BN = 128, BK = 32;
#define LAYOUT tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV>
void main() {
    uint row0 = gl_WorkGroupID.y * BM, col0 = gl_WorkGroupID.x * BN;
    LAYOUT tA = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tA = setTensorLayoutDimensionNV(tA, p.M, p.K);
    LAYOUT tB = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tB = setTensorLayoutDimensionNV(tB, p.N, p.K);
    LAYOUT tC = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tC = setTensorLayoutDimensionNV(tC, p.M, p.N);
    tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);
    coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(0.0);
    for (uint k = 0; k < p.K; k += BK) {
        coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> ma;
        coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> mb;
        coopMatLoadTensorNV(ma, a, 0, sliceTensorLayoutNV(tA, row0, BM, k, BK));
        coopMatLoadTensorNV(mb, bt, 0, sliceTensorLayoutNV(tB, col0, BN, k, BK), transposed);
        acc = coopMatMulAdd(ma, mb, acc);
    }
    coopmat<float16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> out16 =
        coopmat<float16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(acc);
    coopMatStoreTensorNV(out16, c, 0, sliceTensorLayoutNV(tC, row0, BM, col0, BN));
}
