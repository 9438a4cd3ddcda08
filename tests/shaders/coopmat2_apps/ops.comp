#version 450
// Reductions (row max, column sum, whole sum, 2x2 sum), a per-element op with a scalar and a
// matrix operand that also counts its calls with atomics, transpose and use conversion.
#extension GL_KHR_cooperative_matrix : enable
#extension GL_NV_cooperative_matrix2 : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
layout(local_size_x = 32) in;
layout(set=0, binding=0) buffer A { float a[]; };
layout(set=0, binding=1) buffer O { float o[]; };
layout(set=0, binding=2) buffer W { uint hits[]; };
float comb(const in float x, const in float y) { return max(x, y); }
float cadd(const in float x, const in float y) { return x + y; }
float pe(const in uint32_t r, const in uint32_t c, const in float e, const in float s, const in float other) {
    atomicAdd(hits[r], 1);
    return e * s + other + float(r * 100 + c); }
void main() {
    tensorLayoutNV<2> t = createTensorLayoutNV(2);
    t = setTensorLayoutDimensionNV(t, 16, 16);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
    coopMatLoadTensorNV(m, a, 0, t);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> r1, r2, r3;
    coopmat<float, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator> r4;
    coopMatReduceNV(r1, m, gl_CooperativeMatrixReduceRowNV, comb);
    coopMatReduceNV(r2, m, gl_CooperativeMatrixReduceColumnNV, cadd);
    coopMatReduceNV(r3, m, gl_CooperativeMatrixReduceRowAndColumnNV, cadd);
    coopMatReduceNV(r4, m, gl_CooperativeMatrixReduce2x2NV, cadd);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> p;
    coopMatPerElementNV(p, m, pe, 3.0, r1);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> tr;
    coopMatTransposeNV(tr, m);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ca = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>(m);
    coopMatStoreTensorNV(r1, o, 0, t);
    coopMatStoreTensorNV(r2, o, 256, t);
    coopMatStoreTensorNV(r3, o, 512, t);
    tensorLayoutNV<2> t8 = createTensorLayoutNV(2);
    t8 = setTensorLayoutDimensionNV(t8, 8, 8);
    coopMatStoreTensorNV(r4, o, 768, t8);
    coopMatStoreTensorNV(p, o, 832, t);
    coopMatStoreTensorNV(tr, o, 1088, t);
    coopMatStoreTensorNV(ca, o, 1344, t);
}
