#version 450
// Branches on the invocation index around stores only, which the lane groups run in vector code
// with the stores of the invocations that do not take them masked off
// (jitcoop/codegen/lanevec.py, _LaneGroups._masked_branches):
// - a loop whose every step reduces over the subgroup and has the subgroup's first invocation
//   store the sum (one address for the group: the last taking invocation's value), where the
//   push constant `rows` can leave the last workgroup's second subgroup without room;
// - a store by every third invocation to its own element (consecutive addresses: a masked
//   vector store);
// - a store by the invocations whose index has bits 0 and 2 as 1 and 0 to an element a table
//   read before the branch picks (any address: a masked scatter).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint steps; } p;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };      // [workgroup][step][invocation]
layout(set = 0, binding = 1) writeonly buffer S { float sums[]; };  // [workgroup][subgroup][step]
layout(set = 0, binding = 2) writeonly buffer E { uint every3[]; }; // [workgroup][invocation]
layout(set = 0, binding = 3) readonly buffer Q { uint perm[]; };    // [invocation]
layout(set = 0, binding = 4) writeonly buffer K { uint picked[]; }; // [workgroup][invocation]

void main() {
    uint wg = gl_WorkGroupID.x;
    uint lid = gl_LocalInvocationID.x;
    float acc = 0.0;
    for (uint t = 0; t < p.steps; t++) {
        acc = acc * 0.5 + x[(wg * p.steps + t) * 64 + lid];
        float s = subgroupAdd(acc);
        if (gl_SubgroupInvocationID == 0)
            sums[(wg * gl_NumSubgroups + gl_SubgroupID) * p.steps + t] = s;
    }
    if (lid % 3 == 0)
        every3[wg * 64 + lid] = floatBitsToUint(acc);
    uint to = perm[lid];
    if ((lid & 5) == 1)
        picked[wg * 64 + to] = lid;
}
