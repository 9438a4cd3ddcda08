#version 450
// Copies of 16- and 8-bit floats, through shared memory and directly: a load whose only use is a
// store moves the bits as they are (signalling NaN payloads, -0, subnormals), as a GPU does.
// After the copies, one converted use of each value (float32 sums) shows that ordinary loads still
// convert.
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_bfloat16 : require
#extension GL_EXT_float_e4m3 : require
#extension GL_EXT_float_e5m2 : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer IH { float16_t ih[]; };
layout(set = 0, binding = 1) readonly buffer IB { bfloat16_t ib[]; };
layout(set = 0, binding = 2) readonly buffer I4 { floate4m3_t i4[]; };
layout(set = 0, binding = 3) readonly buffer I5 { floate5m2_t i5[]; };
layout(set = 0, binding = 4) writeonly buffer OH { float16_t oh[]; };
layout(set = 0, binding = 5) writeonly buffer OB { bfloat16_t ob[]; };
layout(set = 0, binding = 6) writeonly buffer O4 { floate4m3_t o4[]; };
layout(set = 0, binding = 7) writeonly buffer O5 { floate5m2_t o5[]; };
layout(set = 0, binding = 8) writeonly buffer OF { float of[]; };
shared float16_t sh[64];
void main() {
    uint i = gl_LocalInvocationIndex, g = gl_GlobalInvocationID.x;
    sh[i] = ih[g];
    barrier();
    oh[g] = sh[63 - i];
    ob[g] = ib[g];
    o4[g] = i4[g];
    o5[g] = i5[g];
    of[g] = float(ih[g]) + float(ib[g]);
}
