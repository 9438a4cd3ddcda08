#version 450
// Float arithmetic on float16_t: r[i*10 + k] is the k-th expression below (precise: no
// contraction into fma), cmp[i*9 + k] the k-th comparison as 0/1, and each c<type>[i] the
// conversion of a[i] to <type>. Built with
//   glslang -V --target-env vulkan1.3 float16.comp -o float16.spv
#extension GL_EXT_shader_explicit_arithmetic_types : enable
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { float16_t a[]; };
layout(std430, binding = 1) readonly buffer B { float16_t b[]; };
layout(std430, binding = 2) writeonly buffer R { float16_t r[]; };
layout(std430, binding = 3) writeonly buffer Cmp { uint cmp[]; };
layout(std430, binding = 4) writeonly buffer C0 { int8_t ci8[]; };
layout(std430, binding = 5) writeonly buffer C1 { uint8_t cu8[]; };
layout(std430, binding = 6) writeonly buffer C2 { int16_t ci16[]; };
layout(std430, binding = 7) writeonly buffer C3 { uint16_t cu16[]; };
layout(std430, binding = 8) writeonly buffer C4 { int32_t ci32[]; };
layout(std430, binding = 9) writeonly buffer C5 { uint32_t cu32[]; };
layout(std430, binding = 10) writeonly buffer C6 { int64_t ci64[]; };
layout(std430, binding = 11) writeonly buffer C7 { uint64_t cu64[]; };
layout(std430, binding = 12) writeonly buffer C8 { float16_t cf16[]; };
layout(std430, binding = 13) writeonly buffer C9 { float cf32[]; };
layout(std430, binding = 14) writeonly buffer C10 { double cf64[]; };
#define F float16_t

void main() {
    uint i = gl_GlobalInvocationID.x;
    F x = a[i];
    F y = b[i];
    uint o = i * 10u;
    uint p = i * 9u;
    precise F r0 = x + y;
    r[o + 0u] = r0;
    precise F r1 = x - y;
    r[o + 1u] = r1;
    precise F r2 = x * y;
    r[o + 2u] = r2;
    precise F r3 = x / y;
    r[o + 3u] = r3;
    precise F r4 = x * y + x;
    r[o + 4u] = r4;
    precise F r5 = x * y - y;
    r[o + 5u] = r5;
    precise F r6 = (x + y) * (x - y);
    r[o + 6u] = r6;
    precise F r7 = -x;
    r[o + 7u] = r7;
    precise F r8 = x / F(3);
    r[o + 8u] = r8;
    precise F r9 = x - F(1);
    r[o + 9u] = r9;
    cmp[p + 0u] = (x < y) ? 1u : 0u;
    cmp[p + 1u] = (x <= y) ? 1u : 0u;
    cmp[p + 2u] = (x > y) ? 1u : 0u;
    cmp[p + 3u] = (x >= y) ? 1u : 0u;
    cmp[p + 4u] = (x == y) ? 1u : 0u;
    cmp[p + 5u] = (x != y) ? 1u : 0u;
    cmp[p + 6u] = (!(x < y)) ? 1u : 0u;
    cmp[p + 7u] = (isnan(x)) ? 1u : 0u;
    cmp[p + 8u] = (isinf(x)) ? 1u : 0u;
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
