#version 460
// A kernel that calls the kernel library (jitcoop/kernels: GLSL's packUnorm4x8 is one of its
// functions): the cache tests damage that library's entries. Invocation g with an odd u[g] packs
// the four bytes of u[g], unpacked as unorm values, back into o[g] (so o[g] = u[g]); the others
// leave o[g] as it was.
//   glslang -V --target-env vulkan1.3 pack_unorm.comp -o pack_unorm.spv
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer U { uint u[]; };
layout(std430, binding = 1) buffer O { uint o[]; };

void main() {
    uint g = gl_GlobalInvocationID.x;
    uint x = u[g];
    if ((x & 1u) != 0u) {
        o[g] = packUnorm4x8(unpackUnorm4x8(x));
    }
}
