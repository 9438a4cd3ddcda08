#version 450
// Workgroup-scope matrices: every invocation writes 1024 * gl_LocalInvocationIndex + e into
// its elements of an R x C float32 accumulator (the lane map, as the oracle measured it), and
// D = A x B + C with workgroup-scope R x K, K x C float16 A, B and float32 C (row major, tight).
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 10) in;
layout(constant_id = 0) const uint R = 64;
layout(constant_id = 1) const uint C = 64;
layout(constant_id = 2) const uint K = 64;
layout(set = 0, binding = 0) writeonly buffer BO { float o[]; };
layout(set = 0, binding = 1) readonly buffer BA { float16_t a[]; };
layout(set = 0, binding = 2) readonly buffer BB { float16_t b[]; };
layout(set = 0, binding = 3) readonly buffer BC { float c[]; };
layout(set = 0, binding = 4) writeonly buffer BD { float d[]; };
layout(set = 0, binding = 5) writeonly buffer BL { uint len[]; };
void main() {
    coopmat<float, gl_ScopeWorkgroup, R, C, gl_MatrixUseAccumulator> m;
    for (int i = 0; i < m.length(); ++i) m[i] = float(1024 * gl_LocalInvocationIndex + i);
    coopMatStore(m, o, 0, C, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float16_t, gl_ScopeWorkgroup, R, K, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeWorkgroup, K, C, gl_MatrixUseB> mb;
    coopMatLoad(ma, a, 0, K, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, b, 0, C, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(m, c, 0, C, gl_CooperativeMatrixLayoutRowMajor);
    m = coopMatMulAdd(ma, mb, m);
    coopMatStore(m, d, 0, C, gl_CooperativeMatrixLayoutRowMajor);
    len[gl_LocalInvocationIndex * 3 + 0] = ma.length();
    len[gl_LocalInvocationIndex * 3 + 1] = mb.length();
    len[gl_LocalInvocationIndex * 3 + 2] = m.length();
}
