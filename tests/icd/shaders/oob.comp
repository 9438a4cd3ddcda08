#version 460
// Writes y[global x + p.off]: with an offset past the buffer, an out-of-bounds store (the
// driver must lose the device and say which instruction, workgroup and lane).
layout(local_size_x = 32) in;
layout(std430, set = 0, binding = 0) buffer Y { float y[]; };
layout(push_constant) uniform P { uint off; } p;
void main() {
    y[gl_GlobalInvocationID.x + p.off] = 1.0;
}
