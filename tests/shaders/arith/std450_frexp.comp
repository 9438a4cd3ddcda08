#version 450
// frexp (GLSL.std.450 FrexpStruct) on float32 and float64: m32[i], e32[i] = frexp(x32[i]) and
// likewise for float64. Kept apart from std450_float.comp so that one loads whatever happens to
// frexp. Built with
//   glslang -V --target-env vulkan1.3 std450_frexp.comp -o std450_frexp.spv
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer BX { float x32[]; };
layout(std430, binding = 1) writeonly buffer BM { float m32[]; };
layout(std430, binding = 2) writeonly buffer BE { int e32[]; };
layout(std430, binding = 3) readonly buffer BX64 { double x64[]; };
layout(std430, binding = 4) writeonly buffer BM64 { double m64[]; };
layout(std430, binding = 5) writeonly buffer BE64 { int e64[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    int e;
    m32[i] = frexp(x32[i], e);
    e32[i] = e;
    m64[i] = frexp(x64[i], e);
    e64[i] = e;
}
