#version 450
// A struct of two cooperative matrices in Function memory: o = st.b after st = {Y, X}, i.e. X.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer BX { float16_t x[]; };
layout(set = 0, binding = 1) writeonly buffer BO { float16_t o[]; };
#define MT coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
struct S { MT a; MT b; };
void main() {
    MT X, Y;
    coopMatLoad(X, x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(Y, x, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    S st;
    st.a = Y;
    st.b = X;
    coopMatStore(st.b, o, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
