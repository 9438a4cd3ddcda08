#version 460
#extension GL_KHR_shader_subgroup_arithmetic : enable
// Divergent control flow: every invocation takes its own path, decided by its input n = a[g].
// Each invocation writes 9 ints to o[9 g ...] (slots it does not reach keep the caller's values):
//   0 sum of a loop with a per-lane trip count, continue and break    1 iterations started
//   2 nested loops with break/continue in the inner loop              3 Collatz steps (while)
//   4 do-while                                                        5 switch with fallthrough
//     and `continue` from inside the switch in a loop                 6 classify(): a switch with
//     fallthrough, a default in the middle and a return from a case   7 early return from main
//     inside a loop (or -1)                                           8 subgroupAdd(1) over the
//     invocations that did not return at the top (after the divergent loops have reconverged)
// Invocations with n < 0 return at once.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In { int a[]; };
layout(std430, binding = 1) buffer Out { int o[]; };

int classify(int v) {
    int r = 0;
    switch (v & 15) {
    case 0:
        r += 1;
    case 1:
        r += 2;
        break;
    case 2:
    case 3:
        r += 4;
    case 4:
        r += 8;
    default:
        r += 16;
        break;
    case 7:
        r = -1;
    case 8:
        r *= 3;
        break;
    case 12:
        return 100 + v;
    }
    return r;
}

void main() {
    uint g = gl_GlobalInvocationID.x;
    int n = a[g];
    uint base = g * 9u;
    if (n < 0) return;

    int s = 0, iters = 0;
    for (int i = 0; i < (n & 63); i++) {
        iters++;
        if (i % 3 == 1) continue;
        if (s > 200) break;
        s += i * ((n >> 6) & 7) + 1;
    }
    o[base + 0u] = s;
    o[base + 1u] = iters;

    int t = 0;
    for (int i = 0; i < (n & 7); i++) {
        for (int j = 0; j < 10; j++) {
            if (j > i) break;
            if (((i + j) & 1) == 0) continue;
            t += i * 10 + j;
        }
        if (t > 60) break;
    }
    o[base + 2u] = t;

    uint c = uint(n & 1023) + 1u;
    int steps = 0;
    while (c != 1u) {
        c = (c & 1u) != 0u ? 3u * c + 1u : c >> 1;
        steps++;
        if (steps >= 100) break;
    }
    o[base + 3u] = steps;

    int d = 0;
    do {
        d += 3;
    } while (d < (n & 31));
    o[base + 4u] = d;

    int sw = 0;
    for (int k = 0; k < 6; k++) {
        switch ((n + k) & 3) {
        case 0:
            sw += 1;
        case 1:
            sw += 10;
            break;
        case 2:
            continue;
        default:
            sw += 100;
        }
        sw *= 2;
    }
    o[base + 5u] = sw;
    o[base + 6u] = classify(n);
    o[base + 8u] = subgroupAdd(1);

    for (int i = 0; i < 8; i++) {
        if (((n >> 10) & 7) == i) {
            o[base + 7u] = i * 100;
            return;
        }
        if (i == 5 && (n & 0x8000) != 0) return;
    }
    o[base + 7u] = -1;
}
