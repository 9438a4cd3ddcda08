#version 460
// Indices from buffers, unchecked: out-of-bounds reads (ri[g] past data) and writes (wi[g] past o)
// are what the error tests provoke. Every invocation first updates data[g], so a failing dispatch
// has already written to a buffer that must be restored.
layout(local_size_x = 32) in;
layout(std430, set = 0, binding = 0) buffer Data { uint data[]; };
layout(std430, set = 0, binding = 1) readonly buffer Idx { uvec2 idx[]; };   // (ri, wi)
layout(std140, set = 0, binding = 2) uniform U { uvec4 k[4]; };      // 64 bytes
layout(std430, set = 1, binding = 3) writeonly buffer Out { uint o[]; };
layout(push_constant) uniform Push { uint scale; uint bias; } pc;

void main() {
    uint g = gl_GlobalInvocationID.x + gl_NumWorkGroups.x * 32u * gl_GlobalInvocationID.y;
    data[g] = data[g] * 3u + 1u;
    uvec2 ix = idx[g];
    o[ix.y] = data[ix.x] * pc.scale + pc.bias + k[g & 3u].w;
}
