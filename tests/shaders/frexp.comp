#version 460
// GLSL.std.450 FrexpStruct (what glslang makes of frexp): for x = a[i],
// m[i] = mantissa in [0.5, 1) (or 0, inf, NaN as x), e[i] = exponent, with x = m * 2^e.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) writeonly buffer M { float m[]; };
layout(std430, binding = 2) writeonly buffer E { int e[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    int ex;
    m[i] = frexp(a[i], ex);
    e[i] = ex;
}
