#version 450
// A MulAdd pair whose two B operands are placed unlike each other: mb0 loaded by a KHR load
// (with exact numerics its float64 shadow is what the MulAdd reads), mb1 by a tensor load (no
// shadow): the first MulAdd computes both, one by one. R (8 x 8, f32) = C + A (8 x 8, f16) x B
// (8 x 8, f16) as two 8 x 4 tiles.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 2) buffer BC { float c[]; };
#define ROW gl_CooperativeMatrixLayoutRowMajor
void main() {
    coopmat<float, gl_ScopeSubgroup, 8, 4, gl_MatrixUseAccumulator> acc0, acc1;
    coopMatLoad(acc0, c, 0, 8, ROW);
    coopMatLoad(acc1, c, 4, 8, ROW);
    coopmat<float16_t, gl_ScopeSubgroup, 8, 8, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeSubgroup, 8, 4, gl_MatrixUseB> mb0, mb1;
    coopMatLoad(ma, a, 0, 8, ROW);
    coopMatLoad(mb0, b, 0, 8, ROW);
    tensorLayoutNV<2> t = createTensorLayoutNV(2);
    t = setTensorLayoutDimensionNV(t, 8, 8);
    coopMatLoadTensorNV(mb1, b, 0, sliceTensorLayoutNV(t, 0, 8, 4, 4));
    acc0 = coopMatMulAdd(ma, mb0, acc0);
    acc1 = coopMatMulAdd(ma, mb1, acc1);
    coopMatStore(acc0, c, 0, 8, ROW);
    coopMatStore(acc1, c, 4, 8, ROW);
}
