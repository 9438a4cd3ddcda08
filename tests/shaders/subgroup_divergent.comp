#version 460
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
#extension GL_KHR_shader_subgroup_ballot : enable
#extension GL_KHR_shader_subgroup_vote : enable
#extension GL_KHR_shader_subgroup_shuffle : enable
#extension GL_KHR_shader_subgroup_clustered : enable
// Subgroup operations in divergent code: only the invocations that execute an operation take part.
// m = mask[g] decides the paths: bit 0 the `if`, bit 1 a nested `if`, bits 4-6 a loop trip count,
// bit 8 an early return. Invocation g writes result k to o[k * NT + g]; results of paths it does
// not take keep the caller's values.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer U { uint u[]; };
layout(std430, binding = 1) readonly buffer M { uint mask[]; };
layout(std430, binding = 2) buffer O { uint o[]; };

void main() {
    uint NT = gl_NumWorkGroups.x * 64u;
    uint g = gl_GlobalInvocationID.x;
    uint x = u[g];
    uint m = mask[g];
    uint id = gl_SubgroupInvocationID;
    if ((m & 1u) != 0u) {
        o[0u * NT + g] = subgroupAdd(x);
        o[1u * NT + g] = subgroupInclusiveAdd(x);
        o[2u * NT + g] = subgroupExclusiveMax(x);
        o[3u * NT + g] = subgroupMin(x);
        o[4u * NT + g] = subgroupInclusiveXor(x);
        uvec4 b = subgroupBallot(true);
        o[5u * NT + g] = b.x;
        o[6u * NT + g] = b.y;
        o[7u * NT + g] = subgroupBallotBitCount(b);
        o[8u * NT + g] = subgroupElect() ? 1u : 0u;
        o[9u * NT + g] = subgroupBroadcastFirst(x);
        o[10u * NT + g] = subgroupAll(x >= 1000u) ? 1u : 0u;
        o[11u * NT + g] = subgroupAny((x & 15u) == 0u) ? 1u : 0u;
        o[12u * NT + g] = subgroupAllEqual(x >> 12) ? 1u : 0u;
        o[13u * NT + g] = subgroupShuffle(x, subgroupBallotFindMSB(b));   // the last active lane
        o[14u * NT + g] = subgroupClusteredAdd(x, 4u);
        o[15u * NT + g] = subgroupBallotExclusiveBitCount(subgroupBallot((x & 1u) != 0u));
        if ((m & 2u) != 0u) {
            o[16u * NT + g] = subgroupMax(x);
            o[17u * NT + g] = subgroupExclusiveAdd(1u);
        }
    } else {
        o[18u * NT + g] = subgroupAdd(x);
        o[19u * NT + g] = subgroupElect() ? 1u : 0u;
    }
    // a loop with a per-invocation trip count: each iteration's active set is smaller
    uint acc = 0u, seen = 0u;
    for (uint i = 0u; i < ((m >> 4) & 7u); i++) {
        acc += subgroupAdd(x + i);
        seen = seen * 3u + subgroupBallotBitCount(subgroupBallot(true));
    }
    o[20u * NT + g] = acc;
    o[21u * NT + g] = seen;
    // a loop left by `break` at a per-invocation iteration
    uint j = 0u, last = 0u;
    while (true) {
        last = subgroupInclusiveAdd(j + 1u);
        if (j == (x & 3u)) break;
        j++;
    }
    o[22u * NT + g] = last;
    // reconverged: every invocation of the subgroup takes part again
    o[23u * NT + g] = subgroupAdd(1u);
    if ((m & 256u) != 0u) return;
    o[24u * NT + g] = subgroupAdd(1u);
    o[25u * NT + g] = subgroupExclusiveAdd(x);
}
