#version 460
#extension GL_KHR_shader_subgroup_arithmetic : enable
// A subgroup sum in divergent code, which generated kernels run through the kernel library
// (jitcoop/kernels): the cache tests damage that library's entries. Invocation g with an odd u[g]
// writes the sum of the odd u of its subgroup to o[g]; the others leave o[g] as it was.
//   glslang -V --target-env vulkan1.3 divergent_add.comp -o divergent_add.spv
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer U { uint u[]; };
layout(std430, binding = 1) buffer O { uint o[]; };

void main() {
    uint g = gl_GlobalInvocationID.x;
    uint x = u[g];
    if ((x & 1u) != 0u) {
        o[g] = subgroupAdd(x);
    }
}
