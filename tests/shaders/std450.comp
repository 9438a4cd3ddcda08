#version 460
#extension GL_EXT_shader_explicit_arithmetic_types : enable
// GLSL.std.450 functions. Invocation i reads x, y, z = a[i], b[i], c[i] (and xd, yd, zd as double,
// xh as float16) and writes r[i * 48 + k], rd[i * 16 + k], rh[i * 4 + k], ru[i * 8 + k] in the
// order below.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) readonly buffer C { float c[]; };
layout(std430, binding = 3) readonly buffer AD { double ad[]; };
layout(std430, binding = 4) writeonly buffer R { float r[]; };
layout(std430, binding = 5) writeonly buffer RD { double rd[]; };
layout(std430, binding = 6) writeonly buffer RH { float16_t rh[]; };
layout(std430, binding = 7) writeonly buffer RU { uint ru[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    float x = a[i], y = b[i], z = c[i];
    uint o = i * 48u;
    // exact
    r[o + 0u] = sqrt(abs(x));
    r[o + 1u] = fma(x, y, z);
    r[o + 2u] = floor(x);
    r[o + 3u] = ceil(x);
    r[o + 4u] = round(x);
    r[o + 5u] = roundEven(x);
    r[o + 6u] = trunc(x);
    r[o + 7u] = fract(x);
    r[o + 8u] = clamp(x, min(y, z), max(y, z));
    r[o + 9u] = min(x, y);
    r[o + 10u] = max(x, y);
    float ip;
    r[o + 11u] = modf(x, ip);
    r[o + 12u] = ip;
    r[o + 13u] = intBitsToFloat(floatBitsToInt(x) ^ int(0x80000000u));
    r[o + 14u] = roundEven(x * 0.5);
    r[o + 15u] = ldexp(y, int(z) % 40);
    r[o + 16u] = abs(x);
    r[o + 17u] = sign(x);
    r[o + 18u] = step(y, x);
    // rounded once from the exact value (jitcoop: float64 then one rounding)
    r[o + 19u] = exp(y * 0.01);
    r[o + 20u] = pow(abs(x) + 0.5, y * 0.01);
    r[o + 21u] = log(abs(x) + 1.0);
    r[o + 22u] = atan(y, x);
    r[o + 23u] = tanh(y * 0.1);
    r[o + 24u] = asinh(z);
    r[o + 25u] = inversesqrt(abs(x) + 1.0);
    // formulas of a few operations
    r[o + 26u] = mix(x, y, z * 0.01);
    vec3 u = vec3(x, y, z), v = vec3(z, x, y * 0.5);
    vec3 cr = cross(u, v);
    r[o + 27u] = cr.x;
    r[o + 28u] = cr.y;
    r[o + 29u] = cr.z;
    r[o + 30u] = length(u);
    vec3 n = normalize(u);
    r[o + 31u] = n.x;
    r[o + 32u] = n.y;
    r[o + 33u] = n.z;
    r[o + 34u] = dot(u, v);
    r[o + 35u] = distance(u, v);
    r[o + 36u] = determinant(mat3(u, v, vec3(1.0, 2.0, 0.5)));
    mat2 inv = matrixCompMult(mat2(x, y, z, 1.0), mat2(y, z, x, 2.0));
    r[o + 37u] = inv[0][0];
    r[o + 38u] = inv[0][1];
    r[o + 39u] = inv[1][0];
    r[o + 40u] = inv[1][1];
    r[o + 41u] = degrees(z);
    r[o + 42u] = radians(y);
    vec2 uh = unpackHalf2x16(packHalf2x16(vec2(x, y)));
    r[o + 43u] = uh.x;
    r[o + 44u] = uh.y;
    r[o + 45u] = unpackSnorm2x16(packSnorm2x16(vec2(z * 0.01, 0.5))).x;
    r[o + 46u] = unpackUnorm4x8(uint(abs(a[i]) * 1000.0)).z;
    r[o + 47u] = smoothstep(-1.0, 1.0, z * 0.02);
    uint q = i * 8u;
    ru[q + 0u] = packHalf2x16(vec2(x, y));
    ru[q + 1u] = packUnorm4x8(vec4(x, y, z, 0.5) * 0.01);
    ru[q + 2u] = packSnorm4x8(vec4(x, y, z, -0.5) * 0.01);
    ru[q + 3u] = packUnorm2x16(vec2(x, z) * 0.01);
    ru[q + 4u] = packSnorm2x16(vec2(y, z) * 0.01);
    uvec2 dw = unpackDouble2x32(ad[i]);
    ru[q + 5u] = dw.x;
    ru[q + 6u] = dw.y;
    ru[q + 7u] = floatBitsToUint(x) ^ uint(isnan(x)) ^ (uint(isinf(y)) << 1);
    // double
    double xd = ad[i], yd = double(y), zd = double(z);
    uint od = i * 16u;
    rd[od + 0u] = sqrt(abs(xd));
    rd[od + 1u] = fma(xd, yd, zd);
    rd[od + 2u] = floor(xd);
    rd[od + 3u] = fract(xd);
    rd[od + 4u] = roundEven(xd);
    rd[od + 5u] = trunc(xd);
    rd[od + 6u] = ceil(xd);
    rd[od + 7u] = clamp(xd, min(yd, zd), max(yd, zd));
    rd[od + 8u] = mix(xd, yd, zd * 0.01LF);
    rd[od + 9u] = length(dvec3(xd, yd, zd));
    rd[od + 10u] = dot(dvec3(xd, yd, zd), dvec3(zd, xd, yd));
    rd[od + 11u] = determinant(dmat2(xd, yd, zd, 1.0LF));
    rd[od + 12u] = packDouble2x32(uvec2(floatBitsToUint(x), floatBitsToUint(y)));
    rd[od + 13u] = inversesqrt(abs(xd) + 1.0LF);
    rd[od + 14u] = min(xd, yd);
    rd[od + 15u] = max(xd, zd);
    // float16
    float16_t xh = float16_t(x), yh = float16_t(y), zh = float16_t(z);
    uint oh = i * 4u;
    rh[oh + 0u] = sqrt(abs(xh));
    rh[oh + 1u] = fma(xh, yh, zh);
    rh[oh + 2u] = floor(xh);
    rh[oh + 3u] = xh * yh + zh;
}
