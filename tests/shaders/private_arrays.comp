#version 460
#extension GL_KHR_shader_subgroup_clustered : require
// Per-invocation arrays that outlive subgroup operations, in the shape of ggml's gated delta net:
// each invocation keeps a row of state in a private array, walks it with a loop counter on every
// step, and reduces a dot product over clusters of 4 invocations. The arrays stay in memory (one
// is indexed by a value from a buffer, so neither can become registers): the lanes' frames are
// interleaved (jitcoop/analysis/variables.py). idx[] may hold an index past the array: the
// out-of-bounds error the tests provoke.
layout(local_size_x = 32) in;
layout(std430, set = 0, binding = 0) readonly buffer X { float x[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(std430, set = 0, binding = 2) readonly buffer Idx { int idx[]; };
layout(push_constant) uniform Push { uint steps; } pc;

void main() {
    uint g = gl_GlobalInvocationID.x;
    float state[8];
    vec2 k[4];
    for (int i = 0; i < 8; i++) {
        state[i] = x[g * 8u + uint(i)];
    }
    for (int i = 0; i < 4; i++) {
        k[i] = vec2(float(2 * i + 1), float(2 * i + 2)) * 0.25;
    }
    for (uint t = 0u; t < pc.steps; t++) {
        float s = 0.0;
        for (int i = 0; i < 8; i++) {
            s += state[i] * k[i / 2][i % 2];
        }
        s = subgroupClusteredAdd(s, 4);
        for (int i = 0; i < 8; i++) {
            state[i] = state[i] * 0.5 + s * k[i / 2][i % 2] * 0.125;
        }
    }
    state[idx[g]] += 1.0;
    for (int i = 0; i < 8; i++) {
        y[g * 8u + uint(i)] = state[i];
    }
}
