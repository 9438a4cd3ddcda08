#version 450
// Integer arithmetic on uint8_t: r[i*22 + k] is the k-th expression below, and each
// c<type>[i] the conversion of a[i] to <type>. Built with
//   glslang -V --target-env vulkan1.3 uint8.comp -o uint8.spv
#extension GL_EXT_shader_explicit_arithmetic_types : enable
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { uint8_t a[]; };
layout(std430, binding = 1) readonly buffer B { uint8_t b[]; };
layout(std430, binding = 2) writeonly buffer R { uint8_t r[]; };
layout(std430, binding = 3) writeonly buffer C0 { int8_t ci8[]; };
layout(std430, binding = 4) writeonly buffer C1 { uint8_t cu8[]; };
layout(std430, binding = 5) writeonly buffer C2 { int16_t ci16[]; };
layout(std430, binding = 6) writeonly buffer C3 { uint16_t cu16[]; };
layout(std430, binding = 7) writeonly buffer C4 { int32_t ci32[]; };
layout(std430, binding = 8) writeonly buffer C5 { uint32_t cu32[]; };
layout(std430, binding = 9) writeonly buffer C6 { int64_t ci64[]; };
layout(std430, binding = 10) writeonly buffer C7 { uint64_t cu64[]; };
layout(std430, binding = 11) writeonly buffer C8 { float16_t cf16[]; };
layout(std430, binding = 12) writeonly buffer C9 { float cf32[]; };
layout(std430, binding = 13) writeonly buffer C10 { double cf64[]; };
#define T uint8_t
#define M T(7)

void main() {
    uint i = gl_GlobalInvocationID.x;
    T x = a[i];
    T y = b[i];
    uint o = i * 22u;
    r[o + 0u] = x + y;
    r[o + 1u] = x - y;
    r[o + 2u] = x * y;
    r[o + 3u] = x / y;
    r[o + 4u] = x % y;
    r[o + 5u] = x & y;
    r[o + 6u] = x | y;
    r[o + 7u] = x ^ y;
    r[o + 8u] = x << (y & M);
    r[o + 9u] = x >> (y & M);
    r[o + 10u] = x << y;
    r[o + 11u] = x >> y;
    r[o + 12u] = T(x < y);
    r[o + 13u] = T(x <= y);
    r[o + 14u] = T(x > y);
    r[o + 15u] = T(x >= y);
    r[o + 16u] = T(x == y);
    r[o + 17u] = T(x != y);
    r[o + 18u] = -x;
    r[o + 19u] = ~x;
    r[o + 20u] = x / T(7);
    r[o + 21u] = x % T(7);
    ci8[i] = int8_t(x);
    cu8[i] = uint8_t(x);
    ci16[i] = int16_t(x);
    cu16[i] = uint16_t(x);
    ci32[i] = int32_t(x);
    cu32[i] = uint32_t(x);
    ci64[i] = int64_t(x);
    cu64[i] = uint64_t(x);
    cf16[i] = float16_t(x);
    cf32[i] = float(x);
    cf64[i] = double(x);
}
