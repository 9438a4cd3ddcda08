#version 460
// GLSL.std.450 MatrixInverse and Determinant: invocation i reads a mat2, a mat3 and a mat4 from
// m[i * 29 ...] (column by column) and writes inverse(mat2), inverse(mat3), inverse(mat4) to
// r[i * 32 ...] the same way, then determinant(mat2), determinant(mat3), determinant(mat4).
// The dmat3/dmat4 block does the same in float64 for invocation i from d[i * 25 ...].
layout(local_size_x = 16) in;
layout(std430, binding = 0) readonly buffer M { float m[]; };
layout(std430, binding = 1) writeonly buffer R { float r[]; };
layout(std430, binding = 2) readonly buffer D { double d[]; };
layout(std430, binding = 3) writeonly buffer E { double e[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    uint b = i * 29u, o = i * 32u;
    mat2 m2 = mat2(m[b], m[b + 1u], m[b + 2u], m[b + 3u]);
    mat3 m3;
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < 3; k++) m3[c][k] = m[b + 4u + uint(c * 3 + k)];
    mat4 m4;
    for (int c = 0; c < 4; c++)
        for (int k = 0; k < 4; k++) m4[c][k] = m[b + 13u + uint(c * 4 + k)];
    mat2 i2 = inverse(m2);
    mat3 i3 = inverse(m3);
    mat4 i4 = inverse(m4);
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < 2; k++) r[o + uint(c * 2 + k)] = i2[c][k];
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < 3; k++) r[o + 4u + uint(c * 3 + k)] = i3[c][k];
    for (int c = 0; c < 4; c++)
        for (int k = 0; k < 4; k++) r[o + 13u + uint(c * 4 + k)] = i4[c][k];
    r[o + 29u] = determinant(m2);
    r[o + 30u] = determinant(m3);
    r[o + 31u] = determinant(m4);

    uint db = i * 25u, dout = i * 27u;
    dmat3 d3;
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < 3; k++) d3[c][k] = d[db + uint(c * 3 + k)];
    dmat4 d4;
    for (int c = 0; c < 4; c++)
        for (int k = 0; k < 4; k++) d4[c][k] = d[db + 9u + uint(c * 4 + k)];
    dmat3 j3 = inverse(d3);
    dmat4 j4 = inverse(d4);
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < 3; k++) e[dout + uint(c * 3 + k)] = j3[c][k];
    for (int c = 0; c < 4; c++)
        for (int k = 0; k < 4; k++) e[dout + 9u + uint(c * 4 + k)] = j4[c][k];
    e[dout + 25u] = determinant(d3);
    e[dout + 26u] = determinant(d4);
}
