#version 450
// A-use conversions between 8-bit and 16-bit components: on the nvidia profile (and under
// shuffled) int8 and float16 A matrices have different lane layouts, so these are relayouts.
//   q (int8 16 x 32, row major) -> float16 -> oh;  float16 -> int8 (toward zero) -> o8
//   u (uint8) -> float16 -> ou
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer BQ { int8_t q[]; };
layout(set = 0, binding = 1) writeonly buffer OH { float16_t oh[]; };
layout(set = 0, binding = 2) writeonly buffer O8 { int8_t o8[]; };
layout(set = 0, binding = 3) readonly buffer BU { uint8_t u[]; };
layout(set = 0, binding = 4) writeonly buffer OU { float16_t ou[]; };
#define MAT(T) coopmat<T, gl_ScopeSubgroup, 16, 32, gl_MatrixUseA>
void main() {
    MAT(int8_t) a;
    coopMatLoad(a, q, 0, 32, gl_CooperativeMatrixLayoutRowMajor);
    MAT(float16_t) h = MAT(float16_t)(a);
    coopMatStore(h, oh, 0, 32, gl_CooperativeMatrixLayoutRowMajor);
    h = h * float16_t(0.5);
    coopMatStore(MAT(int8_t)(h), o8, 0, 32, gl_CooperativeMatrixLayoutRowMajor);
    MAT(uint8_t) b;
    coopMatLoad(b, u, 0, 32, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(MAT(float16_t)(b), ou, 0, 32, gl_CooperativeMatrixLayoutRowMajor);
}
