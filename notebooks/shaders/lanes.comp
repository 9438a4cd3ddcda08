#version 460
// Which invocation holds which element: every invocation writes 100 * (its subgroup invocation
// id) + e into element e of its fragment of a 16 x 16 float32 accumulator, and the subgroup
// stores the matrix row-major into `held`. Dispatch 1 workgroup of one subgroup (32).
//   glslang -V --target-env vulkan1.3 lanes.comp -o lanes.spv
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require

layout(local_size_x = 32) in;
layout(std430, binding = 0) writeonly buffer Held { float held[]; };

void main() {
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> m;
    for (int e = 0; e < m.length(); ++e)
        m[e] = float(100 * gl_SubgroupInvocationID + e);
    coopMatStore(m, held, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
