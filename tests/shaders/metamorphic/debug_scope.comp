#version 460
// Built with debug information (glslang -gVS), then through spirv-opt, which closes each
// function's last block with `OpExtInst DebugNoScope` after its OpReturn: valid SPIR-V
// (spirv-val accepts it) that jitcoop must load. o[i] = 2 x[i] + 1, through a function call.
layout(local_size_x = 32) in;
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer O { float o[]; };

float twice_plus_one(float v) { return 2.0 * v + 1.0; }

void main() {
    uint i = gl_GlobalInvocationID.x;
    o[i] = twice_plus_one(x[i]);
}
