#version 450
// GLSL.std.450 float functions on float32: r[i*K + k] is the k-th expression below, with X, Y, Z =
// x[i], y[i], z[i], e[i] an int, u and v the vec3s p[3i..3i+2] and q[3i..3i+2] (frexp is in
// std450_frexp.comp). Built with
//   glslang -V --target-env vulkan1.3 std450_float.comp -o std450_float.spv
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer BX { float x[]; };
layout(std430, binding = 1) readonly buffer BY { float y[]; };
layout(std430, binding = 2) readonly buffer BZ { float z[]; };
layout(std430, binding = 3) readonly buffer BE { int e[]; };
layout(std430, binding = 4) readonly buffer BP { float p[]; };
layout(std430, binding = 5) readonly buffer BQ { float q[]; };
layout(std430, binding = 6) writeonly buffer BR { float r[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    float X = x[i], Y = y[i], Z = z[i];
    vec3 u = vec3(p[3 * i], p[3 * i + 1], p[3 * i + 2]);
    vec3 v = vec3(q[3 * i], q[3 * i + 1], q[3 * i + 2]);
    uint o = i * 39u;
    r[o + 0u] = sqrt(X);
    r[o + 1u] = inversesqrt(X);
    r[o + 2u] = exp(X);
    r[o + 3u] = exp2(X);
    r[o + 4u] = log(X);
    r[o + 5u] = log2(X);
    r[o + 6u] = pow(X, Y);
    r[o + 7u] = sin(X);
    r[o + 8u] = cos(X);
    r[o + 9u] = atan(Y, X);
    r[o + 10u] = atan(X);
    r[o + 11u] = floor(X);
    r[o + 12u] = ceil(X);
    r[o + 13u] = round(X);
    r[o + 14u] = roundEven(X);
    r[o + 15u] = trunc(X);
    r[o + 16u] = fract(X);
    r[o + 17u] = abs(X);
    r[o + 18u] = sign(X);
    r[o + 19u] = min(X, Y);
    r[o + 20u] = max(X, Y);
    r[o + 21u] = clamp(X, min(Y, Z), max(Y, Z));
    r[o + 22u] = mix(X, Y, Z);
    r[o + 23u] = step(X, Y);
    r[o + 24u] = smoothstep(min(Y, Z), max(Y, Z), X);
    r[o + 25u] = fma(X, Y, Z);
    r[o + 26u] = ldexp(X, e[i]);
    r[o + 27u] = length(u);
    r[o + 28u] = distance(u, v);
    r[o + 29u] = dot(u, v);
    r[o + 30u] = normalize(u).x;
    r[o + 31u] = normalize(u).y;
    r[o + 32u] = normalize(u).z;
    r[o + 33u] = cross(u, v).x;
    r[o + 34u] = cross(u, v).y;
    r[o + 35u] = cross(u, v).z;
    r[o + 36u] = reflect(u, v).x;
    r[o + 37u] = reflect(u, v).y;
    r[o + 38u] = reflect(u, v).z;
}
