#version 450
// Element-wise instructions on long fragments (codegen/element_loops.py): workgroup matrices of
// N x N held by WG invocations, N * N / WG components each. At WG = 1 and N = 64 a fragment is
// 4096 components long and every instruction below runs as a loop over them; at WG = 64 the
// same code is written out component by component (64 each). tests/test_element_loops.py.
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint WG = 1;
layout(constant_id = 1) const uint N = 64;

layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) writeonly buffer O { float o[]; };     // 8 N x N results
layout(set = 0, binding = 3) writeonly buffer OI { int oi[]; };     // 2 N x N results
layout(push_constant) uniform P { float s; int steps; } pc;

#define F coopmat<float, gl_ScopeWorkgroup, N, N, gl_MatrixUseAccumulator>
#define H coopmat<float16_t, gl_ScopeWorkgroup, N, N, gl_MatrixUseAccumulator>
#define I coopmat<int, gl_ScopeWorkgroup, N, N, gl_MatrixUseAccumulator>
#define ROW gl_CooperativeMatrixLayoutRowMajor

void main() {
    F x, y;
    coopMatLoad(x, a, 0, N, ROW);
    coopMatLoad(y, b, 0, N, ROW);
    coopMatStore(x + y, o, 0 * N * N, N, ROW);                       // FAdd
    coopMatStore(x - y * pc.s, o, 1 * N * N, N, ROW);                // MatrixTimesScalar, FSub
    coopMatStore(x * y / (y + F(3.0)), o, 2 * N * N, N, ROW);        // FMul, FDiv, a splat constant
    coopMatStore(-x, o, 3 * N * N, N, ROW);                          // FNegate
    H h = H(x);                                                      // FConvert down and up
    coopMatStore(F(h), o, 4 * N * N, N, ROW);
    // a phi starting at a splat constant, on a loop's back edge
    F acc = F(0.0);
    for (int j = 0; j < pc.steps; ++j)
        acc = acc * 0.5 + x;
    coopMatStore(acc, o, 5 * N * N, N, ROW);
    // a matrix in a Function variable indexed per component: loaded and stored whole as well
    F v = y;
    for (int e = 0; e < v.length(); ++e)
        v[e] = v[e] * 2.0 + 1.0;
    coopMatStore(v, o, 6 * N * N, N, ROW);
    F w = F(pc.s);                                                   // a splat of a push constant
    coopMatStore(w - v, o, 7 * N * N, N, ROW);
    I q = I(x * 8.0);                                                // ConvertFToS
    coopMatStore(q, oi, 0 * N * N, N, ROW);
    coopMatStore(q * I(3) - q + I(y), oi, 1 * N * N, N, ROW);        // IMul, ISub, IAdd
}
