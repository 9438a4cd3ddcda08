#version 460
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_ballot : enable
#extension GL_KHR_shader_subgroup_vote : enable
#extension GL_KHR_shader_subgroup_shuffle : enable
#extension GL_KHR_shader_subgroup_shuffle_relative : enable
#extension GL_KHR_shader_subgroup_quad : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_EXT_shader_subgroup_extended_types_int64 : enable
// Shuffles, broadcasts, quad operations, ballots and votes with every invocation active.
// Workgroups of 96 invocations (at subgroup size 64 the second subgroup has 32). Invocation g
// writes result k to o[k * NT + g] as uint bits; 64-bit results to w[k * NT + g]. Source lanes are
// always lanes of the subgroup that exist; mask bits past gl_SubgroupSize are cleared.
layout(local_size_x = 96) in;
layout(std430, binding = 0) readonly buffer U { uint u[]; };
layout(std430, binding = 1) readonly buffer D { double d[]; };
layout(std430, binding = 2) writeonly buffer O { uint o[]; };
layout(std430, binding = 3) writeonly buffer W { uint64_t w[]; };

void main() {
    uint NT = gl_NumWorkGroups.x * 96u;
    uint g = gl_GlobalInvocationID.x;
    uint x = u[g];
    uint id = gl_SubgroupInvocationID;
    uint sz = gl_SubgroupSize;
    uint n = min(sz, 96u - gl_SubgroupID * sz);                  // invocations in this subgroup
    uint lowmask = sz >= 32u ? 0xFFFFFFFFu : (1u << sz) - 1u;   // mask bits of real lanes
    uint himask = sz >= 64u ? 0xFFFFFFFFu : 0u;
    uint up = subgroupShuffleUp(x, 3u);
    uint down = subgroupShuffleDown(x, 5u);
    // 0-11: shuffles and broadcasts
    o[0u * NT + g] = subgroupShuffle(x, (x >> 8) % n);          // data-dependent source lane
    o[1u * NT + g] = subgroupShuffle(x, n - 1u - id);            // reverse
    o[2u * NT + g] = subgroupShuffleXor(x, 1u);
    o[3u * NT + g] = subgroupShuffleXor(x, n - 1u);
    o[4u * NT + g] = id >= 3u ? up : 7u;                           // defined lanes only
    o[5u * NT + g] = id + 5u < n ? down : 7u;
    o[6u * NT + g] = subgroupBroadcast(x, 3u);
    o[7u * NT + g] = subgroupBroadcastFirst(x);
    o[8u * NT + g] = floatBitsToUint(subgroupShuffle(uintBitsToFloat(x), (id + 1u) % n));
    ivec3 v3 = subgroupShuffleXor(ivec3(x, -int(x), id), 2u);
    o[9u * NT + g] = uint(v3.x);
    o[10u * NT + g] = uint(v3.y + v3.z);
    o[11u * NT + g] = subgroupShuffle((x & 1u) != 0u, id ^ 5u) ? 1u : 0u;
    // 12-17: quads
    uvec2 qb = subgroupQuadBroadcast(uvec2(x, id), 2u);
    o[12u * NT + g] = qb.x;
    o[13u * NT + g] = qb.y;
    o[14u * NT + g] = subgroupQuadSwapHorizontal(x);
    o[15u * NT + g] = subgroupQuadSwapVertical(x);
    vec4 q = subgroupQuadSwapDiagonal(vec4(uintBitsToFloat(x & 0x3fffffffu), 1.5, float(id), -2.0));
    o[16u * NT + g] = floatBitsToUint(q.x);
    o[17u * NT + g] = floatBitsToUint(q.z);
    // 18-33: ballots and votes
    uvec4 b = subgroupBallot((x & 1u) != 0u);
    o[18u * NT + g] = b.x;
    o[19u * NT + g] = b.y;
    o[20u * NT + g] = b.z | b.w;
    o[21u * NT + g] = subgroupBallotBitCount(b);
    o[22u * NT + g] = subgroupBallotInclusiveBitCount(b);
    o[23u * NT + g] = subgroupBallotExclusiveBitCount(b);
    o[24u * NT + g] = subgroupBallotFindLSB(b);
    o[25u * NT + g] = subgroupBallotFindMSB(b);
    o[26u * NT + g] = subgroupBallotBitExtract(b, (id + 1u) % sz) ? 1u : 0u;
    o[27u * NT + g] = subgroupInverseBallot(b) ? 1u : 0u;
    o[28u * NT + g] = subgroupElect() ? 1u : 0u;
    o[29u * NT + g] = subgroupAll(x != 12345u) ? 1u : 0u;
    o[30u * NT + g] = subgroupAll(x > 0x20000000u) ? 1u : 0u;
    o[31u * NT + g] = subgroupAny(x == 12345u) ? 1u : 0u;
    o[32u * NT + g] = subgroupAllEqual(x >> 30) ? 1u : 0u;
    o[33u * NT + g] = subgroupAllEqual(sz) ? 1u : 0u;
    // 34-41: built-in variables; masks as their x and y words
    o[34u * NT + g] = gl_SubgroupSize;
    o[35u * NT + g] = gl_SubgroupInvocationID;
    o[36u * NT + g] = gl_SubgroupID;
    o[37u * NT + g] = gl_NumSubgroups;
    o[38u * NT + g] = gl_SubgroupEqMask.x ^ gl_SubgroupLtMask.y;
    o[39u * NT + g] = gl_SubgroupLtMask.x;
    o[40u * NT + g] = gl_SubgroupGeMask.y & himask;
    o[41u * NT + g] = gl_SubgroupLeMask.x + (gl_SubgroupGtMask.x & lowmask);
    // 64-bit shuffles
    w[0u * NT + g] = doubleBitsToUint64(subgroupShuffle(d[g], (id * 7u + 1u) % n));
    w[1u * NT + g] = subgroupShuffleXor(uint64_t(x) | (uint64_t(g) << 40), 4u);
    w[2u * NT + g] = subgroupBroadcastFirst(uint64_t(x) * 0x100000001ul);
}
