#version 460
// tests/test_signature.py: push constants holding structs, an array of structs and a buffer
// reference, packed from dicts by name. o[4 i + j] = src.v[r[i].first + j * r[i].step].
//   glslang -V --target-env vulkan1.3 push_struct.comp -o push_struct.spv
#extension GL_EXT_buffer_reference : require

layout(local_size_x = 1) in;
struct Range { uint first; int step; };
layout(buffer_reference, std430) readonly buffer Floats { float v[]; };
layout(std430, binding = 0) writeonly buffer Out { float o[]; };
layout(push_constant) uniform P {
    Range r[2];          // +0, +8
    Floats src;          // +16
} p;

void main() {
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 4; ++j)
            o[4 * i + j] = p.src.v[int(p.r[i].first) + j * p.r[i].step];
}
