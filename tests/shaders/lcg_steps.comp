#version 450
// Each invocation steps a linear congruential generator `steps` times from its own index: a
// dispatch whose length the push constant sets, for the compile tiers' tests (a long first
// dispatch at the fast tier runs again on the optimized code: tests/test_tiers.py).
layout(local_size_x = 64) in;
layout(push_constant) uniform P { uint steps; } p;
layout(set = 0, binding = 0) writeonly buffer O { uint o[]; };
void main() {
    uint x = gl_GlobalInvocationID.x;
    for (uint k = 0u; k < p.steps; k++)
        x = x * 1664525u + 1013904223u;
    o[gl_GlobalInvocationID.x] = x;
}
