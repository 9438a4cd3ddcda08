#version 460
// A storage image (valid SPIR-V that jitcoop does not run: images and samplers are not
// supported; declared, not used, so that the pipeline layout need not hold it):
// vkCreateComputePipelines must fail with a message naming the instruction.
layout(local_size_x = 1) in;
layout(std430, set = 0, binding = 0) buffer M { uint v; };
layout(set = 1, binding = 0, r32f) uniform readonly image2D img;
void main() {
    v = 1u;
}
