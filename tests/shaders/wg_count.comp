#version 450
// Each workgroup adds one to its own counter: after a dispatch every counter of the grid is 1
// (a workgroup run twice, or never, shows as 2 or 0). One invocation per workgroup, many
// workgroups: the test of how a dispatch hands workgroups to its threads.
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Counts { uint count[]; };
void main() {
    atomicAdd(count[gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y], 1u);
}
