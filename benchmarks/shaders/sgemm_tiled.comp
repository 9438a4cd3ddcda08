#version 460
// Shared-memory tiled SGEMM, C = A * B (row-major, M x K times K x N), no cooperative matrices.
// A 16x16 workgroup computes a 64x64 tile of C; each invocation a 4x4 block held in four vec4
// accumulators. M and N must be multiples of 64, K a multiple of 16.
layout(local_size_x = 16, local_size_y = 16) in;
layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { vec4 b4[]; };
layout(std430, binding = 2) writeonly buffer C { vec4 c4[]; };
layout(push_constant) uniform P { uint M, N, K; } p;
shared vec4 As[16][16];   // As[k][i] = A rows 4i..4i+3 at column k of the tile
shared vec4 Bs[16][16];   // Bs[k][j] = B row k, columns 4j..4j+3 of the tile
void main() {
  uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
  uint lid = gl_LocalInvocationIndex;
  uint row0 = gl_WorkGroupID.y * 64, col0 = gl_WorkGroupID.x * 64;
  vec4 acc0 = vec4(0), acc1 = vec4(0), acc2 = vec4(0), acc3 = vec4(0);
  for (uint t = 0; t < p.K; t += 16) {
    // A tile: 64 rows x 16 columns, one vec4 (four rows) per invocation.
    uint k = lid % 16, i = lid / 16;
    uint ar = row0 + 4 * i;
    As[k][i] = vec4(a[ar * p.K + t + k], a[(ar + 1) * p.K + t + k],
                    a[(ar + 2) * p.K + t + k], a[(ar + 3) * p.K + t + k]);
    // B tile: 16 rows x 64 columns, one vec4 per invocation.
    uint br = lid / 16, bc = lid % 16;
    Bs[br][bc] = b4[((t + br) * p.N + col0) / 4 + bc];
    barrier();
    for (uint kk = 0; kk < 16; kk++) {
      vec4 av = As[kk][ty];
      vec4 bv = Bs[kk][tx];
      acc0 += av.x * bv; acc1 += av.y * bv; acc2 += av.z * bv; acc3 += av.w * bv;
    }
    barrier();
  }
  uint r = row0 + 4 * ty, c = (col0 + 4 * tx) / 4;
  c4[(r + 0) * p.N / 4 + c] = acc0;
  c4[(r + 1) * p.N / 4 + c] = acc1;
  c4[(r + 2) * p.N / 4 + c] = acc2;
  c4[(r + 3) * p.N / 4 + c] = acc3;
}
