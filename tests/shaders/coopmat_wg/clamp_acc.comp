#version 450
// A float16 accumulator kept in a Function variable over a K loop of workgroup-scope MulAdds and
// clamped element by element after each (as ggml's matrix products clamp theirs): the variable
// is read and written whole by the MulAdds and one component at a time, at an index that is not
// a constant, by the clamp. Push constant `bad`, when not 0, writes component `bad` once more
// after the loop (past the fragment's end: an error).
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
const uint M = 64, N = 64, K = 16;
layout(set = 0, binding = 0) readonly buffer BA { float16_t a[]; };   // steps x M x K
layout(set = 0, binding = 1) readonly buffer BB { float16_t b[]; };   // steps x K x N
layout(set = 0, binding = 2) writeonly buffer BC { float16_t c[]; };  // M x N
layout(push_constant) uniform P { uint steps; float lim; uint bad; };
void main() {
    coopmat<float16_t, gl_ScopeWorkgroup, M, N, gl_MatrixUseAccumulator> acc =
        coopmat<float16_t, gl_ScopeWorkgroup, M, N, gl_MatrixUseAccumulator>(0.0);
    for (uint s = 0; s < steps; s++) {
        coopmat<float16_t, gl_ScopeWorkgroup, M, K, gl_MatrixUseA> ma;
        coopmat<float16_t, gl_ScopeWorkgroup, K, N, gl_MatrixUseB> mb;
        coopMatLoad(ma, a, s * M * K, K, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(mb, b, s * K * N, N, gl_CooperativeMatrixLayoutRowMajor);
        acc = coopMatMulAdd(ma, mb, acc);
        for (uint i = 0; i < acc.length(); i++) {
            acc[i] = clamp(acc[i], float16_t(-lim), float16_t(lim));
        }
    }
    if (bad != 0) {
        acc[bad] = float16_t(1.0);
    }
    coopMatStore(acc, c, 0, N, gl_CooperativeMatrixLayoutRowMajor);
}
