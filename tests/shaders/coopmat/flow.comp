#version 450
// Matrices as values: function parameters and results, arrays in Function memory,
// through if/else (phis) and a loop; layout independent, so every profile gives the same answer.
//   out = f(p.sel) where, with X, Y the two loaded 16 x 16 float16 accumulators:
//   arr = {X, Y}; m = p.sel == 0 ? twice(arr[0]) : addm(Y, arr[p.k]) (if/else);
//   then p.n times m = m - X (a loop); o2 = p.sel == 0 ? X : Y (OpSelect)
// (structs holding matrices: flow_struct.comp)
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(push_constant) uniform P { uint sel, n, k; } p;
layout(set = 0, binding = 0) readonly buffer BX { float16_t x[]; };
layout(set = 0, binding = 1) writeonly buffer BO { float16_t o[]; };
layout(set = 0, binding = 2) writeonly buffer BO2 { float16_t o2[]; };
#define MT coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
MT twice(MT v) { return v + v; }
MT addm(MT u, MT v) { return u + v; }
void main() {
    MT X, Y;
    coopMatLoad(X, x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(Y, x, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    MT arr[2];
    arr[0] = X;
    arr[1] = Y;
    MT m;
    if (p.sel == 0) m = twice(arr[0]);
    else m = addm(Y, arr[p.k]);
    for (uint i = 0; i < p.n; ++i) m = m - X;
    coopMatStore(m, o, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    MT q = (p.sel == 0) ? X : Y;
    coopMatStore(q, o2, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
