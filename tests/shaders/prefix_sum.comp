#version 460
// Workgroup prefix sum of 256 uints per workgroup, in shared memory with barriers.
//   BLELLOCH false: Hillis-Steele inclusive scan (log2(256) steps, a barrier between read and write).
//   BLELLOCH true:  Blelloch work-efficient exclusive scan (up-sweep, clear, down-sweep; the work in
//              each step is done by a divergent subset of the invocations, the barriers by all).
// Workgroups form a 2D grid; workgroup w = id.x + num.x * id.y scans data[256 w .. 256 w + 255]
// and writes its total to sums[w].
layout(local_size_x = 256) in;
layout(constant_id = 0) const bool BLELLOCH = false;

layout(set = 0, binding = 0, std430) buffer Data { uint data[]; };
layout(set = 0, binding = 1, std430) writeonly buffer Sums { uint sums[]; };

shared uint tmp[256];

void main() {
    uint t = gl_LocalInvocationID.x;
    uint w = gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y;
    uint base = w * 256u;
    uint v = data[base + t];
    tmp[t] = v;
    barrier();
    if (BLELLOCH) {
        uint offset = 1u;
        for (uint d = 128u; d > 0u; d >>= 1) {
            if (t < d) {
                uint ai = offset * (2u * t + 1u) - 1u;
                uint bi = offset * (2u * t + 2u) - 1u;
                tmp[bi] += tmp[ai];
            }
            offset <<= 1;
            barrier();
        }
        if (t == 0u) {
            sums[w] = tmp[255];
            tmp[255] = 0u;
        }
        barrier();
        for (uint d = 1u; d < 256u; d <<= 1) {
            offset >>= 1;
            if (t < d) {
                uint ai = offset * (2u * t + 1u) - 1u;
                uint bi = offset * (2u * t + 2u) - 1u;
                uint x = tmp[ai];
                tmp[ai] = tmp[bi];
                tmp[bi] += x;
            }
            barrier();
        }
        data[base + t] = tmp[t];
    } else {
        for (uint off = 1u; off < 256u; off <<= 1) {
            uint add = t >= off ? tmp[t - off] : 0u;
            barrier();
            tmp[t] += add;
            barrier();
        }
        data[base + t] = tmp[t];
        if (t == 255u) sums[w] = tmp[t];
    }
}
