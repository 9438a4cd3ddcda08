#version 450
// jitcoop example: C = alpha * A * B + beta * C, single precision, row-major.
// A is M x K, B is K x N, C is M x N. Each 16 x 16 workgroup computes one 16 x 16 tile of C,
// staging 16 x 16 tiles of A and B through shared memory; edges are bounds-checked, so M, N and
// K need not be multiples of 16. Dispatch ceil(N / 16) x ceil(M / 16) x 1 workgroups.
//   glslang -V --target-env vulkan1.3 sgemm.comp -o sgemm.spv
#define TILE 16

layout(local_size_x = TILE, local_size_y = TILE, local_size_z = 1) in;

layout(std430, set = 0, binding = 0) readonly buffer MatA { float a[]; };
layout(std430, set = 0, binding = 1) readonly buffer MatB { float b[]; };
layout(std430, set = 0, binding = 2) buffer MatC { float c[]; };

layout(push_constant) uniform Params {
    uint M;
    uint N;
    uint K;
    float alpha;
    float beta;
} p;

shared float tileA[TILE][TILE];
shared float tileB[TILE][TILE];

void main() {
    uint tx = gl_LocalInvocationID.x;             // column within the tile
    uint ty = gl_LocalInvocationID.y;             // row within the tile
    uint col = gl_WorkGroupID.x * TILE + tx;
    uint row = gl_WorkGroupID.y * TILE + ty;

    float acc = 0.0;
    uint ntiles = (p.K + TILE - 1) / TILE;
    for (uint t = 0; t < ntiles; ++t) {
        uint ka = t * TILE + tx;                  // column of A this lane stages
        uint kb = t * TILE + ty;                  // row of B this lane stages
        tileA[ty][tx] = (row < p.M && ka < p.K) ? a[row * p.K + ka] : 0.0;
        tileB[ty][tx] = (kb < p.K && col < p.N) ? b[kb * p.N + col] : 0.0;
        barrier();
        for (uint k = 0; k < TILE; ++k) {
            acc += tileA[ty][k] * tileB[k][tx];
        }
        barrier();
    }
    if (row < p.M && col < p.N) {
        uint i = row * p.N + col;
        c[i] = p.alpha * acc + p.beta * c[i];
    }
}
