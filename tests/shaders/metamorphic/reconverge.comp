#version 460
// Subgroup operations and reconvergence after a loop with a per-invocation trip count:
// acc = the sum over this invocation's iterations t of the invocations still looping (n > t);
// after the loop every invocation takes part again. o[g] = 1000 * SubgroupSize + acc.
// reconverge_order.spv (build.sh) is this module with the loop's merge block placed before the
// loop body: valid SPIR-V (blocks still follow their dominators), the same program.
#extension GL_KHR_shader_subgroup_arithmetic : enable
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer N { uint n[]; };
layout(std430, binding = 1) writeonly buffer O { uint o[]; };
void main() {
    uint g = gl_GlobalInvocationID.x;
    uint acc = 0u;
    for (uint j = 0u; j < n[g]; j++)
        acc += subgroupAdd(1u);     // the invocations still in the loop
    o[g] = subgroupAdd(1u) * 1000u + acc;   // every invocation again: the subgroup size
}
