#version 460
// Plain loads, stores and atomics of binding elements p.first .. p.first + 63 (one per
// invocation, two workgroups): past the binding's end they are out of bounds, which
// robustBufferAccess makes defined (reads give zero or values inside the buffer, writes are
// discarded or land inside it) and robustBufferAccess2 makes exact (reads zero, writes discarded,
// atomics return zero). o gets what each invocation read and what its atomic returned.
layout(local_size_x = 32) in;
layout(push_constant) uniform P { uint first; } p;
layout(set = 0, binding = 0) readonly buffer BX { uint x[]; };
layout(set = 0, binding = 1) buffer BW { uint w[]; };
layout(set = 0, binding = 2) buffer BA { uint a[]; };
layout(set = 0, binding = 3) writeonly buffer BO { uvec2 o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint k = p.first + i;
    uint got = x[k];
    w[k] = 0xA0000000u + i;
    uint old = atomicAdd(a[k], 1u);
    o[i] = uvec2(got, old);
}
