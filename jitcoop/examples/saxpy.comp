#version 450
// jitcoop example: y = a * x + y over n floats. The workgroup size is specialization constant 0
// (default 64); dispatch ceil(n / local_size_x) workgroups.
//   glslang -V --target-env vulkan1.3 saxpy.comp -o saxpy.spv
layout(local_size_x = 64, local_size_x_id = 0) in;

layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) buffer Y { float y[]; };

layout(push_constant) uniform Params {
    float a;
    uint n;
} p;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < p.n) {
        y[i] = p.a * x[i] + y[i];
    }
}
