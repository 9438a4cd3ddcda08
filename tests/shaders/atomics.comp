#version 460
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_EXT_shader_atomic_int64 : enable
#extension GL_EXT_shader_atomic_float : enable
// Atomics from every invocation of many workgroups on one set of counters. The results do not
// depend on the order the invocations run in (except which slot each gets: a permutation).
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In {
    uint64_t a64[];       // per invocation
};
layout(std430, binding = 1) buffer C64 {
    uint64_t add64, and64, or64, xor64, umin64, umax64, cas64, xchg64;
    int64_t smin64, smax64, sadd64;
};
layout(std430, binding = 2) buffer C32 {
    uint add32, and32, or32, xor32, umin32, umax32, cas32, slot_count;
    int smin32, smax32, sadd32, shared_total;
    float fadd32, fxchg32;
    uint hist[16];
};
layout(std430, binding = 3) writeonly buffer Slots { uint slots[]; };       // slot -> invocation
layout(std430, binding = 4) writeonly buffer Olds { uint64_t olds[]; };     // atomicExchange results
layout(std430, binding = 5) writeonly buffer Fold { float folds[]; };       // float exchange results

shared uint wg_sum;
shared uint64_t wg_or;

void main() {
    uint g = gl_GlobalInvocationID.x;
    uint64_t v = a64[g];
    uint w = uint(v);
    int64_t sv = int64_t(v);
    if (gl_LocalInvocationIndex == 0u) {
        wg_sum = 0u;
        wg_or = 0ul;
    }
    barrier();
    // 64-bit
    atomicAdd(add64, v);
    atomicAnd(and64, v | 0xFFFF0000FFFF0000ul);
    atomicOr(or64, v & 0x8000100020004001ul);
    atomicXor(xor64, v);
    atomicMin(umin64, v);
    atomicMax(umax64, v);
    atomicMin(smin64, sv);
    atomicMax(smax64, sv);
    atomicAdd(sadd64, -int64_t(w & 0xFFFFu));
    uint64_t old = cas64;
    while (true) {                                    // a 64-bit add by compare-and-swap
        uint64_t seen = atomicCompSwap(cas64, old, old + (v >> 32));
        if (seen == old) break;
        old = seen;
    }
    olds[g] = atomicExchange(xchg64, v);
    // 32-bit
    atomicAdd(add32, w);
    atomicAnd(and32, w | 0x0F0F0F0Fu);
    atomicOr(or32, w & 0x10204081u);
    atomicXor(xor32, w);
    atomicMin(umin32, w);
    atomicMax(umax32, w);
    atomicMin(smin32, int(w));
    atomicMax(smax32, int(w));
    atomicAdd(sadd32, int(w % 1000u) - 500);
    uint o32 = cas32;
    while (true) {
        uint seen = atomicCompSwap(cas32, o32, o32 * 3u + 1u);   // order-independent count:
        if (seen == o32) break;                                   // the result is f^N(start)
        o32 = seen;
    }
    slots[atomicAdd(slot_count, 1u)] = g;
    atomicAdd(hist[w & 15u], 1u);
    // float: quarters of small integers, so every partial sum is exact
    atomicAdd(fadd32, float(int(w % 64u) - 32) * 0.25);
    folds[g] = atomicExchange(fxchg32, float(g));
    // shared memory, then one global update per workgroup
    atomicAdd(wg_sum, w & 0xFFu);
    atomicOr(wg_or, uint64_t(1) << ((w >> 6) % 64u));
    barrier();
    if (gl_LocalInvocationIndex == 0u) {
        atomicAdd(shared_total, int(wg_sum));
        atomicXor(xor64, wg_or);
    }
}
