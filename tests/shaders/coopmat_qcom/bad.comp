#version 450
// Misuse at run time: p.mode 1 builds a matrix in divergent control flow (only invocations below
// p.n reach OpCompositeConstructCoopMatQCOM), p.mode 2 extracts one so; p.mode 0 is fine.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_QCOM_cooperative_matrix_conversion : require
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint mode; uint n; } p;
struct V8 { float v[8]; };
layout(set = 0, binding = 0) buffer BX { V8 x[]; };
void main() {
    uint g = gl_GlobalInvocationID.x;
    coopmat<float, gl_ScopeSubgroup, 64, 8, gl_MatrixUseA> m;
    if (p.mode != 1 || gl_SubgroupInvocationID < p.n)
        vectorToCoopmatQCOM(x[g].v, m);
    if (p.mode != 2 || gl_SubgroupInvocationID < p.n)
        coopmatToVectorQCOM(m, x[g].v);
}
