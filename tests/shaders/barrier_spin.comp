#version 460
// Two ways a dispatch fails at run time without a bad address:
//   SPIN false: a barrier reached by only some invocations of a workgroup (those with flag[g] != 0);
//               the others wait at a later barrier
//   SPIN true:  a loop that never ends while flag[0] == 0 (stopped by dispatch(timeout=...))
layout(local_size_x = 16) in;
layout(constant_id = 0) const bool SPIN = false;
layout(std430, binding = 0) buffer Flag { uint flag[]; };
shared uint s[16];

void main() {
    uint g = gl_GlobalInvocationID.x;
    uint l = gl_LocalInvocationID.x;
    flag[g] += 10u;
    if (SPIN) {
        uint n = 0u;
        while (flag[0] == 10u) {
            n++;
        }
        flag[g] = n;
    } else {
        if (flag[g] != 10u) {
            s[l] = g;
            barrier();
            flag[g] = s[(l + 1u) % 16u];
        }
        barrier();
        flag[g] += 1u;
    }
}
