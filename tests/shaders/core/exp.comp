#version 450
// exp of every float32 and float16 input, one per invocation.
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) writeonly buffer O { float o[]; };
layout(set = 0, binding = 2) readonly buffer AH { float16_t ah[]; };
layout(set = 0, binding = 3) writeonly buffer OH { float16_t oh[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    o[i] = exp(a[i]);
    oh[i] = exp(ah[i]);
}
