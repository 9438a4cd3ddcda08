#version 460
// A boolean phi (the short-circuit `!(G > 1) && (n % 7) != 0`) inside an `if` that the
// specialization constants make dead: with FLAGS = 0 the code generator must still compile the
// shader. o[i] = i + 1 then (i + 2 or i + 3 with FLAGS = 1: 3 when G > 1 or n is a multiple of 7).
// The shape of the production flash-attention shader's mask code with the mask turned off.
layout(local_size_x = 32) in;
layout(constant_id = 0) const uint FLAGS = 0;
layout(constant_id = 1) const uint G = 2;
layout(push_constant) uniform P { uint n; } p;
layout(binding = 0) buffer O { uint o[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint r = 1;
    if ((FLAGS & 1) != 0) {
        bool check = !(G > 1) && (p.n % 7) != 0;
        if (check) r = 2; else r = 3;
    }
    o[i] = r + i;
}
