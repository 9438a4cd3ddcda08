#version 450
// Conversions of 16 x 16 accumulator matrices (component-wise on the matrix; under the shuffled
// profile every type has its own lane layout, so each goes through a relayout):
//   f (float32) -> float16, bfloat16, E4M3, E5M2 (nearest even), E4M3/E5M2 saturated,
//                  int32 (toward zero), uint32 of a * a
//   i (int32)   -> int8 (wrap), uint16 (wrap), float32
//   b8 (int8)   -> int32 (sign extend), uint32 via uint8 (zero extend)
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_bfloat16 : require
#extension GL_EXT_float_e4m3 : require
#extension GL_EXT_float_e5m2 : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer BF { float f[]; };
layout(set = 0, binding = 1) readonly buffer BI { int iv[]; };
layout(set = 0, binding = 2) readonly buffer BB { int8_t b8[]; };
layout(set = 0, binding = 3) writeonly buffer OH { float16_t oh[]; };
layout(set = 0, binding = 4) writeonly buffer OBF { bfloat16_t obf[]; };
layout(set = 0, binding = 5) writeonly buffer O43 { floate4m3_t o43[]; };     // 2 results
layout(set = 0, binding = 6) writeonly buffer O52 { floate5m2_t o52[]; };     // 2 results
layout(set = 0, binding = 7) writeonly buffer OI { int oi[]; };               // 3 results
layout(set = 0, binding = 8) writeonly buffer OU { uint ou[]; };              // 2 results
layout(set = 0, binding = 9) writeonly buffer O8 { int8_t o8[]; };
layout(set = 0, binding = 10) writeonly buffer O16 { uint16_t o16[]; };
layout(set = 0, binding = 11) writeonly buffer OF { float of[]; };
#define MAT(T) coopmat<T, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define ST(m, buf, k) coopMatStore(m, buf, (k) * 256, 16, gl_CooperativeMatrixLayoutRowMajor)
void main() {
    MAT(float) a;
    coopMatLoad(a, f, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    ST(MAT(float16_t)(a), oh, 0);
    ST(MAT(bfloat16_t)(a), obf, 0);
    ST(MAT(floate4m3_t)(a), o43, 0);
    ST(MAT(floate5m2_t)(a), o52, 0);
    MAT(floate4m3_t) s43;
    saturatedConvertEXT(s43, a);
    ST(s43, o43, 1);
    MAT(floate5m2_t) s52;
    saturatedConvertEXT(s52, a);
    ST(s52, o52, 1);
    ST(MAT(int)(a), oi, 0);
    ST(MAT(uint)(a * a), ou, 0);
    MAT(int) i;
    coopMatLoad(i, iv, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    ST(MAT(int8_t)(i), o8, 0);
    ST(MAT(uint16_t)(i), o16, 0);
    ST(MAT(float)(i), of, 0);
    MAT(int8_t) c;
    coopMatLoad(c, b8, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    ST(MAT(int)(c), oi, 1);
    ST(MAT(uint)(MAT(uint8_t)(c)), ou, 1);
}
