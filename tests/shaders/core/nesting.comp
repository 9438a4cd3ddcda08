#version 450
// Control flow the generator emits inline: 20 nested ifs (deeper than it nests code, so the
// innermost arms stay dispatch targets), a loop whose exit runs straight into a second loop, a
// switch whose arms are entered from it alone, and a barrier, so that lanes suspend and resume.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer O { uint o[]; };
shared uint sh[64];
void main() {
    uint lid = gl_LocalInvocationID.x;
    uint v = x[gl_GlobalInvocationID.x];
    uint acc = 0u;
    if (v > 0u) { acc += 1u;
        if (v > 1u) { acc += 2u;
            if (v > 2u) { acc += 3u;
                if (v > 3u) { acc += 4u;
                    if (v > 4u) { acc += 5u;
                        if (v > 5u) { acc += 6u;
                            if (v > 6u) { acc += 7u;
                                if (v > 7u) { acc += 8u;
                                    if (v > 8u) { acc += 9u;
                                        if (v > 9u) { acc += 10u;
                                            if (v > 10u) { acc += 11u;
                                                if (v > 11u) { acc += 12u;
                                                    if (v > 12u) { acc += 13u;
                                                        if (v > 13u) { acc += 14u;
                                                            if (v > 14u) { acc += 15u;
                                                                if (v > 15u) { acc += 16u;
                                                                    if (v > 16u) { acc += 17u;
                                                                        if (v > 17u) { acc += 18u;
                                                                            if (v > 18u) { acc += 19u;
                                                                                if (v > 19u) { acc += 20u;
                                                                                    acc += 1000u;
    }}}}}}}}}}}}}}}}}}}}
    uint s = 0u;
    for (uint j = 0u; j < (v & 7u); j++) s += j;
    for (uint j = 0u; j < (v & 3u); j++) s += 3u * j;
    switch (v % 4u) {
    case 0u: s += 100u; break;
    case 1u: s ^= 0x55u; break;
    default: s += v; break;
    }
    sh[lid] = acc * 1000u + s;
    barrier();
    o[gl_GlobalInvocationID.x] = sh[(lid + 1u) % 64u];
}
