#version 460
// SPV_KHR_integer_dot_product (GL_EXT_integer_dot_product): invocation i takes three words
// a[i], b[i], c[i] and writes every form of the dot product to r[i * 16 ...] and, for the 16-bit
// result, s[i] (tests/test_integer_dot.py checks them against Python integers).
#extension GL_EXT_integer_dot_product : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 2) readonly buffer C { uint c[]; };
layout(std430, binding = 3) writeonly buffer R { uint r[]; };
layout(std430, binding = 4) writeonly buffer S { uint16_t s[]; };
layout(std430, binding = 5) writeonly buffer L { uint64_t l[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    uint x = a[i], y = b[i], z = c[i];
    uint o = i * 16u;
    // packed 4 x 8 bit
    r[o + 0] = dotPacked4x8EXT(x, y);
    r[o + 1] = uint(dotPacked4x8EXT(int(x), int(y)));
    r[o + 2] = uint(dotPacked4x8EXT(int(x), y));
    r[o + 3] = dotPacked4x8AccSatEXT(x, y, z);
    r[o + 4] = uint(dotPacked4x8AccSatEXT(int(x), int(y), int(z)));
    r[o + 5] = uint(dotPacked4x8AccSatEXT(int(x), y, int(z)));
    // vectors of 8-bit components
    i8vec4 xs = unpack8(int(x)), ys = unpack8(int(y));
    u8vec4 xu = unpack8(x), yu = unpack8(y);
    r[o + 6] = uint(dotEXT(ivec4(xs), ivec4(ys)));
    r[o + 7] = dotEXT(xu, yu);
    r[o + 8] = uint(dotAccSatEXT(xs, ys, int(z)));
    // 16-bit components: into 32 bits, and saturated into 16 bits
    i16vec2 hs = unpack16(int(x)), ks = unpack16(int(y));
    u16vec2 hu = unpack16(x), ku = unpack16(y);
    r[o + 9] = uint(dotEXT(hs, ks));
    r[o + 10] = dotAccSatEXT(hu, ku, z);
    s[i] = uint16_t(dotAccSatEXT(hs, ks, int16_t(z)));
    // 32-bit components: the low 32 bits of the exact sum, and the saturated one
    r[o + 11] = uint(dotEXT(ivec2(x, z), ivec2(y, x)));
    r[o + 12] = dotEXT(uvec3(x, y, z), uvec3(z, x, y));
    r[o + 13] = uint(dotAccSatEXT(ivec2(x, z), ivec2(y, x), int(z)));
    r[o + 14] = dotAccSatEXT(uvec2(x, y), uvec2(y, z), z);
    // a 64-bit result of 32-bit components
    l[i] = dotAccSatEXT(u64vec2(x, y), u64vec2(z, x), uint64_t(z) << 32);
}
