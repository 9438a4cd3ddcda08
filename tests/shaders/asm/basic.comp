#version 460
// Test data for tests/test_asm.py, compiled with glslang 16.6:
//   glslang -V --target-env vulkan1.3 basic.comp -o basic.spv
// Core compute features: buffers, push and spec constants, shared memory, barriers,
// loops, a switch, atomics, GLSL.std.450 calls and constants of several widths.
#extension GL_EXT_shader_explicit_arithmetic_types : require

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 1) const int SCALE = 3;
const int SCALED = SCALE * 4 + 1;

layout(std430, set = 0, binding = 0) readonly buffer In { float a[]; } inp;
layout(std430, set = 0, binding = 1) buffer Out { uint count; float b[]; } outp;
layout(std430, set = 0, binding = 2) buffer Wide { float16_t h[4]; int64_t l; uint64_t u; double d; } wide;
layout(push_constant) uniform PC { uint n; float bias; } pc;

shared float tile[64];

void main() {
    uint i = gl_GlobalInvocationID.x;
    uint li = gl_LocalInvocationIndex;
    tile[li % 64] = i < pc.n ? inp.a[i] : 0.0;
    barrier();
    float acc = 0.0;
    for (int k = 0; k < SCALED; ++k) {
        acc += tile[(li + uint(k)) % 64] * 0.1;
    }
    switch (int(li) % 4) {
        case 0: acc = sqrt(abs(acc)); break;
        case 1: acc = fma(acc, 2.5, pc.bias); break;
        case -1: acc = exp(acc); break;
        default: acc = -acc; break;
    }
    if (i < pc.n) {
        outp.b[i] = acc * float(SCALE) + 1e-30;
        atomicAdd(outp.count, 1u);
    }
    if (i == 0u) {
        wide.h[0] = float16_t(0.1);
        wide.h[1] = float16_t(-65504.0);
        wide.l = int64_t(-5000000000l);
        wide.u = uint64_t(0xFFFFFFFFFFFFFFFFul);
        wide.d = 0.1lf;
        wide.h[2] = float16_t(1.0 / 0.0);
    }
}
