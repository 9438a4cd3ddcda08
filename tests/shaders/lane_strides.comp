#version 450
// Index arithmetic the lane groups' stride analysis (jitcoop/codegen/lane_strides.py) reads:
// - wide: 32-bit indices widened to 64 bits, zext and sext, from a base the push constants set
//   anywhere (near 2^32 and 2^31 the group's values wrap between its first and last invocation);
// - staged: a tile staged through shared memory by invocation index, divided and reduced by a
//   row width W (a multiple of 16: the group stays in one row; 40: it may not), read back
//   column by column;
// - count: two per-invocation counters that cross a barrier in a loop, the same in every
//   invocation where the branches on the invocation index are not taken (mode 0) and one of
//   them different where one is (mode 1: the first, mode 2: the second), reloaded together
//   after the barrier (one guard for both: a group that takes the one that parts ways as
//   uniform writes wrong counts);
// - flags: a branch on a 32-bit index against a bound, the group's first and last values on
//   one side of it while a wrap puts some of the others on the other.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint W = 48;
layout(push_constant) uniform P { uint base, sbase, n, mode, off, cut; } p;
layout(set = 0, binding = 0) writeonly buffer Wide { uint64_t wide[]; };
layout(set = 0, binding = 1) readonly buffer Src { uint src[]; };
layout(set = 0, binding = 2) writeonly buffer Staged { uint staged[]; };
layout(set = 0, binding = 3) writeonly buffer Count { uint count[]; };
layout(set = 0, binding = 4) writeonly buffer Flags { uint flags[]; };
shared uint tile[4 * W];

void main() {
    uint lid = gl_LocalInvocationIndex;
    uint g = gl_WorkGroupID.x * 64 + lid;
    if (p.base + lid < p.cut)
        flags[g] = 1;
    else
        flags[g] = 2;
    wide[2 * g] = uint64_t(p.base + lid);
    wide[2 * g + 1] = uint64_t(int64_t(int(p.sbase + lid)));

    uint k = 0, k2 = 0;
    for (uint r = 0; r < p.n; r++) {
        for (uint e = lid; e < 4 * W; e += 64)
            tile[e] = src[(r + e / W) * (W + p.off) + e % W];
        barrier();
        uint acc = 0;
        for (uint c = 0; c < 4; c++)
            acc = acc * 31 + tile[c * W + lid % W];
        staged[(r * 64 + lid) + gl_WorkGroupID.x * 64 * p.n] = acc;
        if (p.mode == 1 && lid % 3 == 0)
            k += 1;
        else
            k += 2;
        if (p.mode == 2 && lid % 5 == 1)
            k2 += 3;
        else
            k2 += 1;
        barrier();
    }
    count[g] = k | (k2 << 16);
}
