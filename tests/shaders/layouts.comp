#version 460
// std140 vs std430: the same members in a uniform block (std140) and a storage block (std430),
// copied member by member (arrays and a struct of different strides, whole), then read with
// dynamic indices and through matrix arithmetic (column-major and row_major). Also an std430 array
// of structs and a row_major matrix in the push constants.
layout(local_size_x = 4) in;
struct S { vec3 p; float w; mat2 m; float arr[2]; };
layout(std140, binding = 0) uniform UB {
    float a; vec3 v3; float b; vec2 v2; float farr[3]; mat3 m3;
    layout(row_major) mat3x2 rm; S s; ivec2 iv[2]; double d; dvec3 dv; bool flag;
} ub;
layout(std430, binding = 1) writeonly buffer SB {
    float a; vec3 v3; float b; vec2 v2; float farr[3]; mat3 m3;
    layout(row_major) mat3x2 rm; S s; ivec2 iv[2]; double d; dvec3 dv; bool flag;
} sb;
layout(std430, binding = 2) writeonly buffer Out { float o[]; };
layout(std430, binding = 3) readonly buffer Arr { S sa[]; };
layout(push_constant) uniform P { vec3 pv; float pf; layout(row_major) mat2 pm; } pc;

void main() {
    uint i = gl_LocalInvocationID.x;
    if (i == 0u) {
        sb.a = ub.a; sb.v3 = ub.v3; sb.b = ub.b; sb.v2 = ub.v2; sb.farr = ub.farr; sb.m3 = ub.m3;
        sb.rm = ub.rm; sb.s = ub.s; sb.iv = ub.iv; sb.d = ub.d; sb.dv = ub.dv; sb.flag = ub.flag;
    }
    uint k = i * 16u;
    vec3 mv = ub.m3 * vec3(1.0, 10.0, 100.0);
    vec2 rv = ub.rm * vec3(1.0, 10.0, 100.0);
    vec2 pmv = pc.pm * vec2(1.0, 10.0);
    o[k + 0u] = mv.x;
    o[k + 1u] = mv.y;
    o[k + 2u] = mv.z;
    o[k + 3u] = rv.x;
    o[k + 4u] = rv.y;
    o[k + 5u] = ub.farr[i % 3u];
    o[k + 6u] = ub.s.arr[i & 1u];
    o[k + 7u] = ub.s.m[i & 1u][(i >> 1) & 1u];
    o[k + 8u] = ub.rm[i % 3u][i & 1u];
    o[k + 9u] = float(ub.iv[i & 1u].y);
    o[k + 10u] = sa[i].m[1][0] + sa[i].arr[1] * 100.0 + sa[i].p.z * 10000.0;
    o[k + 11u] = pc.pv.y + pc.pf;
    o[k + 12u] = pmv.x;
    o[k + 13u] = pmv.y;
    o[k + 14u] = float(ub.d * 2.0) + transpose(ub.m3)[i % 3u][2];
    o[k + 15u] = float(ub.dv.z) + (ub.flag ? 1000.0 : 0.0) + ub.v3[i % 3u] + ub.v2[i & 1u];
}
