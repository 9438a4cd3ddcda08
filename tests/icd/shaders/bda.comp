#version 460
// Buffer device addresses: dst[i] = 2 * src[i] through buffer_reference pointers from push
// constants (the addresses vkGetBufferDeviceAddress gave).
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 32) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };
layout(push_constant) uniform P { Floats src; Floats dst; uint n; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < p.n) p.dst.v[i] = 2.0 * p.src.v[i];
}
