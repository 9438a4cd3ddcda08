#version 450
// mod() on float16/32/64 (OpFMod): rN[i] = mod(aN[i], bN[i]). Kept apart from float*.comp so that
// those load whatever happens to OpFMod. Built with
//   glslang -V --target-env vulkan1.3 fmod.comp -o fmod.spv
#extension GL_EXT_shader_explicit_arithmetic_types : enable
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A16 { float16_t a16[]; };
layout(std430, binding = 1) readonly buffer B16 { float16_t b16[]; };
layout(std430, binding = 2) writeonly buffer R16 { float16_t r16[]; };
layout(std430, binding = 3) readonly buffer A32 { float a32[]; };
layout(std430, binding = 4) readonly buffer B32 { float b32[]; };
layout(std430, binding = 5) writeonly buffer R32 { float r32[]; };
layout(std430, binding = 6) readonly buffer A64 { double a64[]; };
layout(std430, binding = 7) readonly buffer B64 { double b64[]; };
layout(std430, binding = 8) writeonly buffer R64 { double r64[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    r16[i] = mod(a16[i], b16[i]);
    r32[i] = mod(a32[i], b32[i]);
    r64[i] = mod(a64[i], b64[i]);
}
