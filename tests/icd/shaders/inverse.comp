#version 460
// GLSL.std.450 MatrixInverse, which jitcoop does not run: vkCreateComputePipelines must fail
// with a message naming the instruction.
layout(local_size_x = 1) in;
layout(std430, set = 0, binding = 0) buffer M { mat4 m; };
void main() {
    m = inverse(m);
}
