#version 450
// Counted loops. The generator leaves the cancel check out of a loop that provably ends within
// a few iterations (analysis/loops.py): a staging loop with a constant bound (stepping by the
// workgroup size; as glslang writes it, the header branches to a block that tests), a signed loop with
// constant start and bound, a loop to an inclusive bound. It must keep it where the count
// depends on the dispatch: a bound from the push constants, a signed start from them (from
// INT_MIN: 2^31 iterations), and a constant bound the step can jump over (the iv wraps).
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint n; int start; uint wrapfrom; } p;
layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer O { uint o[]; };
shared uint sh[256];
void main() {
    uint lid = gl_LocalInvocationID.x;
    uint base = gl_WorkGroupID.x * 256u;
    for (uint e = lid; e < 256u; e += gl_WorkGroupSize.x)   // bounded: 4 iterations (glslang folds the 64)
        sh[e] = x[base + e] * 3u + base;
    barrier();
    uint acc = 0u;
    for (int i = 0; i < 8; i++)                             // bounded: 8 iterations
        acc += sh[(lid + uint(i) * 37u) & 255u];
    for (uint i = lid; i <= 200u; i += 64u)                 // bounded: 4 iterations
        acc = acc * 5u + sh[255u - i];
    uint h = 1u;
    for (uint i = lid; i < p.n; i += 3u)                    // runtime bound
        h = h * 31u + i;
    for (int i = p.start; i < 4; i++)                       // runtime signed start
        h = h * 17u + uint(i);
    for (uint i = p.wrapfrom + (lid & 15u); i < 0xFFFFFFF0u; i += 48u)  // 48 can jump the bound
        h = h * 13u + i;
    o[gl_GlobalInvocationID.x] = acc ^ h;
}
