#version 460
// Spec constant values as a driver receives them: a bool (default true, so a zero read as true
// shows) and an int.
layout(local_size_x = 1) in;
layout(constant_id = 0) const bool FLAG = true;
layout(constant_id = 1) const int I = 5;
layout(std430, binding = 0) writeonly buffer O { int o[]; };
void main() {
    o[0] = FLAG ? 1 : 0;
    o[1] = I;
}
