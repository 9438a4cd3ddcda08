#version 450
// Per-lane views of a 16 x 16 float32 accumulator matrix x (row major):
//   len[lane]  = coopMatLength
//   s          = every element scaled: 2 * x + 1 (layout independent)
//   ids        = every element set to 1000 * lane + e (layout dependent: the lane layout table)
//   rt         = extract every element and insert it into a fresh matrix in reverse element
//                order, then back again (a round trip: x again)
//   dyn        = x with element p.j of every lane (a dynamic index into a Function variable)
//                set to -1 - lane (layout dependent)
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 32) in;
layout(push_constant) uniform P { uint j; } p;
layout(set = 0, binding = 0) readonly buffer BX { float x[]; };
layout(set = 0, binding = 1) writeonly buffer BL { uint len[]; };
layout(set = 0, binding = 2) writeonly buffer BS { float s[]; };
layout(set = 0, binding = 3) writeonly buffer BI { float ids[]; };
layout(set = 0, binding = 4) writeonly buffer BR { float rt[]; };
layout(set = 0, binding = 5) writeonly buffer BD { float dyn[]; };
void main() {
    uint lane = gl_SubgroupInvocationID;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m, a, b, c;
    coopMatLoad(m, x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    len[lane] = m.length();
    for (int i = 0; i < m.length(); ++i) a[i] = 2.0 * m[i] + 1.0;
    coopMatStore(a, s, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    for (int i = 0; i < a.length(); ++i) a[i] = float(1000 * lane + i);
    coopMatStore(a, ids, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    int n = m.length();
    for (int i = 0; i < n; ++i) b[n - 1 - i] = m[i];
    for (int i = 0; i < n; ++i) c[i] = b[n - 1 - i];
    coopMatStore(c, rt, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    c[p.j] = -1.0 - float(lane);
    coopMatStore(c, dyn, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
