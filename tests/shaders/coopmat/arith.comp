#version 450
// Elementwise arithmetic on N x N accumulator matrices (N = 16 unless -DN=...): float32 and
// int32/uint32. o[k*N*N ..] = result k, row major: see the test for the list. Built twice: PART=1 the float
// part (arith_f.spv), PART=2 the integer part (arith_i.spv), to keep each kernel small.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#ifndef N
#define N 16
#endif
layout(local_size_x = 32) in;
layout(push_constant) uniform P { float s; int si; } p;
layout(set = 0, binding = 0) readonly buffer BF { float f[]; };
layout(set = 0, binding = 1) readonly buffer BI { int iv[]; };
layout(set = 0, binding = 2) writeonly buffer BO { float o[]; };
layout(set = 0, binding = 3) writeonly buffer BOI { int oi[]; };
layout(set = 0, binding = 4) writeonly buffer BOU { uint ou[]; };
layout(set = 0, binding = 5) readonly buffer BU { uint uv[]; };
#define F coopmat<float, gl_ScopeSubgroup, N, N, gl_MatrixUseAccumulator>
#define I coopmat<int, gl_ScopeSubgroup, N, N, gl_MatrixUseAccumulator>
#define U coopmat<uint, gl_ScopeSubgroup, N, N, gl_MatrixUseAccumulator>
#define ST(m, buf, k) coopMatStore(m, buf, (k) * N * N, N, gl_CooperativeMatrixLayoutRowMajor)
void main() {
#if PART == 1
    F a, b;
    coopMatLoad(a, f, 0, N, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b, f, N * N, N, gl_CooperativeMatrixLayoutRowMajor);
    ST(a + b, o, 0); ST(a - b, o, 1); ST(a * b, o, 2); ST(a / b, o, 3); ST(-a, o, 4);
    ST(a * p.s, o, 5); ST(F(3.5), o, 6);
#else
    I c, d;
    coopMatLoad(c, iv, 0, N, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(d, iv, N * N, N, gl_CooperativeMatrixLayoutRowMajor);
    ST(c + d, oi, 0); ST(c - d, oi, 1); ST(c * d, oi, 2); ST(c / d, oi, 3); ST(-c, oi, 4);
    ST(c * I(p.si), oi, 5); ST(I(-7), oi, 6);
    U u, v;
    coopMatLoad(u, uv, 0, N, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(v, uv, N * N, N, gl_CooperativeMatrixLayoutRowMajor);
    ST(u / v, ou, 0); ST(u * v, ou, 1); ST(u - v, ou, 2);
#endif
}
