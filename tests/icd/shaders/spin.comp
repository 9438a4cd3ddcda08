#version 460
// Spins until p.stop is set, which never happens: JITCOOP_ICD_TIMEOUT must cancel the dispatch
// and lose the device, not hang the application.
layout(local_size_x = 1) in;
layout(std430, set = 0, binding = 0) buffer B { uint v[]; };
layout(push_constant) uniform P { uint stop; } p;
void main() {
    uint i = 0;
    while (p.stop == 0u) {
        i++;
        v[0] = i;
    }
}
