#version 460
#extension GL_EXT_shader_explicit_arithmetic_types : enable
// Specialization constants of several types and ids (LocalSizeId for x and y, array lengths,
// constants folded from them with OpSpecConstantOp), push constants, shared memory (2-D and an
// array of structs, both sized by spec constants), Private globals (per invocation: an array and a
// counter with an initializer), functions with in/out/inout parameters and struct values,
// matrices (times vector, vector times, times matrix, transpose, outer product).
// Invocation g of the dispatch writes 32 floats to o[32 g ...].
layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(constant_id = 0) const uint WX = 4;
layout(constant_id = 1) const uint WY = 2;
layout(constant_id = 2) const int N = 3;
layout(constant_id = 3) const bool NEGATE = false;
layout(constant_id = 4) const float SCALE = 1.5;
layout(constant_id = 5) const int64_t BIG = 1000000000000l;
layout(constant_id = 6) const uint MASK = 0xFu;
const int N2 = N * 2 + 1;
const bool BIG_N = N > 4;
const uint SEL = BIG_N ? 7u : 11u;
const uint SH = MASK << 4;
const int NEG_N = -N;
const uint NOTMASK = ~MASK;
const bool KEEP = !NEGATE;

struct Particle { vec3 pos; float mass; ivec2 cell; };

layout(std430, binding = 0) readonly buffer In { Particle parts[]; };
layout(std430, binding = 1) writeonly buffer Out { float o[]; };
layout(push_constant) uniform Push { mat2 rot; vec2 shift; uint count; int bias; } pc;

shared float tile[WY][WX];
shared Particle sp[N2];

float weights[N2];
int calls = 0;

void accumulate(inout vec3 acc, in Particle p, out float w) {
    w = p.mass * SCALE;
    acc += p.pos * w;
    calls++;
}

Particle moved(Particle p, vec3 d) {
    p.pos += d;
    p.cell += ivec2(1, -1);
    return p;
}

void swap(inout float a, inout float b) {
    float t = a;
    a = b;
    b = t;
}

void main() {
    uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;
    uint li = gl_LocalInvocationIndex;
    uint g = gl_WorkGroupID.x * (WX * WY) + li;
    tile[ly][lx] = float(g);
    if (li < uint(N2)) sp[li] = parts[(gl_WorkGroupID.x * uint(N2) + li) % pc.count];
    barrier();
    vec3 acc = vec3(0.0);
    for (int k = 0; k < N2; k++) {
        float w;
        accumulate(acc, sp[k], w);
        weights[k] = w;
    }
    float a = tile[(ly + 1u) % WY][lx];
    float b = tile[ly][(lx + 1u) % WX];
    swap(a, b);
    Particle m = moved(sp[li % uint(N2)], vec3(1.0, 2.0, 3.0));
    vec2 r = pc.rot * (acc.xy + pc.shift);
    mat3x2 M = mat3x2(acc.x, acc.y, acc.z, a, b, float(calls));
    mat2x3 T = transpose(M);
    vec3 tv = T * r;
    vec3 vm = r * M;
    mat2 MM = M * mat2x3(1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
    mat3 op = outerProduct(vec3(1.0, 2.0, 3.0), m.pos);
    float wsum = 0.0;
    for (int k = 0; k < N2; k++) wsum += weights[k];
    uint q = g * 32u;
    o[q + 0u] = acc.x; o[q + 1u] = acc.y; o[q + 2u] = acc.z;
    o[q + 3u] = a; o[q + 4u] = b;
    o[q + 5u] = m.pos.x; o[q + 6u] = m.pos.y; o[q + 7u] = m.pos.z;
    o[q + 8u] = float(m.cell.x); o[q + 9u] = float(m.cell.y); o[q + 10u] = m.mass;
    o[q + 11u] = r.x; o[q + 12u] = r.y;
    o[q + 13u] = tv.x; o[q + 14u] = tv.y; o[q + 15u] = tv.z;
    o[q + 16u] = vm.x; o[q + 17u] = vm.y; o[q + 18u] = vm.z;
    o[q + 19u] = MM[0][0]; o[q + 20u] = MM[0][1]; o[q + 21u] = MM[1][0]; o[q + 22u] = MM[1][1];
    o[q + 23u] = op[1][2];
    o[q + 24u] = wsum;
    o[q + 25u] = float(calls + pc.bias);
    o[q + 26u] = float(N2) + 100.0 * float(gl_WorkGroupSize.x) + 1000.0 * float(gl_WorkGroupSize.y);
    o[q + 27u] = float(SEL);
    o[q + 28u] = float(SH | (NOTMASK & 0xFF00u));
    o[q + 29u] = float(NEG_N);
    o[q + 30u] = KEEP ? 1.0 : -1.0;
    o[q + 31u] = float(BIG % 1000003l);
}
