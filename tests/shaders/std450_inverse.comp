#version 460
// GLSL.std.450 MatrixInverse: r[i * 13 + k] = inverse(mat2 / mat3) components, column by column,
// then determinant(mat3) for reference. Invocation i reads 13 floats from m[i * 13 ...].
layout(local_size_x = 16) in;
layout(std430, binding = 0) readonly buffer M { float m[]; };
layout(std430, binding = 1) writeonly buffer R { float r[]; };

void main() {
    uint b = gl_GlobalInvocationID.x * 13u;
    mat2 m2 = mat2(m[b], m[b + 1u], m[b + 2u], m[b + 3u]);
    mat3 m3 = mat3(m[b + 4u], m[b + 5u], m[b + 6u], m[b + 7u], m[b + 8u], m[b + 9u],
                   m[b + 10u], m[b + 11u], m[b + 12u]);
    mat2 i2 = inverse(m2);
    mat3 i3 = inverse(m3);
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < 2; k++) r[b + uint(c * 2 + k)] = i2[c][k];
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < 3; k++) r[b + 4u + uint(c * 3 + k)] = i3[c][k];
}
