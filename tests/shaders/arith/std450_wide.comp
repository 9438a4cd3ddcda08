#version 450
// GLSL.std.450 functions on float64 and float16: rd[i*14 + k] and rh[i*16 + k] are the
// k-th expressions below, with X, Y, Z = dx[i], dy[i], dz[i], e[i] an int, and H, G, K = hx[i],
// hy[i], hz[i].
// Built with
//   glslang -V --target-env vulkan1.3 std450_wide.comp -o std450_wide.spv
#extension GL_EXT_shader_explicit_arithmetic_types : enable
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer BX { double dx[]; };
layout(std430, binding = 1) readonly buffer BY { double dy[]; };
layout(std430, binding = 2) readonly buffer BZ { double dz[]; };
layout(std430, binding = 3) readonly buffer BE { int e[]; };
layout(std430, binding = 4) writeonly buffer BRD { double rd[]; };
layout(std430, binding = 5) readonly buffer BH { float16_t hx[]; };
layout(std430, binding = 6) readonly buffer BG { float16_t hy[]; };
layout(std430, binding = 7) readonly buffer BK { float16_t hz[]; };
layout(std430, binding = 8) writeonly buffer BRH { float16_t rh[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    double X = dx[i], Y = dy[i], Z = dz[i];
    float16_t H = hx[i], G = hy[i], K = hz[i];
    uint od = i * 14u;
    rd[od + 0u] = sqrt(X);
    rd[od + 1u] = floor(X);
    rd[od + 2u] = ceil(X);
    rd[od + 3u] = trunc(X);
    rd[od + 4u] = roundEven(X);
    rd[od + 5u] = fract(X);
    rd[od + 6u] = abs(X);
    rd[od + 7u] = sign(X);
    rd[od + 8u] = min(X, Y);
    rd[od + 9u] = max(X, Y);
    rd[od + 10u] = clamp(X, min(Y, Z), max(Y, Z));
    rd[od + 11u] = step(X, Y);
    rd[od + 12u] = fma(X, Y, Z);
    rd[od + 13u] = ldexp(X, e[i]);
    uint oh = i * 16u;
    rh[oh + 0u] = sqrt(H);
    rh[oh + 1u] = inversesqrt(H);
    rh[oh + 2u] = exp(H);
    rh[oh + 3u] = exp2(H);
    rh[oh + 4u] = log(H);
    rh[oh + 5u] = log2(H);
    rh[oh + 6u] = sin(H);
    rh[oh + 7u] = cos(H);
    rh[oh + 8u] = atan(G, H);
    rh[oh + 9u] = pow(H, G);
    rh[oh + 10u] = floor(H);
    rh[oh + 11u] = ceil(H);
    rh[oh + 12u] = fract(H);
    rh[oh + 13u] = abs(H);
    rh[oh + 14u] = min(H, G);
    rh[oh + 15u] = fma(H, G, K);
}
