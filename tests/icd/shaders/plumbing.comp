#version 460
// The driver's binding plumbing in one shader: y[i] = SCALE * (u.a * x[i] + p.b) + y[i] for
// i < p.n. x and y are storage buffers of set 0, u a uniform buffer of set 1, n and b push
// constants, SCALE a float specialization constant and the workgroup width spec constant 1.
layout(local_size_x_id = 1) in;
layout(constant_id = 0) const float SCALE = 1.0;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) buffer Y { float y[]; };
layout(std140, set = 1, binding = 0) uniform U { float a; } u;
layout(push_constant) uniform P { uint n; float b; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < p.n) y[i] = SCALE * (u.a * x[i] + p.b) + y[i];
}
