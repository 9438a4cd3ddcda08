#version 460
// y[i] = bfloat16(x[i] * scale) for i < n: bfloat16 buffers in, bfloat16 out.
//   glslang -V --target-env vulkan1.3 scale_bf16.comp -o scale_bf16.spv
#extension GL_EXT_bfloat16 : require

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer X { bfloat16_t x[]; };
layout(std430, binding = 1) writeonly buffer Y { bfloat16_t y[]; };
layout(push_constant) uniform Params { float scale; uint n; } p;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < p.n)
        y[i] = bfloat16_t(float(x[i]) * p.scale);
}
