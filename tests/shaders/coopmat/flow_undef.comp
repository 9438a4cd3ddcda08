#version 450
// A matrix Function variable read on a path where it was never written (GLSL: `MT m; if (c)
// m = X;`): m is undefined when p.sel != 1, X when p.sel == 1.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(push_constant) uniform P { uint sel; } p;
layout(set = 0, binding = 0) readonly buffer BX { float16_t x[]; };
layout(set = 0, binding = 1) writeonly buffer BO { float16_t o[]; };
#define MT coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
void main() {
    MT X, m;
    coopMatLoad(X, x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    if (p.sel == 1) m = X;
    coopMatStore(m, o, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
