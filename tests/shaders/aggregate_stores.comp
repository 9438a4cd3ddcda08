#version 450
// Stores of whole per-invocation aggregates, which the lane groups' vector copy writes leaf by
// leaf or, where it sees every leaf stored together, as one run (jitcoop/codegen/lanevec.py,
// _interleaved_store):
// - staged: uvec4s staged into shared memory at the invocation index (addresses known to step
//   by 16 bytes), read back in reverse;
// - spread: uvec4s at index lid * num / den + shift: one run at run time where num = den, apart
//   (stride 2, or uneven at 3 / 2) where not;
// - trio: a struct of three floats (12 bytes, std430), pair: a uvec2, at the invocation index.
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint num, den, shift; } p;
layout(set = 0, binding = 0) readonly buffer A { uvec4 a[]; };
layout(set = 0, binding = 1) writeonly buffer Staged { uvec4 staged[]; };
layout(set = 0, binding = 2) writeonly buffer Spread { uvec4 spread[]; };
struct Trio { float x, y, z; };
layout(set = 0, binding = 3) writeonly buffer Trios { Trio trio[]; };
layout(set = 0, binding = 4) writeonly buffer Pairs { uvec2 pair[]; };
shared uvec4 sa[128];

void main() {
    uint lid = gl_LocalInvocationIndex, wg = gl_WorkGroupID.x;
    for (uint e = lid; e < 128; e += 64)
        sa[e] = a[wg * 128 + e] ^ uvec4(e, 2 * e, 3 * e, 4 * e);
    barrier();
    staged[wg * 128 + lid] = sa[127 - lid];
    staged[wg * 128 + 64 + lid] = sa[63 - lid];
    uvec4 v = a[wg * 128 + lid];
    spread[wg * 256 + lid * p.num / p.den + p.shift] = v + uvec4(1, 2, 3, 4);
    trio[wg * 64 + lid] = Trio(float(v.x & 0xFFFFu), float(v.y & 0xFFFFu), float(v.z & 0xFFFFu));
    pair[wg * 64 + lid] = v.wz;
}
