#version 460
// Where each invocation is: v[global y * p.width + global x] = (workgroup id, global x + 1000 *
// global y), for vkCmdDispatchBase (ids offset by the base) and vkCmdDispatchIndirect.
layout(local_size_x = 4, local_size_y = 2) in;
layout(std430, set = 0, binding = 0) buffer Out { uvec4 v[]; };
layout(push_constant) uniform P { uint width; } p;
void main() {
    uvec3 g = gl_GlobalInvocationID;
    v[g.y * p.width + g.x] = uvec4(gl_WorkGroupID, g.x + 1000u * g.y);
}
