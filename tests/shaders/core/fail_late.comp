#version 450
// Every workgroup writes its slice of `o`; workgroups from p.fail_from on then store past the end
// of `s` (64 words), an out-of-bounds access. A dispatch of many workgroups on several threads
// fails at the first of them, and must leave both buffers as they were (tests/test_core_memory.py).
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint fail_from; } p;
layout(set = 0, binding = 0) buffer O { uint o[]; };
layout(set = 0, binding = 1) buffer S { uint s[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    o[i] = i * 2654435761u;
    if (gl_WorkGroupID.x >= p.fail_from)
        s[i] = 1u;
}
