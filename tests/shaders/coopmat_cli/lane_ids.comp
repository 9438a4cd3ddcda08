#version 450
// Layout-dependent on purpose: every invocation writes its subgroup invocation id into each
// element it holds, then the matrix is stored. The result is the device's lane layout.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer O { float o[]; };
void main() {
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    for (int i = 0; i < m.length(); i++) m[i] = float(gl_SubgroupInvocationID * 100 + i);
    coopMatStore(m, o, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
