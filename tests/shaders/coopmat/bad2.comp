#version 450
// Misuse that only the lane layout or the scope makes collective (local size 64, 2 subgroups):
//   1: a float32 -> float16 conversion reached by lanes 0..15 of each subgroup only (under the
//      shuffled profile the two types have different layouts: the conversion is a relayout)
//   2: a workgroup-scope load reached by the first subgroup only
//   0: both done by everyone: o = float16(x), w = x
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint mode; } p;
layout(set = 0, binding = 0) readonly buffer BX { float x[]; };
layout(set = 0, binding = 1) buffer BO { float16_t o[]; };
layout(set = 0, binding = 2) buffer BW { float w[]; };
void main() {
    uint lane = gl_SubgroupInvocationID;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> a;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> h = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    coopMatLoad(a, x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    if (p.mode != 1 || lane < 16) h = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(a);
    coopMatStore(h, o, 256 * gl_SubgroupID, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseAccumulator> g = coopmat<float, gl_ScopeWorkgroup, 16, 16, gl_MatrixUseAccumulator>(1.0);
    if (p.mode != 2 || gl_SubgroupID == 0) coopMatLoad(g, x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(g, w, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
