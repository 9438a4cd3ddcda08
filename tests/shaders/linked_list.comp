#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
// GL_EXT_buffer_reference: each invocation walks a linked list of nodes that live in one device
// buffer, starting from heads[g] (0 = empty list), counting every visit with an atomic on the
// node, and records what it saw, including a pointer (results[g].last). Then it addresses the
// node buffer as an array by integer arithmetic on its address, and writes through a pointer
// taken from the push constants.
layout(local_size_x = 32) in;
layout(buffer_reference) buffer Node;
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Node {
    int value;
    int hits;
    Node next;           // offset 8
};
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float f[]; };
struct Result { int count; int sum; Node last; };          // 16 bytes: 0, 4, 8
layout(std430, binding = 0) readonly buffer Heads { Node heads[]; };
layout(std430, binding = 1) writeonly buffer Results { Result results[]; };
layout(push_constant) uniform Push { Floats scale; uint64_t nodes_base; uint n_nodes; } pc;

void main() {
    uint g = gl_GlobalInvocationID.x;
    Node p = heads[g];
    int count = 0, sum = 0;
    Node last = Node(0ul);
    while (uint64_t(p) != 0ul && count < 1000) {
        sum += p.value * (count + 1);
        atomicAdd(p.hits, 1);
        last = p;
        p = p.next;
        count++;
    }
    results[g].count = count;
    results[g].sum = sum;
    results[g].last = last;
    Node q = Node(pc.nodes_base + 16ul * uint64_t(g % pc.n_nodes));
    pc.scale.f[g] = float(q.value) * pc.scale.f[g];
}
