#version 450
// log and log2 of every float32 and float16 input, one per invocation.
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) writeonly buffer O { float o[]; };
layout(set = 0, binding = 2) writeonly buffer O2 { float o2[]; };
layout(set = 0, binding = 3) readonly buffer AH { float16_t ah[]; };
layout(set = 0, binding = 4) writeonly buffer OH { float16_t oh[]; };
layout(set = 0, binding = 5) writeonly buffer OH2 { float16_t oh2[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    o[i] = log(a[i]);
    o2[i] = log2(a[i]);
    oh[i] = log(ah[i]);
    oh2[i] = log2(ah[i]);
}
