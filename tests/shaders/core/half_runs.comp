#version 450
// 16-bit floats moved as whole values: a struct of sixteen float16 or bfloat16 elements is
// loaded and stored in one OpLoad / OpStore each, its elements used one by one (constant
// indices). tests/test_core_memory.py checks every element against numpy.
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_bfloat16 : require
layout(local_size_x = 64) in;
struct H16 { float16_t v[16]; };
struct B16 { bfloat16_t v[16]; };
layout(std430, binding = 0) readonly buffer IH { H16 ih[]; };
layout(std430, binding = 1) readonly buffer IB { B16 ib[]; };
layout(std430, binding = 2) writeonly buffer OF { float of[]; };   // each element widened
layout(std430, binding = 3) writeonly buffer OH { H16 oh[]; };     // 2x, rounded to float16
layout(std430, binding = 4) writeonly buffer OB { B16 ob[]; };     // 2x, rounded to bfloat16

void main() {
    uint i = gl_GlobalInvocationID.x;
    H16 h = ih[i];
    B16 b = ib[i];
    H16 h2;
    B16 b2;
#define ONE(k) \
    of[32 * i + k] = float(h.v[k]); \
    of[32 * i + 16 + k] = float(b.v[k]); \
    h2.v[k] = float16_t(float(h.v[k]) * 2.0); \
    b2.v[k] = bfloat16_t(float(b.v[k]) * 2.0);
    ONE(0)
    ONE(1)
    ONE(2)
    ONE(3)
    ONE(4)
    ONE(5)
    ONE(6)
    ONE(7)
    ONE(8)
    ONE(9)
    ONE(10)
    ONE(11)
    ONE(12)
    ONE(13)
    ONE(14)
    ONE(15)
    oh[i] = h2;
    ob[i] = b2;
}
