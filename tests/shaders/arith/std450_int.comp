#version 450
// GLSL.std.450 integer functions, bit operations and packing: r[i*19 + k], rl[i*7 + k] and
// rf[i*6 + k] are the k-th expressions below, with x, y, z = a[i], b[i], c[i] (ux... as uint),
// off = y & 31 and bits = uint(z) % (33 - off) (so off + bits <= 32), X, Y = la[i], lb[i] (int64).
// Built with
//   glslang -V --target-env vulkan1.3 std450_int.comp -o std450_int.spv
#extension GL_EXT_shader_explicit_arithmetic_types : enable
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer BA { int a[]; };
layout(std430, binding = 1) readonly buffer BB { int b[]; };
layout(std430, binding = 2) readonly buffer BC { int c[]; };
layout(std430, binding = 3) readonly buffer BF { float f[]; };
layout(std430, binding = 4) readonly buffer BLA { int64_t la[]; };
layout(std430, binding = 5) readonly buffer BLB { int64_t lb[]; };
layout(std430, binding = 6) writeonly buffer BR { int r[]; };
layout(std430, binding = 7) writeonly buffer BRL { int64_t rl[]; };
layout(std430, binding = 8) writeonly buffer BRF { float rf[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    int x = a[i], y = b[i], z = c[i];
    uint ux = uint(x), uy = uint(y), uz = uint(z);
    int off = y & 31;
    int bits = int(uint(z) % uint(33 - off));
    int64_t X = la[i], Y = lb[i];
    uint o = i * 19u;
    r[o + 0u] = abs(x);
    r[o + 1u] = sign(x);
    r[o + 2u] = min(x, y);
    r[o + 3u] = max(x, y);
    r[o + 4u] = clamp(x, min(y, z), max(y, z));
    r[o + 5u] = int(min(ux, uy));
    r[o + 6u] = int(max(ux, uy));
    r[o + 7u] = int(clamp(ux, min(uy, uz), max(uy, uz)));
    r[o + 8u] = findLSB(x);
    r[o + 9u] = findMSB(x);
    r[o + 10u] = findMSB(ux);
    r[o + 11u] = bitCount(x);
    r[o + 12u] = bitCount(ux);
    r[o + 13u] = bitfieldExtract(x, off, bits);
    r[o + 14u] = int(bitfieldExtract(ux, off, bits));
    r[o + 15u] = bitfieldInsert(x, y, off, bits);
    r[o + 16u] = bitfieldReverse(x);
    r[o + 17u] = int(packHalf2x16(vec2(f[4 * i], f[4 * i + 1])));
    r[o + 18u] = int(packUnorm4x8(vec4(f[4 * i], f[4 * i + 1], f[4 * i + 2], f[4 * i + 3])));
    uint ol = i * 7u;
    rl[ol + 0u] = abs(X);
    rl[ol + 1u] = sign(X);
    rl[ol + 2u] = min(X, Y);
    rl[ol + 3u] = max(X, Y);
    rl[ol + 4u] = int64_t(min(uint64_t(X), uint64_t(Y)));
    rl[ol + 5u] = int64_t(max(uint64_t(X), uint64_t(Y)));
    rl[ol + 6u] = clamp(X, min(Y, X ^ Y), max(Y, X ^ Y));
    uint of = i * 6u;
    rf[of + 0u] = unpackHalf2x16(ux).x;
    rf[of + 1u] = unpackHalf2x16(ux).y;
    rf[of + 2u] = unpackUnorm4x8(ux).x;
    rf[of + 3u] = unpackUnorm4x8(ux).y;
    rf[of + 4u] = unpackUnorm4x8(ux).z;
    rf[of + 5u] = unpackUnorm4x8(ux).w;
}
